//! What the test suites of tokio, crossbeam-channel, async-channel and flume
//! check of their own channels, checked of asyncband's: zero-unit
//! reservations on a closed channel, large payloads on a small stack (an
//! unbounded channel's block of slots is built in place, never on the
//! stack), a
//! `try_recv` that finds a value whose send completed, counts of strong and
//! weak senders, and weak receivers.
//!
//! Written once per group of flavours, instantiated at the bottom; `F<T>` is
//! the flavour with payload `T` and `topology` its module.

#![allow(
    clippy::large_stack_arrays,
    reason = "values on the stack are what these tests put there on purpose"
)]

use std::thread;
use std::time::Duration;

use asyncband::error::{SendError, TrySendError};
use futures::executor::block_on;

/// The stack of the threads that move large payloads: the size a spawned
/// thread gets by default.
const SMALL_STACK: usize = 2 << 20;

/// Runs `f` on a thread with a [`SMALL_STACK`] and returns its result.
fn on_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("a large payload fits on a 2 MiB stack")
}

/// The bound of flavour `F`.
fn capacity<F: asyncband::Flavour>() -> usize {
    F::CAPACITY.expect("a bounded flavour")
}

/// Receives every value after a pause (senders find the channel full and
/// wait), checks each, and returns how many came.
fn drain_later<R: Send + 'static>(
    mut rx: R,
    mut recv: impl FnMut(&mut R) -> Option<Bulk<{ 32 << 10 }>> + Send + 'static,
) -> thread::JoinHandle<usize> {
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        let mut received = 0;
        while let Some(value) = recv(&mut rx) {
            value.check(4);
            received += 1;
        }
        received
    })
}

/// A payload of `N` bytes, each `byte`.
#[derive(Clone, Copy)]
struct Bulk<const N: usize>([u8; N]);

impl<const N: usize> Bulk<N> {
    fn check(&self, byte: u8) {
        assert!(self.0.iter().all(|&b| b == byte), "payload intact");
    }
}

macro_rules! large_values {
    () => {
        // One path per test: a debug build gives every temporary of a
        // function its own stack slot, so three 32 KiB sends in one test
        // body would measure the test, not the channel.

        #[test]
        fn a_32_kib_value_moves_by_try_send_and_try_recv_on_a_2_mib_stack() {
            on_small_stack(|| {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = F::<Bulk<{ 32 << 10 }>>::channel();
                assert!(tx.try_send(Bulk([1; 32 << 10])).is_ok());
                rx.try_recv().ok().expect("a value").check(1);
            });
        }

        #[test]
        fn a_32_kib_value_moves_by_blocking_send_and_recv_on_a_2_mib_stack() {
            on_small_stack(|| {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = F::<Bulk<{ 32 << 10 }>>::channel();
                assert!(tx.send_blocking(Bulk([2; 32 << 10])).is_ok());
                rx.recv_blocking().ok().expect("a value").check(2);
            });
        }

        #[test]
        fn a_32_kib_value_moves_by_async_send_and_recv_on_a_2_mib_stack() {
            on_small_stack(|| {
                #[allow(unused_mut)]
                let (mut tx, mut rx) = F::<Bulk<{ 32 << 10 }>>::channel();
                block_on(async {
                    assert!(tx.send(Bulk([3; 32 << 10])).await.is_ok());
                    rx.recv().await.ok().expect("a value").check(3);
                });
            });
        }
    };
}

