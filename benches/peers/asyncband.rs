//! asyncband: one marker per topology; the same endpoints serve threads and
//! tasks.

use std::future::Future;

use asyncband::wait::{Spin, Yield};
use asyncband::{mpmc, mpsc, spsc};

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, ReserveAsync, SendAsync,
    SendBlocking, SendPermit, SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `asyncband::spsc`.
#[derive(Debug)]
pub struct AsyncbandSpsc;

/// `asyncband::mpsc`.
#[derive(Debug)]
pub struct AsyncbandMpsc;

/// `asyncband::mpmc`.
#[derive(Debug)]
pub struct AsyncbandMpmc;

/// `asyncband::spsc` with `wait = spin`: blocking operations busy-wait.
#[derive(Debug)]
pub struct AsyncbandSpscSpin;

/// `asyncband::mpsc` with `wait = spin`.
#[derive(Debug)]
pub struct AsyncbandMpscSpin;

/// `asyncband::mpmc` with `wait = spin`.
#[derive(Debug)]
pub struct AsyncbandMpmcSpin;

/// `asyncband::mpsc` with `wait = yield`: blocking operations spin, then
/// yield, and never park.
#[derive(Debug)]
pub struct AsyncbandMpscYield;

/// `asyncband::mpmc` with `wait = yield`.
#[derive(Debug)]
pub struct AsyncbandMpmcYield;

/// The thread-side endpoint traits for one flavour's sender and receiver.
macro_rules! sync_endpoints {
    ([$($generics:tt)*] $tx:ty, $rx:ty) => {
        impl<$($generics)*> TrySend<T> for $tx {
            #[inline(always)]
            fn try_send(&mut self, value: T) -> bool {
                match <$tx>::try_send(self, value) {
                    Ok(()) => true,
                    Err(asyncband::error::TrySendError::Full(_)) => false,
                    Err(asyncband::error::TrySendError::Disconnected(_)) => panic!("receiver gone"),
                }
            }
        }

        impl<$($generics)*> TryRecv<T> for $rx {
            #[inline(always)]
            fn try_recv(&mut self) -> Option<T> {
                <$rx>::try_recv(self).ok()
            }
        }

        impl<$($generics)*> SendBlocking<T> for $tx {
            #[inline(always)]
            fn send_blocking(&mut self, value: T) {
                assert!(<$tx>::send_blocking(self, value).is_ok(), "receiver gone");
            }
        }

        impl<$($generics)*> RecvBlocking<T> for $rx {
            #[inline(always)]
            fn recv_blocking(&mut self) -> Option<T> {
                <$rx>::recv_blocking(self).ok()
            }
        }
    };
}

/// Every endpoint trait for one flavour's sender and receiver.
macro_rules! endpoints {
    ([$($generics:tt)*] $tx:ty, $rx:ty) => {
        sync_endpoints!([$($generics)*] $tx, $rx);

        impl<$($generics)*> SendAsync<T> for $tx {
            #[inline(always)]
            fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
                <$tx>::send(self, value)
            }
        }

        impl<$($generics)*> RecvAsync<T> for $rx {
            #[inline(always)]
            fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
                <$rx>::recv(self)
            }
        }
    };
}

/// The factories of one topology.
macro_rules! factories {
    ($marker:ty, $topology:ident) => {
        impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for $marker {
            type Tx = $topology::Sender<$topology::Bounded<T, CAP>>;
            type Rx = $topology::Receiver<$topology::Bounded<T, CAP>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::bounded::<T, CAP>()
            }
        }

        impl<T: Send + 'static> SyncUnbounded<T> for $marker {
            type Tx = $topology::Sender<$topology::Unbounded<T>>;
            type Rx = $topology::Receiver<$topology::Unbounded<T>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::unbounded::<T>()
            }
        }

        impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for $marker {
            type Tx = $topology::Sender<$topology::Bounded<T, CAP>>;
            type Rx = $topology::Receiver<$topology::Bounded<T, CAP>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::bounded::<T, CAP>()
            }
        }

        impl<T: Send + 'static> AsyncUnbounded<T> for $marker {
            type Tx = $topology::Sender<$topology::Unbounded<T>>;
            type Rx = $topology::Receiver<$topology::Unbounded<T>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::unbounded::<T>()
            }
        }

        endpoints!(
            [T: Send + 'static, const CAP: usize]
            $topology::Sender<$topology::Bounded<T, CAP>>,
            $topology::Receiver<$topology::Bounded<T, CAP>>
        );
        endpoints!(
            [T: Send + 'static]
            $topology::Sender<$topology::Unbounded<T>>,
            $topology::Receiver<$topology::Unbounded<T>>
        );

        impl<T: Send + 'static, const CAP: usize> ReserveAsync<T> for $topology::Sender<$topology::Bounded<T, CAP>> {
            type Permit<'a> = $topology::Permit<'a, $topology::Bounded<T, CAP>>;

            #[inline(always)]
            fn reserve(&mut self) -> impl Future<Output = impl Outcome<Self::Permit<'_>>> + Send + '_ {
                <$topology::Sender<$topology::Bounded<T, CAP>>>::reserve(self)
            }
        }

        impl<T: Send + 'static, const CAP: usize> SendPermit<T> for $topology::Permit<'_, $topology::Bounded<T, CAP>> {
            #[inline(always)]
            fn send(self, value: T) {
                assert!(<$topology::Permit<'_, $topology::Bounded<T, CAP>>>::send(self, value).is_ok(), "receiver gone");
            }
        }
    };
}

factories!(AsyncbandSpsc, spsc);
factories!(AsyncbandMpsc, mpsc);
factories!(AsyncbandMpmc, mpmc);

/// The thread-side factories of one topology with a policy that has no
/// async operations (`Spin`, `Yield`).
macro_rules! busy_factories {
    ($marker:ty, $topology:ident, $policy:ident) => {
        impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for $marker {
            type Tx = $topology::Sender<$topology::Bounded<T, CAP, { usize::MAX }, $policy>>;
            type Rx = $topology::Receiver<$topology::Bounded<T, CAP, { usize::MAX }, $policy>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::Bounded::<T, CAP, { usize::MAX }, $policy>::channel()
            }
        }

        impl<T: Send + 'static> SyncUnbounded<T> for $marker {
            type Tx = $topology::Sender<$topology::Unbounded<T, { usize::MAX }, $policy>>;
            type Rx = $topology::Receiver<$topology::Unbounded<T, { usize::MAX }, $policy>>;

            fn channel() -> (Self::Tx, Self::Rx) {
                $topology::Unbounded::<T, { usize::MAX }, $policy>::channel()
            }
        }

        sync_endpoints!(
            [T: Send + 'static, const CAP: usize]
            $topology::Sender<$topology::Bounded<T, CAP, { usize::MAX }, $policy>>,
            $topology::Receiver<$topology::Bounded<T, CAP, { usize::MAX }, $policy>>
        );
        sync_endpoints!(
            [T: Send + 'static]
            $topology::Sender<$topology::Unbounded<T, { usize::MAX }, $policy>>,
            $topology::Receiver<$topology::Unbounded<T, { usize::MAX }, $policy>>
        );
    };
}

busy_factories!(AsyncbandSpscSpin, spsc, Spin);
busy_factories!(AsyncbandMpscSpin, mpsc, Spin);
busy_factories!(AsyncbandMpmcSpin, mpmc, Spin);
busy_factories!(AsyncbandMpscYield, mpsc, Yield);
busy_factories!(AsyncbandMpmcYield, mpmc, Yield);
