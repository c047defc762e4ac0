//! `poll_recv` and `poll_recv_many`, written once and run against all six
//! flavours: a hand-written future built on them receives and is woken, and
//! the registration a `Pending` poll leaves in the receiver loses nothing
//! when the future is dropped, the receiver is used another way, or the
//! receiver is dropped.

use std::future::Future;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use asyncband::error::RecvError;
use asyncband_tests::{Ledger, Tracked, WakeCounter, within};
use futures::executor::block_on;

/// Time for another thread to reach its wait (not needed for correctness).
const SETTLE: Duration = Duration::from_millis(20);

/// The receivers `poll_recv` is tested on: every flavour's.
trait PollRecv {
    type Item;
    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<Self::Item, RecvError>>;
}

/// Implements [`PollRecv`] for `Rx<T>`, the receiver of the module's
/// flavour, by calling its inherent methods.
macro_rules! poll_recv_for_rx {
    () => {
        impl<T: Send + 'static> PollRecv for Rx<T> {
            type Item = T;
            fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<T, RecvError>> {
                Rx::poll_recv(self, cx)
            }
        }
    };
}

/// A hand-written future: the next value of a receiver, through
/// `poll_recv`.
struct NextValue<'a, R>(&'a mut R);

impl<R: PollRecv> Future for NextValue<'_, R> {
    type Output = Result<R::Item, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().0.poll_recv(cx)
    }
}

macro_rules! every_flavour {
    () => {
        #[test]
        fn a_hand_written_future_is_woken_by_a_send_and_then_receives_it() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            {
                let mut next = pin!(NextValue(&mut rx));
                assert!(counter.poll(next.as_mut()).is_pending());
                tx.try_send(1).unwrap();
                assert!(
                    counter.wakes() >= 1,
                    "the send must wake the registered poll"
                );
                assert_eq!(counter.poll(next.as_mut()), Poll::Ready(Ok(1)));
            }
            drop(tx);
            assert_eq!(block_on(NextValue(&mut rx)), Err(RecvError));
        }

        #[test]
        fn poll_recv_many_takes_up_to_the_limit_and_reports_the_end() {
            let (mut tx, mut rx) = F::<u64>::channel();
            let counter = WakeCounter::new();
            let waker = counter.waker();
            let mut cx = Context::from_waker(&waker);
            let mut buf = Vec::new();
            assert_eq!(rx.poll_recv_many(&mut cx, &mut buf, 3), Poll::Pending);
            for i in 0..4 {
                tx.try_send(i).unwrap();
            }
            assert!(counter.wakes() >= 1);
            assert_eq!(rx.poll_recv_many(&mut cx, &mut buf, 3), Poll::Ready(3));
            assert_eq!(rx.poll_recv_many(&mut cx, &mut buf, 0), Poll::Ready(0));
            drop(tx);
            assert_eq!(rx.poll_recv_many(&mut cx, &mut buf, 3), Poll::Ready(1));
            assert_eq!(rx.poll_recv_many(&mut cx, &mut buf, 3), Poll::Ready(0));
            assert_eq!(buf, [0, 1, 2, 3]);
        }

        #[test]
        fn a_registration_left_by_a_dropped_future_loses_no_value() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let counter = WakeCounter::new();
                assert!(counter.poll(pin!(NextValue(&mut rx))).is_pending());
                // The future is gone; its registration stays in `rx`.
                let producer = thread::spawn(move || {
                    thread::sleep(SETTLE);
                    tx.try_send(7).unwrap();
                    tx
                });
                assert_eq!(rx.recv_blocking(), Ok(7));
                let mut tx = producer.join().unwrap();
                tx.try_send(8).unwrap();
                assert_eq!(block_on(NextValue(&mut rx)), Ok(8));
            })
        }

        #[test]
        fn a_receive_future_dropped_in_the_same_poll_leaves_poll_recvs_registration() {
            within(|| {
                let (mut tx, mut rx) = F::<u64>::channel();
                let counter = WakeCounter::new();
                let waker = counter.waker();
                let mut cx = Context::from_waker(&waker);
                // One poll of a task: `poll_recv`, then a `recv()` future
                // polled with the same context and dropped.
                assert!(rx.poll_recv(&mut cx).is_pending());
                {
                    let mut recv = pin!(rx.recv());
                    assert!(recv.as_mut().poll(&mut cx).is_pending());
                }
                tx.try_send(1).unwrap();
                assert!(counter.wakes() >= 1, "the send wakes the task");
                assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Ok(1)));
            })
        }

        #[test]
        fn a_receiver_dropped_while_registered_drops_the_queued_values_and_closes() {
            let ledger = Ledger::new();
            let (mut tx, mut rx) = F::<Tracked>::channel();
            let counter = WakeCounter::new();
            assert!(counter.poll(pin!(NextValue(&mut rx))).is_pending());
            tx.try_send(ledger.track()).unwrap();
            drop(rx);
            assert!(tx.is_closed());
            assert_eq!(ledger.live(), 0);
            ledger.assert_each_dropped_once();
        }
    };
}

