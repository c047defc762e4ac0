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
use crate::arity::{Arity, Many, One};
use crate::boundary::{Boundary, publish};
use crate::slot::{NoStamp, Slot, Stamped, is_large, marked, readable};
use crate::storage::PopError;
use crate::sync::{AtomicPtr, AtomicU64, Ordering, SeqCst};
use crate::wait::{Fence, Wait, after_lost_claim, pause};

/// The close bit of [`ManyTail::word`].
pub(super) const CLOSED: u64 = 1;

/// Set in [`ManyTail::word`] once a single consumer's `try_recv` found the
/// list empty: from then on each producer marks the claimed, unwritten slots
/// of its block before its own (`mark_claims_before`).
pub(super) const POLLING: u64 = 2;

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
    impl[T, W: Wait, C: Arity] ManyTail<T, W, C>;
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

/// Why a claim was refused.
pub(super) enum Refused {
    /// The channel is closed.
    Closed,
    /// A single consumer polls: claim again, marking (`push_marking`).
    Marking,
}

/// The end many producers share: each claims its index with one
/// compare-exchange, then publishes its slot through the slot's stamp. For
/// one consumer (`C`), producers mark claims once it polls (`POLLING`).
pub struct ManyTail<T, W: Wait, C: Arity> {
    /// `index << SHIFT | WATCHED | POLLING | CLOSED`: the next index to claim
    /// (on a sentinel while the tail moves on), whether claims publish for a
    /// sleeper and mark, and the close bit, which refuses later claims.
    pub(super) word: AtomicU64,
    /// The block holding the word's index (the one before, on a sentinel).
    block: AtomicPtr<Block<T, Stamped>>,
    /// The first index claimed with `WATCHED` (`u64::MAX` before), from
    /// which on a large value being written is `Writing`.
    watched_from: AtomicU64,
    /// How a producer waits out another's step; the consumers' arity.
    wait: PhantomData<(W, C)>,
}

impl<T, W: Wait, C: Arity> ManyTail<T, W, C> {
    /// Set in [`ManyTail::word`] once a single consumer would sleep on a
    /// large value being written: from then on each producer publishes a
    /// large value `SeqCst` (`Storage::watch_writes`). Small values are never
    /// watched, and their word keeps the bit for the index.
    const WATCHED: u64 = if is_large::<T>() { 4 } else { 0 };

    /// How far the index sits up in [`ManyTail::word`], over the flags.
    const SHIFT: u32 = if is_large::<T>() { 3 } else { 2 };

    /// One index in [`ManyTail::word`].
    const ONE: u64 = 1 << Self::SHIFT;

    /// The index in claim word `word`.
    #[inline]
    pub(super) const fn index(word: u64) -> u64 {
        word >> Self::SHIFT
    }