macro_rules! bounded {
    () => {
        #[test]
        fn a_32_kib_value_waits_in_send_blocking_on_a_full_channel_on_a_2_mib_stack() {
            on_small_stack(|| {
                #[allow(unused_mut)]
                let (mut tx, rx) = F::<Bulk<{ 32 << 10 }>>::channel();
                while tx.try_send(Bulk([4; 32 << 10])).is_ok() {}
                let drain = drain_later(rx, |rx| rx.recv_blocking().ok());
                assert!(tx.send_blocking(Bulk([4; 32 << 10])).is_ok());
                drop(tx);
                assert_eq!(drain.join().unwrap(), capacity::<F<u8>>() + 1);
            });
        }

        #[test]
        fn a_32_kib_value_waits_in_send_timeout_on_a_full_channel_on_a_2_mib_stack() {
            on_small_stack(|| {
                #[allow(unused_mut)]
                let (mut tx, rx) = F::<Bulk<{ 32 << 10 }>>::channel();
                while tx.try_send(Bulk([4; 32 << 10])).is_ok() {}
                let drain = drain_later(rx, |rx| rx.recv_blocking().ok());
                let timeout = Duration::from_secs(60);
                assert!(tx.send_timeout(Bulk([4; 32 << 10]), timeout).is_ok());
                drop(tx);
                assert_eq!(drain.join().unwrap(), capacity::<F<u8>>() + 1);
            });
        }

        #[test]
        fn reserving_more_than_the_capacity_reports_a_closed_channel_first() {
            #[allow(unused_mut)]
            let (mut tx, rx) = F::<u8>::channel();
            let beyond = capacity::<F<u8>>() + 1;
            assert!(matches!(
                tx.try_reserve_many(beyond),
                Err(TrySendError::Full(()))
            ));
            drop(rx);
            assert!(matches!(
                tx.try_reserve_many(beyond),
                Err(TrySendError::Disconnected(()))
            ));
        }

        #[test]
        fn reserving_zero_units_fails_once_the_channel_is_closed() {
            #[allow(unused_mut)]
            let (mut tx, rx) = F::<u8>::channel();
            assert_eq!(tx.try_reserve_many(0).map(|p| p.len()).ok(), Some(0));
            assert_eq!(block_on(tx.reserve_many(0)).map(|p| p.len()).ok(), Some(0));
            drop(rx);
            assert!(matches!(
                tx.try_reserve_many(0),
                Err(TrySendError::Disconnected(()))
            ));
            assert!(matches!(block_on(tx.reserve_many(0)), Err(SendError(()))));
        }

        #[test]
        fn reserving_zero_units_fails_after_close() {
            #[allow(unused_mut)]
            let (mut tx, _rx) = F::<u8>::channel();
            tx.close();
            assert!(matches!(
                tx.try_reserve_many(0),
                Err(TrySendError::Disconnected(()))
            ));
            assert!(matches!(block_on(tx.reserve_many(0)), Err(SendError(()))));
        }
    };
}

