//! Capacity permits on every bounded flavour, written once by macro.
//!
//! `every_bounded!` holds the scenarios of all three bounded flavours;
//! `many_senders!` those that need a second sender (another producer that
//! waits, owned permits). An `spsc` sender is borrowed mutably by its
//! permits, so while one is held no other send or reservation can even be
//! written: "a waiting sender woken by a dropped permit" and "staggered
//! waiters" do not exist there, and its capacity checks go through the
//! receiver's queries instead.
//!
//! Inside a flavour module, `F<T>` is the bounded flavour with payload `T`
//! and `CAP` slots. Anything that could hang runs under [`within`].

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::thread;
use std::time::{Duration, Instant};

use asyncband::error::{SendError, SendTimeoutError, TrySendError};
use asyncband_tests::{
    Ledger, Tracked, WakeCounter, current_thread, multi_thread, scale, wait_until, within,
};
use futures::executor::block_on;

/// The bound of every channel here: small, so permits fill it quickly.
const CAP: usize = 4;
/// A timeout that must elapse.
const SHORT: Duration = Duration::from_millis(30);
/// A timeout that must not elapse on a healthy machine.
const LONG: Duration = Duration::from_secs(10);
/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(50);
/// Time between staggered waiters: the order they begin to wait in is the
/// order under test, so it must leave each one ample time to park first.
const STAGGER: Duration = Duration::from_millis(100);

