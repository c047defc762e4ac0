//! tokio `sync::mpsc`: bounded and unbounded; `blocking_send` /
//! `blocking_recv` on threads, the futures in tasks, `reserve` for permits.

use std::future::Future;

use ::tokio::sync::mpsc;

use super::{
    AsyncBounded, AsyncUnbounded, Outcome, RecvAsync, RecvBlocking, ReserveAsync, SendAsync,
    SendBlocking, SendPermit, SyncBounded, SyncUnbounded, TryRecv, TrySend,
};

/// `tokio::sync::mpsc`.
#[derive(Debug)]
pub struct Tokio;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for Tokio {
    type Tx = mpsc::Sender<T>;
    type Rx = mpsc::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::channel(CAP)
    }
}

impl<T: Send + 'static, const CAP: usize> AsyncBounded<T, CAP> for Tokio {
    type Tx = mpsc::Sender<T>;
    type Rx = mpsc::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::channel(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for Tokio {
    type Tx = mpsc::UnboundedSender<T>;
    type Rx = mpsc::UnboundedReceiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::unbounded_channel()
    }
}

impl<T: Send + 'static> AsyncUnbounded<T> for Tokio {
    type Tx = mpsc::UnboundedSender<T>;
    type Rx = mpsc::UnboundedReceiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::unbounded_channel()
    }
}

impl<T: Send> TrySend<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match mpsc::Sender::try_send(self, value) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => false,
            Err(mpsc::error::TrySendError::Closed(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(
            mpsc::Sender::blocking_send(self, value).is_ok(),
            "receiver gone"
        );
    }
}

impl<T: Send> SendAsync<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        mpsc::Sender::send(self, value)
    }
}

impl<T: Send> ReserveAsync<T> for mpsc::Sender<T> {
    type Permit<'a>
        = mpsc::Permit<'a, T>
    where
        Self: 'a;

    #[inline(always)]
    fn reserve(&mut self) -> impl Future<Output = impl Outcome<Self::Permit<'_>>> + Send + '_ {
        mpsc::Sender::reserve(self)
    }
}

impl<T> SendPermit<T> for mpsc::Permit<'_, T> {
    #[inline(always)]
    fn send(self, value: T) {
        mpsc::Permit::send(self, value);
    }
}

impl<T: Send> TryRecv<T> for mpsc::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        mpsc::Receiver::try_recv(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for mpsc::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        mpsc::Receiver::blocking_recv(self)
    }
}

impl<T: Send> RecvAsync<T> for mpsc::Receiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        mpsc::Receiver::recv(self)
    }
}

impl<T: Send> TrySend<T> for mpsc::UnboundedSender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        // An unbounded sender never waits: `send` is its try-send.
        assert!(
            mpsc::UnboundedSender::send(self, value).is_ok(),
            "receiver gone"
        );
        true
    }
}

impl<T: Send> SendBlocking<T> for mpsc::UnboundedSender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(
            mpsc::UnboundedSender::send(self, value).is_ok(),
            "receiver gone"
        );
    }
}

impl<T: Send> SendAsync<T> for mpsc::UnboundedSender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        // tokio's unbounded send is synchronous: its async equivalent is a
        // ready future around it.
        std::future::ready(mpsc::UnboundedSender::send(self, value))
    }
}

impl<T: Send> TryRecv<T> for mpsc::UnboundedReceiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        mpsc::UnboundedReceiver::try_recv(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for mpsc::UnboundedReceiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        mpsc::UnboundedReceiver::blocking_recv(self)
    }
}

impl<T: Send> RecvAsync<T> for mpsc::UnboundedReceiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        mpsc::UnboundedReceiver::recv(self)
    }
}
