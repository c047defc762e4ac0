//! The `_deadline` operations, written once and run against all six
//! flavours: they behave as their `_timeout` twins, with the end of the wait
//! given as an `Instant`.
//!
//! `every_flavour!` holds what every flavour shares (receiving, and sending
//! where there is room), `bounded!` what needs a bound (a full channel, and
//! `reserve_deadline`). Anything that could hang runs under [`within`].

use std::thread;
use std::time::{Duration, Instant};

use asyncband::error::{RecvTimeoutError, SendTimeoutError};
use asyncband_tests::within;

/// The bound of the bounded flavours under test.
const CAP: usize = 4;
/// A wait that must elapse.
const SHORT: Duration = Duration::from_millis(30);
/// A wait that must not elapse on a healthy machine.
const LONG: Duration = Duration::from_secs(10);
/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(20);

/// Panics unless `start` is at least `SHORT` and well under `LONG` ago.
fn assert_waited_for_the_deadline(start: Instant) {
    let waited = start.elapsed();
    assert!(
        waited >= SHORT,
        "returned after {waited:?}, before the deadline"
    );
    assert!(waited < LONG / 2, "returned only after {waited:?}");
}

macro_rules! every_flavour {
    () => {
        #[test]
        fn recv_deadline_on_an_empty_channel_times_out_at_the_deadline() {
            within(|| {
                let (_tx, mut rx) = F::<u64>::channel();
                let start = Instant::now();
                assert_eq!(
                    rx.recv_deadline(start + SHORT),
                    Err(RecvTimeoutError::Timeout)
                );
                assert_waited_for_the_deadline(start);
            })
        }

        #[test]
        fn recv_deadline_returns_a_value_sent_while_it_waits() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx.send_blocking(5).unwrap();
                    tx
                });
                let start = Instant::now();
                assert_eq!(rx.recv_deadline(start + LONG), Ok(5));
                assert!(start.elapsed() < LONG);
                drop(producer.join().unwrap());
            })
        }

        #[test]
        fn a_deadline_in_the_past_still_takes_a_ready_value_and_room() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let past = Instant::now();
                thread::sleep(Duration::from_millis(1));
                assert_eq!(tx.send_deadline(1, past), Ok(()));
                assert_eq!(rx.recv_deadline(past), Ok(1));
                assert_eq!(rx.recv_deadline(past), Err(RecvTimeoutError::Timeout));
            })
        }

        #[test]
        fn deadlines_on_a_closed_channel_report_disconnected_at_once() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                rx.close();
                let start = Instant::now();
                assert_eq!(
                    rx.recv_deadline(start + LONG),
                    Err(RecvTimeoutError::Disconnected)
                );
                assert_eq!(
                    tx.send_deadline(1, start + LONG),
                    Err(SendTimeoutError::Disconnected(1))
                );
                assert!(start.elapsed() < LONG / 2, "waited on a closed channel");
            })
        }

        #[test]
        fn recv_deadline_drains_before_reporting_disconnected() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                tx.send_deadline(7, Instant::now() + LONG).unwrap();
                drop(tx);
                let deadline = Instant::now() + LONG;
                assert_eq!(rx.recv_deadline(deadline), Ok(7));
                assert_eq!(
                    rx.recv_deadline(deadline),
                    Err(RecvTimeoutError::Disconnected)
                );
            })
        }
    };
}

macro_rules! bounded {
    () => {
        #[test]
        fn send_deadline_on_a_full_channel_times_out_and_hands_the_value_back() {
            within(|| {
                let (mut tx, _rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let start = Instant::now();
                assert_eq!(
                    tx.send_deadline(99, start + SHORT),
                    Err(SendTimeoutError::Timeout(99))
                );
                assert_waited_for_the_deadline(start);
                assert_eq!(
                    tx.len(),
                    CAP,
                    "a timed-out send leaves the channel as it was"
                );
            })
        }

        #[test]
        fn send_deadline_completes_when_room_is_made_while_it_waits() {
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
                assert_eq!(tx.send_deadline(99, Instant::now() + LONG), Ok(()));
                let mut rx = consumer.join().unwrap();
                for i in 1..CAP as u64 {
                    assert_eq!(rx.try_recv(), Ok(i));
                }
                assert_eq!(rx.try_recv(), Ok(99));
            })
        }

        #[test]
        fn reserve_deadline_on_a_full_channel_times_out_holding_nothing() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                for i in 0..CAP as u64 {
                    tx.try_send(i).unwrap();
                }
                let start = Instant::now();
                let err = tx.reserve_deadline(start + SHORT).unwrap_err();
                assert_eq!(err, SendTimeoutError::Timeout(()));
                assert_waited_for_the_deadline(start);
                assert_eq!(rx.try_recv(), Ok(0));
                assert!(tx.try_send(100).is_ok(), "the freed slot is free");
            })
        }

        #[test]
        fn reserve_deadline_gets_a_slot_freed_while_it_waits() {
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
                let permit = tx.reserve_deadline(Instant::now() + LONG).unwrap();
                permit.send(99).unwrap();
                let mut rx = consumer.join().unwrap();
                for i in 1..CAP as u64 {
                    assert_eq!(rx.try_recv(), Ok(i));
                }
                assert_eq!(rx.try_recv(), Ok(99));
            })
        }

        #[test]
        fn reserve_deadline_on_a_closed_channel_reports_disconnected() {
            within(|| {
                let (mut tx, rx) = F::<u64>::channel();
                drop(rx);
                let err = tx.reserve_deadline(Instant::now() + LONG).unwrap_err();
                assert_eq!(err, SendTimeoutError::Disconnected(()));
            })
        }
    };
}

#[allow(unused_mut)]
mod spsc_bounded {
    use super::*;
    type F<T> = asyncband::spsc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
}

#[allow(unused_mut)]
mod spsc_unbounded {
    use super::*;
    type F<T> = asyncband::spsc::Unbounded<T>;
    every_flavour!();
}

#[allow(unused_mut)]
mod mpsc_bounded {
    use super::*;
    type F<T> = asyncband::mpsc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
}

#[allow(unused_mut)]
mod mpsc_unbounded {
    use super::*;
    type F<T> = asyncband::mpsc::Unbounded<T>;
    every_flavour!();
}

#[allow(unused_mut)]
mod mpmc_bounded {
    use super::*;
    type F<T> = asyncband::mpmc::Bounded<T, CAP>;
    every_flavour!();
    bounded!();
}

#[allow(unused_mut)]
mod mpmc_unbounded {
    use super::*;
    type F<T> = asyncband::mpmc::Unbounded<T>;
    every_flavour!();
}
