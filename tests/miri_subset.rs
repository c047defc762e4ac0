//! A threaded subset of the integration tests, small enough for Miri: a few
//! dozen messages per test, two threads, no tokio (futures are driven by
//! `futures::executor::block_on` or polled by hand with a no-op waker).
//!
//! Run under Miri with strict provenance (`cargo x miri`, see TESTING.md);
//! it also runs with the rest of the suite, where a hang is caught by the
//! [`within`] watchdog (under Miri, Miri reports deadlocks itself).
//!
//! `every_flavour!` holds the tests of all six flavours and `bounded!` the
//! permit tests; inside a module `F<T>` is the flavour (bounded at capacity
//! 2, so senders wait and the ring wraps) and `senders`/`receivers` split an
//! endpoint into two where the flavour allows.

use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::thread;

use asyncband::error::{RecvError, SendError, TryRecvError};
use asyncband_tests::{Ledger, Tracked, assert_received_exactly_the_accepted};
use futures::executor::block_on;

/// Messages per test: a few dozen, enough to wrap a ring of 2 many times and
/// cross a block (31 slots) of the unbounded list.
const N: u64 = if cfg!(miri) { 40 } else { 400 };

/// Runs `scenario` under the watchdog, except under Miri (which has its own
/// deadlock detection, and where the watchdog's timeout would be virtual).
fn guarded<R: Send + 'static>(scenario: impl FnOnce() -> R + Send + 'static) -> R {
    if cfg!(miri) {
        scenario()
    } else {
        asyncband_tests::within(scenario)
    }
}

/// Polls `future` once with a waker that does nothing.
fn poll_once<F: std::future::Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

