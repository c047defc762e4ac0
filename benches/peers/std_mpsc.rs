//! `std::sync::mpsc`: `sync_channel` (bounded) and `channel` (unbounded),
//! threads only.

use std::sync::mpsc;

use super::{RecvBlocking, SendBlocking, SyncBounded, SyncUnbounded, TryRecv, TrySend};

/// `std::sync::mpsc`.
#[derive(Debug)]
pub struct StdMpsc;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for StdMpsc {
    type Tx = mpsc::SyncSender<T>;
    type Rx = mpsc::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::sync_channel(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for StdMpsc {
    type Tx = mpsc::Sender<T>;
    type Rx = mpsc::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::channel()
    }
}

impl<T: Send> TrySend<T> for mpsc::SyncSender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match mpsc::SyncSender::try_send(self, value) {
            Ok(()) => true,
            Err(mpsc::TrySendError::Full(_)) => false,
            Err(mpsc::TrySendError::Disconnected(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for mpsc::SyncSender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(mpsc::SyncSender::send(self, value).is_ok(), "receiver gone");
    }
}

impl<T: Send> TrySend<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        // An unbounded sender never waits: `send` is its try-send.
        assert!(mpsc::Sender::send(self, value).is_ok(), "receiver gone");
        true
    }
}

impl<T: Send> SendBlocking<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(mpsc::Sender::send(self, value).is_ok(), "receiver gone");
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
        mpsc::Receiver::recv(self).ok()
    }
}
