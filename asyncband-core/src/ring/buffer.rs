//! What every ring has whatever its topology: `CAP` preallocated slots and
//! the cursors of one topology ([`Cursors`]), which hold every position and
//! flag the ring's algorithm keeps.

use crate::slot::{Slot, Stamp, writable};
use crate::storage::{PushError, Storage, drop_each};

/// The largest capacity a bounded channel may have: 2^20 slots.
pub const MAX_CAPACITY: usize = 1 << 20;

pub(super) mod sealed {
    /// Only the cursors of this module's siblings implement [`super::Cursors`].
    pub trait Sealed {}
}

/// The positions and flags of one topology's producers and consumers: the
/// state a ring's algorithm keeps beside its slots. Sealed: the ring's
/// cursors are [`Indexed`](super::Indexed) (one producer, one consumer) and
/// [`Claiming`](super::Claiming) (many producers).
///
/// # Examples
///
/// ```
/// use asyncband_core::ring::{Buffer, Cursors, Indexed};
/// use asyncband_core::storage::Storage;
///
/// // Code generic over every ring's cursors.
/// fn slots<T, const CAP: usize, K: Cursors>(_: &Buffer<T, CAP, K>) -> usize {
///     CAP
/// }
/// assert_eq!(slots(&Buffer::<u8, 8, Indexed>::new()), 8);
/// ```
pub trait Cursors: sealed::Sealed + Sized + 'static {
    /// The per-slot publication word these cursors need (see the private
    /// `slot` module).
    type Stamp: Stamp;

    /// Cursors of an empty, open ring.
    fn new() -> Self;

    /// The last consumer's step: the next value still queued, with the head
    /// already moved past it; waits for a push that claimed its position
    /// before the close.
    ///
    /// # Safety
    ///
    /// No other consumer of `ring` exists, and no push can linearise any
    /// more (closed, or every endpoint is gone).
    unsafe fn take_queued<T, const CAP: usize>(ring: &Buffer<T, CAP, Self>) -> Option<T>;
}

/// Bounded storage: `CAP` slots and the cursors `K` of one topology.
/// [`Ring`](super::Ring) is the buffer of a pair of arities, under their
/// names.
///
/// # Examples
///
/// ```
/// use asyncband_core::ring::{Buffer, Indexed};
/// use asyncband_core::storage::Storage;
///
/// let ring = Buffer::<u8, 4, Indexed>::new();
/// assert_eq!(ring.len(), 0);
/// ```
pub struct Buffer<T, const CAP: usize, K: Cursors> {
    /// The topology's positions and flags.
    pub(super) cursors: K,
    /// A fixed-size array, so a masked position needs no bounds check.
    slots: Box<[Slot<T, K::Stamp>; CAP]>,
}

// SAFETY: values move between threads through the ring, so `T: Send` is
// required and sufficient; every shared cell is guarded by the protocol of
// the cursors' module.
unsafe impl<T: Send, const CAP: usize, K: Cursors> Send for Buffer<T, CAP, K> {}
// SAFETY: as for `Send`; `&Buffer` only ever moves values, never shares them.
unsafe impl<T: Send, const CAP: usize, K: Cursors> Sync for Buffer<T, CAP, K> {}

impl<T, const CAP: usize, K: Cursors> Buffer<T, CAP, K> {
    /// The facade rejects a bad `CAP` at compile time with a message that
    /// says what is allowed; here a bad one only has to stay harmless until
    /// `with_cursors` refuses it, so nothing below may overflow.
    pub(super) const MASK: u64 = CAP.wrapping_sub(1) as u64;
    pub(super) const CAP64: u64 = CAP as u64;

