//! Bounded storage: a preallocated ring of `CAP` slots.
//!
//! `CAP` is a power of two, so a position maps to its slot with a mask.
//! Positions are 64-bit and never wrap in practice. A ring is a
//! [`Buffer`] of slots with the cursors of one topology, each algorithm in
//! a file of its own:
//!
//! - `buffer.rs`: the slots, and the [`Cursors`] trait the algorithms
//!   implement.
//! - `indexed.rs`: [`Indexed`], one producer and one consumer (`spsc`).
//!   Each side owns its position, caches the other's, and publishes with a
//!   single store of its index; no read-modify-write per message.
//! - `stamped.rs`: [`Claiming`], many producers (`mpsc`, `mpmc`). Producers
//!   claim positions in one shared claim word and publish through a stamp in
//!   each slot; a single consumer ([`OneConsumer`]) takes values with plain
//!   loads, many consumers ([`ManyConsumers`]) claim theirs with one
//!   compare-exchange.
//!
//! [`RingTopology`] maps each supported pair of arities to its cursors, so
//! a pair without cursors (one producer, many consumers) has no ring, and
//! [`Ring`], in this file, is the buffer of a pair under the pair's name.

use crate::arity::{Arity, Many, One, Topology};
use crate::storage::{Capacity, PopError, PushError, Storage};

mod buffer;
mod indexed;
mod stamped;

pub use buffer::{Buffer, Cursors, MAX_CAPACITY, RingFront};
pub use indexed::{Indexed, IndexedCursor, IndexedTail};
pub use stamped::{Claiming, Consumers, ManyConsumers, OneConsumer, OneConsumerCursor};

/// A supported pair of producer and consumer arities and the cursors its
/// ring keeps. Sealed through [`Topology`].
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::ring::{Claiming, Indexed, ManyConsumers, RingTopology};
///
/// fn same<A: 'static, B: 'static>() -> bool {
///     std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
/// }
/// assert!(same::<<(One, One) as RingTopology>::Cursors, Indexed>());
/// assert!(same::<<(Many, Many) as RingTopology>::Cursors, Claiming<ManyConsumers>>());
/// ```
pub trait RingTopology: Topology {
    /// The cursors of a ring with these arities.
    type Cursors: Cursors;
}

impl RingTopology for (One, One) {
    type Cursors = Indexed;
}

impl RingTopology for (Many, One) {
    type Cursors = Claiming<OneConsumer>;
}

impl RingTopology for (Many, Many) {
    type Cursors = Claiming<ManyConsumers>;
}

/// Bounded storage of `CAP` slots for producer arity `P` and consumer arity
/// `C`: the [`Buffer`] with the cursors [`RingTopology`] picks for that
/// pair, under the name of the pair (so errors about it read
/// `Ring<T, CAP, Many, One>`). Every method hands over to the buffer.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::ring::Ring;
/// use asyncband_core::storage::{PopError, PushError, Storage};
///
/// let ring = Ring::<u32, 2, One, One>::new();
/// let (mut tail, mut cursor) = (ring.producer_cursor(), ring.cursor());
/// // SAFETY: `tail` is the only producer's only cursor, and `cursor` the
/// // only consumer's.
/// unsafe {
///     ring.try_push(&mut tail, 1).unwrap();
///     ring.try_push(&mut tail, 2).unwrap();
///     assert_eq!(ring.try_push(&mut tail, 3), Err(PushError::Full(3)));
///     assert_eq!(ring.try_pop(&mut cursor), Ok(1));
///     assert_eq!(ring.try_pop(&mut cursor), Ok(2));
///     assert_eq!(ring.try_pop(&mut cursor), Err(PopError::Empty));
/// }
/// ```
pub struct Ring<T, const CAP: usize, P: Arity, C: Arity>
where
    (P, C): RingTopology,
{
    buffer: Buffer<T, CAP, <(P, C) as RingTopology>::Cursors>,
}

/// The buffer behind `Ring<T, CAP, P, C>`.
type BufferOf<T, const CAP: usize, P, C> = Buffer<T, CAP, <(P, C) as RingTopology>::Cursors>;

// SAFETY: as for `Buffer`: values move between threads through the ring, so
// `T: Send` is required and sufficient.
unsafe impl<T: Send, const CAP: usize, P: Arity, C: Arity> Send for Ring<T, CAP, P, C> where
    (P, C): RingTopology
{
}
// SAFETY: as for `Send`.
unsafe impl<T: Send, const CAP: usize, P: Arity, C: Arity> Sync for Ring<T, CAP, P, C> where
    (P, C): RingTopology
{
}