macro_rules! many_senders {
    () => {
        #[test]
        fn try_recv_finds_every_value_whose_send_completed() {
            // Senders count a send once it returned; whenever that count is
            // ahead of what the receiver took, a value is there to take, even
            // with other senders' claimed slots still being written before it.
            use std::sync::Arc;
            use std::sync::atomic::{AtomicU64, Ordering};
            // More senders than cores: some are preempted between claim and write.
            const SENDERS: u64 = 8;
            #[allow(unused_mut)]
            let (tx, mut rx) = F::<u64>::channel();
            let done = Arc::new(AtomicU64::new(0));
            let per_sender = asyncband_tests::scale(10_000) as u64;
            let senders: Vec<_> = (0..SENDERS)
                .map(|_| {
                    let (tx, done) = (tx.clone(), Arc::clone(&done));
                    thread::spawn(move || {
                        for i in 0..per_sender {
                            tx.send_blocking(i).unwrap();
                            done.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                })
                .collect();
            drop(tx);
            let mut taken = 0;
            while taken < SENDERS * per_sender {
                let completed = done.load(Ordering::SeqCst);
                match rx.try_recv() {
                    Ok(_) => taken += 1,
                    Err(e) => assert!(
                        completed <= taken,
                        "{completed} sends completed, {taken} taken, yet {e:?}"
                    ),
                }
            }
            for s in senders {
                s.join().unwrap();
            }
        }

        #[test]
        fn strong_and_weak_counts_follow_clones_downgrades_upgrades_and_drops() {
            let (tx, _rx) = F::<u8>::channel();
            assert_eq!((tx.strong_count(), tx.weak_count()), (1, 0));
            let tx2 = tx.clone();
            let weak = tx.downgrade();
            let weak2 = weak.clone();
            assert_eq!((tx.strong_count(), tx.weak_count()), (2, 2));
            assert_eq!((weak.strong_count(), weak.weak_count()), (2, 2));
            let upgraded = weak.upgrade().expect("senders are alive");
            assert_eq!((tx.strong_count(), tx.weak_count()), (3, 2));
            drop((upgraded, tx2));
            drop(weak2);
            assert_eq!((tx.strong_count(), tx.weak_count()), (1, 1));
            drop(tx);
            assert_eq!((weak.strong_count(), weak.weak_count()), (0, 1));
            assert!(weak.upgrade().is_none());
            assert_eq!(weak.strong_count(), 0, "a failed upgrade counts nothing");
        }

        #[test]
        fn a_weak_sender_does_not_keep_the_channel_open() {
            #[allow(unused_mut)]
            let (tx, mut rx) = F::<u8>::channel();
            let weak = tx.downgrade();
            tx.try_send(1).unwrap();
            drop(tx);
            assert_eq!(rx.try_recv(), Ok(1));
            assert!(
                rx.try_recv().is_err(),
                "closed once the last strong sender went"
            );
            assert!(weak.upgrade().is_none());
        }
    };
}

macro_rules! many_receivers {
    () => {
        #[test]
        fn try_recv_finds_the_value_its_own_thread_just_sent() {
            // Each thread sends, then receives: whatever the others do, the
            // channel holds at least the value this thread sent and nobody
            // else took, so `try_recv` must not report it empty.
            let (tx, rx) = F::<u64>::channel();
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let (tx, rx) = (tx.clone(), rx.clone());
                    thread::spawn(move || {
                        for i in 0..asyncband_tests::scale(20_000) as u64 {
                            tx.send_blocking(i).unwrap();
                            assert!(rx.try_recv().is_ok(), "a completed send was not found");
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
        }
        #[test]
        fn a_weak_receiver_upgrades_while_a_receiver_lives_and_keeps_nothing_open() {
            let (tx, rx) = F::<u8>::channel();
            let weak = rx.downgrade();
            assert_eq!((weak.strong_count(), weak.weak_count()), (1, 1));
            tx.try_send(1).unwrap();
            let upgraded = weak.upgrade().expect("a receiver is alive");
            assert_eq!(rx.receiver_count(), 2);
            assert_eq!(upgraded.try_recv(), Ok(1));
            drop((rx, upgraded));
            assert!(
                tx.is_closed(),
                "weak receivers do not keep the channel open"
            );
            assert!(matches!(tx.try_send(2), Err(TrySendError::Disconnected(2))));
            assert!(weak.upgrade().is_none());
            assert_eq!(weak.strong_count(), 0);
            let weak2 = weak.clone();
            assert_eq!(weak2.weak_count(), 2);
        }

        #[test]
        fn an_upgraded_receiver_receives_like_any_other() {
            let (tx, rx) = F::<u8>::channel();
            let weak = rx.downgrade();
            let upgraded = weak.upgrade().unwrap();
            drop(rx);
            tx.try_send(7).unwrap();
            assert_eq!(upgraded.recv_blocking(), Ok(7));
            drop(tx);
            assert!(upgraded.recv_blocking().is_err());
        }
    };
}

mod spsc_bounded {
    use super::*;
    type F<T> = asyncband::spsc::Bounded<T, 4>;
    large_values!();
    bounded!();
}

mod spsc_unbounded {
    use super::*;
    type F<T> = asyncband::spsc::Unbounded<T>;
    large_values!();
}

mod mpsc_bounded {
    use super::*;
    type F<T> = asyncband::mpsc::Bounded<T, 4>;
    large_values!();
    bounded!();
    many_senders!();
}

mod mpsc_unbounded {
    use super::*;
    type F<T> = asyncband::mpsc::Unbounded<T>;
    large_values!();
    many_senders!();
}

mod mpmc_bounded {
    use super::*;
    type F<T> = asyncband::mpmc::Bounded<T, 4>;
    large_values!();
    bounded!();
    many_senders!();
    many_receivers!();
}

mod mpmc_unbounded {
    use super::*;
    type F<T> = asyncband::mpmc::Unbounded<T>;
    large_values!();
    many_senders!();
    many_receivers!();
}