    /// A ring of fresh slots around `cursors`.
    ///
    /// # Panics
    ///
    /// When `CAP` is not a power of two from 1 to [`MAX_CAPACITY`].
    pub(super) fn with_cursors(cursors: K) -> Self {
        // A slot must serve exactly one position per lap; that needs a power
        // of two. (The facade already refuses anything else at compile time.)
        assert!(
            CAP.is_power_of_two() && CAP <= MAX_CAPACITY,
            "ring capacity must be a power of two from 1 to 2^20, not {CAP}"
        );
        let mut slots = Box::<[Slot<T, K::Stamp>; CAP]>::new_uninit();
        let first = slots.as_mut_ptr().cast::<Slot<T, K::Stamp>>();
        for (i, pos) in (0..Self::CAP64).enumerate() {
            // SAFETY: `i < CAP`, inside the allocation; each slot is
            // initialised once, in place (no `[Slot; CAP]`, nor even one
            // slot, on the stack, which a large ring would overflow).
            unsafe { Slot::init(first.add(i), writable(pos)) };
        }
        // SAFETY: every one of the `CAP` slots was initialised above.
        let slots = unsafe { slots.assume_init() };
        Self { cursors, slots }
    }

    /// The slot that serves `pos`.
    #[inline]
    #[allow(
        clippy::cast_possible_truncation,
        reason = "`pos & MASK < CAP`, which is a `usize`, so the cast is lossless"
    )]
    pub(super) fn slot(&self, pos: u64) -> &Slot<T, K::Stamp> {
        // `pos & MASK < CAP`, the array's length: the compiler sees it and
        // drops the bounds check.
        &self.slots[(pos & Self::MASK) as usize]
    }

    /// Drops every value still queued.
    ///
    /// # Safety
    ///
    /// As for [`Cursors::take_queued`].
    pub(super) unsafe fn drop_queued(&self) {
        // SAFETY: the caller's contract.
        drop_each(|| unsafe { K::take_queued(self) });
    }
}

impl<T, const CAP: usize, K: Cursors> Buffer<T, CAP, K>
where
    Self: Storage<Item = T>,
{
    /// [`Storage::try_push`] through [`Storage::try_push_from`], which
    /// moves the value out of an `Option` only when it is accepted.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_push`].
    #[inline]
    pub(super) unsafe fn push_value(
        &self,
        cursor: &mut <Self as Storage>::ProducerCursor,
        value: T,
    ) -> Result<(), PushError<T>> {
        let mut value = Some(value);
        // SAFETY: forwarded from the caller; `value` holds a value.
        let refused = match unsafe { self.try_push_from(cursor, &mut value) } {
            Ok(()) => return Ok(()),
            Err(refused) => refused,
        };
        // SAFETY: a refused push leaves the value in place.
        let value = unsafe { value.unwrap_unchecked() };
        Err(match refused {
            PushError::Full(()) => PushError::Full(value),
            PushError::Closed(()) => PushError::Closed(value),
        })
    }
}

impl<T, const CAP: usize, K: Cursors> Drop for Buffer<T, CAP, K> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: every endpoint is gone, so there is no other
        // consumer and no push in flight.
        unsafe { self.drop_queued() };
    }
}

/// A consumer's hold on the value at `pos` (see
/// [`Storage::front`](crate::storage::Storage::front)): found readable and,
/// with many consumers, claimed; freed by `release_front`.
pub struct RingFront<T, S> {
    pub(super) pos: u64,
    /// The slot of `pos`, found once: `take_front` and `release_front`
    /// would otherwise reload the slot array's address after `front`'s
    /// atomic operations.
    pub(super) slot: *const Slot<T, S>,
    /// One producer: whether the release publishes fenced, asked of the
    /// consumer's fence in `front` (unused otherwise).
    pub(super) fenced: bool,
}

impl<T, S: Stamp> RingFront<T, S> {
    /// Moves the value out of the slot.
    ///
    /// # Safety
    ///
    /// The slot holds the value for `pos`, readable by this consumer alone
    /// (as `front` found it), and it is taken once.
    #[inline]
    pub(super) unsafe fn take(&mut self) -> T {
        // SAFETY: `slot` is the slot of `pos` in its ring, which outlives
        // the front; the value is there and ours (caller's contract).
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