#[allow(
    clippy::inline_always,
    reason = "a name for the buffer: each method is the buffer's, inlined as if called directly"
)]
// SAFETY: every method is the buffer's, whose `Storage` impl upholds the
// contract.
unsafe impl<T, const CAP: usize, P: Arity, C: Arity> Storage for Ring<T, CAP, P, C>
where
    (P, C): RingTopology,
    BufferOf<T, CAP, P, C>: Storage<Item = T, Senders = P, Receivers = C>,
{
    type Item = T;
    type Front = <BufferOf<T, CAP, P, C> as Storage>::Front;
    type Cursor = <BufferOf<T, CAP, P, C> as Storage>::Cursor;
    type ProducerCursor = <BufferOf<T, CAP, P, C> as Storage>::ProducerCursor;
    type Senders = P;
    type Receivers = C;
    const CAPACITY: Option<usize> = Some(CAP);
    const NOTIFIES_BUSY: bool = <BufferOf<T, CAP, P, C> as Storage>::NOTIFIES_BUSY;

    #[inline(always)]
    fn new() -> Self {
        Self {
            buffer: Storage::new(),
        }
    }

    #[inline(always)]
    fn cursor(&self) -> Self::Cursor {
        self.buffer.cursor()
    }

    #[inline(always)]
    fn producer_cursor(&self) -> Self::ProducerCursor {
        self.buffer.producer_cursor()
    }

    #[inline(always)]
    unsafe fn try_push(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: T,
    ) -> Result<(), PushError<T>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.try_push(cursor, value) }
    }

    #[inline(always)]
    unsafe fn try_push_from(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: &mut Option<T>,
    ) -> Result<(), PushError<()>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.try_push_from(cursor, value) }
    }

    #[inline(always)]
    unsafe fn try_pop(&self, cursor: &mut Self::Cursor) -> Result<T, PopError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.try_pop(cursor) }
    }

    #[inline(always)]
    unsafe fn front(&self, cursor: &mut Self::Cursor) -> Result<Self::Front, PopError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.front(cursor) }
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut Self::Front) -> T {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.take_front(front) }
    }

    #[inline(always)]
    unsafe fn release_front(&self, cursor: &mut Self::Cursor, front: Self::Front) {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.release_front(cursor, front) }
    }

    #[inline(always)]
    unsafe fn peek<'a>(&'a self, cursor: &'a mut Self::Cursor) -> Option<&'a T> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.peek(cursor) }
    }

    #[inline(always)]
    unsafe fn close(&self, from_producer: bool) -> bool {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.close(from_producer) }
    }

    #[inline(always)]
    fn is_closed(&self) -> bool {
        self.buffer.is_closed()
    }

    #[inline(always)]
    fn head_position(&self) -> u64 {
        self.buffer.head_position()
    }

    #[inline(always)]
    fn len(&self) -> usize {
        self.buffer.len()
    }

    #[inline(always)]
    fn before_recv_wait(&self) {
        self.buffer.before_recv_wait();
    }

    #[inline(always)]
    fn before_send_wait(&self) {
        self.buffer.before_send_wait();
    }

    #[inline(always)]
    unsafe fn after_push(&self, cursor: &mut Self::ProducerCursor, waiting: impl Fn() -> bool) {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.after_push(cursor, waiting) }
    }

    #[inline(always)]
    unsafe fn after_pop(&self, cursor: &mut Self::Cursor, waiting: impl Fn() -> bool) {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.after_pop(cursor, waiting) }
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    #[inline(always)]
    fn is_full(&self) -> bool {
        self.buffer.is_full()
    }

    #[inline(always)]
    unsafe fn try_acquire(
        &self,
        cursor: &mut Self::ProducerCursor,
        n: usize,
    ) -> Result<(), PushError<()>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.try_acquire(cursor, n) }
    }

    #[inline(always)]
    fn grant(&self, n: usize) -> usize {
        self.buffer.grant(n)
    }

    #[inline(always)]
    fn may_grant(&self) -> bool {
        self.buffer.may_grant()
    }

    #[inline(always)]
    unsafe fn push_reserved(&self, cursor: &mut Self::ProducerCursor, value: T) -> Result<(), T> {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.push_reserved(cursor, value) }
    }

    #[inline(always)]
    unsafe fn release(&self, n: usize) {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.release(n) }
    }

    #[inline(always)]
    fn set_waiting(&self, waiting: bool) {
        self.buffer.set_waiting(waiting);
    }

    #[inline(always)]
    unsafe fn drain(&self) {
        // SAFETY: forwarded from the caller.
        unsafe { self.buffer.drain() }
    }
}

#[allow(
    clippy::inline_always,
    reason = "a name for the buffer: each method is the buffer's, inlined as if called directly"
)]
// SAFETY: the buffer's accounting, as for `Storage`.
unsafe impl<T, const CAP: usize, P: Arity, C: Arity> Capacity for Ring<T, CAP, P, C>
where
    (P, C): RingTopology,
    BufferOf<T, CAP, P, C>: Capacity<Item = T, Senders = P, Receivers = C>,
{
    const CAP: usize = CAP;

    #[inline(always)]
    fn reserved(&self) -> usize {
        self.buffer.reserved()
    }
}

impl<T, const CAP: usize, P: Arity, C: Arity> std::fmt::Debug for Ring<T, CAP, P, C>
where
    (P, C): RingTopology,
    BufferOf<T, CAP, P, C>: std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.buffer.fmt(f)
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests;
