//! What every list shares: the blocks, the pool of spare blocks, the index
//! arithmetic, and the traits of its two ends, the producers' [`Tail`] and
//! the consumers' [`Head`], through which the list implements [`Storage`].

use std::ptr;

use crate::arity::Arity;
use crate::slot::{Slot, Stamp};
use crate::storage::PopError;
#[cfg(doc)]
use crate::storage::Storage;
use crate::sync::{AtomicPtr, Ordering};

/// Slots per block: one less than a power of two, so that an index's offset
/// in its lap (`BLOCK + 1` values, the last a sentinel) is a mask.
#[cfg(not(any(asyncband_loom, asyncband_small)))]
pub const BLOCK: usize = 31;
/// Slots per block, shrunk so that models and stress runs cross blocks
/// often; three, so that a model has a slot before another that is not its
/// block's last (where a producer's mark, not the link, tells a polling
/// consumer of a value behind).
#[cfg(any(asyncband_loom, asyncband_small))]
pub const BLOCK: usize = 3;

/// Spare blocks kept for reuse.
pub const POOL: usize = 2;

/// Index values per block: its slots, then the sentinel.
pub(super) const LAP: u64 = BLOCK as u64 + 1;

/// The state of a slot whose value (for `index`) has been read.
pub(super) const fn consumed(index: u64) -> u64 {
    (index << 1) + 2
}

/// The index after `index`, skipping the sentinel.
#[inline]
pub(super) const fn step(index: u64) -> u64 {
    if index % LAP + 1 == BLOCK as u64 {
        index + 2
    } else {
        index + 1
    }
}

/// How many values lie before `index`.
#[inline]
pub(super) const fn position(index: u64) -> u64 {
    let offset = index % LAP;
    (index / LAP) * BLOCK as u64 + offset
}

/// [`BLOCK`] slots and the link to the next block.
pub struct Block<T, S> {
    pub(super) slots: [Slot<T, S>; BLOCK],
    pub(super) next: AtomicPtr<Block<T, S>>,
}

impl<T, S: Stamp> Block<T, S> {
    /// A new block, on the heap: built in place, so that no block (for a
    /// large payload, megabytes) and no slot is ever on the stack.
    #[allow(clippy::unnecessary_box_returns, reason = "wanted on the heap")]
    pub(super) fn new() -> Box<Self> {
        let mut block = Box::<Self>::new_uninit();
        let this = block.as_mut_ptr();
        for i in 0..BLOCK {
            // SAFETY: `this` is a fresh allocation for a block, so slot `i`
            // is valid, aligned and holds nothing yet.
            unsafe { Slot::init(&raw mut (*this).slots[i], 0) };
        }
        // SAFETY: as above, for the link.
        unsafe { (&raw mut (*this).next).write(AtomicPtr::new(ptr::null_mut())) };
        // SAFETY: every slot and the link were initialised above.
        unsafe { block.assume_init() }
    }
}

/// Spare blocks. Each cell is taken with a swap and filled with a
/// compare-exchange, so a block has one owner at a time and there is no ABA.
pub struct Pool<T, S> {
    pub(super) cells: [AtomicPtr<Block<T, S>>; POOL],
}

impl<T, S: Stamp> Pool<T, S> {
    pub(super) fn new() -> Self {
        Self {
            cells: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
        }
    }

    /// A spare block, or a new one.
    pub(super) fn take(&self) -> *mut Block<T, S> {
        for cell in &self.cells {
            // ORDERING: Acquire pairs with the Release in `put`: the block's
            // reset is visible to its new owner.
            let block = cell.swap(ptr::null_mut(), Ordering::Acquire);
            if !block.is_null() {
                return block;
            }
        }
        Box::into_raw(Block::new())
    }

    /// Keeps `block` as a spare, or frees it when the pool is full.
    ///
    /// # Safety
    ///
    /// The caller owns `block`: it came from `Block::new`, holds no value,
    /// and nobody will dereference it again.
    pub(super) unsafe fn put(&self, block: *mut Block<T, S>) {
        // SAFETY: the caller owns the block.
        // ORDERING: Relaxed; the Release below publishes it.
        unsafe { (*block).next.store(ptr::null_mut(), Ordering::Relaxed) };
        for cell in &self.cells {
            // ORDERING: Release publishes the reset to the next `take`.
            if cell
                .compare_exchange(ptr::null_mut(), block, Ordering::Release, Ordering::Relaxed)
                .is_ok()
            {
                return;
            }
        }
        // SAFETY: the caller owns the block, which came from a `Box`.
        drop(unsafe { Box::from_raw(block) });
    }
}

impl<T, S> Drop for Pool<T, S> {
    fn drop(&mut self) {
        for cell in &self.cells {
            // ORDERING: Relaxed; `&mut self`, nothing else touches the pool.
            let block = cell.swap(ptr::null_mut(), Ordering::Relaxed);
            if !block.is_null() {
                // SAFETY: pooled blocks are owned by the pool and empty.
                drop(unsafe { Box::from_raw(block) });
            }
        }
    }
}