macro_rules! every_flavour {
    () => {
        #[test]
        fn two_threads_hand_over_large_values_whole() {
            // Over 128 bytes: received through `chan::Popped`, which moves
            // the value out of its slot before the slot is released.
            guarded(|| {
                let (mut tx, mut rx) = F::<[u64; 20]>::channel();
                let producer = thread::spawn(move || {
                    for i in 0..N {
                        tx.send_blocking([i; 20]).unwrap();
                    }
                });
                for i in 0..N {
                    let value = if i % 2 == 0 {
                        rx.recv_blocking()
                    } else {
                        block_on(rx.recv())
                    };
                    assert_eq!(value, Ok([i; 20]));
                }
                producer.join().unwrap();
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
            })
        }

        #[test]
        fn two_threads_hand_over_every_value_in_order() {
            guarded(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    for i in 0..N {
                        tx.send_blocking(i).unwrap();
                    }
                });
                for i in 0..N {
                    assert_eq!(rx.recv_blocking(), Ok(i));
                }
                producer.join().unwrap();
                assert_eq!(rx.recv_blocking(), Err(RecvError));
            })
        }

        // Regression: the `mpsc_bounded` instance deadlocked under Miri's
        // weak-memory emulation, which let the sender's `SeqCst` re-check
        // read a stamp the consumer had already overwritten (a C++20-
        // forbidden outcome, rust-lang/miri#5104; TESTING.md, "Miri").
        #[test]
        fn futures_on_two_threads_hand_over_every_value_in_order() {
            guarded(|| {
                let (mut tx, mut rx) = F::<Box<u64>>::channel();
                let producer = thread::spawn(move || {
                    block_on(async {
                        for i in 0..N {
                            tx.send(Box::new(i)).await.unwrap();
                        }
                    })
                });
                block_on(async {
                    for i in 0..N {
                        assert_eq!(*rx.recv().await.unwrap(), i);
                    }
                    assert_eq!(rx.recv().await, Err(RecvError));
                });
                producer.join().unwrap();
            })
        }

        #[test]
        fn two_producers_and_two_consumers_deliver_every_value_once() {
            let (producers, received) = guarded(|| {
                let (tx, rx) = F::<(usize, u64)>::channel();
                let producers: Vec<_> = senders(tx)
                    .into_iter()
                    .enumerate()
                    .map(|(p, mut tx)| {
                        thread::spawn(move || {
                            for seq in 0..N / 2 {
                                tx.send_blocking((p, seq)).unwrap();
                            }
                        })
                    })
                    .collect();
                let consumers: Vec<_> = receivers(rx)
                    .into_iter()
                    .map(|mut rx| thread::spawn(move || rx.iter().collect::<Vec<_>>()))
                    .collect();
                let count = producers.len();
                for producer in producers {
                    producer.join().unwrap();
                }
                let received: Vec<_> = consumers.into_iter().map(|c| c.join().unwrap()).collect();
                (count, received)
            });
            let accepted = vec![(0..N / 2).collect::<Vec<u64>>(); producers];
            assert_received_exactly_the_accepted(&received, &accepted);
        }

        #[test]
        fn close_racing_with_sends_loses_no_accepted_value() {
            let ledger = Ledger::new();
            let ledger_in = Arc::clone(&ledger);
            let (sent, received) = guarded(move || {
                let (mut tx, mut rx) = F::<Tracked>::channel();
                let producer = thread::spawn(move || {
                    let mut sent = Vec::new();
                    loop {
                        let value = ledger_in.track();
                        let id = value.id();
                        match tx.send_blocking(value) {
                            Ok(()) => sent.push(id),
                            Err(SendError(back)) => {
                                assert_eq!(back.id(), id, "the value handed back");
                                return sent;
                            }
                        }
                    }
                });
                let mut received = Vec::new();
                for _ in 0..N / 4 {
                    received.push(rx.recv_blocking().unwrap().id());
                }
                assert!(rx.close());
                while let Ok(value) = rx.recv_blocking() {
                    received.push(value.id());
                }
                (producer.join().unwrap(), received)
            });
            assert_eq!(received, sent, "every send that returned Ok, in order");
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn sends_and_receives_polled_by_hand_and_cancelled_lose_nothing() {
            let ledger = Ledger::new();
            let ledger_in = Arc::clone(&ledger);
            let (sent, received) = guarded(move || {
                let (mut tx, mut rx) = F::<Tracked>::channel();
                // The consumer polls each receive a few times and cancels it
                // if it is still pending, then waits properly.
                let consumer = thread::spawn(move || {
                    let mut received = Vec::new();
                    let mut cancelled = 0;
                    loop {
                        let mut polled = None;
                        {
                            let mut future = pin!(rx.recv());
                            for _ in 0..3 {
                                if let Poll::Ready(result) = poll_once(future.as_mut()) {
                                    polled = Some(result);
                                    break;
                                }
                                thread::yield_now();
                            }
                        }
                        let result = match polled {
                            Some(result) => result,
                            None => {
                                cancelled += 1;
                                rx.recv_blocking()
                            }
                        };
                        match result {
                            Ok(value) => received.push(value.id()),
                            Err(RecvError) => return (received, cancelled),
                        }
                    }
                });
                // The producer does the same with sends: a cancelled send
                // drops its value, which must then never arrive.
                let mut sent = Vec::new();
                for _ in 0..N {
                    let value = ledger_in.track();
                    let id = value.id();
                    let mut future = pin!(tx.send(value));
                    for _ in 0..2 {
                        if let Poll::Ready(result) = poll_once(future.as_mut()) {
                            result.unwrap();
                            sent.push(id);
                            break;
                        }
                        thread::yield_now();
                    }
                }
                drop(tx);
                let (received, _cancelled) = consumer.join().unwrap();
                (sent, received)
            });
            assert_eq!(received, sent, "exactly the sends that completed, in order");
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn dropping_the_receiver_on_one_thread_drops_what_the_other_queued() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            let ledger_in = Arc::clone(&ledger);
            let producer = thread::spawn(move || {
                for _ in 0..ROOM {
                    assert!(tx.try_send(ledger_in.track()).is_ok());
                }
                tx
            });
            let tx = producer.join().unwrap();
            assert_eq!(rx.try_recv().map(|v| v.id()), Ok(0));
            let consumer = thread::spawn(move || drop(rx));
            consumer.join().unwrap();
            assert_eq!(
                ledger.live(),
                0,
                "queued values are dropped with the last receiver"
            );
            drop(tx);
            ledger.assert_each_dropped_once();
        }

        #[test]
        fn a_receiver_waiting_on_another_thread_is_woken_by_the_last_sender_going() {
            guarded(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let waiter = thread::spawn(move || rx.recv_blocking());
                thread::yield_now();
                drop(tx);
                assert_eq!(waiter.join().unwrap(), Err(RecvError));
            })
        }
    };
}

