//! Closing a channel whose single producer publishes with plain stores.
//!
//! With many producers the close bit lives in the claim word, which every
//! claim's read-modify-write orders. A single producer only stores its
//! index, so a close from the receiver side races with a publish in flight,
//! and a send that returned `Ok` must not be lost: [`Boundary`] settles it.
//!
//! `frozen` is `OPEN` until the first party *settles* it with a
//! compare-exchange to the end position it has seen; everybody obeys the
//! winner: values before `frozen` are received, the rest are not.
//!
//! - The closer stores `closed` (`SeqCst`), waits on the producer's fence as
//!   a receiver does (`wait/fence.rs`), then loads the published tail
//!   (`SeqCst`) and settles at it ([`Boundary::close_single`]).
//! - The producer, after publishing position `t` (a `SeqCst` store of
//!   `t + 1`), loads `closed` (`SeqCst`). If set, it settles at `t + 1`; if
//!   the boundary in force is `<= t`, it takes its value back and reports
//!   the channel closed.
//! - The consumer loads the tail, then `closed`. If clear, any boundary is
//!   at least that tail; if set, it loads the tail *again* and settles with
//!   that, never the first load, which a producer may have overtaken,
//!   missing the flag and returning `Ok` (the loom models
//!   `close_racing_with_send_*`). It never reads past the boundary.
//!
//! The closer's and the producer's store and load are the store-buffer race
//! of [`crate::wait`]: either the closer sees the published tail or the
//! producer sees `closed` and settles, keeping its value as the winner says.

use std::sync::atomic::compiler_fence;

use crate::storage::PopError;
use crate::sync::{AtomicBool, AtomicU64, Ordering, SeqCst};
use crate::wait::Fence;

const OPEN: u64 = u64::MAX;

/// A single endpoint's index store: `SeqCst` when fenced, else a release
/// store kept before the flag load that follows (`wait/fence.rs`).
#[inline]
pub(crate) fn publish(index: &AtomicU64, value: u64, fenced: bool) {
    if fenced {
        index.store_sc(value);
    } else {
        // ORDERING: Release pairs with the other side's acquiring (SeqCst)
        // load of the index; a waiter is covered by its barrier.
        index.store_at(value, Ordering::Release);
        compiler_fence(Ordering::SeqCst);
    }
}

/// The close flag and frozen end of a single-producer storage.
#[derive(Debug)]
pub(crate) struct Boundary {
    closed: AtomicBool,
    /// `OPEN`, or the first position that is not received.
    frozen: AtomicU64,
}

impl Boundary {
    pub(crate) fn new() -> Self {
        Self {
            closed: AtomicBool::new(false),
            frozen: AtomicU64::new(OPEN),
        }
    }

    /// Whether the channel is closed: the producer's `SeqCst` load.
    #[inline]
    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load_sc()
    }

    /// Raises the close flag; true if this call raised it (the caller settles).
    pub(crate) fn close(&self) -> bool {
        !self.closed.swap(true, Ordering::SeqCst)
    }

    /// Closes a single-producer storage: raises the flag, waits on the
    /// producer's `fence` (unless `from_producer`, whose publishes precede
    /// this), and settles at the tail `published` loads. True if this call
    /// closed it. A closer that finds the boundary settled skips it all:
    /// every settler saw the values inside published, so whoever reads
    /// [`Boundary::frozen`] sees them too.
    pub(crate) fn close_single(
        &self,
        from_producer: bool,
        fence: &impl Fence,
        published: impl FnOnce() -> u64,
    ) -> bool {
        let closed = self.close();
        if !closed && self.frozen().is_some() {
            return false;
        }
        if !from_producer {
            fence.before_close();
        }
        self.settle(published());
        closed
    }

    /// Settles the boundary at `seen` unless it is settled already; returns
    /// the boundary in force.
    pub(crate) fn settle(&self, seen: u64) -> u64 {
        // ORDERING: SeqCst; the winner's value is read by the others'
        // failing compare-exchange, which also orders their later reads of
        // the slots after the winner's view of them.
        match self
            .frozen
            .compare_exchange(OPEN, seen, Ordering::SeqCst, Ordering::SeqCst)
        {
            Ok(_) => seen,
            Err(frozen) => frozen,
        }
    }

    /// The settled boundary, if any.
    pub(crate) fn frozen(&self) -> Option<u64> {
        match self.frozen.load_sc() {
            OPEN => None,
            frozen => Some(frozen),
        }
    }

    /// The end the consumer may read to, `tail` loading the published tail
    /// (`SeqCst`, acquiring the slot writes) (module docs).
    #[inline]
    pub(crate) fn readable_end(&self, tail: impl Fn() -> u64) -> u64 {
        let end = tail();
        if !self.is_closed() {
            return end;
        }
        let end = tail();
        end.min(self.settle(end))
    }

    /// Why a consumer at `pos`, with nothing readable, gets no value.
    pub(crate) fn nothing_at(&self, pos: u64) -> PopError {
        if self.frozen().is_some_and(|end| pos >= end) {
            PopError::Closed
        } else {
            PopError::Empty
        }
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;
    use crate::wait::{Park, Wait};

    /// A park channel's fence.
    type ParkFence = <Park as Wait>::Fence;

    #[test]
    fn the_producer_closing_its_own_channel_asks_nothing_of_its_fence() {
        let boundary = Boundary::new();
        let fence = ParkFence::plain_for_tests();
        let plain = fence.is_plain();
        assert!(boundary.close_single(true, &fence, || 5));
        assert_eq!(boundary.frozen(), Some(5));
        assert_eq!(fence.is_plain(), plain, "no barrier was asked for");
    }

    #[test]
    fn another_closer_of_an_open_channel_waits_on_the_producer() {
        let boundary = Boundary::new();
        let fence = ParkFence::plain_for_tests();
        assert!(boundary.close_single(false, &fence, || 4));
        assert_eq!(boundary.frozen(), Some(4));
        // A plain fence was asked to fence (and the system call made).
        assert!(!fence.is_plain());
    }

    #[test]
    fn closing_a_settled_boundary_again_changes_nothing_and_asks_nothing() {
        let boundary = Boundary::new();
        let fence = ParkFence::plain_for_tests();
        let plain = fence.is_plain();
        assert!(boundary.close_single(true, &fence, || 3));
        // The receiver closes (or goes away) after the sender did: the
        // boundary is final, so no barrier, and the tail it would load is
        // never used.
        assert!(!boundary.close_single(false, &fence, || unreachable!()));
        assert_eq!(boundary.frozen(), Some(3));
        assert_eq!(fence.is_plain(), plain, "no barrier was asked for");
    }

    #[test]
    fn a_close_flag_without_a_settled_boundary_is_settled_by_the_next_closer() {
        // A producer saw the flag of a closer that has not settled yet.
        let boundary = Boundary::new();
        let fence = ParkFence::plain_for_tests();
        assert!(boundary.close());
        assert!(!boundary.close_single(false, &fence, || 9));
        assert_eq!(boundary.frozen(), Some(9));
        assert!(!fence.is_plain());
    }
}
