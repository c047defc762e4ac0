//! Behavioural scenarios, written once and run against all six flavours.
//!
//! Each macro below holds the scenarios that make sense for a group of
//! flavours: `every_flavour!` for all six, `bounded!` and `unbounded!` by
//! storage, `one_sender!`/`many_senders!` and `one_receiver!`/`many_receivers!`
//! by arity, `many_senders_bounded!` for fair waiting among several senders.
//! The modules at the bottom instantiate them; inside a module, `F<T>` is
//! the flavour with payload `T`, `topology` its module, `ROOM` how many
//! values fit without receiving, and `senders`/`receivers` give as many
//! endpoints as the flavour allows (`PRODUCERS` senders, up to three
//! receivers).
//!
//! Single-endpoint sides move values through `&mut self`, multi sides
//! through `&self`; the scenarios bind endpoints `mut` and call methods, which
//! works for both (hence `unused_mut` is allowed in the flavour modules).
//! Anything that could hang runs under [`within`], so a lost wake-up fails
//! the test instead of stalling CI. Counts grow with `ASYNCBAND_STRESS`.

use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::thread;
use std::time::{Duration, Instant};

use asyncband::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use asyncband_tests::{
    Ledger, Tracked, WakeCounter, assert_delivered_once_in_producer_order, current_thread,
    multi_thread, scale, within,
};
use futures::executor::block_on;

/// The bound of the bounded flavours under test: small, so the ring wraps
/// and senders wait often.
const CAP: usize = 8;
/// Values an unbounded channel is given at once: several 32-slot blocks.
const UNBOUNDED_ROOM: usize = 100;
/// A timeout that must elapse.
const SHORT: Duration = Duration::from_millis(30);
/// A timeout that must not elapse on a healthy machine.
const LONG: Duration = Duration::from_secs(10);
/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(20);

/// A value larger than the 128 bytes above which a receive moves the value
/// from its slot straight into the result (`asyncband-core`'s
/// `chan::Popped`): tracked for drops, with a pattern derived from its
/// sequence number that is checked whole on receive.
#[derive(Debug)]
struct Large {
    tracked: Tracked,
    seq: usize,
    pattern: [u64; 32],
}

impl Large {
    fn new(tracked: Tracked, seq: usize) -> Self {
        Self {
            tracked,
            seq,
            pattern: Self::pattern(seq),
        }
    }

    fn pattern(seq: usize) -> [u64; 32] {
        std::array::from_fn(|i| (seq as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i as u64)
    }

    /// Panics unless this is value `seq`, every byte of it.
    fn check(&self, seq: usize) {
        assert_eq!((self.seq, self.tracked.id()), (seq, seq));
        assert!(
            self.pattern == Self::pattern(seq),
            "value {seq} arrived torn"
        );
    }
}

macro_rules! every_flavour {
    () => {
        // ---- counts and queries ------------------------------------------

        #[test]
        fn a_new_channel_is_open_empty_and_has_one_endpoint_on_each_side() {
            let (tx, rx) = F::<u64>::channel();
            assert_eq!((tx.len(), rx.len()), (0, 0));
            assert!(tx.is_empty() && rx.is_empty());
            assert!(!tx.is_full() && !rx.is_full());
            assert_eq!(tx.capacity(), CAPACITY);
            assert_eq!(rx.capacity(), CAPACITY);
            assert_eq!((tx.sender_count(), tx.receiver_count()), (1, 1));
            assert_eq!((rx.sender_count(), rx.receiver_count()), (1, 1));
            assert!(!tx.is_closed() && !rx.is_closed());
        }

        #[test]
        fn len_and_is_empty_follow_sends_and_receives() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..ROOM {
                tx.try_send(i as u64).unwrap();
                assert_eq!((tx.len(), rx.len()), (i + 1, i + 1));
                assert!(!tx.is_empty() && !rx.is_empty());
            }
            for i in 0..ROOM {
                rx.try_recv().unwrap();
                assert_eq!((tx.len(), rx.len()), (ROOM - i - 1, ROOM - i - 1));
            }
            assert!(tx.is_empty() && rx.is_empty());
        }

        #[test]
        fn same_channel_is_true_only_for_endpoints_of_one_channel() {
            let (tx, rx) = F::<u64>::channel();
            let (other_tx, other_rx) = F::<u64>::channel();
            assert!(tx.same_channel(&tx) && rx.same_channel(&rx));
            assert!(!tx.same_channel(&other_tx) && !other_tx.same_channel(&tx));
            assert!(!rx.same_channel(&other_rx) && !other_rx.same_channel(&rx));
        }

        #[test]
        fn dropping_the_receiver_shows_in_the_sender_counts_and_is_closed() {
            let (tx, rx) = F::<u64>::channel();
            drop(rx);
            assert_eq!((tx.sender_count(), tx.receiver_count()), (1, 0));
            assert!(tx.is_closed());
        }

        #[test]
        fn dropping_the_sender_shows_in_the_receiver_counts_and_is_closed() {
            let (tx, rx) = F::<u64>::channel();
            drop(tx);
            assert_eq!((rx.sender_count(), rx.receiver_count()), (0, 1));
            assert!(rx.is_closed());
        }

        // ---- order -------------------------------------------------------

        #[test]
        fn values_arrive_in_the_order_they_were_sent() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let (mut sent, mut received) = (0u64, 0u64);
            // Bursts of varying length wrap the ring and cross list blocks.
            for burst in [1, ROOM, 3, ROOM - 1, 2, ROOM, ROOM / 2, 1, ROOM] {
                let burst = burst.min(ROOM - usize::try_from(sent - received).unwrap());
                for _ in 0..burst {
                    tx.try_send(sent).unwrap();
                    sent += 1;
                }
                // Leave some behind now and then, so sends and receives
                // interleave at different distances.
                let take = if burst % 2 == 0 {
                    burst
                } else {
                    burst - burst / 3
                };
                for _ in 0..take {
                    assert_eq!(rx.try_recv(), Ok(received));
                    received += 1;
                }
            }
            while received < sent {
                assert_eq!(rx.try_recv(), Ok(received));
                received += 1;
            }
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        }

