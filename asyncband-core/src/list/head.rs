//! The consumers' end of a list: [`OneHead`] publishes the index its
//! consumer's cursor ([`OneHeadCursor`]) owns; [`ManyHead`] is a claim word.
//! [`Watch`] says how a single consumer sees a value published.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use std::marker::PhantomData;

use crate::arity::{Many, One};
use crate::slot::{NoStamp, Slot, Stamp, Stamped, marked, readable};
use crate::storage::PopError;
use crate::sync::{AtomicBool, AtomicPtr, AtomicU64, Ordering, SeqCst};
use crate::wait::{Wait, pause};

use super::buffer::{BLOCK, Block, Head, LAP, ListFront, Pool, Tail, consumed, step};
use super::tail::{CLOSED, ManyTail, OneTail};

/// How a single consumer sees the value at its index published by `Self`.
pub trait Watch<T>: Tail<T> {
    /// What the consumer's cursor keeps of this end between pops.
    type Seen: Send + Sync + Unpin + std::fmt::Debug;

    /// What it keeps before its first pop, at `index`.
    fn seen(index: u64) -> Self::Seen;

    /// Whether the value of `front`, the consumer's head, is published;
    /// if not, why (as [`Storage::front`](crate::storage::Storage::front)).
    ///
    /// # Safety
    ///
    /// Single consumer; `front` is at its head, in a live block.
    unsafe fn ready(
        &self,
        seen: &mut Self::Seen,
        front: &ListFront<T, Self::Stamp>,
    ) -> Result<(), PopError>;

    /// As `ready`, for a receive that will not sleep on the answer, or keeps
    /// `waiting` ([`Storage::try_front`](crate::storage::Storage::try_front));
    /// `closed` is set after a close (`OneHead::closed`).
    ///
    /// # Safety
    ///
    /// As for `ready`.
    #[inline(always)]
    unsafe fn try_ready(
        &self,
        seen: &mut Self::Seen,
        front: &ListFront<T, Self::Stamp>,
        _closed: &AtomicBool,
        _waiting: bool,
    ) -> Result<(), PopError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.ready(seen, front) }
    }
}

/// A single consumer's copy of a single producer's index, as last read.
#[derive(Debug)]
pub struct TailCache(u64);

impl TailCache {
    /// The end of what may be read from `tail` by a consumer at `head`.
    fn readable_end<T, W: Wait>(&mut self, tail: &OneTail<T, W>, head: u64) -> u64 {
        if head < self.0 {
            return self.0;
        }
        // ORDERING: SeqCst: the waiting consumer's re-check, paired with the
        // producer's publish.
        let end = tail.boundary.readable_end(|| tail.index.load_sc());
        self.0 = end;
        end
    }
}

/// A single producer publishes through its index, read through a
/// [`TailCache`].
impl<T, W: Wait> Watch<T> for OneTail<T, W> {
    type Seen = TailCache;

    fn seen(index: u64) -> TailCache {
        TailCache(index)
    }

    #[inline(always)]
    unsafe fn ready(
        &self,
        seen: &mut TailCache,
        front: &ListFront<T, NoStamp>,
    ) -> Result<(), PopError> {
        let index = front.index;
        if index >= seen.readable_end(self, index) {
            return Err(self.boundary.nothing_at(index));
        }
        Ok(())
    }
}

/// The first index from which a single consumer's `try_recv` reads "empty"
/// from an unmarked slot alone (`u64::MAX` until it first finds the list
/// empty): every claim from it on saw `POLLING`.
#[derive(Debug)]
pub struct MarksFrom(u64);

impl<T, W: Wait> ManyTail<T, W, One> {
    /// Why the value at the consumer's `index` is not there yet.
    fn unpublished(&self, index: u64) -> PopError {
        // ORDERING: SeqCst: a waiter's re-check, paired with the claims.
        let word = self.word.load_sc();
        if Self::index(word) > index {
            self.busy(index)
        } else if word & CLOSED != 0 {
            PopError::Closed
        } else {
            PopError::Empty
        }
    }
}

