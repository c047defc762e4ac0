//! The producers' end of a list: [`OneTail`] is the index a single producer
//! publishes (its block in its [`OneTailCursor`]), closing through a
//! [`Boundary`]; [`ManyTail`] is a claim word with the close bit in it.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use std::marker::PhantomData;
use std::ptr;

use crossbeam_utils::CachePadded;

use super::buffer::{BLOCK, Block, LAP, Pool, Tail, step};
use crate::arity::{Many, One};
use crate::boundary::{Boundary, publish};
use crate::slot::{NoStamp, Stamped, is_large, readable};
use crate::sync::{AtomicPtr, AtomicU64, Ordering, SeqCst};
use crate::wait::{Fence, Wait, pause};

/// The close bit of [`ManyTail::word`].
pub(super) const CLOSED: u64 = 1;

/// A single producer's end: the index it publishes each value with
/// (`boundary::publish`).
pub struct OneTail<T, W: Wait> {
    /// The index of the next value; every index before it is published.
    pub(super) index: AtomicU64,
    /// The block the producer last moved to, for a new cursor.
    block: AtomicPtr<Block<T, NoStamp>>,
    /// The close flag and frozen end; read-mostly, on a line of its own.
    pub(super) boundary: CachePadded<Boundary>,
    /// How it publishes (plain while nobody waits); on a line of its own.
    fence: CachePadded<W::Fence>,
}

/// The single producer's cursor ([`Storage::ProducerCursor`]): its block.
///
/// [`Storage::ProducerCursor`]: crate::storage::Storage::ProducerCursor
pub struct OneTailCursor<T> {
    block: *mut Block<T, NoStamp>,
}

// SAFETY: as for `OneHeadCursor`; a shared reference reaches nothing.
unsafe impl<T> Send for OneTailCursor<T> {}
// SAFETY: as for `Send`.
unsafe impl<T> Sync for OneTailCursor<T> {}

opaque_debug!(
    impl[T] OneTailCursor<T>;
    impl[T, W: Wait] OneTail<T, W>;
    impl[T, W: Wait] ManyTail<T, W>;
);

impl<T, W: Wait> OneTail<T, W> {
    /// Claims and writes without atomics on the index, then publishes it.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`.
    #[inline(always)]
    unsafe fn push_one(
        &self,
        cursor: &mut OneTailCursor<T>,
        pool: &Pool<T, NoStamp>,
        value: T,
    ) -> Result<(), T> {
        // ORDERING: Relaxed; the producer reads its own index.
        let index = self.index.load(Ordering::Relaxed);
        let block = cursor.block;
        let next = step(index);
        if next != index + 1 {
            // SAFETY: the single producer, at the last slot of `block`.
            unsafe { self.link_next_block(cursor, pool) };
        }
        // SAFETY: the single producer, by `cursor`.
        let fenced = unsafe { self.fence.fenced(next) };
        // SAFETY: the single producer owns `index`, in `block`, until below.
        let slot = unsafe { &(*block).slots[(index % LAP) as usize] };
        // SAFETY: as above; the slot holds no value.
        unsafe { slot.write(value) };
        // Releases the value (and the link) to the consumer.
        publish(&self.index, next, fenced);
        if self.boundary.is_closed() {
            // SAFETY: the single producer, just after publishing `index`.
            return unsafe { self.settle_push(cursor, block, index, next) };
        }
        Ok(())
    }

    /// On a closing channel, after publishing `index` (in `block`): settles
    /// the boundary and takes back a value it excludes.
    ///
    /// # Safety
    ///
    /// Single producer; `index` was just written and published, `next` is
    /// the index after it.
    #[cold]
    #[inline(never)]
    unsafe fn settle_push(
        &self,
        cursor: &mut OneTailCursor<T>,
        block: *mut Block<T, NoStamp>,
        index: u64,
        next: u64,
    ) -> Result<(), T> {
        if self.boundary.settle(next) > index {
            return Ok(());
        }
        // ORDERING: Relaxed; outside the boundary, read by nobody else.
        self.index.store_at(index, Ordering::Relaxed);
        cursor.block = block;
        // SAFETY: written by the caller, and outside the boundary.
        Err(unsafe { (*block).slots[(index % LAP) as usize].read() })
    }