        #[test]
        fn one_producer_values_arrive_in_order_across_threads() {
            let n = scale(20_000) as u64;
            within(move || {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    for i in 0..n {
                        tx.send_blocking(i).unwrap();
                    }
                });
                for i in 0..n {
                    assert_eq!(rx.recv_blocking(), Ok(i));
                }
                producer.join().unwrap();
                assert_eq!(rx.recv_blocking(), Err(RecvError));
            })
        }

        // ---- exactly once --------------------------------------------------

        #[test]
        fn every_value_is_received_once_in_producer_order_by_blocking_threads() {
            let per_producer = scale(3_000) as u64;
            let received = within(move || {
                let (tx, rx) = F::<(usize, u64)>::channel();
                let producers: Vec<_> = senders(tx)
                    .into_iter()
                    .enumerate()
                    .map(|(id, mut tx)| {
                        thread::spawn(move || {
                            for seq in 0..per_producer {
                                if id % 2 == 0 {
                                    tx.send_blocking((id, seq)).unwrap();
                                } else {
                                    tx.send_timeout((id, seq), LONG).unwrap();
                                }
                            }
                        })
                    })
                    .collect();
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .enumerate()
                    .map(|(c, mut rx)| {
                        thread::spawn(move || {
                            let mut got = Vec::new();
                            // Each consumer receives through a different API.
                            match c % 3 {
                                0 => while rx.recv_many_blocking(&mut got, 16) > 0 {},
                                1 => {
                                    while let Ok(value) = rx.recv_blocking() {
                                        got.push(value);
                                    }
                                }
                                _ => loop {
                                    match rx.recv_timeout(LONG) {
                                        Ok(value) => got.push(value),
                                        Err(RecvTimeoutError::Disconnected) => break,
                                        Err(RecvTimeoutError::Timeout) => panic!("recv timed out"),
                                    }
                                },
                            }
                            got
                        })
                    })
                    .collect();
                for p in producers {
                    p.join().unwrap();
                }
                consumers
                    .into_iter()
                    .map(|c| c.join().unwrap())
                    .collect::<Vec<_>>()
            });
            assert_delivered_once_in_producer_order(&received, PRODUCERS, per_producer);
        }

        /// Producers and consumers as tokio tasks, on whatever runtime runs
        /// this; returns what each consumer received.
        async fn exchange_on_tasks(per_producer: u64) -> Vec<Vec<(usize, u64)>> {
            let (tx, rx) = F::<(usize, u64)>::channel();
            let producers: Vec<_> = senders(tx)
                .into_iter()
                .enumerate()
                .map(|(id, mut tx)| {
                    tokio::spawn(async move {
                        for seq in 0..per_producer {
                            tx.send((id, seq)).await.unwrap();
                            if seq % 97 == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                    })
                })
                .collect();
            let consumers: Vec<_> = receivers(rx)
                .into_iter()
                .enumerate()
                .map(|(c, mut rx)| {
                    tokio::spawn(async move {
                        let mut got = Vec::new();
                        if c % 2 == 0 {
                            while rx.recv_many(&mut got, 16).await > 0 {}
                        } else {
                            while let Ok(value) = rx.recv().await {
                                got.push(value);
                            }
                        }
                        got
                    })
                })
                .collect();
            for producer in producers {
                producer.await.unwrap();
            }
            let mut received = Vec::new();
            for consumer in consumers {
                received.push(consumer.await.unwrap());
            }
            received
        }

        #[test]
        fn every_value_is_received_once_in_producer_order_on_a_current_thread_runtime() {
            let per_producer = scale(3_000) as u64;
            let received =
                within(move || current_thread().block_on(exchange_on_tasks(per_producer)));
            assert_delivered_once_in_producer_order(&received, PRODUCERS, per_producer);
        }

        #[test]
        fn every_value_is_received_once_in_producer_order_on_a_multi_thread_runtime() {
            let per_producer = scale(3_000) as u64;
            let received =
                within(move || multi_thread(2).block_on(exchange_on_tasks(per_producer)));
            assert_delivered_once_in_producer_order(&received, PRODUCERS, per_producer);
        }

        // ---- wake-ups ------------------------------------------------------

        #[test]
        fn a_ping_pong_between_threads_loses_no_wake_up() {
            let rounds = scale(2_000) as u64;
            within(move || {
                let (mut ping_tx, mut ping_rx) = F::<u64>::channel();
                let (mut pong_tx, mut pong_rx) = F::<u64>::channel();
                let echo = thread::spawn(move || {
                    while let Ok(value) = ping_rx.recv_blocking() {
                        pong_tx.send_blocking(value + 1).unwrap();
                    }
                });
                // Every receive finds its channel empty and must be woken.
                for i in 0..rounds {
                    ping_tx.send_blocking(2 * i).unwrap();
                    assert_eq!(pong_rx.recv_blocking(), Ok(2 * i + 1));
                }
                drop(ping_tx);
                echo.join().unwrap();
            })
        }

        #[test]
        fn a_ping_pong_between_tasks_on_a_multi_thread_runtime_loses_no_wake_up() {
            let rounds = scale(2_000) as u64;
            within(move || {
                multi_thread(2).block_on(async move {
                    let (mut ping_tx, mut ping_rx) = F::<u64>::channel();
                    let (mut pong_tx, mut pong_rx) = F::<u64>::channel();
                    let echo = tokio::spawn(async move {
                        while let Ok(value) = ping_rx.recv().await {
                            pong_tx.send(value + 1).await.unwrap();
                        }
                    });
                    for i in 0..rounds {
                        ping_tx.send(2 * i).await.unwrap();
                        assert_eq!(pong_rx.recv().await, Ok(2 * i + 1));
                    }
                    drop(ping_tx);
                    echo.await.unwrap();
                })
            })
        }

        // ---- disconnection -------------------------------------------------

        #[test]
        fn sending_after_the_last_receiver_is_dropped_hands_the_value_back() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                drop(rx);
                assert_eq!(tx.try_send(1), Err(TrySendError::Disconnected(1)));
                assert_eq!(tx.send_blocking(2), Err(SendError(2)));
                assert_eq!(
                    tx.send_timeout(3, LONG),
                    Err(SendTimeoutError::Disconnected(3))
                );
                assert_eq!(block_on(tx.send(4)), Err(SendError(4)));
            })
        }

        #[test]
        fn receivers_drain_then_see_disconnected_after_the_last_sender_is_dropped() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..ROOM as u64 {
                    tx.try_send(i).unwrap();
                }
                drop(tx);
                assert!(rx.is_closed());
                assert_eq!(rx.len(), ROOM);
                // Every receive API drains before it reports the end.
                let mut next = 0u64;
                for _ in 0..ROOM / 4 {
                    assert_eq!(rx.try_recv(), Ok(next));
                    assert_eq!(rx.recv_blocking(), Ok(next + 1));
                    assert_eq!(rx.recv_timeout(LONG), Ok(next + 2));
                    assert_eq!(block_on(rx.recv()), Ok(next + 3));
                    next += 4;
                }
                while next < ROOM as u64 {
                    assert_eq!(rx.try_recv(), Ok(next));
                    next += 1;
                }
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
                assert_eq!(rx.recv_blocking(), Err(RecvError));
                assert_eq!(rx.recv_timeout(LONG), Err(RecvTimeoutError::Disconnected));
                assert_eq!(block_on(rx.recv()), Err(RecvError));
            })
        }

        #[test]
        fn a_blocked_receiver_wakes_with_an_error_when_the_last_sender_is_dropped() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let waiter = thread::spawn(move || rx.recv_blocking());
                thread::sleep(SETTLE);
                drop(tx);
                assert_eq!(waiter.join().unwrap(), Err(RecvError));
            })
        }

        #[test]
        fn a_waiting_recv_future_resolves_to_an_error_when_the_last_sender_is_dropped() {
            let (tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            let mut recv = pin!(rx.recv());
            assert!(counter.poll(recv.as_mut()).is_pending());
            drop(tx);
            assert!(
                counter.wakes() >= 1,
                "dropping the last sender must wake a waiting receiver"
            );
            assert_eq!(counter.poll(recv.as_mut()), Poll::Ready(Err(RecvError)));
        }

        // ---- close ----------------------------------------------------------

        #[test]
        fn closing_from_the_sender_refuses_sends_and_lets_receivers_drain() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..3 {
                    tx.try_send(i).unwrap();
                }
                assert!(tx.close(), "the first close closes");
                assert!(
                    !tx.close() && !rx.close(),
                    "later closes report it was closed already"
                );
                assert!(tx.is_closed() && rx.is_closed());
                assert_eq!(tx.try_send(7), Err(TrySendError::Disconnected(7)));
                assert_eq!(tx.send_blocking(8), Err(SendError(8)));
                assert_eq!(
                    tx.send_timeout(9, LONG),
                    Err(SendTimeoutError::Disconnected(9))
                );
                assert_eq!(block_on(tx.send(10)), Err(SendError(10)));
                assert_eq!(rx.len(), 3);
                for i in 0..3 {
                    assert_eq!(rx.try_recv(), Ok(i));
                }
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
                assert_eq!(rx.recv_timeout(LONG), Err(RecvTimeoutError::Disconnected));
                // Closing is not dropping: the endpoints are still counted.
                assert_eq!((tx.sender_count(), tx.receiver_count()), (1, 1));
            })
        }

        #[test]
        fn closing_from_the_receiver_refuses_sends_and_lets_it_drain() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..3 {
                    tx.try_send(i).unwrap();
                }
                assert!(rx.close(), "the first close closes");
                assert!(
                    !rx.close() && !tx.close(),
                    "later closes report it was closed already"
                );
                assert!(tx.is_closed() && rx.is_closed());
                assert_eq!(tx.try_send(7), Err(TrySendError::Disconnected(7)));
                assert_eq!(tx.send_blocking(8), Err(SendError(8)));
                assert_eq!(block_on(tx.send(9)), Err(SendError(9)));
                assert_eq!(rx.recv_blocking(), Ok(0));
                assert_eq!(block_on(rx.recv()), Ok(1));
                assert_eq!(rx.try_recv(), Ok(2));
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
                assert_eq!(rx.recv_blocking(), Err(RecvError));
                assert_eq!((rx.sender_count(), rx.receiver_count()), (1, 1));
            })
        }

        #[test]
        fn close_wakes_a_blocked_receiver() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let waiter = thread::spawn(move || rx.recv_blocking());
                thread::sleep(SETTLE);
                assert!(tx.close());
                assert_eq!(waiter.join().unwrap(), Err(RecvError));
            })
        }

        #[test]
        fn every_send_that_returned_ok_is_received_when_the_receiver_closes_concurrently() {
            within(|| {
                for round in 0..scale(20) {
                    let ledger = Ledger::new();
                    let (tx, mut rx) = F::<Tracked>::channel();
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .map(|mut tx| {
                            let ledger = Arc::clone(&ledger);
                            thread::spawn(move || {
                                let mut sent = 0usize;
                                while sent < 100_000 {
                                    match tx.send_blocking(ledger.track()) {
                                        Ok(()) => sent += 1,
                                        Err(SendError(back)) => {
                                            drop(back);
                                            break;
                                        }
                                    }
                                }
                                sent
                            })
                        })
                        .collect();
                    let mut received = 0usize;
                    for _ in 0..round % 7 * 5 {
                        drop(rx.recv_blocking().unwrap());
                        received += 1;
                    }
                    rx.close();
                    while let Ok(value) = rx.recv_blocking() {
                        drop(value);
                        received += 1;
                    }
                    let sent: usize = producers.into_iter().map(|p| p.join().unwrap()).sum();
                    assert_eq!(
                        received, sent,
                        "round {round}: a send that returned Ok was lost"
                    );
                    drop(rx);
                    assert_eq!(ledger.live(), 0);
                    ledger.assert_each_dropped_once();
                }
            })
        }

        // ---- timeouts --------------------------------------------------------

        #[test]
        fn recv_timeout_on_an_empty_channel_returns_timeout_after_waiting() {
            within(|| {
                let (_tx, mut rx) = F::<u64>::channel();
                let start = Instant::now();
                assert_eq!(rx.recv_timeout(SHORT), Err(RecvTimeoutError::Timeout));
                let waited = start.elapsed();
                assert!(
                    waited >= SHORT,
                    "returned after {waited:?}, before the timeout"
                );
                assert!(
                    waited < Duration::from_secs(5),
                    "returned only after {waited:?}"
                );
            })
        }

        #[test]
        fn recv_timeout_returns_a_value_sent_while_it_waits() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx.send_blocking(5).unwrap();
                    tx
                });
                let start = Instant::now();
                assert_eq!(rx.recv_timeout(LONG), Ok(5));
                assert!(start.elapsed() < LONG);
                drop(producer.join().unwrap());
            })
        }

        #[test]
        fn timeouts_on_a_closed_channel_report_disconnected_at_once() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                rx.close();
                let start = Instant::now();
                assert_eq!(rx.recv_timeout(LONG), Err(RecvTimeoutError::Disconnected));
                assert_eq!(
                    tx.send_timeout(1, LONG),
                    Err(SendTimeoutError::Disconnected(1))
                );
                assert!(
                    start.elapsed() < LONG / 2,
                    "waited for a timeout on a closed channel"
                );
            })
        }

        #[test]
        fn a_zero_timeout_on_an_empty_channel_times_out_at_once() {
            within(|| {
                let (_tx, mut rx) = F::<u64>::channel();
                assert_eq!(
                    rx.recv_timeout(Duration::ZERO),
                    Err(RecvTimeoutError::Timeout)
                );
            })
        }

        #[test]
        fn a_timeout_too_large_for_an_instant_waits_like_no_timeout() {
            // Regression: the timed operations once computed `Instant::now()
            // + timeout`, which panics for `Duration::MAX`; like std and
            // crossbeam, a deadline past the end of time now means none.
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                assert_eq!(tx.send_timeout(1, Duration::MAX), Ok(()), "room is ready");
                assert_eq!(rx.recv_timeout(Duration::MAX), Ok(1), "a value is ready");
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx.send_blocking(2).unwrap();
                    tx
                });
                assert_eq!(
                    rx.recv_timeout(Duration::MAX),
                    Ok(2),
                    "waits for the late value"
                );
                drop(producer.join().unwrap());
                assert_eq!(
                    rx.recv_timeout(Duration::MAX),
                    Err(RecvTimeoutError::Disconnected)
                );
            })
        }

        // ---- cancellation ------------------------------------------------------

        #[test]
        fn a_recv_future_dropped_while_waiting_or_after_being_woken_loses_no_value() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            {
                let mut recv = pin!(rx.recv());
                assert!(counter.poll(recv.as_mut()).is_pending());
            }
            tx.try_send(1).unwrap();
            assert_eq!(rx.try_recv(), Ok(1));
            {
                let mut recv = pin!(rx.recv());
                assert!(counter.poll(recv.as_mut()).is_pending());
                tx.try_send(2).unwrap();
                assert!(
                    counter.wakes() >= 1,
                    "a send must wake the waiting receiver"
                );
                // Dropped without polling again: the value stays queued.
            }
            assert_eq!(rx.len(), 1);
            assert_eq!(rx.try_recv(), Ok(2));
        }

        #[test]
        fn a_recv_cancelled_by_a_tokio_timeout_loses_no_value() {
            within(|| {
                current_thread().block_on(async {
                    let (mut tx, mut rx) = F::<u64>::channel();
                    assert!(tokio::time::timeout(SHORT, rx.recv()).await.is_err());
                    tx.try_send(1).unwrap();
                    assert_eq!(tokio::time::timeout(LONG, rx.recv()).await.unwrap(), Ok(1));
                    let late = tokio::spawn(async move {
                        tokio::time::sleep(SETTLE).await;
                        tx.send(2).await.unwrap();
                        tx
                    });
                    assert_eq!(tokio::time::timeout(LONG, rx.recv()).await.unwrap(), Ok(2));
                    drop(late.await.unwrap());
                })
            })
        }

        // ---- drop accounting -----------------------------------------------------

        #[test]
        fn large_values_arrive_whole_through_every_receive_and_are_dropped_once() {
            within(|| {
                let ledger = Ledger::new();
                let (mut tx, mut rx) = F::<Large>::channel();
                let counter = WakeCounter::new();
                let mut seq = 0;
                // Enough rounds to wrap a ring of `CAP` and cross list blocks.
                for _ in 0..12 {
                    tx.try_send(Large::new(ledger.track(), seq)).unwrap();
                    rx.try_recv().unwrap().check(seq);
                    seq += 1;
                    // A receive future that finds the value ready.
                    tx.try_send(Large::new(ledger.track(), seq)).unwrap();
                    match counter.poll(pin!(rx.recv()).as_mut()) {
                        Poll::Ready(Ok(value)) => value.check(seq),
                        other => panic!("a ready receive returned {other:?}"),
                    }
                    seq += 1;
                    // One that waits for it.
                    {
                        let mut recv = pin!(rx.recv());
                        assert!(counter.poll(recv.as_mut()).is_pending());
                        tx.try_send(Large::new(ledger.track(), seq)).unwrap();
                        match counter.poll(recv.as_mut()) {
                            Poll::Ready(Ok(value)) => value.check(seq),
                            other => panic!("a woken receive returned {other:?}"),
                        }
                    }
                    seq += 1;
                    tx.try_send(Large::new(ledger.track(), seq)).unwrap();
                    rx.recv_blocking().unwrap().check(seq);
                    seq += 1;
                }
                // Queued when the channel goes: dropped with it.
                for _ in 0..3 {
                    tx.try_send(Large::new(ledger.track(), seq)).unwrap();
                    seq += 1;
                }
                drop((tx, rx));
                assert_eq!(ledger.created(), seq);
                ledger.assert_each_dropped_once();
            })
        }

        #[test]
        fn every_value_is_dropped_exactly_once_whether_received_queued_or_handed_back() {
            within(|| {
                let ledger = Ledger::new();
                let (mut tx, mut rx) = F::<Tracked>::channel();
                for _ in 0..ROOM {
                    tx.try_send(ledger.track()).unwrap();
                }
                // Received: the receiver owns it; the channel keeps no copy.
                let first = rx.try_recv().unwrap();
                assert_eq!(first.id(), 0);
                assert_eq!(ledger.live(), ROOM);
                drop(first);
                assert_eq!((ledger.drops_of(0), ledger.live()), (1, ROOM - 1));
                // Queued when the last receiver goes: dropped right then.
                drop(rx);
                assert_eq!(ledger.live(), 0, "queued values outlived the last receiver");
                // Handed back in errors: alive until the caller drops them.
                let value = ledger.track();
                let id = value.id();
                let back = tx.try_send(value).unwrap_err();
                assert!(matches!(back, TrySendError::Disconnected(_)));
                assert_eq!(ledger.live(), 1);
                assert_eq!(back.into_inner().id(), id);
                let SendError(back) = tx.send_blocking(ledger.track()).unwrap_err();
                assert_eq!(ledger.live(), 1);
                drop(back);
                match tx.send_timeout(ledger.track(), LONG) {
                    Err(SendTimeoutError::Disconnected(back)) => drop(back),
                    other => panic!("expected Disconnected, got {other:?}"),
                }
                let SendError(back) = block_on(tx.send(ledger.track())).unwrap_err();
                assert_eq!(ledger.live(), 1);
                drop(back);
                drop(tx);
                assert_eq!(ledger.live(), 0);
                ledger.assert_each_dropped_once();
            })
        }

        #[test]
        fn dropping_the_last_receiver_drops_queued_values() {
            let ledger = Ledger::new();
            let (mut tx, rx) = F::<Tracked>::channel();
            for _ in 0..ROOM {
                tx.try_send(ledger.track()).unwrap();
            }
            assert_eq!(ledger.live(), ROOM);
            drop(rx);
            // The sender is still alive: the values must not wait for it.
            assert_eq!(ledger.live(), 0, "queued values outlived the last receiver");
            ledger.assert_each_dropped_once();
            assert!(tx.is_closed());
            drop(tx);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn dropping_the_receiver_while_producers_send_drops_every_value_exactly_once() {
            within(|| {
                for round in 0..scale(20) {
                    let ledger = Ledger::new();
                    let (tx, mut rx) = F::<Tracked>::channel();
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .map(|mut tx| {
                            let ledger = Arc::clone(&ledger);
                            thread::spawn(move || {
                                for _ in 0..100_000 {
                                    if let Err(SendError(back)) = tx.send_blocking(ledger.track()) {
                                        drop(back);
                                        return;
                                    }
                                }
                            })
                        })
                        .collect();
                    for _ in 0..round % 5 * 7 {
                        drop(rx.recv_blocking().unwrap());
                    }
                    // Not drained: whatever is queued or in flight is the
                    // channel's to drop.
                    drop(rx);
                    for p in producers {
                        p.join().unwrap();
                    }
                    assert_eq!(
                        ledger.live(),
                        0,
                        "round {round}: values outlived every endpoint"
                    );
                    ledger.assert_each_dropped_once();
                }
            })
        }

        #[test]
        fn dropping_the_sender_then_the_receiver_drops_queued_values_once() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            for _ in 0..ROOM {
                tx.try_send(ledger.track()).unwrap();
            }
            drop(tx);
            assert_eq!(
                ledger.live(),
                ROOM,
                "dropping the sender must not drop queued values"
            );
            drop(rx.try_recv().unwrap());
            drop(rx);
            assert_eq!(ledger.live(), 0);
            ledger.assert_each_dropped_once();
        }

        // ---- zero-sized types -------------------------------------------------------

        #[test]
        fn zero_sized_values_are_delivered_and_counted() {
            let (mut tx, mut rx) = F::<()>::channel();
            for _ in 0..3 {
                for i in 0..ROOM {
                    tx.try_send(()).unwrap();
                    assert_eq!(rx.len(), i + 1);
                }
                for i in 0..ROOM {
                    assert_eq!(rx.try_recv(), Ok(()));
                    assert_eq!(rx.len(), ROOM - i - 1);
                }
                assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            }
            tx.try_send(()).unwrap();
            drop(tx);
            assert_eq!(rx.try_recv(), Ok(()));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }

        #[test]
        fn zero_sized_values_with_drop_glue_are_dropped_exactly_once() {
            static DROPS: AtomicUsize = AtomicUsize::new(0);
            #[derive(Debug)]
            struct Token;
            impl Drop for Token {
                fn drop(&mut self) {
                    DROPS.fetch_add(1, Ordering::SeqCst);
                }
            }
            assert_eq!(size_of::<Token>(), 0);
            let drops = || DROPS.load(Ordering::SeqCst);
            let (mut tx, mut rx) = F::<Token>::channel();
            for _ in 0..ROOM {
                tx.try_send(Token).unwrap();
            }
            assert_eq!(drops(), 0);
            drop(rx.try_recv().unwrap());
            drop(rx.try_recv().unwrap());
            assert_eq!(drops(), 2);
            drop(rx);
            assert_eq!(
                drops(),
                ROOM,
                "queued tokens must be dropped with the last receiver"
            );
            let back = tx.try_send(Token).unwrap_err();
            assert_eq!(drops(), ROOM, "a token handed back is not dropped yet");
            drop(back);
            drop(tx);
            assert_eq!(drops(), ROOM + 1);
        }

        #[test]
        fn zero_sized_values_cross_threads_exactly_once() {
            let per_producer = scale(5_000);
            let total = within(move || {
                let (tx, rx) = F::<()>::channel();
                let producers: Vec<_> = senders(tx)
                    .into_iter()
                    .map(|mut tx| {
                        thread::spawn(move || {
                            for _ in 0..per_producer {
                                tx.send_blocking(()).unwrap();
                            }
                        })
                    })
                    .collect();
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|mut rx| {
                        thread::spawn(move || {
                            let mut count = 0usize;
                            while rx.recv_blocking().is_ok() {
                                count += 1;
                            }
                            count
                        })
                    })
                    .collect();
                for p in producers {
                    p.join().unwrap();
                }
                consumers
                    .into_iter()
                    .map(|c| c.join().unwrap())
                    .sum::<usize>()
            });
            assert_eq!(total, PRODUCERS * per_producer);
        }

        // ---- batches -------------------------------------------------------------------

        #[test]
        fn try_recv_many_appends_at_most_limit_ready_values_in_order() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let mut buf = vec![100];
            assert_eq!(rx.try_recv_many(&mut buf, 4), 0, "nothing is ready");
            for i in 0..5 {
                tx.try_send(i).unwrap();
            }
            assert_eq!(
                rx.try_recv_many(&mut buf, 0),
                0,
                "a limit of 0 takes nothing"
            );
            assert_eq!(rx.len(), 5);
            assert_eq!(rx.try_recv_many(&mut buf, 3), 3);
            assert_eq!(buf, [100, 0, 1, 2], "appended after what was there");
            assert_eq!(rx.try_recv_many(&mut buf, 10), 2, "only what is ready");
            assert_eq!(buf, [100, 0, 1, 2, 3, 4]);
            assert_eq!(rx.try_recv_many(&mut buf, 10), 0);
            drop(tx);
            assert_eq!(rx.try_recv_many(&mut buf, 10), 0);
        }

        #[test]
        fn recv_many_waits_for_one_value_then_takes_what_is_ready_up_to_limit() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            let mut buf = Vec::new();
            {
                let mut batch = pin!(rx.recv_many(&mut buf, 4));
                assert!(
                    counter.poll(batch.as_mut()).is_pending(),
                    "nothing to take yet"
                );
                for i in 0..6 {
                    tx.try_send(i).unwrap();
                }
                assert!(counter.wakes() >= 1, "a send must wake the waiting batch");
                assert_eq!(counter.poll(batch.as_mut()), Poll::Ready(4));
            }
            assert_eq!(buf, [0, 1, 2, 3]);
            assert_eq!(
                block_on(rx.recv_many(&mut buf, 0)),
                0,
                "a limit of 0 takes nothing"
            );
            assert_eq!(block_on(rx.recv_many(&mut buf, 10)), 2);
            assert_eq!(buf, [0, 1, 2, 3, 4, 5]);
            drop(tx);
            assert_eq!(
                block_on(rx.recv_many(&mut buf, 10)),
                0,
                "0 once closed and drained"
            );
        }

        #[test]
        fn recv_many_blocking_waits_for_one_value_and_returns_zero_once_closed_and_drained() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..3 {
                    tx.try_send(i).unwrap();
                }
                let mut buf = Vec::new();
                assert_eq!(rx.recv_many_blocking(&mut buf, 2), 2);
                assert_eq!(rx.recv_many_blocking(&mut buf, 10), 1);
                assert_eq!(
                    rx.recv_many_blocking(&mut buf, 0),
                    0,
                    "a limit of 0 takes nothing"
                );
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx.send_blocking(3).unwrap();
                    thread::sleep(SETTLE);
                    drop(tx);
                });
                assert_eq!(
                    rx.recv_many_blocking(&mut buf, 10),
                    1,
                    "waits for the late value"
                );
                assert_eq!(
                    rx.recv_many_blocking(&mut buf, 10),
                    0,
                    "0 once closed and drained"
                );
                assert_eq!(buf, [0, 1, 2, 3]);
                producer.join().unwrap();
            })
        }

        // ---- iterators ---------------------------------------------------------------------

        #[test]
        fn try_iter_yields_the_ready_values_and_stops_when_empty() {
            let (mut tx, mut rx) = F::<u64>::channel();
            assert_eq!(rx.try_iter().next(), None);
            for i in 0..3 {
                tx.try_send(i).unwrap();
            }
            assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1, 2]);
            tx.try_send(3).unwrap();
            assert_eq!(
                rx.try_iter().collect::<Vec<_>>(),
                [3],
                "the channel is still usable"
            );
            assert!(!rx.is_closed());
        }

        #[test]
        fn iter_blocks_for_values_until_the_channel_is_closed_and_drained() {
            let n = scale(1_000) as u64;
            let got = within(move || {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    for i in 0..n {
                        tx.send_blocking(i).unwrap();
                    }
                });
                let got: Vec<u64> = rx.iter().collect();
                producer.join().unwrap();
                got
            });
            assert_eq!(got, (0..n).collect::<Vec<_>>());
        }

        #[test]
        fn into_iter_consumes_the_receiver_until_closed_and_drained() {
            let got = within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                for i in 0..ROOM as u64 {
                    tx.try_send(i).unwrap();
                }
                drop(tx);
                rx.into_iter().collect::<Vec<_>>()
            });
            assert_eq!(got, (0..ROOM as u64).collect::<Vec<_>>());
        }

        // ---- the closed future -----------------------------------------------------------

        #[test]
        fn the_closed_future_is_pending_while_open_and_wakes_when_the_receiver_goes() {
            let (tx, rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            let mut closed = pin!(tx.closed());
            assert!(counter.poll(closed.as_mut()).is_pending());
            assert!(
                counter.poll(closed.as_mut()).is_pending(),
                "still open on a second poll"
            );
            drop(rx);
            assert!(
                counter.wakes() >= 1,
                "dropping the last receiver must wake `closed`"
            );
            assert!(counter.poll(closed.as_mut()).is_ready());
        }

        #[test]
        fn the_closed_future_resolves_after_close_from_either_side() {
            let (tx, rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            {
                let mut closed = pin!(tx.closed());
                assert!(counter.poll(closed.as_mut()).is_pending());
                assert!(rx.close());
                assert!(counter.wakes() >= 1, "closing must wake `closed`");
                assert!(counter.poll(closed.as_mut()).is_ready());
            }
            let (tx, _rx) = F::<u64>::channel();
            assert!(tx.close());
            within(move || block_on(tx.closed()));
        }

        #[test]
        fn the_closed_future_wakes_a_task_on_another_thread() {
            within(|| {
                multi_thread(2).block_on(async {
                    let (tx, rx) = F::<u64>::channel();
                    let watcher = tokio::spawn(async move {
                        tx.closed().await;
                        tx.is_closed()
                    });
                    tokio::time::sleep(SETTLE).await;
                    drop(rx);
                    assert!(watcher.await.unwrap());
                })
            })
        }
    };
}