opaque_debug!(impl[T, S] Block<T, S>; impl[T, S] Pool<T, S>);

/// A consumer's hold on the value at `index` in `block` ([`Storage::front`]),
/// found published or claimed; the block lives until `release_front`.
pub struct ListFront<T, S> {
    pub(super) index: u64,
    pub(super) block: *mut Block<T, S>,
    /// The slot of `index` in `block`, found once (as `RingFront::slot`).
    pub(super) slot: *const Slot<T, S>,
}

impl<T, S> std::fmt::Debug for ListFront<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListFront")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// The producers' end of a list: one type per producer arity (`OneTail`,
/// `ManyTail`), holding only the state that arity uses.
pub trait Tail<T>: Sized {
    /// The producer arity.
    type Senders: Arity;
    /// The slot stamp these producers publish through.
    type Stamp: Stamp;
    /// A producer's own state ([`Storage::ProducerCursor`]).
    type Cursor: std::fmt::Debug + Unpin + Send + Sync;

    /// An open end whose next value goes into the first slot of `first`.
    fn new(first: *mut Block<T, Self::Stamp>) -> Self;

    /// [`Storage::producer_cursor`].
    fn cursor(&self) -> Self::Cursor;

    /// [`Storage::try_push`], taking a new block from `pool` when the tail
    /// leaves its block; refused only when closed, handing `value` back.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_push`].
    unsafe fn push(
        &self,
        cursor: &mut Self::Cursor,
        pool: &Pool<T, Self::Stamp>,
        value: T,
    ) -> Result<(), T>;

    /// [`Storage::close`].
    ///
    /// # Safety
    ///
    /// As for [`Storage::close`].
    unsafe fn close(&self, from_producer: bool) -> bool;

    /// [`Storage::is_closed`].
    fn is_closed(&self) -> bool;

    /// The index before which values count in [`Storage::len`] (`SeqCst`
    /// loads): published or claimed, and inside the boundary.
    fn end(&self) -> u64;

    /// [`Storage::before_recv_wait`].
    fn before_recv_wait(&self) {}

    /// [`Storage::watch_writes`].
    fn watch_writes(&self) {}

    /// [`Storage::after_push`].
    ///
    /// # Safety
    ///
    /// As for [`Storage::after_push`].
    unsafe fn after_push(&self, _: &mut Self::Cursor, _waiting: impl Fn() -> bool) {}
}

/// The consumers' end of a list fed by the producers' end `Tx`: one type per
/// consumer arity (`OneHead`, `ManyHead`), holding only what that arity uses.
pub trait Head<T, Tx: Tail<T>>: Sized {
    /// The consumer arity.
    type Receivers: Arity;
    /// A consumer's own state ([`Storage::Cursor`]).
    type Cursor: std::fmt::Debug + Unpin + Send + Sync;

    /// An end whose next value is in the first slot of `first`.
    fn new(first: *mut Block<T, Tx::Stamp>) -> Self;

    /// [`Storage::cursor`].
    fn cursor(&self) -> Self::Cursor;

    /// [`Storage::front`], against the producers' end `tail`.
    ///
    /// # Safety
    ///
    /// As for [`Storage::front`].
    unsafe fn front(
        &self,
        cursor: &mut Self::Cursor,
        tail: &Tx,
    ) -> Result<ListFront<T, Tx::Stamp>, PopError>;

    /// [`Storage::try_front`], against the producers' end `tail`.
    ///
    /// # Safety
    ///
    /// As for [`Storage::try_front`].
    #[inline(always)]
    unsafe fn try_front(
        &self,
        cursor: &mut Self::Cursor,
        tail: &Tx,
        _waiting: bool,
    ) -> Result<ListFront<T, Tx::Stamp>, PopError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.front(cursor, tail) }
    }

    /// [`Storage::take_front`].
    ///
    /// # Safety
    ///
    /// As for [`Storage::take_front`].
    unsafe fn take_front(&self, front: &mut ListFront<T, Tx::Stamp>) -> T;

    /// [`Storage::release_front`], putting a block that is left in `pool`.
    ///
    /// # Safety
    ///
    /// As for [`Storage::release_front`].
    unsafe fn release_front(
        &self,
        cursor: &mut Self::Cursor,
        pool: &Pool<T, Tx::Stamp>,
        front: ListFront<T, Tx::Stamp>,
    );

    /// [`Storage::peek`], against the producers' end `tail`.
    ///
    /// # Safety
    ///
    /// As for [`Storage::peek`].
    unsafe fn peek<'a>(&'a self, cursor: &'a mut Self::Cursor, tail: &Tx) -> Option<&'a T>;

    /// The index of the next value to pop (a `SeqCst` load).
    fn index(&self) -> u64;

    /// After the producers' end closed.
    fn after_close(&self) {}

    /// The block holding the index, for a list being dropped (relaxed).
    fn block(&self) -> *mut Block<T, Tx::Stamp>;
}
