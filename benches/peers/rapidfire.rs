//! rapidfire: bounded and unbounded, in two flavours: `rapidfire::bounded` /
//! `unbounded`, MPMC (the receiver is `Clone`), and `rapidfire::mpsc`, one
//! receiver taken by `&mut`. Its senders are the same type in both.
//! `try_send` / `try_recv` on threads, the futures in tasks.
//!
//! It has no blocking API. Its "blocking" operations here spin on
//! `try_send` / `try_recv` with a `spin_loop` hint between attempts, as
//! rapidfire's own benchmarks drive it, and yield the thread after every
//! [`SPINS_PER_YIELD`] failed attempts so that an oversubscribed machine
//! still runs the other side. That is not a way of waiting rapidfire
//! offers, so it sits out the cells that measure blocking (`threads`,
//! `oversubscribed::threads::*_blocking_*`); it plays the cells that use
//! `try_*` on one thread or spinning, and the task cells.

use std::future::Future;
use std::hint::spin_loop;
use std::thread;

use ::rapidfire::{Receiver, Sender, TryRecvError, TrySendError, mpsc};

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, SendAsync, SendBlocking,
    SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `rapidfire::bounded` / `unbounded`: many receivers.
#[derive(Debug)]
pub struct Rapidfire;

/// `rapidfire::mpsc`: one receiver.
#[derive(Debug)]
pub struct RapidfireMpsc;

/// Failed attempts between two yields of a "blocking" operation.
const SPINS_PER_YIELD: u32 = 64;

/// Spins (then yields) until `attempt` gives a value.
#[inline(always)]
fn spin<R>(mut attempt: impl FnMut() -> Option<R>) -> R {
    let mut spins = 0;
    loop {
        if let Some(done) = attempt() {
            return done;
        }
        spins += 1;
        if spins == SPINS_PER_YIELD {
            spins = 0;
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

/// The factories of one flavour: `$bounded(CAP)` and `$unbounded()` make
/// its channels, for threads and tasks alike.
macro_rules! factories {
    ($marker:ty, $rx:ty, $bounded:path, $unbounded:path) => {
        impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for $marker {
            type Tx = Sender<T>;
            type Rx = $rx;

            fn channel() -> (Self::Tx, Self::Rx) {
                $bounded(CAP)
            }
        }

        impl<T: Send + 'static> SyncUnbounded<T> for $marker {
            type Tx = Sender<T>;
            type Rx = $rx;

            fn channel() -> (Self::Tx, Self::Rx) {
                $unbounded()
            }
        }

        impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for $marker {
            type Tx = Sender<T>;
            type Rx = $rx;

            fn channel() -> (Self::Tx, Self::Rx) {
                $bounded(CAP)
            }
        }

        impl<T: Send + 'static> AsyncUnbounded<T> for $marker {
            type Tx = Sender<T>;
            type Rx = $rx;

            fn channel() -> (Self::Tx, Self::Rx) {
                $unbounded()
            }
        }
    };
}

factories!(
    Rapidfire,
    Receiver<T>,
    ::rapidfire::bounded,
    ::rapidfire::unbounded
);
factories!(
    RapidfireMpsc,
    mpsc::Receiver<T>,
    mpsc::bounded,
    mpsc::unbounded
);

impl<T: Send> TrySend<T> for Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match Sender::try_send(self, value) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => false,
            Err(TrySendError::Closed(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        let mut value = Some(value);
        spin(|| {
            let attempt = value.take().expect("a value until it is sent");
            match Sender::try_send(self, attempt) {
                Ok(()) => Some(()),
                Err(TrySendError::Full(back)) => {
                    value = Some(back);
                    None
                }
                Err(TrySendError::Closed(_)) => panic!("receiver gone"),
            }
        });
    }
}

impl<T: Send> SendAsync<T> for Sender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        Sender::send(self, value)
    }
}

/// The receiving endpoint traits of one flavour's receiver, each with the
/// receiver's own method.
macro_rules! receiver {
    ($rx:ty) => {
        impl<T: Send> TryRecv<T> for $rx {
            #[inline(always)]
            fn try_recv(&mut self) -> Option<T> {
                <$rx>::try_recv(self).ok()
            }
        }

        impl<T: Send> RecvBlocking<T> for $rx {
            #[inline(always)]
            fn recv_blocking(&mut self) -> Option<T> {
                spin(|| match <$rx>::try_recv(self) {
                    Ok(value) => Some(Some(value)),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Closed) => Some(None),
                })
            }
        }

        impl<T: Send> RecvAsync<T> for $rx {
            #[inline(always)]
            fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
                <$rx>::recv(self)
            }
        }
    };
}

receiver!(Receiver<T>);
receiver!(mpsc::Receiver<T>);
