//! crossbeam-channel: bounded and unbounded, threads only (no async API).

use ::crossbeam_channel as cb;

use super::{RecvBlocking, SendBlocking, SyncBounded, SyncUnbounded, TryRecv, TrySend};

/// `crossbeam_channel`.
#[derive(Debug)]
pub struct Crossbeam;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for Crossbeam {
    type Tx = cb::Sender<T>;
    type Rx = cb::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        cb::bounded(CAP)
    }
}

impl<T: Send + 'static> SyncUnbounded<T> for Crossbeam {
    type Tx = cb::Sender<T>;
    type Rx = cb::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        cb::unbounded()
    }
}

impl<T: Send> TrySend<T> for cb::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match cb::Sender::try_send(self, value) {
            Ok(()) => true,
            Err(cb::TrySendError::Full(_)) => false,
            Err(cb::TrySendError::Disconnected(_)) => panic!("receiver gone"),
        }
    }
}

impl<T: Send> SendBlocking<T> for cb::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(cb::Sender::send(self, value).is_ok(), "receiver gone");
    }
}

impl<T: Send> TryRecv<T> for cb::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        cb::Receiver::try_recv(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for cb::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        cb::Receiver::recv(self).ok()
    }
}