    /// Claims the next index and returns it with its block and whether the
    /// claim saw `WATCHED`; a new block for the next one comes from `pool`.
    /// A claim that does not mark (`MARKS`) is refused once a single
    /// consumer polls, at no cost to its close test.
    #[inline(always)]
    pub(super) fn claim<const MARKS: bool>(
        &self,
        pool: &Pool<T, Stamped>,
    ) -> Result<(u64, *mut Block<T, Stamped>, bool), Refused> {
        let refused = if MARKS || C::MANY {
            CLOSED
        } else {
            CLOSED | POLLING
        };
        let mut spare: *mut Block<T, Stamped> = ptr::null_mut();
        let mut spins = 0;
        let mut losses = 0;
        // ORDERING: Acquire pairs with the Release moving the word off a
        // sentinel, so the block load below sees its block.
        let mut word = self.word.load(Ordering::Acquire);
        loop {
            if word & refused != 0 {
                if !spare.is_null() {
                    // SAFETY: `spare` is ours and was never published.
                    unsafe { pool.put(spare) };
                }
                return Err(if word & CLOSED != 0 {
                    Refused::Closed
                } else {
                    Refused::Marking
                });
            }
            let index = Self::index(word);
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
                word + Self::ONE,
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
                        self.word.fetch_add(Self::ONE, Ordering::Release);
                    } else if !spare.is_null() {
                        // SAFETY: `spare` is ours and was never published.
                        unsafe { pool.put(spare) };
                    }
                    return Ok((index, block, word & Self::WATCHED != 0));
                }
                Err(current) => {
                    word = current;
                    after_lost_claim(&mut losses);
                }
            }
        }
    }

    /// Claims, writes `value` and publishes it, marking the claims before it
    /// (`POLLING` was set).
    ///
    /// # Safety
    ///
    /// As for [`Tail::push`].
    #[inline(never)]
    unsafe fn push_marking(&self, pool: &Pool<T, Stamped>, value: T) -> Result<(), T> {
        let Ok((index, block, watched)) = self.claim::<true>(pool) else {
            return Err(value);
        };
        // SAFETY: `index` was claimed in `block`.
        unsafe { Self::write::<true>(block, index, watched, value) };
        Ok(())
    }

    /// Writes `value` into the slot for `index` in `block`, marks the claims
    /// before it (`MARKS`), and publishes (for a sleeper if `watched`).
    ///
    /// # Safety
    ///
    /// The caller claimed `index`, which lives in `block`.
    #[inline(always)]
    pub(super) unsafe fn write<const MARKS: bool>(
        block: *mut Block<T, Stamped>,
        index: u64,
        watched: bool,
        value: T,
    ) {
        // SAFETY: `block` lives until its slot `index` (ours) is read.
        let slots = unsafe { &(*block).slots };
        let slot = &slots[(index % LAP) as usize];
        // SAFETY: the claimed slot belongs to the caller until published; it
        // holds no value.
        unsafe { slot.write(value) };
        if MARKS {
            Self::mark_claims_before(slots, index);
        }
        // Paired with the consumer's load (`Watch::ready`, `take_front`).
        slot.publish(readable(index), watched);
    }

    /// Before publishing `index`: marks the slots of its block before it
    /// that are claimed but unwritten, down to the first published one
    /// (usually just that one load). The block lives: our slot is unread.
    #[inline(always)]
    fn mark_claims_before(slots: &[Slot<T, Stamped>; BLOCK], index: u64) {
        if index % LAP == 0 {
            return;
        }
        let before = index - 1;
        // ORDERING: Acquire: a published stamp synchronises with its
        // producer, whose walk marked the slots before it.
        if slots[(before % LAP) as usize].stamp.load(Ordering::Acquire) != readable(before) {
            Self::mark_claims_from(slots, before);
        }
    }

    /// The rest of `mark_claims_before`, from claimed `index` down to the
    /// first published slot or the block's first. Every index of the block
    /// below ours is claimed already, so a slot not published is in flight.
    #[cold]
    #[inline(never)]
    fn mark_claims_from(slots: &[Slot<T, Stamped>; BLOCK], mut index: u64) {
        loop {
            let stamp = &slots[(index % LAP) as usize].stamp;
            // ORDERING: Acquire, as in `mark_claims_before`.
            let seen = stamp.load(Ordering::Acquire);
            if seen == readable(index) {
                return;
            }
            // ORDERING: Acquire on failure, as above; the mark itself is
            // ordered before our publish by that Release store. Failing,
            // the slot was published, or marked by another walk.
            if seen != marked(index)
                && stamp
                    .compare_exchange(seen, marked(index), Ordering::Relaxed, Ordering::Acquire)
                    .is_err_and(|now| now != marked(index))
            {
                return;
            }
            if index % LAP == 0 {
                return;
            }
            index -= 1;
        }
    }

    /// A single consumer finding the list empty: sets `POLLING` once, and
    /// returns the first index whose producer sees it.
    #[cold]
    pub(super) fn start_polling(&self) -> u64 {
        // ORDERING: Relaxed: the word's modification order alone decides
        // which claims mark.
        Self::index(self.word.fetch_or(POLLING, Ordering::Relaxed))
    }

    /// Why the value at claimed, unpublished `index` is not there yet:
    /// `Writing` if its producer publishes for a sleeper, else `Busy`.
    pub(super) fn busy(&self, index: u64) -> PopError {
        // ORDERING: Relaxed: set once, and any value set is exact.
        if is_large::<T>() && index >= self.watched_from.load(Ordering::Relaxed) {
            PopError::Writing
        } else {
            PopError::Busy
        }
    }
}

impl<T, W: Wait, C: Arity> Tail<T> for ManyTail<T, W, C> {
    type Senders = Many;
    type Stamp = Stamped;
    type Cursor = ();

    fn new(first: *mut Block<T, Stamped>) -> Self {
        Self {
            word: AtomicU64::new(0),
            block: AtomicPtr::new(first),
            watched_from: AtomicU64::new(u64::MAX),
            wait: PhantomData,
        }
    }

    fn cursor(&self) {}

    #[inline(always)]
    #[allow(clippy::inline_always, reason = "a hint alone leaves it out of line")]
    unsafe fn push(&self, (): &mut (), pool: &Pool<T, Stamped>, value: T) -> Result<(), T> {
        match self.claim::<false>(pool) {
            Ok((index, block, watched)) => {
                // SAFETY: `index` was claimed in `block`.
                unsafe { Self::write::<false>(block, index, watched, value) };
                Ok(())
            }
            Err(Refused::Closed) => Err(value),
            // SAFETY: the caller's contract.
            Err(Refused::Marking) => unsafe { self.push_marking(pool, value) },
        }
    }

    fn watch_writes(&self) {
        // ORDERING: Relaxed: set once, and any value set is exact.
        if is_large::<T>() && self.watched_from.load(Ordering::Relaxed) == u64::MAX {
            // ORDERING: Relaxed: the word's modification order alone decides
            // which claims see it.
            let from = Self::index(self.word.fetch_or(Self::WATCHED, Ordering::Relaxed));
            self.watched_from.store(from, Ordering::Relaxed);
        }
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
        Self::index(self.word.load_sc())
    }
}
