//! thingbuf: bounded MPSC only; `mpsc::blocking` on threads, `mpsc` (async)
//! in tasks.

use std::future::Future;

use ::thingbuf::mpsc;

use super::{
    AsyncBounded, Outcome, RecvAsync, RecvBlocking, SendAsync, SendBlocking, SyncBounded, TryRecv,
    TrySend,
};

/// `thingbuf::mpsc`.
#[derive(Debug)]
pub struct Thingbuf;

impl<T: Default + Clone + Send + Sync + 'static, const CAP: usize> SyncBounded<T, CAP>
    for Thingbuf
{
    type Tx = mpsc::blocking::Sender<T>;
    type Rx = mpsc::blocking::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::blocking::channel(CAP)
    }
}

impl<T: Default + Clone + Send + Sync + 'static, const CAP: usize> AsyncBounded<T, CAP>
    for Thingbuf
{
    type Tx = mpsc::Sender<T>;
    type Rx = mpsc::Receiver<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        mpsc::channel(CAP)
    }
}

impl<T: Default + Clone + Send + Sync> TrySend<T> for mpsc::blocking::Sender<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        match mpsc::blocking::Sender::try_send(self, value) {
            Ok(()) => true,
            Err(mpsc::errors::TrySendError::Full(_)) => false,
            Err(mpsc::errors::TrySendError::Closed(_)) => panic!("receiver gone"),
            Err(_) => unreachable!("thingbuf's `TrySendError` has only `Full` and `Closed`"),
        }
    }
}

impl<T: Default + Clone + Send + Sync> SendBlocking<T> for mpsc::blocking::Sender<T> {
    #[inline(always)]
    fn send_blocking(&mut self, value: T) {
        assert!(
            mpsc::blocking::Sender::send(self, value).is_ok(),
            "receiver gone"
        );
    }
}

impl<T: Default + Clone + Send + Sync> TryRecv<T> for mpsc::blocking::Receiver<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        mpsc::blocking::Receiver::try_recv(self).ok()
    }
}

impl<T: Default + Clone + Send + Sync> RecvBlocking<T> for mpsc::blocking::Receiver<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        mpsc::blocking::Receiver::recv(self)
    }
}

impl<T: Default + Clone + Send + Sync> SendAsync<T> for mpsc::Sender<T> {
    #[inline(always)]
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_ {
        mpsc::Sender::send(self, value)
    }
}

impl<T: Default + Clone + Send + Sync> RecvAsync<T> for mpsc::Receiver<T> {
    #[inline(always)]
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_ {
        mpsc::Receiver::recv(self)
    }
}