macro_rules! bounded {
    () => {
        const ROOM: usize = CAP;

        // Regression: deadlocked under Miri on `mpsc_bounded` like
        // `futures_on_two_threads_hand_over_every_value_in_order`.
        #[test]
        fn permits_reserved_on_one_thread_deliver_in_order_to_another() {
            guarded(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    for i in 0..N {
                        if i % 3 == 0 {
                            // Reserved and dropped: the slot comes back.
                            drop(tx.reserve_blocking().unwrap());
                        }
                        let permit = if i % 2 == 0 {
                            tx.reserve_blocking().unwrap()
                        } else {
                            block_on(tx.reserve()).unwrap()
                        };
                        permit.send(i).unwrap();
                    }
                });
                for i in 0..N {
                    assert_eq!(rx.recv_blocking(), Ok(i));
                    assert!(rx.len() <= CAP);
                }
                producer.join().unwrap();
            })
        }

        // Regression: deadlocked under Miri on `mpsc_bounded`, as above.
        #[test]
        fn permits_of_one_batch_sent_from_two_threads_arrive_once() {
            let received = guarded(|| {
                let (mut tx, mut rx) = F::<(usize, u64)>::channel();
                let consumer = thread::spawn(move || rx.iter().collect::<Vec<_>>());
                for round in 0..N / 4 {
                    let mut permits = block_on(tx.reserve_many(CAP)).unwrap();
                    let first = permits.next().unwrap();
                    thread::scope(|scope| {
                        scope.spawn(move || first.send((0, round)).unwrap());
                        for permit in permits {
                            permit.send((1, round)).unwrap();
                        }
                    });
                }
                drop(tx);
                consumer.join().unwrap()
            });
            let accepted = vec![(0..N / 4).collect::<Vec<u64>>(); CAP];
            assert_received_exactly_the_accepted(&[received], &accepted);
        }

        #[test]
        fn a_reservation_cancelled_on_a_full_channel_takes_no_slot() {
            guarded(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                {
                    let mut future = pin!(tx.reserve());
                    assert!(poll_once(future.as_mut()).is_pending());
                }
                let consumer = thread::spawn(move || rx.iter().collect::<Vec<_>>());
                for i in CAP as u64..N {
                    tx.send_blocking(i).unwrap();
                }
                drop(tx);
                assert_eq!(consumer.join().unwrap(), (0..N).collect::<Vec<_>>());
            })
        }

        #[test]
        fn a_sender_waiting_on_another_thread_is_woken_by_receives() {
            guarded(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let mut senders = senders(tx);
                let mut tx = senders.pop().unwrap();
                drop(senders);
                let producer = thread::spawn(move || {
                    for i in 0..CAP as u64 {
                        tx.try_send(i).unwrap();
                    }
                    // Full: waits until the receiver frees a slot.
                    tx.send_blocking(99).unwrap();
                });
                let mut got: Vec<u64> = (0..=CAP).map(|_| rx.recv_blocking().unwrap()).collect();
                producer.join().unwrap();
                got.sort_unstable();
                let mut expected: Vec<u64> = (0..CAP as u64).collect();
                expected.push(99);
                assert_eq!(got, expected);
                assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
            })
        }
    };
}

macro_rules! unbounded {
    () => {
        /// Values given at once: more than a block (31 slots).
        const ROOM: usize = 40;
    };
}

macro_rules! one_sender {
    () => {
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            vec![tx]
        }
    };
}

macro_rules! many_senders {
    () => {
        fn senders<T>(tx: topology::Sender<F<T>>) -> Vec<topology::Sender<F<T>>> {
            vec![tx.clone(), tx]
        }
    };
}

macro_rules! one_receiver {
    () => {
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            vec![rx]
        }
    };
}

macro_rules! many_receivers {
    () => {
        fn receivers<T>(rx: topology::Receiver<F<T>>) -> Vec<topology::Receiver<F<T>>> {
            vec![rx.clone(), rx]
        }
    };
}

macro_rules! flavour {
    ($name:ident, $topology:ident, bounded, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        mod $name {
            use super::*;
            use asyncband::$topology as topology;
            const CAP: usize = 2;
            type F<T> = topology::Bounded<T, CAP>;
            $senders!();
            $receivers!();
            every_flavour!();
            bounded!();
        }
    };
    ($name:ident, $topology:ident, unbounded, $senders:ident, $receivers:ident) => {
        #[allow(unused_mut)]
        mod $name {
            use super::*;
            use asyncband::$topology as topology;
            type F<T> = topology::Unbounded<T>;
            $senders!();
            $receivers!();
            every_flavour!();
            unbounded!();
        }
    };
}

flavour!(spsc_bounded, spsc, bounded, one_sender, one_receiver);
flavour!(spsc_unbounded, spsc, unbounded, one_sender, one_receiver);
flavour!(mpsc_bounded, mpsc, bounded, many_senders, one_receiver);
flavour!(mpsc_unbounded, mpsc, unbounded, many_senders, one_receiver);
flavour!(mpmc_bounded, mpmc, bounded, many_senders, many_receivers);
flavour!(
    mpmc_unbounded,
    mpmc,
    unbounded,
    many_senders,
    many_receivers
);
