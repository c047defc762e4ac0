//! The ring's cursors for one producer and one consumer: [`Indexed`].
//!
//! The producer checks capacity against its cached copy of the consumer's
//! head, reloaded only when it says full, writes the slot and publishes its
//! tail with one store (`boundary::publish`); the consumer mirrors it. Each
//! side keeps its position and cache in its cursor ([`IndexedTail`],
//! [`IndexedCursor`]) and only *stores* to the word it publishes. Closing
//! goes through a `Boundary`.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use crossbeam_utils::CachePadded;

use crate::arity::One;
use crate::boundary::{Boundary, publish};
use crate::slot::NoStamp;
use crate::storage::{Capacity, PopError, PushError, Storage};
use crate::sync::{AtomicU64, AtomicUsize, Ordering, SeqCst};
use crate::wait::{Fence, Wait};

use super::{Buffer, Cursors, RingFront, sealed};

/// The cursors of a ring with one producer and one consumer, each group on
/// a line of its own.
pub struct Indexed<W: Wait> {
    /// The producer's published tail: the end of what the consumer may read.
    tail: CachePadded<AtomicU64>,
    /// The consumer's published head: the producer may not overwrite it.
    head: CachePadded<AtomicU64>,
    /// What the producer reads on every push besides its cursor.
    producer: CachePadded<ProducerSide<W>>,
    /// How the consumer frees slots.
    consumer_fence: CachePadded<W::Fence>,
    /// Close protocol of a single producer; read-mostly.
    boundary: CachePadded<Boundary>,
}

/// What the single producer shares: its fence and its held units.
struct ProducerSide<W: Wait> {
    /// How it publishes (plain while nobody waits).
    fence: W::Fence,
    /// Units held as permits.
    reserved: AtomicUsize,
}

/// The single producer's cursor ([`Storage::ProducerCursor`]).
#[derive(Debug)]
pub struct IndexedTail {
    /// Equal to `Indexed::tail` outside a push, so a push never reads it.
    tail: u64,
    /// The consumer's head as last read.
    head_cache: u64,
}

/// The single consumer's cursor ([`Storage::Cursor`]).
#[derive(Debug)]
pub struct IndexedCursor {
    /// Equal to `Indexed::head` outside a pop, so a pop never reads it.
    head: u64,
    /// The producer's tail as last read.
    tail_cache: u64,
}

opaque_debug!(impl[W: Wait] Indexed<W>);

impl<W: Wait> sealed::Sealed for Indexed<W> {}

impl<W: Wait> Cursors for Indexed<W> {
    type Stamp = NoStamp;

    fn new() -> Self {
        Self {
            tail: CachePadded::new(AtomicU64::new(0)),
            head: CachePadded::new(AtomicU64::new(0)),
            producer: CachePadded::new(ProducerSide {
                fence: W::Fence::new(),
                reserved: AtomicUsize::new(0),
            }),
            consumer_fence: CachePadded::new(W::Fence::new()),
            boundary: CachePadded::new(Boundary::new()),
        }
    }

    unsafe fn take_queued<T, const CAP: usize>(ring: &Buffer<T, CAP, Self>) -> Option<T> {
        // ORDERING: Relaxed; the consumer's own head.
        let head = ring.cursors.head.load(Ordering::Relaxed);
        // ORDERING: SeqCst, as in `close`.
        let tail = ring.cursors.tail.load_sc();
        if head >= ring.cursors.boundary.settle(tail).min(tail) {
            return None;
        }
        // SAFETY: below the boundary and the tail: nobody else reads it.
        let value = unsafe { ring.slot(head).read() };
        // As in `release_front`, fenced.
        publish(&ring.cursors.head, head + 1, true);
        Some(value)
    }
}

impl<T, const CAP: usize, W: Wait> Buffer<T, CAP, Indexed<W>> {
    /// Whether `need` slots are free after `tail`, by the cached head,
    /// refreshed when it says no.
    fn room(&self, cursor: &mut IndexedTail, tail: u64, need: u64) -> bool {
        if tail + need - cursor.head_cache <= Self::CAP64 {
            return true;
        }
        // ORDERING: SeqCst: a waiter's re-check, paired with the head store
        // (acquiring the consumer's reads of the slots).
        let head = self.cursors.head.load_sc();
        cursor.head_cache = head;
        tail + need - head <= Self::CAP64
    }

