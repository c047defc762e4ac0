//! The ring's cursors for one producer and one consumer (`spsc`):
//! [`Indexed`], the first of the bounded ring's two algorithms (see
//! `mod.rs`).
//!
//! The producer owns its tail. It checks capacity against a cached copy of
//! the consumer's head and reloads that copy only when the cache says full;
//! it writes the slot and publishes the new tail with a single `SeqCst`
//! store. The consumer does the mirror image with a cached tail and a `SeqCst`
//! store of its head. No read-modify-write per message on either side.
//! Each side keeps its own position and cache in its endpoint, apart from
//! the word it publishes ([`IndexedTail`] and [`IndexedCursor`]), and only
//! ever *stores* to that word, so the other side reading it never costs it
//! a miss (a line that one core reads and then writes migrates to the next
//! core that reads it). The
//! `SeqCst` stores are the notifier halves of the store-buffer race (see
//! [`crate::wait`]): a waiting consumer re-checks the tail, a waiting
//! producer re-checks the head. Closing goes through a
//! `Boundary` (private `boundary` module).

use std::sync::atomic::compiler_fence;

use crossbeam_utils::CachePadded;

use crate::arity::One;
use crate::boundary::Boundary;
use crate::slot::NoStamp;
use crate::storage::{Capacity, PopError, PushError, Storage};
use crate::sync::{AtomicU64, AtomicUsize, Ordering, SeqCst};
use crate::wait::{Fence, Wait};

use super::{Buffer, Cursors, RingFront, sealed};

/// The cursors of a ring with one producer and one consumer: each side's
/// published position on a line of its own, what the producer shares
/// (its fence and held units) on another, and the close protocol. Each
/// side's own position is in its endpoint ([`IndexedTail`],
/// [`IndexedCursor`]).
///
pub struct Indexed<W: Wait> {
    /// The producer's published tail: the end of what the consumer may read.
    tail: CachePadded<AtomicU64>,
    /// The consumer's published head: the start of what the producer may
    /// not overwrite.
    head: CachePadded<AtomicU64>,
    /// What the producer reads on every push besides its cursor, kept off
    /// the line of the tail it publishes: a consumer that reads that line
    /// takes it away (a line that is read and then written migrates to the
    /// reader), and the producer's next push would miss on it.
    producer: CachePadded<ProducerSide<W>>,
    /// How the consumer frees slots (plain while the producer does not
    /// wait): read by the consumer on every pop, written by a waiting
    /// producer.
    consumer_fence: CachePadded<W::Fence>,
    /// Close protocol of a single producer; read-mostly.
    boundary: CachePadded<Boundary>,
}

/// What the single producer keeps in the ring: what a waiting consumer
/// writes (the fence's mode, beside the count the producer keeps of it) and
/// what queries and returned units touch.
struct ProducerSide<W: Wait> {
    /// How it publishes (plain while nobody waits).
    fence: W::Fence,
    /// Units held as permits.
    reserved: AtomicUsize,
}

/// The single producer's cursor ([`Storage::ProducerCursor`]), which its
/// endpoint keeps: its position and its copy of the consumer's.
#[derive(Debug)]
pub struct IndexedTail {
    /// Its position: always equal to `Indexed::tail` outside a push, so
    /// that pushing never reads the published word.
    tail: u64,
    /// The consumer's head as last read.
    head_cache: u64,
}

/// The single consumer's cursor ([`Storage::Cursor`]), which its endpoint
/// keeps: its position and its copy of the producer's.
#[derive(Debug)]
pub struct IndexedCursor {
    /// Its position: always equal to `Indexed::head` outside a pop, so that
    /// popping never reads the published word.
    head: u64,
    /// The producer's tail as last read.
    tail_cache: u64,
}

/// A single endpoint's index store: `SeqCst` when fenced (the notifier half
/// of the store-buffer race), otherwise a release store that the compiler
/// may not move after the flag load that follows it (`wait/fence.rs`).
#[inline]
fn publish(index: &AtomicU64, value: u64, fenced: bool) {
    if fenced {
        index.store_sc(value);
    } else {
        // ORDERING: Release pairs with the other side's acquiring (SeqCst)
        // load of the index; a waiter is covered by its barrier.
        index.store_at(value, Ordering::Release);
        compiler_fence(Ordering::SeqCst);
    }
}

impl<W: Wait> std::fmt::Debug for Indexed<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Indexed").finish_non_exhaustive()
    }
}

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
        // ORDERING: Relaxed; the head the consumer published, in this
        // thread or before its endpoint or the ring was handed over.
        let head = ring.cursors.head.load(Ordering::Relaxed);
        // ORDERING: SeqCst, as in `close`.
        let tail = ring.cursors.tail.load_sc();
        if head >= ring.cursors.boundary.settle(tail).min(tail) {
            return None;
        }
        // SAFETY: below the boundary and the published tail: a value
        // nobody else will read.
        let value = unsafe { ring.slot(head).read() };
        // As in `release_front`, fenced.
        publish(&ring.cursors.head, head + 1, true);
        Some(value)
    }
}