macro_rules! many_receivers {
    () => {
        #[test]
        fn a_wake_up_held_by_a_dropped_receivers_registration_is_passed_on() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let other = rx.clone();
                let counter = WakeCounter::new();
                assert!(counter.poll(pin!(NextValue(&mut rx))).is_pending());
                let waiter = thread::spawn(move || other.recv_blocking());
                thread::sleep(SETTLE);
                // The registration of `rx` is first in line: it gets the
                // notification of this value, and its drop passes it on.
                tx.try_send(5).unwrap();
                thread::sleep(SETTLE);
                drop(rx);
                assert_eq!(waiter.join().unwrap(), Ok(5));
            })
        }

        #[test]
        fn a_wake_up_held_by_a_registration_is_passed_on_when_the_receiver_polls_again() {
            within(|| {
                let (tx, mut rx) = F::<u64>::channel();
                let other = rx.clone();
                let counter = WakeCounter::new();
                assert!(counter.poll(pin!(NextValue(&mut rx))).is_pending());
                let waiter = thread::spawn(move || other.recv_blocking());
                thread::sleep(SETTLE);
                tx.try_send(5).unwrap();
                tx.try_send(6).unwrap();
                thread::sleep(SETTLE);
                let mine = block_on(NextValue(&mut rx)).unwrap();
                let theirs = waiter.join().unwrap().unwrap();
                let mut got = [mine, theirs];
                got.sort_unstable();
                assert_eq!(got, [5, 6]);
            })
        }
    };
}

#[allow(unused_mut)]
mod spsc_bounded {
    use super::*;
    type F<T> = asyncband::spsc::Bounded<T, 4>;
    type Rx<T> = asyncband::spsc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
}

#[allow(unused_mut)]
mod spsc_unbounded {
    use super::*;
    type F<T> = asyncband::spsc::Unbounded<T>;
    type Rx<T> = asyncband::spsc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
}

#[allow(unused_mut)]
mod mpsc_bounded {
    use super::*;
    type F<T> = asyncband::mpsc::Bounded<T, 4>;
    type Rx<T> = asyncband::mpsc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
}

#[allow(unused_mut)]
mod mpsc_unbounded {
    use super::*;
    type F<T> = asyncband::mpsc::Unbounded<T>;
    type Rx<T> = asyncband::mpsc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
}

#[allow(unused_mut)]
mod mpmc_bounded {
    use super::*;
    type F<T> = asyncband::mpmc::Bounded<T, 4>;
    type Rx<T> = asyncband::mpmc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
    many_receivers!();
}

#[allow(unused_mut)]
mod mpmc_unbounded {
    use super::*;
    type F<T> = asyncband::mpmc::Unbounded<T>;
    type Rx<T> = asyncband::mpmc::Receiver<F<T>>;
    poll_recv_for_rx!();
    every_flavour!();
    many_receivers!();
}