macro_rules! bounded {
    () => {
        #[test]
        fn a_bounded_channel_is_full_at_exactly_cap() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                assert!(!tx.is_full() && !rx.is_full(), "full after only {i} values");
                tx.try_send(i).unwrap();
            }
            assert!(tx.is_full() && rx.is_full());
            assert_eq!(tx.len(), CAP);
            assert_eq!(tx.try_send(99), Err(TrySendError::Full(99)));
            assert_eq!(rx.try_recv(), Ok(0));
            assert!(!tx.is_full());
            tx.try_send(CAP as u64).unwrap();
            assert!(tx.is_full());
            assert_eq!(tx.try_send(98), Err(TrySendError::Full(98)));
            for i in 1..=CAP as u64 {
                assert_eq!(rx.try_recv(), Ok(i));
            }
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
        }

        #[test]
        fn a_blocking_send_from_a_thread_local_destructor_waits_for_room() {
            /// Sends `CAP + 1` when the thread's locals are destroyed, then
            /// reports whether it could.
            struct SendOnExit(topology::Sender<F<u64>>, std::sync::mpsc::Sender<bool>);
            impl Drop for SendOnExit {
                fn drop(&mut self) {
                    // A panic here would abort the process: report it.
                    let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        self.0.send_blocking(CAP as u64 + 1).is_ok()
                    }));
                    let _ = self.1.send(sent.unwrap_or(false));
                }
            }
            thread_local! {
                static ON_EXIT: std::cell::RefCell<Option<SendOnExit>> =
                    const { std::cell::RefCell::new(None) };
            }
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let (report_tx, report_rx) = std::sync::mpsc::channel();
                let worker = thread::spawn(move || {
                    for i in 0..CAP as u64 {
                        tx.try_send(i).unwrap();
                    }
                    ON_EXIT.with(|slot| {
                        let mut slot = slot.borrow_mut();
                        let on_exit = slot.insert(SendOnExit(tx, report_tx));
                        // Parks until the receiver below makes room. That
                        // makes the thread's waker, a thread local made after
                        // `ON_EXIT` and so destroyed before it.
                        on_exit.0.send_blocking(CAP as u64).unwrap();
                    });
                });
                thread::sleep(Duration::from_millis(50));
                // Room for the worker's send; the channel is then full again
                // when the worker exits and its destructor sends.
                assert_eq!(rx.recv_blocking(), Ok(0));
                thread::sleep(Duration::from_millis(50));
                for i in 1..=CAP as u64 + 1 {
                    assert_eq!(rx.recv_blocking(), Ok(i));
                }
                worker.join().unwrap();
                assert_eq!(report_rx.recv(), Ok(true), "the destructor's send waited");
            });
        }

        #[test]
        fn a_sender_blocked_on_a_full_channel_is_woken_by_each_single_receive() {
            let rounds = scale(1_000) as u64;
            within(move || {
                let (mut tx, mut rx) = F::<u64>::channel();
                let (mut ack_tx, mut ack_rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let cap = CAP as u64;
                let producer = thread::spawn(move || {
                    for i in cap..cap + rounds {
                        tx.send_blocking(i).unwrap();
                        ack_tx.send_blocking(i).unwrap();
                    }
                });
                // Each receive frees one slot of a full channel, which only
                // the waiting sender can fill: it must be woken every time.
                for i in 0..rounds {
                    assert_eq!(rx.recv_blocking(), Ok(i));
                    assert_eq!(ack_rx.recv_blocking(), Ok(cap + i));
                }
                producer.join().unwrap();
            })
        }

        #[test]
        fn a_send_future_on_a_full_channel_is_woken_by_each_single_receive() {
            let rounds = scale(1_000) as u64;
            within(move || {
                multi_thread(2).block_on(async move {
                    let (mut tx, mut rx) = F::<u64>::channel();
                    let (mut ack_tx, mut ack_rx) = F::<u64>::channel();
                    for i in 0..CAP as u64 {
                        tx.try_send(i).unwrap();
                    }
                    let cap = CAP as u64;
                    let producer = tokio::spawn(async move {
                        for i in cap..cap + rounds {
                            tx.send(i).await.unwrap();
                            ack_tx.send(i).await.unwrap();
                        }
                    });
                    for i in 0..rounds {
                        assert_eq!(rx.recv().await, Ok(i));
                        assert_eq!(ack_rx.recv().await, Ok(cap + i));
                    }
                    producer.await.unwrap();
                })
            })
        }

        #[test]
        fn a_value_refused_as_full_is_handed_back_and_dropped_once() {
            let ledger = Ledger::new();
            let (mut tx, rx) = F::<Tracked>::channel();
            for _ in 0..CAP {
                tx.try_send(ledger.track()).unwrap();
            }
            let value = ledger.track();
            let id = value.id();
            let back = tx.try_send(value).unwrap_err();
            assert!(matches!(back, TrySendError::Full(_)));
            assert_eq!(back.into_inner().id(), id);
            match tx.send_timeout(ledger.track(), SHORT) {
                Err(SendTimeoutError::Timeout(back)) => drop(back),
                other => panic!("expected Timeout, got {other:?}"),
            }
            assert_eq!(ledger.live(), CAP);
            drop((tx, rx));
            assert_eq!(ledger.live(), 0);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn send_timeout_on_a_full_channel_times_out_and_hands_the_value_back() {
            within(|| {
                let (mut tx, _rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let start = Instant::now();
                assert_eq!(
                    tx.send_timeout(99, SHORT),
                    Err(SendTimeoutError::Timeout(99))
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
                assert_eq!(
                    tx.len(),
                    CAP,
                    "a timed-out send must leave the channel as it was"
                );
                let start = Instant::now();
                assert_eq!(
                    tx.send_timeout(98, Duration::ZERO),
                    Err(SendTimeoutError::Timeout(98))
                );
                assert!(start.elapsed() < Duration::from_secs(5));
            })
        }

        #[test]
        fn send_timeout_completes_when_room_is_made_while_it_waits() {
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
                assert_eq!(tx.send_timeout(99, LONG), Ok(()));
                let mut rx = consumer.join().unwrap();
                for i in 1..CAP as u64 {
                    assert_eq!(rx.try_recv(), Ok(i));
                }
                assert_eq!(rx.try_recv(), Ok(99));
            })
        }

        #[test]
        fn a_blocked_sender_gets_its_value_back_when_the_receiver_is_dropped() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let sender = thread::spawn(move || tx.send_blocking(99));
                thread::sleep(SETTLE);
                drop(rx);
                assert_eq!(sender.join().unwrap(), Err(SendError(99)));
            })
        }

        #[test]
        fn close_wakes_a_blocked_sender_and_hands_its_value_back() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let sender = thread::spawn(move || tx.send_blocking(99));
                thread::sleep(SETTLE);
                assert!(rx.close());
                assert_eq!(sender.join().unwrap(), Err(SendError(99)));
                let drained: Vec<u64> = rx.try_iter().collect();
                assert_eq!(drained, (0..CAP as u64).collect::<Vec<_>>());
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
            })
        }

        #[test]
        fn a_send_future_waits_for_room_and_is_woken_only_by_a_receive() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            {
                let mut send = pin!(tx.send(99));
                assert!(counter.poll(send.as_mut()).is_pending());
                assert!(
                    counter.poll(send.as_mut()).is_pending(),
                    "still full on a second poll"
                );
                assert_eq!(counter.wakes(), 0, "woken with nothing freed");
                assert_eq!(rx.try_recv(), Ok(0));
                assert!(
                    counter.wakes() >= 1,
                    "a receive must wake the waiting sender"
                );
                assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Ok(())));
            }
            let drained: Vec<u64> = rx.try_iter().collect();
            let mut expected: Vec<u64> = (1..CAP as u64).collect();
            expected.push(99);
            assert_eq!(drained, expected);
        }

        #[test]
        fn a_waiting_send_future_gets_its_value_back_when_the_receiver_is_dropped() {
            let (mut tx, rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let counter = WakeCounter::new();
            let mut send = pin!(tx.send(99));
            assert!(counter.poll(send.as_mut()).is_pending());
            drop(rx);
            assert!(
                counter.wakes() >= 1,
                "dropping the receiver must wake the waiting sender"
            );
            assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Err(SendError(99))));
        }

        #[test]
        fn a_send_future_dropped_while_waiting_drops_its_value_and_sends_nothing() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            for _ in 0..CAP {
                tx.try_send(ledger.track()).unwrap();
            }
            let counter = WakeCounter::new();
            let extra = ledger.track();
            let id = extra.id();
            {
                let mut send = pin!(tx.send(extra));
                assert!(counter.poll(send.as_mut()).is_pending());
            }
            assert_eq!(
                ledger.drops_of(id),
                1,
                "the unsent value is dropped with its future"
            );
            assert_eq!(rx.len(), CAP);
            // Once more, dropped after a receive woke it: the room it was
            // woken for is not lost.
            let extra = ledger.track();
            let id = extra.id();
            {
                let mut send = pin!(tx.send(extra));
                assert!(counter.poll(send.as_mut()).is_pending());
                drop(rx.try_recv().unwrap());
                assert!(counter.wakes() >= 1);
            }
            assert_eq!(ledger.drops_of(id), 1);
            assert_eq!(rx.len(), CAP - 1);
            tx.try_send(ledger.track())
                .expect("the room freed by the receive is still there");
            let ids: Vec<usize> = rx.try_iter().map(|value| value.id()).collect();
            let mut expected: Vec<usize> = (1..CAP).collect();
            expected.push(id + 1);
            assert_eq!(ids, expected);
            drop((tx, rx));
            ledger.assert_each_dropped_once();
        }
    };
}

