//! async-channel: bounded and unbounded; `send_blocking` / `recv_blocking`
//! on threads, the futures in tasks.

use std::future::Future;

use ::async_channel as ac;

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, SendAsync, SendBlocking,
    SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `async_channel`.
#[derive(Debug)]
pub struct AsyncChannel;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for AsyncChannel {
    type Tx = ac::Sender<T>;
    type Rx = ac::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ac::bounded(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for AsyncChannel {
    type Tx = ac::Sender<T>;
    type Rx = ac::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ac::unbounded()
    }
}

impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for AsyncChannel {
    type Tx = ac::Sender<T>;
    type Rx = ac::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ac::bounded(CAP)
    }
}

impl<T: Send + 'static> AsyncUnbounded<T> for AsyncChannel {
    type Tx = ac::Sender<T>;
    type Rx = ac::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ac::unbounded()
    }
}

impl<T: Send> TrySend<T> for ac::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match ac::Sender::try_send(self, value) {
            Ok(()) => true,
            Err(ac::TrySendError::Full(_)) => false,
            Err(ac::TrySendError::Closed(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for ac::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(
            ac::Sender::send_blocking(self, value).is_ok(),
            "receiver gone"
        );
    }
}

impl<T: Send> SendAsync<T> for ac::Sender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        ac::Sender::send(self, value)
    }
}

impl<T: Send> TryRecv<T> for ac::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        ac::Receiver::try_recv(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for ac::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        ac::Receiver::recv_blocking(self).ok()
    }
}

impl<T: Send> RecvAsync<T> for ac::Receiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        ac::Receiver::recv(self)
    }
}