impl<T, const CAP: usize, W: Wait> Buffer<T, CAP, Indexed<W>> {
    /// Whether `need` slots are free after `tail`, by the producer's copy
    /// of the consumer's head, refreshed from the published head when the
    /// copy says no.
    fn room(&self, cursor: &mut IndexedTail, tail: u64, need: u64) -> bool {
        if tail + need - cursor.head_cache <= Self::CAP64 {
            return true;
        }
        // ORDERING: SeqCst: the waiting producer's re-check pairs with the
        // consumer's SeqCst store of its head; it also acquires the
        // consumer's reads of the freed slots.
        let head = self.cursors.head.load_sc();
        cursor.head_cache = head;
        tail + need - head <= Self::CAP64
    }

    /// Moves the value out of `*value` to `tail`, publishes,
    /// and settles a close that raced with it (the value is then back in
    /// `*value`).
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`; the slot at `cursor.tail` is
    /// free; `*value` holds a value.
    #[inline]
    unsafe fn publish_one(
        &self,
        cursor: &mut IndexedTail,
        value: &mut Option<T>,
    ) -> Result<(), ()> {
        let tail = cursor.tail;
        let slot = self.slot(tail);
        // SAFETY: the single producer, by `cursor` (caller's contract).
        let fenced = unsafe { self.cursors.producer.fence.fenced(tail + 1) };
        // SAFETY: the slot is free (checked by the caller) and only this
        // producer writes slots; `*value` holds a value.
        unsafe { slot.write_from(value) };
        cursor.tail = tail + 1;
        publish(&self.cursors.tail, tail + 1, fenced);
        if self.cursors.boundary.is_closed() && self.cursors.boundary.settle(tail + 1) <= tail {
            // The boundary excludes this value: nobody will read it.
            // ORDERING: Relaxed; only this producer reads its own tail, and
            // the consumer never reads past the boundary.
            self.cursors.tail.store_at(tail, Ordering::Relaxed);
            cursor.tail = tail;
            // SAFETY: the value was written above and is outside the
            // boundary, so it is still ours.
            *value = Some(unsafe { slot.read() });
            return Err(());
        }
        Ok(())
    }

    /// The end of what may be read now by the consumer of `cursor`, at
    /// `head`.
    fn readable_end(&self, cursor: &mut IndexedCursor, head: u64) -> u64 {
        if head < cursor.tail_cache {
            return cursor.tail_cache;
        }
        // ORDERING: SeqCst: acquires the producer's slot writes, and is the
        // waiting consumer's re-check that pairs with the producer's SeqCst
        // store of its tail.
        // The tail, then the close flag. No flag: the closer has not stored
        // it yet, so the tail it will load is at least ours, and so is any
        // boundary. A flag: the tail is loaded again, after it, and includes
        // every publish whose producer missed the flag, so it is safe to
        // settle with (`Boundary`); the first one is not (its producer may
        // since have published, missed the flag and returned `Ok`).
        let mut tail = self.cursors.tail.load_sc();
        if self.cursors.boundary.is_closed() {
            tail = self.cursors.tail.load_sc();
            tail = tail.min(self.cursors.boundary.settle(tail));
        }
        cursor.tail_cache = tail;
        tail
    }
}

#[allow(
    clippy::inline_always,
    reason = "the ring's per-message methods: out of line they would cost a call per message"
)]
// SAFETY: see the module docs for the protocol: each position is published
// once by the producer's store of its tail and taken once by the consumer's
// store of its head, in order; pushes after the boundary hand their value
// back; the stores waiters pair with are `SeqCst` when a waiter may exist.
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
        // ORDERING: Relaxed; the producer reads its own count of held
        // units. Permits borrow the single sender, so none is in use
        // now, but a forgotten one still holds its slot.
        let held = self.cursors.producer.reserved.load(Ordering::Relaxed) as u64;
        if !self.room(cursor, cursor.tail + held, 1) {
            // A closed channel may be full too: say which matters.
            return Err(if self.cursors.boundary.is_closed() {
                PushError::Closed(())
            } else {
                PushError::Full(())
            });
        }
        // No check of the close flag before publishing: `publish_one`
        // checks it after, as the boundary protocol requires, and takes
        // the value back if it is outside.
        // SAFETY: the producer contract, `room` found the slot free, and
        // `*value` holds a value (caller's contract).
        unsafe { self.publish_one(cursor, value) }.map_err(PushError::Closed)
    }

    #[inline]
    unsafe fn front(&self, cursor: &mut IndexedCursor) -> Result<RingFront<T, NoStamp>, PopError> {
        let head = cursor.head;
        if head >= self.readable_end(cursor, head) {
            let closed = self
                .cursors
                .boundary
                .frozen()
                .is_some_and(|end| head >= end);
            return Err(if closed {
                PopError::Closed
            } else {
                PopError::Empty
            });
        }
        // SAFETY: the consumer of the one cursor, borrowed mutably: no other
        // consumer-side call runs (caller's contract).
        let fenced = unsafe { self.cursors.consumer_fence.fenced(head + 1) };
        // `head` is below the published tail (and the boundary), so the
        // slot holds a value only the consumer of `cursor` reads (the
        // caller's contract: it is the only cursor).
        Ok(RingFront {
            pos: head,
            slot: self.slot(head),
            fenced,
        })
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        // ORDERING: SeqCst: the closer's re-check of the tail, paired
        // with the producer's publish (see `Boundary`).
        let published = || self.cursors.tail.load_sc();
        self.cursors
            .boundary
            .close_single(from_producer, &self.cursors.producer.fence, published)
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "the length never exceeds `CAP`, which is a `usize`"
    )]
    fn len(&self) -> usize {
        let head = self.head_position();
        // ORDERING: SeqCst; a query.
        let mut tail = self.cursors.tail.load_sc();
        if let Some(end) = self.cursors.boundary.frozen() {
            tail = tail.min(end);
        }
        tail.saturating_sub(head) as usize
    }

    unsafe fn try_acquire(&self, n: usize) -> Result<(), PushError<()>> {
        if self.cursors.boundary.is_closed() {
            return Err(PushError::Closed(()));
        }
        // The held units first, then the published tail: a push through a
        // unit publishes its value before it gives its unit back, so this
        // order can count one value twice (a spurious `Full`, which the
        // push's wake of the senders makes up for), never miss one.
        // ORDERING: SeqCst for both, so that a `release` seen here comes
        // with the publish before it.
        let held = self.cursors.producer.reserved.load(Ordering::SeqCst) as u64;
        let published = self.cursors.tail.load_sc();
        // ORDERING: SeqCst: the waiting producer's re-check, paired with the
        // consumer's SeqCst store of its head.
        let freed = self.cursors.head.load_sc();
        if published + held + n as u64 - freed > Self::CAP64 {
            return Err(PushError::Full(()));
        }
        // ORDERING: Relaxed; only the producer's right adds units, and what
        // changes meanwhile (pushes through units, pops) only frees room.
        self.cursors
            .producer
            .reserved
            .fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    unsafe fn push_reserved(&self, cursor: &mut IndexedTail, value: T) -> Result<(), T> {
        let mut value = Some(value);
        let result = if self.cursors.boundary.is_closed() {
            Err(())
        } else {
            // SAFETY: the producer contract (caller's); the held unit
            // guarantees the slot is free.
            unsafe { self.publish_one(cursor, &mut value) }
        };
        // SAFETY: the caller held one unit; the push consumed it or,
        // refused, gives it back here.
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
    #[allow(
        clippy::needless_pass_by_value,
        reason = "a released front is used up, as `Storage::release_front` takes it"
    )]
    unsafe fn release_front(&self, cursor: &mut IndexedCursor, front: RingFront<T, NoStamp>) {
        cursor.head = front.pos + 1;
        // Frees the slot for the producer, releasing our read of it.
        publish(&self.cursors.head, cursor.head, front.fenced);
    }

    #[inline]
    unsafe fn take_front(&self, front: &mut RingFront<T, NoStamp>) -> T {
        // SAFETY: `front` found the value for its position published, and
        // it is taken once (caller's contract).
        unsafe { front.take() }
    }

    unsafe fn peek<'a>(&'a self, cursor: &'a mut IndexedCursor) -> Option<&'a T> {
        let head = cursor.head;
        if head >= self.readable_end(cursor, head) {
            return None;
        }
        // SAFETY: the slot holds the value for `head`, and only the consumer
        // of `cursor` (the only one, caller's contract) could move it, which
        // needs `cursor`, borrowed for as long as the reference lives.
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
                // ORDERING: Relaxed; the producer reads the tail it
                // published itself. (Its cursor has the same position, but
                // reading the word keeps the cursor out of the registers
                // the rest of a send needs.)
                self.cursors.tail.load(Ordering::Relaxed)
            });
        }
    }

    unsafe fn after_pop(&self, cursor: &mut IndexedCursor, waiting: impl Fn() -> bool) {
        // SAFETY: as in `front`.
        unsafe {
            self.cursors
                .consumer_fence
                .fenced_publish(waiting, || cursor.head);
        }
    }

    unsafe fn grant(&self, _n: usize) -> usize {
        // One producer waits in a cell and retries; nothing to grant.
        0
    }

    fn may_grant(&self) -> bool {
        // One producer waits in a cell and is never granted anything.
        true
    }

    unsafe fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        // ORDERING: SeqCst: freeing capacity is a condition change.
        self.cursors
            .producer
            .reserved
            .fetch_sub(n, Ordering::SeqCst);
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
            // ORDERING: SeqCst; a diagnostic snapshot as current as any query.
            .field("tail", &self.cursors.tail.load_sc())
            .field("closed", &self.cursors.boundary.is_closed())
            .field("head", &self.head_position())
            .finish_non_exhaustive()
    }
}