macro_rules! unbounded {
    () => {
        #[test]
        fn an_unbounded_channel_is_never_full() {
            let (mut tx, rx) = F::<u64>::channel();
            assert_eq!(tx.capacity(), None);
            for i in 0..scale(10_000) as u64 {
                assert!(!tx.is_full());
                tx.try_send(i).unwrap();
            }
            assert!(!tx.is_full() && !rx.is_full());
            assert_eq!(rx.len(), scale(10_000));
            assert_eq!(
                tx.send_timeout(0, Duration::ZERO),
                Ok(()),
                "no wait, even with no time"
            );
        }

        #[test]
        fn a_send_on_an_unbounded_channel_is_ready_at_once() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            for i in 0..UNBOUNDED_ROOM as u64 {
                let mut send = pin!(tx.send(i));
                assert_eq!(counter.poll(send.as_mut()), Poll::Ready(Ok(())));
            }
            assert_eq!(rx.try_iter().count(), UNBOUNDED_ROOM);
        }

        #[test]
        fn values_spanning_many_blocks_are_delivered_in_order_and_dropped_once() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            let n = 1_000;
            for _ in 0..n {
                tx.try_send(ledger.track()).unwrap();
            }
            for id in 0..n / 2 {
                assert_eq!(rx.try_recv().unwrap().id(), id);
            }
            assert_eq!(ledger.live(), n - n / 2);
            drop(rx);
            assert_eq!(ledger.live(), 0, "queued values outlived the last receiver");
            drop(tx);
            ledger.assert_each_dropped_once();
        }
    };
}