/// Many producers publish through each slot's stamp. A polling consumer
/// tells "empty" from its slot, leaving the claim word's line to producers:
/// a slot unmarked from `MarksFrom` on means no later value of its block
/// is published (each producer marks the claims of its block before its
/// own), and an unlinked next block that no later block's is.
impl<T, W: Wait> Watch<T> for ManyTail<T, W, One> {
    type Seen = MarksFrom;

    fn seen(_index: u64) -> MarksFrom {
        MarksFrom(u64::MAX)
    }

    #[inline(always)]
    unsafe fn ready(
        &self,
        _: &mut MarksFrom,
        front: &ListFront<T, Stamped>,
    ) -> Result<(), PopError> {
        // SAFETY: the head block is alive while the consumer is on it.
        let slot = unsafe { &*front.slot };
        // Acquire (`SeqCst` for a large value), paired with `write`.
        if slot.published() != readable(front.index) {
            return Err(self.unpublished(front.index));
        }
        Ok(())
    }

    #[inline(always)]
    unsafe fn try_ready(
        &self,
        from: &mut MarksFrom,
        front: &ListFront<T, Stamped>,
        closed: &AtomicBool,
        waiting: bool,
    ) -> Result<(), PopError> {
        let index = front.index;
        // SAFETY: the head block is alive while the consumer is on it.
        let slot = unsafe { &*front.slot };
        // Acquire (`SeqCst` for a large value), paired with `write`.
        let stamp = slot.published();
        if stamp == readable(index) {
            return Ok(());
        }
        // A waiter looks again: unwritten is as good as empty to it.
        // ORDERING: Relaxed, as below.
        if waiting && !closed.load(Ordering::Relaxed) {
            return Err(PopError::Empty);
        }
        // SAFETY: as above.
        let block = unsafe { &*front.block };
        // ORDERING: Relaxed: set after the close froze the word; a close
        // racing this receive may be ordered after it. Acquire pairs with
        // the Release link in `claim`.
        if stamp != marked(index)
            && index >= from.0
            && !closed.load(Ordering::Relaxed)
            && block.next.load(Ordering::Acquire).is_null()
        {
            return Err(PopError::Empty);
        }
        let error = self.unpublished(index);
        if error == PopError::Empty && from.0 == u64::MAX {
            from.0 = self.start_polling();
        }
        Err(error)
    }
}

/// A single consumer's end: the index and block only its cursor moves,
/// published for queries, new cursors and the drop.
pub struct OneHead<T, Tx: Watch<T>> {
    /// The index of the next value.
    index: AtomicU64,
    /// The block holding `index`.
    block: AtomicPtr<Block<T, Tx::Stamp>>,
    /// Set by `close` after the producers' end closed, in the consumer's own
    /// line: a polling consumer finding it clear knows, without the
    /// producers' line, that no close completed (`Watch::try_ready`).
    closed: AtomicBool,
}

/// A single consumer's cursor ([`Storage::Cursor`]): its block and what it
/// keeps of the producers' end; its index is the head's.
///
/// [`Storage::Cursor`]: crate::storage::Storage::Cursor
pub struct OneHeadCursor<T, Tx: Watch<T>> {
    block: *mut Block<T, Tx::Stamp>,
    seen: Tx::Seen,
}

// SAFETY: the block pointer is into the cursor's list, and a cursor acts
// only with its channel, whose `Send` and `Sync` carry `T: Send`.
unsafe impl<T, Tx: Watch<T>> Send for OneHeadCursor<T, Tx> {}
// SAFETY: as for `Send`.
unsafe impl<T, Tx: Watch<T>> Sync for OneHeadCursor<T, Tx> {}

impl<T, Tx: Watch<T>> std::fmt::Debug for OneHeadCursor<T, Tx> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OneHeadCursor")
            .field("seen", &self.seen)
            .finish_non_exhaustive()
    }
}

impl<T, Tx: Watch<T>> OneHead<T, Tx> {
    /// The next value's place, found but not checked.
    #[inline(always)]
    fn at(&self, cursor: &OneHeadCursor<T, Tx>) -> ListFront<T, Tx::Stamp> {
        // ORDERING: Relaxed; the consumer reads its own index.
        let index = self.index.load(Ordering::Relaxed);
        let block = cursor.block;
        // SAFETY: the head block is alive while the consumer is on it.
        let slot = unsafe { &raw const (*block).slots[(index % LAP) as usize] };
        ListFront { index, block, slot }
    }