macro_rules! every_bounded {
    () => {
        // ---- exact capacity ----------------------------------------------

        #[test]
        fn queued_values_and_held_permits_fill_exactly_cap() {
            let (mut tx, mut rx) = F::<u64>::channel();
            tx.try_send(0).unwrap();
            tx.try_send(1).unwrap();
            {
                let permits = tx.try_reserve_many(CAP - 2).unwrap();
                assert_eq!(permits.len(), CAP - 2);
                assert!(rx.is_full(), "2 queued + {} held = CAP", CAP - 2);
                assert_eq!(rx.len(), 2, "held permits are not values");
            }
            assert!(!rx.is_full(), "dropped permits give their slots back");
            {
                let mut permits = tx.try_reserve_many(CAP - 2).unwrap();
                let permit = permits.next().unwrap();
                assert!(rx.is_full());
                permit.send(2).unwrap();
                assert_eq!(rx.len(), 3);
                assert!(rx.is_full(), "3 queued + 1 held = CAP");
            }
            assert_eq!(rx.len(), 3);
            assert!(!rx.is_full());
            tx.try_reserve().unwrap().send(3).unwrap();
            assert!(tx.is_full());
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            assert_eq!(tx.try_reserve_many(1).unwrap_err(), TrySendError::Full(()));
            assert_eq!(tx.try_send(9), Err(TrySendError::Full(9)));
            assert_eq!(
                tx.reserve_timeout(SHORT).unwrap_err(),
                SendTimeoutError::Timeout(())
            );
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
        }

        #[test]
        fn a_permit_that_is_sent_becomes_a_value_in_place_of_its_slot() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let permit = tx.try_reserve().unwrap();
            assert_eq!(rx.len(), 0);
            permit.send(7).unwrap();
            assert_eq!(rx.len(), 1);
            assert_eq!(tx.try_reserve_many(CAP - 1).unwrap().len(), CAP - 1);
            assert_eq!(rx.try_recv(), Ok(7));
            assert_eq!(
                tx.try_reserve_many(CAP).unwrap().len(),
                CAP,
                "every slot is free again"
            );
        }

        // ---- permits held across awaits ------------------------------------

        #[test]
        fn a_permit_held_across_an_await_lets_queued_messages_flow() {
            let got = within(|| {
                current_thread().block_on(async {
                    let (mut tx, mut rx) = F::<u64>::channel();
                    for i in 0..CAP as u64 - 1 {
                        tx.try_send(i).unwrap();
                    }
                    let received = Arc::new(AtomicUsize::new(0));
                    let consumer = tokio::spawn({
                        let received = Arc::clone(&received);
                        async move {
                            let mut got = Vec::new();
                            while let Ok(value) = rx.recv().await {
                                got.push(value);
                                received.fetch_add(1, Ordering::SeqCst);
                            }
                            got
                        }
                    });
                    let permit = tx.reserve().await.unwrap();
                    tokio::time::sleep(SHORT).await;
                    assert_eq!(
                        received.load(Ordering::SeqCst),
                        CAP - 1,
                        "queued messages flow while a permit is held"
                    );
                    permit.send(99).unwrap();
                    for i in 100..100 + 3 * CAP as u64 {
                        tx.send(i).await.unwrap();
                    }
                    drop(tx);
                    consumer.await.unwrap()
                })
            });
            let mut expected: Vec<u64> = (0..CAP as u64 - 1).collect();
            expected.push(99);
            expected.extend(100..100 + 3 * CAP as u64);
            assert_eq!(got, expected);
        }

        // ---- waking --------------------------------------------------------

        #[test]
        fn a_waiting_reservation_is_woken_only_when_a_receive_frees_a_slot() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            let mut reserve = pin!(tx.reserve());
            assert!(counter.poll(reserve.as_mut()).is_pending());
            assert!(counter.poll(reserve.as_mut()).is_pending());
            assert_eq!(counter.wakes(), 0, "woken with nothing freed");
            assert_eq!(rx.try_recv(), Ok(0));
            assert!(
                counter.wakes() >= 1,
                "a receive must wake the waiting reservation"
            );
            match counter.poll(reserve.as_mut()) {
                Poll::Ready(Ok(permit)) => permit.send(99).unwrap(),
                other => panic!("expected a permit, got {other:?}"),
            }
            assert!(rx.is_full());
            let mut expected: Vec<u64> = (1..CAP as u64).collect();
            expected.push(99);
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), expected);
        }

        #[test]
        fn a_blocked_reservation_is_woken_when_a_receive_frees_a_slot() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let producer = thread::spawn(move || {
                    tx.reserve_blocking().unwrap().send(99).unwrap();
                    tx
                });
                thread::sleep(SETTLE);
                assert_eq!(
                    rx.len(),
                    CAP,
                    "the reservation must wait while the channel is full"
                );
                assert_eq!(rx.recv_blocking(), Ok(0));
                let tx = producer.join().unwrap();
                assert!(tx.is_full());
                let mut expected: Vec<u64> = (1..CAP as u64).collect();
                expected.push(99);
                assert_eq!(rx.try_iter().collect::<Vec<_>>(), expected);
            })
        }

        // ---- cancellation ----------------------------------------------------

        #[test]
        fn a_reservation_dropped_after_it_was_woken_gives_its_slot_back() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            {
                let mut reserve = pin!(tx.reserve());
                assert!(counter.poll(reserve.as_mut()).is_pending());
                assert_eq!(rx.try_recv(), Ok(0));
                assert!(counter.wakes() >= 1);
                // Dropped without polling again.
            }
            assert!(
                !rx.is_full(),
                "the slot granted to the dropped reservation came back"
            );
            let permit = tx
                .try_reserve()
                .expect("the freed slot is free for the next one");
            permit.send(99).unwrap();
            assert!(tx.is_full());
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
        }

        // ---- disconnection ---------------------------------------------------------

        #[test]
        fn permit_send_after_the_receiver_is_dropped_hands_the_value_back() {
            within(|| {
                let ledger = Ledger::new();
                let (mut tx, rx) = F::<Tracked>::channel();
                {
                    let permit = tx.try_reserve().unwrap();
                    // Receiver teardown does not wait for held permits.
                    drop(rx);
                    let value = ledger.track();
                    let id = value.id();
                    let SendError(back) = permit.send(value).unwrap_err();
                    assert_eq!(back.id(), id);
                    assert_eq!(ledger.live(), 1, "the value handed back is alive");
                }
                assert!(tx.try_reserve().is_err());
                drop(tx);
                ledger.assert_each_dropped_once();
            })
        }

        #[test]
        fn permits_of_a_batch_hand_their_values_back_after_close() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            {
                let mut permits = tx.try_reserve_many(3).unwrap();
                permits.next().unwrap().send(ledger.track()).unwrap();
                assert!(rx.close());
                for permit in permits {
                    let value = ledger.track();
                    let id = value.id();
                    assert_eq!(permit.send(value).unwrap_err().into_inner().id(), id);
                }
            }
            assert_eq!(
                rx.try_recv().unwrap().id(),
                0,
                "sent before the close: still received"
            );
            assert!(rx.try_recv().is_err());
            drop((tx, rx));
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn a_blocked_reservation_wakes_with_an_error_when_the_receiver_is_dropped() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let producer = thread::spawn(move || tx.reserve_blocking().map(drop));
                thread::sleep(SETTLE);
                drop(rx);
                assert_eq!(producer.join().unwrap(), Err(SendError(())));
            })
        }

        #[test]
        fn a_waiting_reservation_resolves_to_an_error_when_the_receiver_is_dropped() {
            let (mut tx, rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            let mut reserve = pin!(tx.reserve());
            assert!(counter.poll(reserve.as_mut()).is_pending());
            drop(rx);
            assert!(
                counter.wakes() >= 1,
                "dropping the receiver must wake the reservation"
            );
            assert!(matches!(
                counter.poll(reserve.as_mut()),
                Poll::Ready(Err(SendError(())))
            ));
        }

        // ---- many at once -----------------------------------------------------------

        #[test]
        fn reserve_many_of_exactly_cap_succeeds_and_fills_the_channel() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                {
                    let permits = block_on(tx.reserve_many(CAP)).unwrap();
                    assert_eq!(permits.len(), CAP);
                    assert!(rx.is_full() && rx.is_empty());
                    for (i, permit) in permits.enumerate() {
                        permit.send(i as u64).unwrap();
                    }
                }
                assert_eq!(
                    rx.try_iter().collect::<Vec<_>>(),
                    (0..CAP as u64).collect::<Vec<_>>()
                );
                let permits = tx.try_reserve_many(CAP).unwrap();
                assert_eq!(permits.len(), CAP);
                assert!(rx.is_full());
            })
        }

        #[test]
        fn reserve_many_above_cap_is_an_error_not_a_hang() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                assert_eq!(
                    block_on(tx.reserve_many(CAP + 1)).unwrap_err(),
                    SendError(())
                );
                assert_eq!(
                    tx.try_reserve_many(CAP + 1).unwrap_err(),
                    TrySendError::Full(())
                );
                assert_eq!(
                    block_on(tx.reserve_many(usize::MAX)).unwrap_err(),
                    SendError(())
                );
                assert!(
                    rx.is_empty() && !rx.is_full(),
                    "a refused batch takes nothing"
                );
                assert_eq!(tx.try_reserve_many(CAP).unwrap().len(), CAP);
            })
        }

        #[test]
        fn reserve_many_of_zero_is_ready_at_once_with_no_permits() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            assert_eq!(block_on(tx.reserve_many(0)).unwrap().len(), 0);
            assert_eq!(tx.try_reserve_many(0).unwrap().len(), 0);
            assert_eq!(rx.try_iter().count(), CAP);
        }

        #[test]
        fn reserve_many_waits_until_all_its_slots_are_free() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            {
                let mut batch = pin!(tx.reserve_many(2));
                assert!(counter.poll(batch.as_mut()).is_pending());
                assert_eq!(rx.try_recv(), Ok(0));
                assert!(
                    counter.poll(batch.as_mut()).is_pending(),
                    "one free slot is not two"
                );
                assert_eq!(rx.try_recv(), Ok(1));
                assert!(
                    counter.wakes() >= 1,
                    "freeing the second slot must wake the batch"
                );
                match counter.poll(batch.as_mut()) {
                    Poll::Ready(Ok(permits)) => {
                        assert_eq!(permits.len(), 2);
                        assert!(rx.is_full());
                    }
                    other => panic!("expected two permits, got {other:?}"),
                }
            }
            assert!(!rx.is_full(), "the unused permits went back when dropped");
            assert_eq!(rx.len(), CAP - 2);
        }

        #[test]
        fn unused_permits_of_a_batch_are_returned_when_it_is_dropped() {
            let (mut tx, mut rx) = F::<u64>::channel();
            {
                let mut permits = tx.try_reserve_many(3).unwrap();
                permits.next().unwrap().send(1).unwrap();
                assert_eq!(permits.len(), 2);
            }
            assert_eq!(rx.len(), 1);
            assert_eq!(tx.try_reserve_many(CAP - 1).unwrap().len(), CAP - 1);
            assert_eq!(
                tx.try_reserve_many(CAP).unwrap_err(),
                TrySendError::Full(())
            );
            assert_eq!(rx.try_recv(), Ok(1));
        }

        // ---- timeouts ------------------------------------------------------------------

        #[test]
        fn reserve_timeout_on_a_full_channel_times_out_and_takes_no_slot() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let start = Instant::now();
                assert_eq!(
                    tx.reserve_timeout(SHORT).unwrap_err(),
                    SendTimeoutError::Timeout(())
                );
                let waited = start.elapsed();
                assert!(
                    waited >= SHORT,
                    "returned after {waited:?}, before the timeout"
                );
                assert!(
                    waited < Duration::from_secs(5),
                    "returned only after {waited:?}"
                );
                assert_eq!(rx.try_recv(), Ok(0));
                let permit = tx
                    .try_reserve()
                    .expect("the timed-out reservation took nothing");
                drop(permit);
                tx.try_send(99).unwrap();
                assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            })
        }

        #[test]
        fn reserve_timeout_succeeds_when_a_receive_frees_a_slot_in_time() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let consumer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    assert_eq!(rx.recv_blocking(), Ok(0));
                    rx
                });
                tx.reserve_timeout(LONG).unwrap().send(99).unwrap();
                let mut rx = consumer.join().unwrap();
                let mut expected: Vec<u64> = (1..CAP as u64).collect();
                expected.push(99);
                assert_eq!(rx.try_iter().collect::<Vec<_>>(), expected);
            })
        }

        #[test]
        fn reserve_timeout_on_a_closed_channel_reports_disconnected_at_once() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                rx.close();
                let start = Instant::now();
                assert_eq!(
                    tx.reserve_timeout(LONG).unwrap_err(),
                    SendTimeoutError::Disconnected(())
                );
                assert_eq!(
                    tx.try_reserve().unwrap_err(),
                    TrySendError::Disconnected(())
                );
                assert!(matches!(block_on(tx.reserve()), Err(SendError(()))));
                assert!(
                    start.elapsed() < LONG / 2,
                    "waited for a timeout on a closed channel"
                );
            })
        }

        #[test]
        fn a_reserve_timeout_too_large_for_an_instant_waits_like_no_timeout() {
            // Regression: `reserve_timeout` once computed `Instant::now() +
            // timeout`, which panics for `Duration::MAX` even with slots free.
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                tx.reserve_timeout(Duration::MAX).unwrap().send(1).unwrap();
                assert_eq!(rx.try_recv(), Ok(1));
            })
        }

        #[test]
        fn a_reserve_cancelled_by_a_tokio_timeout_takes_no_slot() {
            within(|| {
                current_thread().block_on(async {
                    let (mut tx, mut rx) = F::<u64>::channel();
                    for i in 0..CAP as u64 {
                        tx.try_send(i).unwrap();
                    }
                    assert!(tokio::time::timeout(SHORT, tx.reserve()).await.is_err());
                    assert_eq!(rx.try_recv(), Ok(0));
                    let permit = tx
                        .try_reserve()
                        .expect("the cancelled reservation took nothing");
                    permit.send(99).unwrap();
                    assert!(tx.is_full());
                })
            })
        }

        #[test]
        fn a_waker_dropped_as_a_reservation_polls_again_may_send_through_a_permit_of_its_sender() {
            // The reservation's next poll replaces its waker and drops the
            // old one, whose drop sends through a permit of the same sender:
            // nothing may be held around that drop (a latch there would
            // leave this thread spinning on itself).
            struct SendOnDrop(std::sync::Mutex<Option<topology::Permit<'static, F<u64>>>>);
            impl std::task::Wake for SendOnDrop {
                fn wake(self: Arc<Self>) {}
            }
            impl Drop for SendOnDrop {
                fn drop(&mut self) {
                    if let Some(permit) = self.0.lock().unwrap().take() {
                        permit.send(7).unwrap();
                    }
                }
            }
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let tx = Box::leak(Box::new(tx));
                let mut reserve = Box::pin(tx.reserve_many(1));
                let mut noop = std::task::Context::from_waker(std::task::Waker::noop());
                // Every slot, through the one reservation, which reserves
                // again each time it is polled after it completed.
                let mut permits: Vec<_> = (0..CAP)
                    .map(|_| match reserve.as_mut().poll(&mut noop) {
                        Poll::Ready(Ok(mut permits)) => permits.next().unwrap(),
                        _ => panic!("a free slot"),
                    })
                    .collect();
                let sends_on_drop = permits.pop().unwrap();
                let waker = std::task::Waker::from(Arc::new(SendOnDrop(std::sync::Mutex::new(
                    Some(sends_on_drop),
                ))));
                let mut cx = std::task::Context::from_waker(&waker);
                assert!(reserve.as_mut().poll(&mut cx).is_pending(), "full");
                drop(waker);
                assert!(reserve.as_mut().poll(&mut noop).is_pending(), "still full");
                assert_eq!(rx.try_recv(), Ok(7), "the dropped waker sent its value");
                drop(permits);
            })
        }

        // ---- leaks -----------------------------------------------------------------------

        #[test]
        fn forgetting_a_permit_leaks_exactly_one_slot_and_nothing_else() {
            within(|| {
                let ledger = Ledger::new();
                let (mut tx, mut rx) = F::<Tracked>::channel();
                std::mem::forget(tx.try_reserve().unwrap());
                assert_eq!(
                    tx.try_reserve_many(CAP).unwrap_err(),
                    TrySendError::Full(())
                );
                drop(tx.try_reserve_many(CAP - 1).expect("only one slot is gone"));
                // The channel keeps working with one slot fewer.
                for round in 0..3 {
                    for _ in 0..CAP - 1 {
                        tx.try_send(ledger.track()).unwrap();
                    }
                    assert!(rx.is_full(), "round {round}");
                    assert_eq!(rx.len(), CAP - 1, "a forgotten permit is not a value");
                    // Regression: the single-producer ring's `try_push` once
                    // ignored units held as permits (none can be in use while
                    // the sender is free, but a forgotten one still holds its
                    // slot), so queued + held could exceed CAP on spsc.
                    assert!(
                        matches!(tx.try_send(ledger.track()), Err(TrySendError::Full(_))),
                        "round {round}: a send took the slot of the forgotten permit"
                    );
                    assert_eq!(rx.try_iter().count(), CAP - 1);
                }
                // And it still closes and drops what is queued.
                for _ in 0..CAP - 1 {
                    tx.try_send(ledger.track()).unwrap();
                }
                drop(rx);
                assert_eq!(ledger.live(), 0);
                drop(tx);
                ledger.assert_each_dropped_once();
            })
        }
    };
}