macro_rules! one_sender {
    () => {
        const PRODUCERS: usize = 1;

        /// The only sender, as a list of `PRODUCERS`.
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            vec![tx]
        }
    };
}

macro_rules! many_senders {
    () => {
        const PRODUCERS: usize = 3;

        /// `PRODUCERS` senders of one channel.
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            let mut all: Vec<_> = (1..PRODUCERS).map(|_| tx.clone()).collect();
            all.push(tx);
            all
        }

        #[test]
        fn cloning_and_dropping_senders_updates_sender_count_and_same_channel() {
            let (tx, rx) = F::<u64>::channel();
            let tx2 = tx.clone();
            let tx3 = tx2.clone();
            assert_eq!((tx.sender_count(), rx.sender_count()), (3, 3));
            assert!(tx.same_channel(&tx2) && tx3.same_channel(&tx));
            drop(tx2);
            assert_eq!(tx3.sender_count(), 2);
            drop(tx);
            assert_eq!(rx.sender_count(), 1);
            assert!(!rx.is_closed());
            drop(tx3);
            assert_eq!(rx.sender_count(), 0);
            assert!(rx.is_closed());
        }

        #[test]
        fn the_channel_stays_open_until_the_last_sender_is_dropped() {
            let (tx, mut rx) = F::<u64>::channel();
            let tx2 = tx.clone();
            tx.try_send(1).unwrap();
            drop(tx);
            assert!(!rx.is_closed() && !tx2.is_closed());
            tx2.try_send(2).unwrap();
            assert_eq!(rx.try_recv(), Ok(1));
            assert_eq!(rx.try_recv(), Ok(2));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            drop(tx2);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }

        #[test]
        fn a_weak_sender_does_not_keep_the_channel_open() {
            let (tx, mut rx) = F::<u64>::channel();
            let weak = tx.downgrade();
            assert_eq!(rx.sender_count(), 1, "weak senders are not counted");
            tx.try_send(1).unwrap();
            drop(tx);
            assert!(rx.is_closed());
            assert!(weak.upgrade().is_none(), "no sender is left to upgrade to");
            assert_eq!(rx.try_recv(), Ok(1));
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }

        #[test]
        fn a_weak_sender_upgrades_to_a_counted_sender_while_a_sender_lives() {
            let (tx, mut rx) = F::<u64>::channel();
            let weak = tx.downgrade();
            let weak2 = weak.clone();
            let upgraded = weak.upgrade().expect("a sender is alive");
            assert!(upgraded.same_channel(&tx));
            assert_eq!(tx.sender_count(), 2);
            drop(tx);
            assert!(
                !rx.is_closed(),
                "the upgraded sender keeps the channel open"
            );
            upgraded.try_send(1).unwrap();
            assert_eq!(rx.try_recv(), Ok(1));
            drop(upgraded);
            assert!(rx.is_closed());
            assert!(weak2.upgrade().is_none());
        }

        #[test]
        fn every_send_that_returned_ok_is_received_when_a_sender_closes_concurrently() {
            within(|| {
                for round in 0..scale(20) {
                    let ledger = Ledger::new();
                    let (tx, mut rx) = F::<Tracked>::channel();
                    let closer = tx.clone();
                    let producers: Vec<_> = senders(tx)
                        .into_iter()
                        .map(|tx| {
                            let ledger = Arc::clone(&ledger);
                            thread::spawn(move || {
                                let mut sent = 0usize;
                                while sent < 100_000 {
                                    match tx.send_blocking(ledger.track()) {
                                        Ok(()) => sent += 1,
                                        Err(SendError(back)) => {
                                            drop(back);
                                            break;
                                        }
                                    }
                                }
                                sent
                            })
                        })
                        .collect();
                    let closer = thread::spawn(move || {
                        thread::sleep(Duration::from_micros(100 * (round as u64 % 5)));
                        closer.close();
                    });
                    let mut received = 0usize;
                    while let Ok(value) = rx.recv_blocking() {
                        drop(value);
                        received += 1;
                    }
                    closer.join().unwrap();
                    let sent: usize = producers.into_iter().map(|p| p.join().unwrap()).sum();
                    assert_eq!(
                        received, sent,
                        "round {round}: a send that returned Ok was lost"
                    );
                    drop(rx);
                    assert_eq!(ledger.live(), 0);
                    ledger.assert_each_dropped_once();
                }
            })
        }
    };
}