    /// Moves the head past `index`, just read, recycling a block it leaves.
    ///
    /// # Safety
    ///
    /// `cursor` is the single consumer's; `index` is its head and lives in
    /// `block`.
    unsafe fn advance_one(
        &self,
        cursor: &mut OneHeadCursor<T, Tx>,
        pool: &Pool<T, Tx::Stamp>,
        block: *mut Block<T, Tx::Stamp>,
        index: u64,
    ) {
        let next = step(index);
        if next != index + 1 {
            // ORDERING: Acquire pairs with the producer's Release link.
            // SAFETY: the head block is alive until we recycle it below.
            let following = unsafe { (*block).next.load(Ordering::Acquire) };
            cursor.block = following;
            // ORDERING: Relaxed; read after this consumer's work.
            self.block.store(following, Ordering::Relaxed);
            // SAFETY: the only consumer read every slot of `block`; producers
            // never dereference a block they moved past.
            unsafe { pool.put(block) };
        }
        // ORDERING: Relaxed; the consumer's own index, read by queries.
        self.index.store_at(next, Ordering::Relaxed);
    }
}

impl<T, Tx: Watch<T>> Head<T, Tx> for OneHead<T, Tx> {
    type Receivers = One;
    type Cursor = OneHeadCursor<T, Tx>;

    fn new(first: *mut Block<T, Tx::Stamp>) -> Self {
        Self {
            index: AtomicU64::new(0),
            block: AtomicPtr::new(first),
            closed: AtomicBool::new(false),
        }
    }

    fn cursor(&self) -> OneHeadCursor<T, Tx> {
        // ORDERING: Relaxed; where the consumer's pops left them.
        let index = self.index.load(Ordering::Relaxed);
        OneHeadCursor {
            block: self.block.load(Ordering::Relaxed),
            seen: Tx::seen(index),
        }
    }

    #[inline(always)]
    unsafe fn front(
        &self,
        cursor: &mut OneHeadCursor<T, Tx>,
        tail: &Tx,
    ) -> Result<ListFront<T, Tx::Stamp>, PopError> {
        let front = self.at(cursor);
        // SAFETY: `front` is the head of the single consumer's cursor.
        unsafe { tail.ready(&mut cursor.seen, &front) }?;
        Ok(front)
    }

    #[inline(always)]
    unsafe fn try_front(
        &self,
        cursor: &mut OneHeadCursor<T, Tx>,
        tail: &Tx,
        waiting: bool,
    ) -> Result<ListFront<T, Tx::Stamp>, PopError> {
        let front = self.at(cursor);
        // SAFETY: `front` is the head of the single consumer's cursor.
        unsafe { tail.try_ready(&mut cursor.seen, &front, &self.closed, waiting) }?;
        Ok(front)
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut ListFront<T, Tx::Stamp>) -> T {
        // SAFETY: the front's block lives until the front is released.
        let slot = unsafe { &*front.slot };
        // SAFETY: published (checked in `front`), and this consumer's alone.
        unsafe { slot.read() }
    }

    #[inline(always)]
    unsafe fn release_front(
        &self,
        cursor: &mut OneHeadCursor<T, Tx>,
        pool: &Pool<T, Tx::Stamp>,
        front: ListFront<T, Tx::Stamp>,
    ) {
        // SAFETY: the single consumer's cursor, at `front`.
        unsafe { self.advance_one(cursor, pool, front.block, front.index) };
    }

    unsafe fn peek<'a>(&'a self, cursor: &'a mut OneHeadCursor<T, Tx>, tail: &Tx) -> Option<&'a T> {
        let front = self.at(cursor);
        // SAFETY: as in `front`.
        let ready = unsafe { tail.ready(&mut cursor.seen, &front) }.is_ok();
        // SAFETY: published, and left in place while `cursor` is borrowed;
        // the head block lives while the head is on it.
        ready.then(|| unsafe { (*front.slot).get() })
    }

    fn index(&self) -> u64 {
        // ORDERING: SeqCst; a query.
        self.index.load_sc()
    }