    /// At the tail block's last slot: links the next block (from `pool`)
    /// before the value is published; out of line for the common push.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`.
    #[cold]
    #[inline(never)]
    unsafe fn link_next_block(&self, cursor: &mut OneTailCursor<T>, pool: &Pool<T, NoStamp>) {
        let fresh = pool.take();
        // SAFETY: the tail block lives until its last slot is read.
        // ORDERING: Release pairs with the consumer's Acquire in `advance_one`.
        unsafe { (*cursor.block).next.store(fresh, Ordering::Release) };
        cursor.block = fresh;
        // ORDERING: Relaxed; read for a new cursor, after this producer's work.
        self.block.store(fresh, Ordering::Relaxed);
    }
}

impl<T, W: Wait> Tail<T> for OneTail<T, W> {
    type Senders = One;
    type Stamp = NoStamp;
    type Cursor = OneTailCursor<T>;
    const NOTIFIES_BUSY: bool = false;

    fn new(first: *mut Block<T, NoStamp>) -> Self {
        Self {
            index: AtomicU64::new(0),
            block: AtomicPtr::new(first),
            boundary: CachePadded::new(Boundary::new()),
            fence: CachePadded::new(W::Fence::new()),
        }
    }

    fn cursor(&self) -> OneTailCursor<T> {
        OneTailCursor {
            // ORDERING: Relaxed; as in `link_next_block`.
            block: self.block.load(Ordering::Relaxed),
        }
    }

    #[inline(always)]
    unsafe fn push(
        &self,
        cursor: &mut OneTailCursor<T>,
        pool: &Pool<T, NoStamp>,
        value: T,
    ) -> Result<(), T> {
        if self.boundary.is_closed() {
            return Err(value);
        }
        // SAFETY: the producer contract (caller's).
        unsafe { self.push_one(cursor, pool, value) }
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        // ORDERING: SeqCst: the closer's re-check (see `Boundary`).
        let published = || self.index.load_sc();
        self.boundary
            .close_single(from_producer, &*self.fence, published)
    }

    fn is_closed(&self) -> bool {
        self.boundary.is_closed()
    }

    fn end(&self) -> u64 {
        // ORDERING: SeqCst; a query.
        let tail = self.index.load_sc();
        self.boundary.frozen().map_or(tail, |end| tail.min(end))
    }

    fn before_recv_wait(&self) {
        self.fence.before_wait();
    }

    unsafe fn after_push(&self, _cursor: &mut OneTailCursor<T>, waiting: impl Fn() -> bool) {
        // SAFETY: the single producer, by its cursor (caller's contract).
        unsafe {
            self.fence.fenced_publish(waiting, || {
                // ORDERING: Relaxed; the producer reads its own index.
                self.index.load(Ordering::Relaxed)
            });
        }
    }
}

/// The end many producers share: each claims its index with one
/// compare-exchange, then publishes its slot through the slot's stamp.
pub struct ManyTail<T, W: Wait> {
    /// `index << 1 | CLOSED`: the next index to claim (on a sentinel while
    /// the tail moves on), and the close bit, which refuses later claims.
    pub(super) word: AtomicU64,
    /// The block holding the word's index (the one before, on a sentinel).
    block: AtomicPtr<Block<T, Stamped>>,
    /// How a producer waits out another's step.
    wait: PhantomData<W>,
}

impl<T, W: Wait> ManyTail<T, W> {
    /// After a lost claim: 2, 4, … up to 64 spin hints, so the winner
    /// finishes while the word's line is its own (none under loom).
    #[cold]
    #[inline(never)]
    fn after_lost_claim(losses: &mut u32) {
        *losses += 1;
        #[cfg(not(asyncband_loom))]
        for _ in 0..1u32 << (*losses).min(6) {
            std::hint::spin_loop();
        }
    }