    /// Moves `*value` to the tail and publishes; a close that raced with it
    /// puts the value back in `*value`.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`; the slot at `cursor.tail` is
    /// free; `*value` holds a value.
    #[inline(always)]
    unsafe fn publish_one(
        &self,
        cursor: &mut IndexedTail,
        value: &mut Option<T>,
    ) -> Result<(), ()> {
        let tail = cursor.tail;
        let slot = self.slot(tail);
        // SAFETY: the single producer, by `cursor` (caller's contract).
        let fenced = unsafe { self.cursors.producer.fence.fenced(tail + 1) };
        // SAFETY: the slot is free, only this producer writes slots, and
        // `*value` holds a value.
        unsafe { slot.write_from(value) };
        cursor.tail = tail + 1;
        publish(&self.cursors.tail, tail + 1, fenced);
        if self.cursors.boundary.is_closed() && self.cursors.boundary.settle(tail + 1) <= tail {
            // ORDERING: Relaxed; the consumer never reads past the boundary.
            self.cursors.tail.store_at(tail, Ordering::Relaxed);
            cursor.tail = tail;
            // SAFETY: written above, outside the boundary: still ours.
            *value = Some(unsafe { slot.read() });
            return Err(());
        }
        Ok(())
    }

    /// The end of what the consumer of `cursor`, at `head`, may read now.
    fn readable_end(&self, cursor: &mut IndexedCursor, head: u64) -> u64 {
        if head < cursor.tail_cache {
            return cursor.tail_cache;
        }
        // ORDERING: SeqCst: a waiter's re-check, paired with the tail store.
        let published = || self.cursors.tail.load_sc();
        let tail = self.cursors.boundary.readable_end(published);
        cursor.tail_cache = tail;
        tail
    }
}

#[allow(clippy::inline_always, reason = "the ring's per-message methods")]
// SAFETY: each position is published once by the tail store and taken once
// by the head store, in order; pushes past the boundary hand their value
// back; stores waiters pair with are `SeqCst` (or fenced).
unsafe impl<T, const CAP: usize, W: Wait> Storage for Buffer<T, CAP, Indexed<W>> {
    type Item = T;
    type Front = RingFront<T, NoStamp>;
    type Cursor = IndexedCursor;
    type ProducerCursor = IndexedTail;
    type Senders = One;
    type Receivers = One;
    type Wait = W;
    const CAPACITY: Option<usize> = Some(CAP);

    fn new() -> Self {
        Self::with_cursors(Indexed::new())
    }

    fn cursor(&self) -> IndexedCursor {
        // ORDERING: SeqCst; where the consumer's publishes have left it.
        let head = self.cursors.head.load_sc();
        IndexedCursor {
            head,
            tail_cache: head,
        }
    }

    fn producer_cursor(&self) -> IndexedTail {
        // ORDERING: SeqCst; where the producer's publishes have left it.
        let tail = self.cursors.tail.load_sc();
        IndexedTail {
            tail,
            head_cache: self.head_position(),
        }
    }

    #[inline(always)]
    unsafe fn try_push_from(
        &self,
        cursor: &mut IndexedTail,
        value: &mut Option<T>,
    ) -> Result<(), PushError<()>> {
        debug_assert!(value.is_some(), "a value to push");
        // ORDERING: Relaxed; the producer's own count.
        let held = self.cursors.producer.reserved.load(Ordering::Relaxed) as u64;
        if !self.room(cursor, cursor.tail + held, 1) {
            // A closed channel may be full too: say which matters.
            return Err(if self.cursors.boundary.is_closed() {
                PushError::Closed(())
            } else {
                PushError::Full(())
            });
        }
        // SAFETY: the producer contract; `room` found the slot free.
        unsafe { self.publish_one(cursor, value) }.map_err(PushError::Closed)
    }

    #[inline(always)]
    unsafe fn front(&self, cursor: &mut IndexedCursor) -> Result<RingFront<T, NoStamp>, PopError> {
        let head = cursor.head;
        if head >= self.readable_end(cursor, head) {
            return Err(self.cursors.boundary.nothing_at(head));
        }
        // SAFETY: the one consumer, by its cursor (caller's contract).
        let fenced = unsafe { self.cursors.consumer_fence.fenced(head + 1) };
        Ok(RingFront {
            pos: head,
            slot: self.slot(head),
            fenced,
        })
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        // ORDERING: SeqCst: the closer's re-check (see `Boundary`).
        let published = || self.cursors.tail.load_sc();
        let boundary = &self.cursors.boundary;
        boundary.close_single(from_producer, &self.cursors.producer.fence, published)
    }