    fn after_close(&self) {
        // ORDERING: Release after the close; read Relaxed (`try_ready`).
        self.closed.store(true, Ordering::Release);
    }

    fn block(&self) -> *mut Block<T, Tx::Stamp> {
        // ORDERING: Relaxed; the list is being dropped (`&mut`).
        self.block.load(Ordering::Relaxed)
    }
}

/// The end many consumers share, claiming with one compare-exchange.
pub struct ManyHead<T, W: Wait> {
    /// The next index to claim (on a sentinel while the head moves on).
    index: AtomicU64,
    /// The block holding `index` (the one before, on a sentinel).
    block: AtomicPtr<Block<T, Stamped>>,
    /// A tail index some spinning consumer read: every index below it is
    /// claimed by a producer, so a consumer behind it claims without
    /// reading the producers' line. Unused by parking consumers.
    claimed: AtomicU64,
    /// How a consumer waits out another's step.
    wait: PhantomData<W>,
}

opaque_debug!(impl[T, Tx: Watch<T>] OneHead<T, Tx>; impl[T, W: Wait] ManyHead<T, W>);

impl<T, W: Wait> ManyHead<T, W> {
    /// Claims the next index that a producer has claimed in `tail`.
    fn claim_head(
        &self,
        tail: &ManyTail<T, W, Many>,
    ) -> Result<(u64, *mut Block<T, Stamped>), PopError> {
        let mut spins = 0;
        // ORDERING: Acquire pairs with the Release moving the head off a
        // sentinel, so the block load sees its block.
        let mut index = self.index.load(Ordering::Acquire);
        // ORDERING: Relaxed: a value the tail had; the tail only grows.
        let mut claimed = if W::PARKS {
            0
        } else {
            self.claimed.load(Ordering::Relaxed)
        };
        loop {
            if index % LAP == BLOCK as u64 {
                pause::<W>(&mut spins);
                // ORDERING: Acquire, as above.
                index = self.index.load(Ordering::Acquire);
                continue;
            }
            // Only spinning consumers keep `claimed`: they poll from another
            // core, where the producers' line costs a transfer per read; on
            // one core the extra word costs more than it saves.
            if W::PARKS || index >= claimed {
                // ORDERING: SeqCst: a waiter's re-check, paired with the claims.
                let word = tail.word.load_sc();
                // `<=` also covers a sentinel tail, still moving to the block.
                if ManyTail::<T, W, Many>::index(word) <= index {
                    return Err(if word & CLOSED != 0 {
                        PopError::Closed
                    } else {
                        PopError::Empty
                    });
                }
                if !W::PARKS {
                    claimed = ManyTail::<T, W, Many>::index(word);
                    // ORDERING: Relaxed: a hint; a smaller value stored over
                    // a larger one only makes a consumer read the tail sooner.
                    self.claimed.store(claimed, Ordering::Relaxed);
                }
            }
            // ORDERING: Acquire, as for the tail block in `claim`.
            let block = self.block.load(Ordering::Acquire);
            // ORDERING: SeqCst orders the claim against the others'; Acquire
            // on failure for the reload.
            match self.index.compare_exchange_weak(
                index,
                index + 1,
                Ordering::SeqCst,
                Ordering::Acquire,
            ) {
                Ok(_) => return Ok((index, block)),
                Err(current) => index = current,
            }
        }
    }

    /// Waits for the link after `block` and moves the head onto it.
    ///
    /// # Safety
    ///
    /// The caller claimed the last index of `block`.
    #[cold]
    #[inline(never)]
    unsafe fn leave_block(&self, block: *mut Block<T, Stamped>) {
        let mut spins = 0;
        let following = loop {
            // SAFETY: the block lives until its last slot (ours) is read.
            // ORDERING: Acquire pairs with the producer's Release link.
            let next = unsafe { (*block).next.load(Ordering::Acquire) };
            if !next.is_null() {
                break next;
            }
            pause::<W>(&mut spins);
        };
        // ORDERING: Release pairs with the Acquire loads in `claim_head`.
        self.block.store(following, Ordering::Release);
        // ORDERING: Release moves the head off the sentinel.
        self.index.fetch_add(1, Ordering::Release);
    }