macro_rules! many_senders_bounded {
    () => {
        #[test]
        fn waiting_senders_are_served_in_the_order_they_began_to_wait() {
            let (tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let (wa, wb, wc) = (WakeCounter::new(), WakeCounter::new(), WakeCounter::new());
            let mut a = pin!(tx.send(100));
            let mut b = pin!(tx.send(101));
            let mut c = pin!(tx.send(102));
            assert!(wa.poll(a.as_mut()).is_pending());
            assert!(wb.poll(b.as_mut()).is_pending());
            assert!(wc.poll(c.as_mut()).is_pending());
            assert_eq!(rx.try_recv(), Ok(0));
            assert_eq!(
                (wa.wakes() > 0, wb.wakes(), wc.wakes()),
                (true, 0, 0),
                "first come, first woken"
            );
            // The freed slot belongs to the first waiter: no barging.
            assert_eq!(tx.try_send(7), Err(TrySendError::Full(7)));
            assert!(tx.is_full());
            assert!(
                wc.poll(c.as_mut()).is_pending(),
                "the last waiter cannot take the slot"
            );
            assert!(
                wb.poll(b.as_mut()).is_pending(),
                "the second waiter cannot take the slot"
            );
            assert_eq!(wa.poll(a.as_mut()), Poll::Ready(Ok(())));
            assert_eq!(rx.try_recv(), Ok(1));
            assert_eq!((wb.wakes() > 0, wc.wakes()), (true, 0));
            assert!(wc.poll(c.as_mut()).is_pending());
            assert_eq!(wb.poll(b.as_mut()), Poll::Ready(Ok(())));
            assert_eq!(rx.try_recv(), Ok(2));
            assert!(wc.wakes() > 0);
            assert_eq!(wc.poll(c.as_mut()), Poll::Ready(Ok(())));
            let drained: Vec<u64> = rx.try_iter().collect();
            let mut expected: Vec<u64> = (3..CAP as u64).collect();
            expected.extend([100, 101, 102]);
            assert_eq!(drained, expected);
        }

        #[test]
        fn a_send_cancelled_after_it_was_granted_room_passes_the_room_on() {
            let (tx, mut rx) = F::<u64>::channel();
            for i in 0..CAP as u64 {
                tx.try_send(i).unwrap();
            }
            let (wa, wb) = (WakeCounter::new(), WakeCounter::new());
            let mut a = Box::pin(tx.send(100));
            let mut b = Box::pin(tx.send(101));
            assert!(wa.poll(a.as_mut()).is_pending());
            assert!(wb.poll(b.as_mut()).is_pending());
            assert_eq!(rx.try_recv(), Ok(0));
            assert_eq!((wa.wakes() > 0, wb.wakes()), (true, 0));
            drop(a);
            assert!(
                wb.wakes() > 0,
                "the room granted to a dropped send must go to the next one"
            );
            assert_eq!(wb.poll(b.as_mut()), Poll::Ready(Ok(())));
            assert!(tx.is_full());
            let drained: Vec<u64> = rx.try_iter().collect();
            let mut expected: Vec<u64> = (1..CAP as u64).collect();
            expected.push(101);
            assert_eq!(drained, expected);
        }

        #[test]
        fn blocked_senders_all_complete_as_room_is_made() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let blocked: Vec<_> = (0..3u64)
                    .map(|k| {
                        let tx = tx.clone();
                        thread::spawn(move || tx.send_blocking(100 + k))
                    })
                    .collect();
                thread::sleep(SETTLE);
                let mut got: Vec<u64> = (0..CAP + 3).map(|_| rx.recv_blocking().unwrap()).collect();
                for sender in blocked {
                    assert_eq!(sender.join().unwrap(), Ok(()));
                }
                got.sort();
                let mut expected: Vec<u64> = (0..CAP as u64).collect();
                expected.extend([100, 101, 102]);
                assert_eq!(got, expected);
            })
        }
    };
}

