//! kanal: bounded and unbounded; the sync endpoints on threads, the async
//! endpoints (`bounded_async`, `unbounded_async`) in tasks.

use std::future::Future;

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, SendAsync, SendBlocking,
    SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `kanal`.
#[derive(Debug)]
pub struct Kanal;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for Kanal {
    type Tx = ::kanal::Sender<T>;
    type Rx = ::kanal::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::kanal::bounded(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for Kanal {
    type Tx = ::kanal::Sender<T>;
    type Rx = ::kanal::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::kanal::unbounded()
    }
}

impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for Kanal {
    type Tx = ::kanal::AsyncSender<T>;
    type Rx = ::kanal::AsyncReceiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::kanal::bounded_async(CAP)
    }
}

impl<T: Send + 'static> AsyncUnbounded<T> for Kanal {
    type Tx = ::kanal::AsyncSender<T>;
    type Rx = ::kanal::AsyncReceiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::kanal::unbounded_async()
    }
}

impl<T: Send> TrySend<T> for ::kanal::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        // kanal drops the value when the channel is full.
        ::kanal::Sender::try_send(self, value).unwrap_or_else(|_| panic!("receiver gone"))
    }
}

impl<T: Send> SendBlocking<T> for ::kanal::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(::kanal::Sender::send(self, value).is_ok(), "receiver gone");
    }
}

impl<T: Send> SendAsync<T> for ::kanal::AsyncSender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        ::kanal::AsyncSender::send(self, value)
    }
}

impl<T: Send> TryRecv<T> for ::kanal::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        ::kanal::Receiver::try_recv(self).ok().flatten()
    }
}

impl<T: Send> RecvBlocking<T> for ::kanal::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        ::kanal::Receiver::recv(self).ok()
    }
}

impl<T: Send> RecvAsync<T> for ::kanal::AsyncReceiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        ::kanal::AsyncReceiver::recv(self)
    }
}