    /// Claims the next index and returns it with its block; a new block for
    /// the next one comes from `pool`.
    #[inline]
    fn claim(&self, pool: &Pool<T, Stamped>) -> Result<(u64, *mut Block<T, Stamped>), ()> {
        let mut spare: *mut Block<T, Stamped> = ptr::null_mut();
        let mut spins = 0;
        let mut losses = 0;
        // ORDERING: Acquire pairs with the Release moving the word off a
        // sentinel, so the block load below sees its block.
        let mut word = self.word.load(Ordering::Acquire);
        loop {
            if word & CLOSED != 0 {
                if !spare.is_null() {
                    // SAFETY: `spare` is ours and was never published.
                    unsafe { pool.put(spare) };
                }
                return Err(());
            }
            let index = word >> 1;
            let offset = index % LAP;
            if offset == BLOCK as u64 {
                pause::<W>(&mut spins);
                // ORDERING: Acquire, as above.
                word = self.word.load(Ordering::Acquire);
                continue;
            }
            if offset + 1 == BLOCK as u64 && spare.is_null() {
                spare = pool.take();
            }
            // ORDERING: Acquire pairs with the Release store of the block.
            let block = self.block.load(Ordering::Acquire);
            // ORDERING: SeqCst: the notifier half of the race with a waiter's
            // re-read of this word.
            match self.word.compare_exchange_weak(
                word,
                word + 2,
                Ordering::SeqCst,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if offset + 1 == BLOCK as u64 {
                        // SAFETY: claimed, so `block` is the tail block,
                        // alive until this slot is read (module docs).
                        // ORDERING: Release pairs with the consumers'
                        // Acquire link loads (`advance_one`, `leave_block`).
                        unsafe { (*block).next.store(spare, Ordering::Release) };
                        // ORDERING: Release, for the block loads in `claim`.
                        self.block.store(spare, Ordering::Release);
                        // ORDERING: Release moves the word off the sentinel,
                        // publishing the block store above.
                        self.word.fetch_add(2, Ordering::Release);
                    } else if !spare.is_null() {
                        // SAFETY: `spare` is ours and was never published.
                        unsafe { pool.put(spare) };
                    }
                    return Ok((index, block));
                }
                Err(current) => {
                    word = current;
                    Self::after_lost_claim(&mut losses);
                }
            }
        }
    }

    /// Writes `value` into the slot for `index` in `block`, and publishes.
    ///
    /// # Safety
    ///
    /// The caller claimed `index`, which lives in `block`.
    unsafe fn write(block: *mut Block<T, Stamped>, index: u64, value: T) {
        // SAFETY: the claimed slot belongs to the caller until published.
        let slot = unsafe { &(*block).slots[(index % LAP) as usize] };
        // SAFETY: as above; the slot holds no value.
        unsafe { slot.write(value) };
        // Paired with the consumer's load (`Watch::ready`, `take_front`).
        slot.publish(readable(index));
    }
}

impl<T, W: Wait> Tail<T> for ManyTail<T, W> {
    type Senders = Many;
    type Stamp = Stamped;
    type Cursor = ();
    // Many consumers wait in `take_front`: only a single one reports `Busy`.
    const NOTIFIES_BUSY: bool = is_large::<T>();

    fn new(first: *mut Block<T, Stamped>) -> Self {
        Self {
            word: AtomicU64::new(0),
            block: AtomicPtr::new(first),
            wait: PhantomData,
        }
    }

    fn cursor(&self) {}

    #[inline(always)]
    #[allow(clippy::inline_always, reason = "a hint alone leaves it out of line")]
    unsafe fn push(&self, (): &mut (), pool: &Pool<T, Stamped>, value: T) -> Result<(), T> {
        let Ok((index, block)) = self.claim(pool) else {
            return Err(value);
        };
        // SAFETY: `index` was claimed in `block`.
        unsafe { Self::write(block, index, value) };
        Ok(())
    }

    unsafe fn close(&self, _from_producer: bool) -> bool {
        // ORDERING: SeqCst: freezes the boundary in the claim word.
        self.word.fetch_or(CLOSED, Ordering::SeqCst) & CLOSED == 0
    }

    fn is_closed(&self) -> bool {
        // ORDERING: SeqCst; a query.
        self.word.load_sc() & CLOSED != 0
    }

    fn end(&self) -> u64 {
        // ORDERING: SeqCst; a query.
        self.word.load_sc() >> 1
    }
}