macro_rules! one_receiver {
    () => {
        /// The only receiver, as a list.
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            vec![rx]
        }

        #[test]
        fn peek_shows_the_next_value_without_taking_it() {
            let (mut tx, mut rx) = F::<String>::channel();
            assert_eq!(rx.peek(), None);
            tx.try_send("a".to_string()).unwrap();
            tx.try_send("b".to_string()).unwrap();
            assert_eq!(rx.peek().map(String::as_str), Some("a"));
            assert_eq!(
                rx.peek().map(String::as_str),
                Some("a"),
                "peeking twice sees the same"
            );
            assert_eq!(rx.len(), 2, "a peeked value still counts in len");
            assert_eq!(rx.try_recv().as_deref(), Ok("a"));
            assert_eq!(rx.peek().map(String::as_str), Some("b"));
            assert_eq!(rx.try_recv().as_deref(), Ok("b"));
            assert_eq!(rx.peek(), None);
        }

        #[test]
        fn peek_follows_the_queue_across_wraps_and_blocks() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let mut next = 0u64;
            for round in 0..10 {
                for i in 0..ROOM as u64 {
                    tx.try_send(round * ROOM as u64 + i).unwrap();
                }
                for _ in 0..ROOM {
                    assert_eq!(rx.peek(), Some(&next));
                    assert_eq!(rx.try_recv(), Ok(next));
                    next += 1;
                }
                assert_eq!(rx.peek(), None);
            }
        }

        #[test]
        fn a_peeked_value_still_takes_its_slot_and_survives_the_sender() {
            let (mut tx, mut rx) = F::<u64>::channel();
            for i in 0..ROOM as u64 {
                tx.try_send(i).unwrap();
            }
            assert_eq!(rx.peek(), Some(&0));
            assert_eq!(rx.len(), ROOM);
            if CAPACITY.is_some() {
                assert!(
                    tx.is_full(),
                    "a peeked value still counts against the capacity"
                );
                assert_eq!(tx.try_send(99), Err(TrySendError::Full(99)));
            }
            drop(tx);
            assert_eq!(
                rx.peek(),
                Some(&0),
                "the sender going away leaves queued values"
            );
            assert_eq!(rx.try_iter().count(), ROOM);
            assert_eq!(rx.peek(), None);
            assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
        }
    };
}

