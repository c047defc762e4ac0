//! rtrb: a bounded SPSC ring with no waiting at all, the floor for SPSC.
//! Its "blocking" operations busy-spin (`spin_loop` hints), which is how it
//! is meant to be used; it has no async API and no unbounded flavour.

use std::hint::spin_loop;

use super::{RecvBlocking, SendBlocking, SyncBounded, TryRecv, TrySend};

/// `rtrb`.
#[derive(Debug)]
pub struct Rtrb;

impl<T: Send + 'static, const CAP: usize> SyncBounded<T, CAP> for Rtrb {
    type Tx = ::rtrb::Producer<T>;
    type Rx = ::rtrb::Consumer<T>;

    fn channel() -> (Self::Tx, Self::Rx) {
        ::rtrb::RingBuffer::new(CAP)
    }
}

impl<T: Send> TrySend<T> for ::rtrb::Producer<T> {
    #[inline(always)]
    fn try_send(&mut self, value: T) -> bool {
        ::rtrb::Producer::push(self, value).is_ok()
    }
}

impl<T: Send> SendBlocking<T> for ::rtrb::Producer<T> {
    #[inline(always)]
    fn send_blocking(&mut self, mut value: T) {
        loop {
            match ::rtrb::Producer::push(self, value) {
                Ok(()) => return,
                Err(::rtrb::PushError::Full(back)) => value = back,
            }
            assert!(!self.is_abandoned(), "receiver gone");
            spin_loop();
        }
    }
}

impl<T: Send> TryRecv<T> for ::rtrb::Consumer<T> {
    #[inline(always)]
    fn try_recv(&mut self) -> Option<T> {
        ::rtrb::Consumer::pop(self).ok()
    }
}

impl<T: Send> RecvBlocking<T> for ::rtrb::Consumer<T> {
    #[inline(always)]
    fn recv_blocking(&mut self) -> Option<T> {
        loop {
            if let Ok(value) = ::rtrb::Consumer::pop(self) {
                return Some(value);
            }
            if self.is_abandoned() {
                // The producer is gone: whatever it pushed before is visible now.
                return ::rtrb::Consumer::pop(self).ok();
            }
            spin_loop();
        }
    }
}