macro_rules! many_senders {
    () => {
        #[test]
        fn held_permits_and_queued_values_fill_exactly_cap_for_every_sender() {
            let (tx, mut rx) = F::<u64>::channel();
            let tx2 = tx.clone();
            let p1 = tx.try_reserve().unwrap();
            let p2 = tx2.try_reserve().unwrap();
            tx.try_send(0).unwrap();
            tx2.try_send(1).unwrap();
            assert!(tx.is_full() && tx2.is_full() && rx.is_full());
            assert_eq!(rx.len(), 2, "held permits are not values");
            assert_eq!(tx2.try_send(9), Err(TrySendError::Full(9)));
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            assert_eq!(tx2.try_reserve_many(1).unwrap_err(), TrySendError::Full(()));
            let tx3 = match tx.clone().try_reserve_owned() {
                Err(TrySendError::Full(sender)) => sender,
                other => panic!("expected Full with the sender back, got {other:?}"),
            };
            drop(p1);
            assert!(!tx.is_full());
            let p3 = tx3.try_reserve().unwrap();
            assert!(tx.is_full());
            p2.send(2).unwrap();
            p3.send(3).unwrap();
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1, 2, 3]);
        }

        #[test]
        fn a_permit_held_across_an_await_lets_other_senders_messages_flow() {
            let got = within(|| {
                current_thread().block_on(async {
                    let (tx, mut rx) = F::<u64>::channel();
                    let consumer = tokio::spawn(async move {
                        let mut got = Vec::new();
                        while let Ok(value) = rx.recv().await {
                            got.push(value);
                        }
                        got
                    });
                    let permit = tx.reserve().await.unwrap();
                    let other = tx.clone();
                    let producer = tokio::spawn(async move {
                        for i in 0..10 * CAP as u64 {
                            other.send(i).await.unwrap();
                        }
                    });
                    // Held across an await while the other sender pushes
                    // ten times the capacity through the remaining slots.
                    producer.await.unwrap();
                    permit.send(999).unwrap();
                    drop(tx);
                    consumer.await.unwrap()
                })
            });
            let mut expected: Vec<u64> = (0..10 * CAP as u64).collect();
            expected.push(999);
            assert_eq!(got, expected, "a permit reserves capacity, not a position");
        }

        #[test]
        fn dropping_a_permit_wakes_a_waiting_send_future() {
            let (tx, mut rx) = F::<u64>::channel();
            let mut permits = tx.try_reserve_many(CAP).unwrap();
            let counter = WakeCounter::new();
            let mut send = pin!(tx.send(5));
            assert!(counter.poll(send.as_mut()).is_pending());
            drop(permits.next());
            assert!(
                counter.wakes() >= 1,
                "a dropped permit must wake the waiting sender"
            );
            assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Ok(())));
            assert!(tx.is_full());
            drop(permits);
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [5]);
        }

        #[test]
        fn dropped_permits_go_to_waiting_reservations_in_the_order_they_began_to_wait() {
            let (tx, mut rx) = F::<u64>::channel();
            let mut held: Vec<_> = (0..CAP).map(|_| tx.try_reserve().unwrap()).collect();
            let (w0, w1, w2) = (WakeCounter::new(), WakeCounter::new(), WakeCounter::new());
            let mut r0 = pin!(tx.reserve());
            let mut r1 = pin!(tx.send(101));
            let mut r2 = pin!(tx.reserve());
            assert!(w0.poll(r0.as_mut()).is_pending());
            assert!(w1.poll(r1.as_mut()).is_pending());
            assert!(w2.poll(r2.as_mut()).is_pending());

            drop(held.pop());
            assert_eq!((w0.wakes() > 0, w1.wakes(), w2.wakes()), (true, 0, 0));
            // A newcomer does not take the slot granted to the first waiter.
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            assert_eq!(tx.try_send(7), Err(TrySendError::Full(7)));
            assert!(tx.is_full());
            assert!(w2.poll(r2.as_mut()).is_pending());
            assert!(w1.poll(r1.as_mut()).is_pending());
            let p0 = match w0.poll(r0.as_mut()) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("the first waiter should hold a permit, got {other:?}"),
            };

            drop(held.pop());
            assert_eq!((w1.wakes() > 0, w2.wakes()), (true, 0));
            assert!(w2.poll(r2.as_mut()).is_pending());
            assert_eq!(w1.poll(r1.as_mut()), Poll::Ready(Ok(())));

            drop(held.pop());
            assert!(w2.wakes() > 0);
            let p2 = match w2.poll(r2.as_mut()) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("the third waiter should hold a permit, got {other:?}"),
            };
            p0.send(100).unwrap();
            p2.send(102).unwrap();
            // Values take their place when sent, not when reserved.
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [101, 100, 102]);
            drop(held);
            assert_eq!(
                tx.try_reserve_many(CAP).unwrap().len(),
                CAP,
                "every slot came back"
            );
        }

        #[test]
        fn dropped_permits_go_to_blocked_senders_in_the_order_they_began_to_wait() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let mut held = tx.try_reserve_many(CAP).unwrap();
                let waiters: Vec<_> = (0..3u64)
                    .map(|k| {
                        let tx = tx.clone();
                        let waiter = thread::spawn(move || {
                            if k == 1 {
                                tx.reserve_blocking().unwrap().send(k)
                            } else {
                                tx.send_blocking(k)
                            }
                        });
                        // Stagger: each starts waiting well after the last.
                        thread::sleep(STAGGER);
                        waiter
                    })
                    .collect();
                assert_eq!(
                    rx.len(),
                    0,
                    "nobody gets through while the permits are held"
                );
                for k in 0..3 {
                    drop(held.next());
                    wait_until(LONG, "the next waiter sent", || rx.len() == k + 1);
                }
                for waiter in waiters {
                    waiter.join().unwrap().unwrap();
                }
                assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1, 2]);
            })
        }

        #[test]
        fn a_cancelled_reservation_that_was_granted_passes_its_slot_to_the_next_waiter() {
            let (tx, _rx) = F::<u64>::channel();
            let mut held: Vec<_> = (0..CAP).map(|_| tx.try_reserve().unwrap()).collect();
            let (wa, wb) = (WakeCounter::new(), WakeCounter::new());
            let mut a = Box::pin(tx.reserve());
            let mut b = Box::pin(tx.reserve());
            assert!(wa.poll(a.as_mut()).is_pending());
            assert!(wb.poll(b.as_mut()).is_pending());
            drop(held.pop());
            assert_eq!(
                (wa.wakes() > 0, wb.wakes()),
                (true, 0),
                "the slot is granted to `a`"
            );
            drop(a);
            assert!(
                wb.wakes() > 0,
                "the slot granted to the dropped `a` must go to `b`"
            );
            let pb = match wb.poll(b.as_mut()) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("`b` should hold the passed-on slot, got {other:?}"),
            };
            assert!(tx.is_full());
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            drop((pb, held));
            let all = tx.try_reserve_many(CAP).expect("no slot was lost");
            assert_eq!(
                tx.try_reserve().unwrap_err(),
                TrySendError::Full(()),
                "none was duplicated"
            );
            drop(all);
        }

        #[test]
        fn a_cancelled_batch_that_was_partly_granted_passes_its_slots_on() {
            let (tx, _rx) = F::<u64>::channel();
            let mut held: Vec<_> = (0..CAP).map(|_| tx.try_reserve().unwrap()).collect();
            let (wa, wb) = (WakeCounter::new(), WakeCounter::new());
            let mut a = Box::pin(tx.reserve_many(2));
            let mut b = Box::pin(tx.reserve());
            assert!(wa.poll(a.as_mut()).is_pending());
            assert!(wb.poll(b.as_mut()).is_pending());
            drop(held.pop());
            assert_eq!(
                wb.wakes(),
                0,
                "`b` must not barge past the batch waiting ahead of it"
            );
            assert!(wb.poll(b.as_mut()).is_pending());
            drop(a);
            assert!(
                wb.wakes() > 0,
                "the slot held by the dropped batch must go to `b`"
            );
            let pb = match wb.poll(b.as_mut()) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("`b` should hold the passed-on slot, got {other:?}"),
            };
            assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
            drop((pb, held));
            assert_eq!(
                tx.try_reserve_many(CAP).unwrap().len(),
                CAP,
                "no slot was lost"
            );
        }

        #[test]
        fn a_reservation_timed_out_while_others_wait_takes_no_slot() {
            within(|| {
                let (tx, _rx) = F::<u64>::channel();
                let held = tx.try_reserve_many(CAP).unwrap();
                let tx2 = tx.clone();
                let waiter = thread::spawn(move || tx2.reserve_timeout(LONG).map(drop));
                thread::sleep(SETTLE);
                assert_eq!(
                    tx.reserve_timeout(SHORT).unwrap_err(),
                    SendTimeoutError::Timeout(())
                );
                drop(held);
                assert_eq!(waiter.join().unwrap(), Ok(()));
                assert_eq!(
                    tx.try_reserve_many(CAP).unwrap().len(),
                    CAP,
                    "no slot was lost"
                );
            })
        }

        // ---- owned permits ----------------------------------------------------------

        #[test]
        fn owned_permits_move_into_spawned_tasks_and_hand_the_sender_back() {
            let n = scale(200) as u64;
            let mut got = within(move || {
                multi_thread(2).block_on(async move {
                    let (tx, mut rx) = F::<u64>::channel();
                    let consumer = tokio::spawn(async move {
                        let mut got = Vec::new();
                        while let Ok(value) = rx.recv().await {
                            got.push(value);
                        }
                        got
                    });
                    let mut tasks = Vec::new();
                    for i in 0..n {
                        let permit = tx.clone().reserve_owned().await.unwrap();
                        tasks.push(tokio::spawn(async move {
                            tokio::task::yield_now().await;
                            let sender = permit.send(i).unwrap();
                            sender.sender_count() >= 1
                        }));
                    }
                    for task in tasks {
                        assert!(
                            task.await.unwrap(),
                            "the sender handed back is a live sender"
                        );
                    }
                    drop(tx);
                    consumer.await.unwrap()
                })
            });
            got.sort();
            assert_eq!(got, (0..n).collect::<Vec<_>>());
        }

        #[test]
        fn owned_permits_count_as_senders_and_keep_the_channel_open() {
            let (tx, mut rx) = F::<u64>::channel();
            let permit = tx.clone().try_reserve_owned().unwrap();
            assert_eq!(rx.sender_count(), 2, "the permit holds a sender");
            drop(tx);
            assert_eq!(rx.sender_count(), 1);
            assert!(
                !rx.is_closed(),
                "the permit's sender keeps the channel open"
            );
            let sender = permit.send(5).unwrap();
            assert_eq!(rx.sender_count(), 1);
            assert_eq!(rx.try_recv(), Ok(5));
            drop(sender);
            assert!(rx.is_closed());
        }

        #[test]
        fn releasing_an_owned_permit_frees_its_slot_and_returns_the_sender() {
            let (tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 - 1 {
                tx.try_send(i).unwrap();
            }
            let permit = tx.try_reserve_owned().unwrap();
            assert!(rx.is_full());
            let tx = permit.release();
            assert!(!rx.is_full());
            assert_eq!(tx.sender_count(), 1);
            tx.try_send(99).unwrap();
            assert!(tx.is_full());
            assert_eq!(rx.try_iter().count(), CAP);
        }

        #[test]
        fn dropping_an_owned_permit_frees_its_slot_and_drops_its_sender() {
            let (tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 - 1 {
                tx.try_send(i).unwrap();
            }
            let other = tx.clone();
            let permit = tx.try_reserve_owned().unwrap();
            assert!(rx.is_full());
            assert_eq!(rx.sender_count(), 2);
            drop(permit);
            assert!(!rx.is_full(), "the slot came back");
            assert_eq!(rx.sender_count(), 1, "the sender went with the permit");
            let permit = other.try_reserve_owned().unwrap();
            drop(permit);
            assert!(rx.is_closed(), "the permit held the last sender");
            assert_eq!(rx.try_iter().count(), CAP - 1);
            assert!(rx.try_recv().is_err());
        }

        #[test]
        fn try_reserve_owned_hands_the_sender_back_when_full_or_closed() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let tx = match tx.try_reserve_owned() {
                    Err(TrySendError::Full(sender)) => sender,
                    other => panic!("expected Full with the sender, got {other:?}"),
                };
                assert_eq!(
                    tx.sender_count(),
                    1,
                    "the sender handed back is still counted"
                );
                assert_eq!(rx.try_recv(), Ok(0));
                let tx = tx.try_reserve_owned().unwrap().release();
                rx.close();
                let tx = match tx.try_reserve_owned() {
                    Err(TrySendError::Disconnected(sender)) => sender,
                    other => panic!("expected Disconnected with the sender, got {other:?}"),
                };
                match block_on(tx.reserve_owned()) {
                    Err(SendError(sender)) => assert!(sender.is_closed()),
                    other => panic!("expected an error with the sender, got {other:?}"),
                }
            })
        }

        #[test]
        fn an_owned_permit_send_after_the_receiver_is_dropped_hands_the_value_back() {
            let ledger = Ledger::new();
            let (tx, rx) = F::<Tracked>::channel();
            let permit = tx.clone().try_reserve_owned().unwrap();
            drop(rx);
            let value = ledger.track();
            let id = value.id();
            let SendError(back) = permit.send(value).unwrap_err();
            assert_eq!(back.id(), id);
            assert_eq!(
                tx.sender_count(),
                1,
                "the permit's sender was dropped with the error"
            );
            drop(back);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn reserve_owned_waits_in_line_and_is_woken_by_a_receive() {
            let (tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            let mut reserve = Box::pin(tx.clone().reserve_owned());
            assert!(counter.poll(reserve.as_mut()).is_pending());
            assert_eq!(rx.sender_count(), 2, "the waiting future holds its sender");
            assert_eq!(rx.try_recv(), Ok(0));
            assert!(counter.wakes() >= 1);
            let permit = match counter.poll(reserve.as_mut()) {
                Poll::Ready(Ok(permit)) => permit,
                other => panic!("expected an owned permit, got {other:?}"),
            };
            assert_eq!(tx.try_send(9), Err(TrySendError::Full(9)));
            drop(permit.send(99).unwrap());
            assert_eq!(rx.sender_count(), 1);
            assert_eq!(rx.try_iter().last(), Some(99));
        }

        // ---- accounting under contention ------------------------------------------------

        #[test]
        fn concurrent_reservations_cancellations_and_receives_lose_and_leak_no_slot() {
            const PRODUCERS: u64 = 4;
            let ops = scale(400) as u64;
            within(move || {
                multi_thread(2).block_on(async move {
                    let (tx, mut rx) = F::<u64>::channel();
                    let consumer = tokio::spawn(async move {
                        let mut received = 0u64;
                        loop {
                            match rx.recv().await {
                                Ok(u64::MAX) => return (rx, received),
                                Ok(_) => received += 1,
                                Err(_) => panic!("closed before the end marker"),
                            }
                            // A slow consumer keeps the channel full, so
                            // reservations wait, are granted and cancelled.
                            if received % 3 == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                    });
                    let producers: Vec<_> = (0..PRODUCERS)
                        .map(|id| {
                            let tx = tx.clone();
                            tokio::spawn(async move {
                                let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ (id + 1);
                                let mut sent = 0u64;
                                for _ in 0..ops {
                                    state ^= state << 13;
                                    state ^= state >> 7;
                                    state ^= state << 17;
                                    sent += one_random_operation(&tx, state % 7).await;
                                }
                                sent
                            })
                        })
                        .collect();
                    let mut sent = 0;
                    for producer in producers {
                        sent += producer.await.unwrap();
                    }
                    tx.send(u64::MAX).await.unwrap();
                    let (rx, received) = consumer.await.unwrap();
                    assert_eq!(received, sent, "a value sent through a permit was lost");
                    assert!(rx.is_empty() && !rx.is_full());
                    let all = tx.try_reserve_many(CAP).expect("a slot leaked");
                    assert_eq!(all.len(), CAP);
                    assert_eq!(tx.try_reserve().unwrap_err(), TrySendError::Full(()));
                })
            })
        }

        /// One operation of the contention test; returns how many values
        /// it sent.
        async fn one_random_operation(tx: &topology::Sender<F<u64>>, which: u64) -> u64 {
            match which {
                0 => {
                    tx.reserve().await.unwrap().send(0).unwrap();
                    1
                }
                1 => {
                    let mut sent = 0;
                    for permit in tx.reserve_many(2).await.unwrap() {
                        permit.send(1).unwrap();
                        sent += 1;
                    }
                    sent
                }
                2 => {
                    // Cancelled at a random point, maybe after being granted.
                    match tokio::time::timeout(Duration::from_millis(1), tx.reserve()).await {
                        Ok(permit) => {
                            drop(permit.unwrap());
                            0
                        }
                        Err(_) => 0,
                    }
                }
                3 => {
                    // Polled once, then dropped after others had a turn.
                    let mut reserve = Box::pin(tx.reserve());
                    let first = futures::poll!(reserve.as_mut());
                    tokio::task::yield_now().await;
                    match first {
                        Poll::Ready(permit) => {
                            permit.unwrap().send(3).unwrap();
                            1
                        }
                        Poll::Pending => 0,
                    }
                }
                4 => {
                    let permit = tx.clone().reserve_owned().await.unwrap();
                    tokio::spawn(async move { drop(permit.send(4).unwrap()) })
                        .await
                        .unwrap();
                    1
                }
                5 => match tx.try_reserve() {
                    Ok(permit) => {
                        permit.send(5).unwrap();
                        1
                    }
                    Err(_) => 0,
                },
                _ => {
                    tx.send(6).await.unwrap();
                    1
                }
            }
        }
    };
}

#[allow(unused_mut)]
mod spsc_bounded {
    use super::*;
    use asyncband::spsc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    every_bounded!();
}

#[allow(unused_mut)]
mod mpsc_bounded {
    use super::*;
    use asyncband::mpsc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    every_bounded!();
    many_senders!();
}

#[allow(unused_mut)]
mod mpmc_bounded {
    use super::*;
    use asyncband::mpmc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    every_bounded!();
    many_senders!();
}