macro_rules! many_receivers {
    () => {
        const CONSUMERS: usize = 3;

        /// `CONSUMERS` receivers of one channel.
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            let mut all: Vec<_> = (1..CONSUMERS).map(|_| rx.clone()).collect();
            all.push(rx);
            all
        }

        #[test]
        fn cloning_and_dropping_receivers_updates_receiver_count_and_same_channel() {
            let (tx, rx) = F::<u64>::channel();
            let rx2 = rx.clone();
            let rx3 = rx2.clone();
            assert_eq!((tx.receiver_count(), rx.receiver_count()), (3, 3));
            assert!(rx.same_channel(&rx2) && rx3.same_channel(&rx));
            drop(rx2);
            assert_eq!(tx.receiver_count(), 2);
            drop(rx);
            assert!(!tx.is_closed());
            drop(rx3);
            assert_eq!(tx.receiver_count(), 0);
            assert!(tx.is_closed());
        }

        #[test]
        fn the_channel_stays_open_until_the_last_receiver_is_dropped() {
            let (tx, rx) = F::<u64>::channel();
            let rx2 = rx.clone();
            drop(rx);
            assert!(!tx.is_closed());
            tx.try_send(1).unwrap();
            assert_eq!(rx2.try_recv(), Ok(1));
            drop(rx2);
            assert_eq!(tx.try_send(2), Err(TrySendError::Disconnected(2)));
        }

        #[test]
        fn dropping_one_of_several_receivers_keeps_the_queued_values() {
            let ledger = Ledger::new();
            let (tx, rx) = F::<Tracked>::channel();
            let rx2 = rx.clone();
            for _ in 0..ROOM {
                tx.try_send(ledger.track()).unwrap();
            }
            drop(rx);
            assert_eq!(ledger.live(), ROOM, "another receiver still wants them");
            let ids: Vec<usize> = rx2.try_iter().map(|value| value.id()).collect();
            assert_eq!(ids, (0..ROOM).collect::<Vec<_>>());
            drop((tx, rx2));
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn a_recv_cancelled_after_it_was_woken_passes_the_wake_up_on() {
            let (tx, rx) = F::<u64>::channel();
            let rx2 = rx.clone();
            let (wa, wb) = (WakeCounter::new(), WakeCounter::new());
            let mut a = Box::pin(rx.recv());
            let mut b = Box::pin(rx2.recv());
            assert!(wa.poll(a.as_mut()).is_pending());
            assert!(wb.poll(b.as_mut()).is_pending());
            tx.try_send(1).unwrap();
            assert!(wa.wakes() > 0, "the first waiter is woken first");
            // A future may never be polled again (`mem::forget`), so the
            // waiter behind it is woken to look for itself as well.
            let checks = wb.wakes();
            assert!(checks > 0, "the waiter behind a future is woken to check");
            drop(a);
            assert!(
                wb.wakes() > checks,
                "a wake-up a dropped receive got must go to the next one"
            );
            assert_eq!(wb.poll(b.as_mut()), Poll::Ready(Ok(1)));
        }

        #[test]
        fn all_blocked_receivers_wake_when_the_last_sender_is_dropped() {
            within(|| {
                let (tx, rx) = F::<u64>::channel();
                let waiters: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|rx| thread::spawn(move || rx.recv_blocking()))
                    .collect();
                thread::sleep(SETTLE);
                drop(tx);
                for waiter in waiters {
                    assert_eq!(waiter.join().unwrap(), Err(RecvError));
                }
            })
        }

        #[test]
        fn each_value_goes_to_exactly_one_of_several_waiting_receivers() {
            within(|| {
                let (tx, rx) = F::<u64>::channel();
                let n = scale(2_000) as u64;
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|rx| thread::spawn(move || rx.iter().collect::<Vec<u64>>()))
                    .collect();
                for i in 0..n {
                    tx.send_blocking(i).unwrap();
                }
                drop(tx);
                let mut all: Vec<u64> = consumers
                    .into_iter()
                    .flat_map(|c| c.join().unwrap())
                    .collect();
                all.sort();
                assert_eq!(all, (0..n).collect::<Vec<_>>());
            })
        }
    };
}

#[allow(unused_mut)]
mod spsc_bounded {
    use super::*;
    use asyncband::spsc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    const CAPACITY: Option<usize> = Some(CAP);
    const ROOM: usize = CAP;
    one_sender!();
    one_receiver!();
    every_flavour!();
    bounded!();
}

#[allow(unused_mut)]
mod spsc_unbounded {
    use super::*;
    use asyncband::spsc as topology;
    type F<T> = topology::Unbounded<T>;
    const CAPACITY: Option<usize> = None;
    const ROOM: usize = UNBOUNDED_ROOM;
    one_sender!();
    one_receiver!();
    every_flavour!();
    unbounded!();
}

#[allow(unused_mut)]
mod mpsc_bounded {
    use super::*;
    use asyncband::mpsc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    const CAPACITY: Option<usize> = Some(CAP);
    const ROOM: usize = CAP;
    many_senders!();
    one_receiver!();
    every_flavour!();
    bounded!();
    many_senders_bounded!();
}

#[allow(unused_mut)]
mod mpsc_unbounded {
    use super::*;
    use asyncband::mpsc as topology;
    type F<T> = topology::Unbounded<T>;
    const CAPACITY: Option<usize> = None;
    const ROOM: usize = UNBOUNDED_ROOM;
    many_senders!();
    one_receiver!();
    every_flavour!();
    unbounded!();
}

#[allow(unused_mut)]
mod mpmc_bounded {
    use super::*;
    use asyncband::mpmc as topology;
    type F<T> = topology::Bounded<T, CAP>;
    const CAPACITY: Option<usize> = Some(CAP);
    const ROOM: usize = CAP;
    many_senders!();
    many_receivers!();
    every_flavour!();
    bounded!();
    many_senders_bounded!();
}

#[allow(unused_mut)]
mod mpmc_unbounded {
    use super::*;
    use asyncband::mpmc as topology;
    type F<T> = topology::Unbounded<T>;
    const CAPACITY: Option<usize> = None;
    const ROOM: usize = UNBOUNDED_ROOM;
    many_senders!();
    many_receivers!();
    every_flavour!();
    unbounded!();
}
