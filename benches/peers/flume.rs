//! flume: bounded and unbounded; `send` / `recv` on threads, `send_async` /
//! `recv_async` in tasks.

use std::future::Future;

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, SendAsync, SendBlocking,
    SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `flume`.
#[derive(Debug)]
pub struct Flume;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for Flume {
    type Tx = ::flume::Sender<T>;
    type Rx = ::flume::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::flume::bounded(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for Flume {
    type Tx = ::flume::Sender<T>;
    type Rx = ::flume::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::flume::unbounded()
    }
}

impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for Flume {
    type Tx = ::flume::Sender<T>;
    type Rx = ::flume::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::flume::bounded(CAP)
    }
}

impl<T: Send + 'static> AsyncUnbounded<T> for Flume {
    type Tx = ::flume::Sender<T>;
    type Rx = ::flume::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::flume::unbounded()
    }
}

impl<T: Send> TrySend<T> for ::flume::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match ::flume::Sender::try_send(self, value) {
            Ok(()) => true,
            Err(::flume::TrySendError::Full(_)) => false,
            Err(::flume::TrySendError::Disconnected(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for ::flume::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(::flume::Sender::send(self, value).is_ok(), "receiver gone");
    }
}

impl<T: Send> SendAsync<T> for ::flume::Sender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        ::flume::Sender::send_async(self, value)
    }
}

impl<T: Send> TryRecv<T> for ::flume::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        ::flume::Receiver::try_recv(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for ::flume::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        ::flume::Receiver::recv(self).ok()
    }
}

impl<T: Send> RecvAsync<T> for ::flume::Receiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        ::flume::Receiver::recv_async(self)
    }
}