    /// Waits for every reader of `block` (first index `first`), then pools it.
    ///
    /// # Safety
    ///
    /// The caller read the last slot of `block`.
    #[cold]
    #[inline(never)]
    unsafe fn retire_block(pool: &Pool<T, Stamped>, block: *mut Block<T, Stamped>, first: u64) {
        // SAFETY: the block lives until we put it in the pool below.
        let slots = unsafe { &(*block).slots };
        // Consecutive indices: each mark is one step after the one before.
        let mut mark = consumed(first);
        for other in slots {
            // ORDERING: Acquire pairs with each reader's Release mark.
            if other.stamp.load(Ordering::Acquire) != mark {
                Self::wait_for_read(other, mark);
            }
            mark += consumed(1) - consumed(0);
        }
        // SAFETY: every slot was read; nobody dereferences a block left.
        unsafe { pool.put(block) };
    }

    /// Waits until `slot`'s reader marks it `mark`.
    #[cold]
    #[inline(never)]
    fn wait_for_read(slot: &Slot<T, Stamped>, mark: u64) {
        let mut spins = 0;
        // ORDERING: Acquire, as in `retire_block`.
        while slot.stamp.load(Ordering::Acquire) != mark {
            pause::<W>(&mut spins);
        }
    }
}

impl<T, W: Wait> Head<T, ManyTail<T, W, Many>> for ManyHead<T, W> {
    type Receivers = Many;
    type Cursor = ();

    fn new(first: *mut Block<T, Stamped>) -> Self {
        Self {
            index: AtomicU64::new(0),
            block: AtomicPtr::new(first),
            claimed: AtomicU64::new(0),
            wait: PhantomData,
        }
    }

    fn cursor(&self) {}

    #[inline(always)]
    unsafe fn front(
        &self,
        (): &mut (),
        tail: &ManyTail<T, W, Many>,
    ) -> Result<ListFront<T, Stamped>, PopError> {
        let (index, block) = self.claim_head(tail)?;
        if (index % LAP) + 1 == BLOCK as u64 {
            // Out of line, so that the common read inlines.
            // SAFETY: we claimed the sentinel `index` of `block`.
            unsafe { self.leave_block(block) };
        }
        // SAFETY: `block` is alive: its slot `index % LAP` is ours.
        let slot = unsafe { &raw const (*block).slots[(index % LAP) as usize] };
        Ok(ListFront { index, block, slot })
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut ListFront<T, Stamped>) -> T {
        let index = front.index;
        // SAFETY: the front's block lives until every front is released.
        let slot = unsafe { &*front.slot };
        // A claimed index may still be being written.
        let mut spins = 0;
        // ORDERING: Acquire pairs with the producer's Release publish.
        while slot.stamp.load(Ordering::Acquire) != readable(index) {
            pause::<W>(&mut spins);
        }
        // SAFETY: published (just checked), and ours by the claim.
        unsafe { slot.read() }
    }

    #[inline(always)]
    unsafe fn release_front(
        &self,
        (): &mut (),
        pool: &Pool<T, Stamped>,
        front: ListFront<T, Stamped>,
    ) {
        let ListFront { index, block, slot } = front;
        let offset = index % LAP;
        // SAFETY: as in `take_front`.
        let slot = unsafe { &*slot };
        // ORDERING: Release pairs with the retiring consumer's Acquire.
        Stamp::store(&slot.stamp, consumed(index), Ordering::Release);
        if offset + 1 == BLOCK as u64 {
            // SAFETY: we read the last slot of `block`, whose first index
            // is `index - offset`.
            unsafe { Self::retire_block(pool, block, index - offset) };
        }
    }

    unsafe fn peek<'a>(&'a self, (): &'a mut (), _: &ManyTail<T, W, Many>) -> Option<&'a T> {
        unreachable!("only a single consumer peeks (`Storage::peek`)")
    }

    fn index(&self) -> u64 {
        // ORDERING: SeqCst; a query.
        self.index.load_sc()
    }

    fn block(&self) -> *mut Block<T, Stamped> {
        // ORDERING: Relaxed; the list is being dropped (`&mut`).
        self.block.load(Ordering::Relaxed)
    }
}
