//! Bounded storage: a [`Buffer`] of `CAP` slots (a power of two, so a
//! 64-bit position maps to its slot with a mask) and the [`Cursors`] of one
//! topology: [`Indexed`] (`indexed.rs`) for one producer and one consumer,
//! each owning its position and publishing with one store; [`Claiming`]
//! (`stamped.rs`) for many producers, which claim positions in one word and
//! publish through each slot's stamp, read by a single consumer
//! ([`OneConsumer`]) or claimed by many ([`ManyConsumers`]).

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use crate::arity::{Many, One, Topology};
use crate::slot::{Slot, Stamp, writable};
use crate::storage::drop_each;
use crate::wait::{Park, Wait};

mod indexed;
mod stamped;

pub use indexed::{Indexed, IndexedCursor, IndexedTail};
pub use stamped::{Claiming, Consumers, ManyConsumers, OneConsumer, OneConsumerCursor};

/// A supported pair of producer and consumer arities and its ring's
/// cursors (sealed through [`Topology`]).
pub trait RingTopology: Topology {
    /// The cursors of a ring with these arities and wait policy `W`.
    type Cursors<W: Wait>: Cursors;
}

impl RingTopology for (One, One) {
    type Cursors<W: Wait> = Indexed<W>;
}

impl RingTopology for (Many, One) {
    type Cursors<W: Wait> = Claiming<OneConsumer<W>>;
}

impl RingTopology for (Many, Many) {
    type Cursors<W: Wait> = Claiming<ManyConsumers<W>>;
}

/// Bounded storage of `CAP` slots for producer arity `P`, consumer arity
/// `C` and wait policy `W`. One producer with many consumers has no ring:
///
/// ```compile_fail
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, rx) = endpoint::channel::<Ring<u32, 4, One, Many>>();
/// ```
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (mut tx, mut rx) = endpoint::channel::<Ring<u32, 2, One, One>>();
/// tx.by_ref().try_send(1).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// ```
pub type Ring<T, const CAP: usize, P, C, W = Park> =
    Buffer<T, CAP, <(P, C) as RingTopology>::Cursors<W>>;

/// The largest capacity a bounded channel may have: 2^20 slots.
pub const MAX_CAPACITY: usize = 1 << 20;

mod sealed {
    /// Only this module's cursors implement [`super::Cursors`].
    pub trait Sealed {}
}

/// One topology's positions and flags: [`Indexed`] or [`Claiming`]. Sealed.
pub trait Cursors: sealed::Sealed + Sized + 'static {
    /// The per-slot publication word these cursors need.
    type Stamp: Stamp;

    /// Cursors of an empty, open ring.
    fn new() -> Self;

    /// The last consumer's step: the next value still queued, the head moved
    /// past it; waits for a push that claimed its position before the close.
    ///
    /// # Safety
    ///
    /// No other consumer of `ring` exists, and no push can linearise any
    /// more (closed, or every endpoint is gone).
    unsafe fn take_queued<T, const CAP: usize>(ring: &Buffer<T, CAP, Self>) -> Option<T>;
}

/// Bounded storage: `CAP` slots and the cursors `K` of one topology
/// ([`Ring`] names it by arities).
pub struct Buffer<T, const CAP: usize, K: Cursors> {
    /// The topology's positions and flags.
    cursors: K,
    /// A fixed-size array, so a masked position needs no bounds check.
    slots: Box<[Slot<T, K::Stamp>; CAP]>,
}

// SAFETY: values move between threads, so `T: Send` is required and
// sufficient; the cursors' protocol guards every shared cell.
unsafe impl<T: Send, const CAP: usize, K: Cursors> Send for Buffer<T, CAP, K> {}
// SAFETY: as for `Send`; `&Buffer` only ever moves values, never shares them.
unsafe impl<T: Send, const CAP: usize, K: Cursors> Sync for Buffer<T, CAP, K> {}

impl<T, const CAP: usize, K: Cursors> Buffer<T, CAP, K> {
    /// A bad `CAP` must stay harmless until `with_cursors` refuses it.
    const MASK: u64 = CAP.wrapping_sub(1) as u64;
    const CAP64: u64 = CAP as u64;

    /// A ring of fresh slots around `cursors`; panics unless `CAP` is a power
    /// of two from 1 to [`MAX_CAPACITY`].
    fn with_cursors(cursors: K) -> Self {
        assert!(
            CAP.is_power_of_two() && CAP <= MAX_CAPACITY,
            "ring capacity must be a power of two from 1 to 2^20, not {CAP}"
        );
        let mut slots = Box::<[Slot<T, K::Stamp>; CAP]>::new_uninit();
        let first = slots.as_mut_ptr().cast::<Slot<T, K::Stamp>>();
        for (i, pos) in (0..Self::CAP64).enumerate() {
            // SAFETY: `i < CAP`; each slot is initialised once, in place.
            unsafe { Slot::init(first.add(i), writable(pos)) };
        }
        // SAFETY: every one of the `CAP` slots was initialised above.
        let slots = unsafe { slots.assume_init() };
        Self { cursors, slots }
    }

    /// The slot that serves `pos`.
    #[inline]
    #[allow(clippy::cast_possible_truncation, reason = "`pos & MASK < CAP`")]
    fn slot(&self, pos: u64) -> &Slot<T, K::Stamp> {
        &self.slots[(pos & Self::MASK) as usize]
    }

    /// Drops every value still queued.
    ///
    /// # Safety
    ///
    /// As for [`Cursors::take_queued`].
    unsafe fn drop_queued(&self) {
        // SAFETY: the caller's contract.
        drop_each(|| unsafe { K::take_queued(self) });
    }
}

impl<T, const CAP: usize, K: Cursors> Drop for Buffer<T, CAP, K> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no other consumer, no push in flight.
        unsafe { self.drop_queued() };
    }
}

/// A consumer's hold on the value at `pos` (`Storage::front`).
pub struct RingFront<T, S> {
    pos: u64,
    /// The slot of `pos`, found once, not reloaded after `front`'s atomics.
    slot: *const Slot<T, S>,
    /// One producer: whether the release publishes fenced (from `front`).
    fenced: bool,
}

impl<T, S: Stamp> RingFront<T, S> {
    /// Moves the value out of the slot.
    ///
    /// # Safety
    ///
    /// The slot holds `pos`'s value, this consumer's alone (as `front`
    /// found it), taken once.
    #[inline(always)]
    unsafe fn take(&mut self) -> T {
        // SAFETY: the ring outlives the front; the value is there and ours.
        unsafe { (*self.slot).read() }
    }
}

impl<T, S> std::fmt::Debug for RingFront<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingFront")
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests;