    #[allow(clippy::cast_possible_truncation, reason = "never above `CAP`")]
    fn len(&self) -> usize {
        let head = self.head_position();
        // ORDERING: SeqCst; a query.
        let tail = self.cursors.tail.load_sc();
        let frozen = self.cursors.boundary.frozen();
        let end = frozen.map_or(tail, |end| tail.min(end));
        end.saturating_sub(head) as usize
    }

    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
        if self.cursors.boundary.is_closed() {
            return Err(PushError::Closed(()));
        }
        // Held units, then the tail: a push through a unit publishes before
        // giving it back, so a value may count twice (a spurious `Full`, made
        // up for by the push's wake), never be missed.
        let reserved = &self.cursors.producer.reserved;
        // ORDERING: SeqCst for both: a `release` seen brings its publish.
        let held = reserved.load(Ordering::SeqCst) as u64;
        let published = self.cursors.tail.load_sc();
        // ORDERING: SeqCst: the waiting producer's re-check, as in `room`.
        let freed = self.cursors.head.load_sc();
        if published + held + n as u64 - freed > Self::CAP64 {
            return Err(PushError::Full(()));
        }
        // ORDERING: Relaxed; only the producer adds units.
        reserved.fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    unsafe fn push_reserved(&self, cursor: &mut IndexedTail, value: T) -> Result<(), T> {
        let mut value = Some(value);
        let result = if self.cursors.boundary.is_closed() {
            Err(())
        } else {
            // SAFETY: the producer contract; the held unit keeps a slot free.
            unsafe { self.publish_one(cursor, &mut value) }
        };
        // SAFETY: the caller's unit, used or given back here.
        unsafe { self.release(1) };
        // SAFETY: a refused push leaves the value in place.
        result.map_err(|()| unsafe { value.unwrap_unchecked() })
    }

    fn is_full(&self) -> bool {
        self.len() + self.reserved() >= CAP
    }

    fn reserved(&self) -> usize {
        // ORDERING: SeqCst; a query.
        self.cursors.producer.reserved.load_sc()
    }

    #[inline]
    #[allow(clippy::needless_pass_by_value, reason = "a released front is used up")]
    unsafe fn release_front(&self, cursor: &mut IndexedCursor, front: RingFront<T, NoStamp>) {
        cursor.head = front.pos + 1;
        // Frees the slot for the producer, releasing our read of it.
        publish(&self.cursors.head, cursor.head, front.fenced);
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut RingFront<T, NoStamp>) -> T {
        // SAFETY: `front` found the value published; taken once (caller's
        // contract).
        unsafe { front.take() }
    }

    unsafe fn peek<'a>(&'a self, cursor: &'a mut IndexedCursor) -> Option<&'a T> {
        let head = cursor.head;
        if head >= self.readable_end(cursor, head) {
            return None;
        }
        // SAFETY: the slot holds `head`'s value, which only `cursor`,
        // borrowed as long as the result, could move.
        Some(unsafe { self.slot(head).get() })
    }

    fn is_closed(&self) -> bool {
        self.cursors.boundary.is_closed()
    }

    fn head_position(&self) -> u64 {
        // ORDERING: SeqCst; a query, and the sender's re-check in `is_full`.
        self.cursors.head.load_sc()
    }

    fn before_recv_wait(&self) {
        self.cursors.producer.fence.before_wait();
    }

    fn before_send_wait(&self) {
        self.cursors.consumer_fence.before_wait();
    }

    unsafe fn after_push(&self, _cursor: &mut IndexedTail, waiting: impl Fn() -> bool) {
        // SAFETY: the single producer, by its cursor (caller's contract).
        unsafe {
            self.cursors.producer.fence.fenced_publish(waiting, || {
                // ORDERING: Relaxed; the tail this producer published.
                self.cursors.tail.load(Ordering::Relaxed)
            });
        }
    }

    unsafe fn after_pop(&self, cursor: &mut IndexedCursor, waiting: impl Fn() -> bool) {
        let fence = &self.cursors.consumer_fence;
        // SAFETY: as in `front`.
        unsafe { fence.fenced_publish(waiting, || cursor.head) };
    }

    unsafe fn grant(&self, _n: usize) -> usize {
        // One producer waits in a cell and retries: nothing to grant.
        0
    }

    unsafe fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let reserved = &self.cursors.producer.reserved;
        // ORDERING: SeqCst: freeing capacity is a condition change.
        reserved.fetch_sub(n, Ordering::SeqCst);
    }

    unsafe fn set_waiting(&self, _waiting: bool) {}

    unsafe fn drain(&self) {
        // SAFETY: closed, and we are the last consumer (caller's contract).
        unsafe { self.drop_queued() };
    }
}

// SAFETY: the producer checks `tail + held + n - head <= CAP` before every
// push or reservation, and only it adds to `held`.
unsafe impl<T, const CAP: usize, W: Wait> Capacity for Buffer<T, CAP, Indexed<W>> {
    const CAP: usize = CAP;
}

impl<T, const CAP: usize, W: Wait> std::fmt::Debug for Buffer<T, CAP, Indexed<W>> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity", &CAP)
            // ORDERING: SeqCst; a query.
            .field("tail", &self.cursors.tail.load_sc())
            .field("closed", &self.cursors.boundary.is_closed())
            .field("head", &self.head_position())
            .finish_non_exhaustive()
    }
}
