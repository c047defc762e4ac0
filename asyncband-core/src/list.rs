//! Unbounded storage: a linked list of blocks of slots.
//!
//! # Indices
//!
//! Both ends walk an *index* that counts `LAP = BLOCK + 1` values per block:
//! offsets `0..BLOCK` name the block's slots, and offset `BLOCK` is a
//! sentinel meaning "this block is used up and the end is moving to the
//! next one". Slot states are tagged with the index (see the private `slot`
//! module), so a recycled block needs no reset.
//!
//! # Producers
//!
//! Many producers share a claim word (`index << 1 | CLOSED`) and claim with
//! one compare-exchange; one that loses it to another producer waits a few
//! spin hints before it tries again, so that contending producers do not
//! take the word's line from the winner on every attempt. While the word
//! sits on a sentinel they wait (a few
//! instructions: the producer that took the last slot stores the next block
//! and moves the word on). Because the tail block only changes while the
//! word is on a sentinel, a producer whose compare-exchange succeeds knows
//! the block pointer it loaded after the word is the right one; no producer
//! dereferences a block before its claim succeeds, so retired blocks can be
//! freed safely. The next block is taken from the pool (or allocated)
//! *before* the last slot is claimed, so the sentinel lasts only a couple of
//! stores. A single producer owns its index and publishes it with a `SeqCst`
//! store, like the ring, and closes through a `Boundary` (private `boundary`
//! module).
//!
//! # Consumers
//!
//! A single consumer checks the slot state before taking it, with no
//! read-modify-write, and recycles each block when it leaves it. Many
//! consumers first compare the claim word with the producers' index (no
//! block is touched before a claim), claim with one compare-exchange, then
//! wait for the value if its producer is still writing it; the consumer that
//! takes the last slot of a block moves the head on and recycles the block
//! once every slot of it has been read. A consumer never claims a position
//! that no producer has claimed.
//!
//! # Memory
//!
//! Left blocks go to a pool of [`POOL`] spares that producers draw from, so
//! steady traffic does not allocate; blocks beyond that are freed, so memory
//! after a burst returns to a handful of blocks.

use std::marker::PhantomData;
use std::ptr;

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Topology};
use crate::boundary::Boundary;
use crate::slot::{Slot, Stamp, is_large, readable};
use crate::storage::{PopError, PushError, Storage, drop_each};
use crate::sync::{AtomicPtr, AtomicU64, Ordering, SeqCst, UnsafeCell, spin_hint, thread};
use crate::wait::Fence;
use std::sync::atomic::compiler_fence;

/// Slots per block: one less than a power of two, so that an index's offset
/// in its lap (`BLOCK + 1` values, the last a sentinel) is a mask.
#[cfg(not(any(asyncband_loom, asyncband_small)))]
pub const BLOCK: usize = 31;
/// Slots per block (shrunk so block transitions happen constantly in models
/// and stress runs).
#[cfg(any(asyncband_loom, asyncband_small))]
pub const BLOCK: usize = 2;

/// Spare blocks kept for reuse.
pub const POOL: usize = 2;

const LAP: u64 = BLOCK as u64 + 1;
const CLOSED: u64 = 1;

/// The state of a slot whose value (for `index`) has been read.
const fn consumed(index: u64) -> u64 {
    (index << 1) + 2
}

/// The index after `index`, skipping the sentinel.
#[inline]
const fn step(index: u64) -> u64 {
    if index % LAP + 1 == BLOCK as u64 {
        index + 2
    } else {
        index + 1
    }
}

/// How many values lie before `index`.
#[inline]
const fn position(index: u64) -> u64 {
    let offset = index % LAP;
    (index / LAP) * BLOCK as u64 + offset
}

struct Block<T, S> {
    slots: [Slot<T, S>; BLOCK],
    next: AtomicPtr<Block<T, S>>,
}

impl<T, S: Stamp> Block<T, S> {
    /// A new block, on the heap: built in place, so that no block (for a
    /// large payload, megabytes) and no slot is ever on the stack.
    #[allow(
        clippy::unnecessary_box_returns,
        reason = "every caller wants the block on the heap (`Box::into_raw`); boxing here keeps it that way"
    )]
    fn new() -> Box<Self> {
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
struct Pool<T, S> {
    cells: [AtomicPtr<Block<T, S>>; POOL],
}

impl<T, S: Stamp> Pool<T, S> {
    fn new() -> Self {
        Self {
            cells: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
        }
    }

    /// A spare block, or a new one.
    fn take(&self) -> *mut Block<T, S> {
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
    unsafe fn put(&self, block: *mut Block<T, S>) {
        // SAFETY: the caller owns the block.
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

/// A consumer's hold on the value at `index` in `block` (see
/// [`Storage::front`]): found published or, with many consumers, claimed;
/// the block stays alive until `release_front`.
pub struct ListFront<T, S> {
    index: u64,
    block: *mut Block<T, S>,
    /// The slot of `index` in `block`, found once (as `RingFront::slot`).
    slot: *const Slot<T, S>,
}

impl<T, S> std::fmt::Debug for ListFront<T, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListFront")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

/// One end of the list.
struct End<T, S> {
    /// Many producers: `index << 1 | CLOSED`. Otherwise the index.
    index: AtomicU64,
    /// The block holding `index` (or the one before it while `index` is on a
    /// sentinel).
    block: AtomicPtr<Block<T, S>>,
    /// Single consumer of a single producer: the producer's index as last
    /// read.
    ///
    /// # Safety
    ///
    /// Touched only by the single consumer.
    cache: UnsafeCell<u64>,
}

/// Unbounded storage for producer arity `P` and consumer arity `C`.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::list::List;
/// use asyncband_core::storage::{PopError, Storage};
///
/// let list = List::<u32, Many, One>::new();
/// // SAFETY: this thread is the only consumer.
/// unsafe {
///     for i in 0..100 {
///         list.try_push(i).unwrap();
///     }
///     for i in 0..100 {
///         assert_eq!(list.try_pop(), Ok(i));
///     }
///     assert_eq!(list.try_pop(), Err(PopError::Empty));
/// }
/// ```
pub struct List<T, P: Arity, C: Arity>
where
    (P, C): Topology,
{
    tail: CachePadded<End<T, P::Stamp>>,
    head: CachePadded<End<T, P::Stamp>>,
    boundary: CachePadded<Boundary>,
    /// Single producer: how it publishes (plain while nobody waits).
    fence: CachePadded<Fence>,
    pool: Pool<T, P::Stamp>,
    _arity: PhantomData<(P, C)>,
}

// SAFETY: values move between threads through the list, so `T: Send` is
// required and sufficient; shared cells are guarded by the protocol in the
// module docs.
unsafe impl<T: Send, P: Arity, C: Arity> Send for List<T, P, C> where (P, C): Topology {}
// SAFETY: as for `Send`.
unsafe impl<T: Send, P: Arity, C: Arity> Sync for List<T, P, C> where (P, C): Topology {}

impl<T, P: Arity, C: Arity> List<T, P, C>
where
    (P, C): Topology,
{
    /// The producers' index.
    #[inline]
    fn tail_index(word: u64) -> u64 {
        if P::MANY { word >> 1 } else { word }
    }

    /// After a claim lost its compare-exchange to another producer's: waits
    /// 2, 4, … up to 64 spin hints (doubling with `losses`, this claim's
    /// losses so far) before the next attempt. Producers that retry at once
    /// take the claim word's line from each other on every attempt; spaced
    /// out, the winner finishes its claim while the line is still its own
    /// (`benches/NOTES.md` has the measurement; the ring's claims gained
    /// nothing from it, so they retry at once). Nothing under loom, where a plain retry is enough and every hint
    /// would be a scheduling point. Cold and out of line: an uncontended
    /// claim pays nothing for it.
    #[cold]
    #[inline(never)]
    fn after_lost_claim(losses: &mut u32) {
        *losses += 1;
        #[cfg(not(asyncband_loom))]
        for _ in 0..1u32 << (*losses).min(6) {
            std::hint::spin_loop();
        }
    }

    /// Waits until a producer that is moving the tail to the next block is
    /// done, or a consumer likewise; a few stores.
    fn pause(spins: &mut u32) {
        *spins += 1;
        if *spins < crate::sync::PAUSE_SPINS {
            spin_hint();
        } else {
            thread::yield_now();
        }
    }

    /// Many producers: claims the next index and returns it with its block.
    #[inline]
    fn claim(&self) -> Result<(u64, *mut Block<T, P::Stamp>), ()> {
        let mut spare: *mut Block<T, P::Stamp> = ptr::null_mut();
        let mut spins = 0;
        let mut losses = 0;
        // ORDERING: Acquire pairs with the Release of the producer that moved
        // the word off a sentinel, so the block load below sees its block.
        let mut word = self.tail.index.load(Ordering::Acquire);
        loop {
            if word & CLOSED != 0 {
                if !spare.is_null() {
                    // SAFETY: `spare` is ours and was never published.
                    unsafe { self.pool.put(spare) };
                }
                return Err(());
            }
            let index = word >> 1;
            let offset = index % LAP;
            if offset == BLOCK as u64 {
                Self::pause(&mut spins);
                // ORDERING: Acquire, as above.
                word = self.tail.index.load(Ordering::Acquire);
                continue;
            }
            if offset + 1 == BLOCK as u64 && spare.is_null() {
                spare = self.pool.take();
            }
            // ORDERING: Acquire pairs with the Release store of the block by
            // the producer that installed it.
            let block = self.tail.block.load(Ordering::Acquire);
            // ORDERING: SeqCst: the claim is the notifier half of the race
            // with a consumer that registers and re-reads this word.
            match self.tail.index.compare_exchange_weak(
                word,
                word + 2,
                Ordering::SeqCst,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if offset + 1 == BLOCK as u64 {
                        // SAFETY: the claim succeeded, so `block` is the
                        // current tail block (module docs) and stays alive
                        // until this slot is read.
                        unsafe { (*block).next.store(spare, Ordering::Release) };
                        // ORDERING: Release pairs with the Acquire loads of
                        // the block in `claim`.
                        self.tail.block.store(spare, Ordering::Release);
                        // ORDERING: Release moves the word off the sentinel,
                        // publishing the block store above.
                        self.tail.index.fetch_add(2, Ordering::Release);
                    } else if !spare.is_null() {
                        // SAFETY: `spare` is ours and was never published.
                        unsafe { self.pool.put(spare) };
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

    /// Writes `value` into the slot for `index` in `block` and publishes it.
    ///
    /// # Safety
    ///
    /// The caller claimed `index`, which lives in `block`.
    unsafe fn write(block: *mut Block<T, P::Stamp>, index: u64, value: T) {
        // SAFETY: the claimed slot belongs to the caller until published.
        let slot = unsafe { &(*block).slots[(index % LAP) as usize] };
        // SAFETY: as above; the slot holds no value.
        unsafe { slot.write(value) };
        if P::MANY {
            // A release store (`SeqCst` for a large value), paired with the
            // consumer's load in `front` or `take_front`: see `Slot::publish`.
            slot.publish(readable(index));
        }
    }

    /// Single producer: claims and writes without atomics on the index, then
    /// publishes with a `SeqCst` store.
    ///
    /// # Safety
    ///
    /// Single producer.
    #[inline]
    unsafe fn push_one(&self, value: T) -> Result<(), T> {
        // ORDERING: Relaxed; the producer reads its own state.
        let index = self.tail.index.load(Ordering::Relaxed);
        let block = self.tail.block.load(Ordering::Relaxed);
        let next = step(index);
        if next != index + 1 {
            // SAFETY: the single producer, at the last slot of `block`.
            unsafe { self.link_next_block(block) };
        }
        // SAFETY: the single producer.
        let fenced = unsafe { self.fence.fenced(next) };
        // SAFETY: the single producer owns `index`, in `block`.
        unsafe { Self::write(block, index, value) };
        // Releases the value (and the link) to the consumer; when fenced,
        // the notifier half of the race with a waiting consumer and with a
        // receiver-side close.
        if fenced {
            self.tail.index.store_sc(next);
        } else {
            // ORDERING: Release pairs with the consumer's acquiring (SeqCst)
            // load of the index; waiters are covered by their barrier.
            self.tail.index.store_at(next, Ordering::Release);
            compiler_fence(Ordering::SeqCst);
        }
        if self.boundary.is_closed() {
            // SAFETY: the single producer, just after publishing `index`.
            return unsafe { self.settle_push(block, index, next) };
        }
        Ok(())
    }

    /// Single producer, after publishing the value at `index` (in `block`)
    /// on a closing channel: settles the boundary and, when it excludes the
    /// value, takes the value back. Out of line, as `link_next_block`.
    ///
    /// # Safety
    ///
    /// Single producer; `index` was just written and published, `next` is
    /// the index after it.
    #[cold]
    #[inline(never)]
    unsafe fn settle_push(
        &self,
        block: *mut Block<T, P::Stamp>,
        index: u64,
        next: u64,
    ) -> Result<(), T> {
        if self.boundary.settle(next) > index {
            return Ok(());
        }
        // Outside the boundary: take it back (nobody reads past it).
        // ORDERING: Relaxed; only this producer reads its own state.
        self.tail.index.store_at(index, Ordering::Relaxed);
        self.tail.block.store(block, Ordering::Relaxed);
        // SAFETY: written by the caller, and outside the boundary.
        Err(unsafe { (*block).slots[(index % LAP) as usize].read() })
    }

    /// Single producer, at the last slot of its tail `block`: installs the
    /// next block before the value (and the index past it) is published.
    /// Out of line, so that the common push stays small enough to inline.
    ///
    /// # Safety
    ///
    /// Single producer; `block` is the tail block.
    #[cold]
    #[inline(never)]
    unsafe fn link_next_block(&self, block: *mut Block<T, P::Stamp>) {
        let fresh = self.pool.take();
        // SAFETY: the tail block lives until its last slot is read.
        unsafe { (*block).next.store(fresh, Ordering::Release) };
        // ORDERING: Relaxed; only this producer reads `tail.block`.
        self.tail.block.store(fresh, Ordering::Relaxed);
    }

    /// Single consumer of a single producer: the end of what may be read.
    ///
    /// # Safety
    ///
    /// Single consumer.
    unsafe fn readable_end(&self, head: u64) -> u64 {
        // SAFETY: only the single consumer touches `cache`.
        let cached = self.head.cache.with(|cache| unsafe { *cache });
        if head < cached {
            return cached;
        }
        // ORDERING: SeqCst: acquires the producer's writes, and is the
        // waiting consumer's re-check paired with its SeqCst publish.
        // The tail, then the close flag. No flag: the closer has not stored
        // it yet, so the tail it will load is at least ours, and so is any
        // boundary. A flag: the tail is loaded again, after it, and includes
        // every publish whose producer missed the flag, so it is safe to
        // settle with (`Boundary`); the first one is not (its producer may
        // since have published, missed the flag and returned `Ok`).
        let mut tail = self.tail.index.load_sc();
        if self.boundary.is_closed() {
            tail = self.tail.index.load_sc();
            tail = tail.min(self.boundary.settle(tail));
        }
        // SAFETY: as above.
        self.head.cache.with_mut(|cache| unsafe { *cache = tail });
        tail
    }

    /// Single consumer: moves the head past `index` (which it just read),
    /// recycling the block when leaving it.
    ///
    /// # Safety
    ///
    /// Single consumer; `index` is the head and lives in `block`.
    unsafe fn advance_one(&self, block: *mut Block<T, P::Stamp>, index: u64) {
        let next = step(index);
        if next != index + 1 {
            // ORDERING: Acquire pairs with the producer's Release link,
            // made before it published this last slot.
            // SAFETY: the head block is alive until we recycle it below.
            let following = unsafe { (*block).next.load(Ordering::Acquire) };
            // ORDERING: Relaxed; only this consumer reads `head.block`.
            self.head.block.store(following, Ordering::Relaxed);
            // SAFETY: every slot of `block` has been read by this (only)
            // consumer, and producers never dereference a block they have
            // moved past.
            unsafe { self.pool.put(block) };
        }
        // ORDERING: Relaxed; the consumer's own index, read by queries.
        self.head.index.store_at(next, Ordering::Relaxed);
    }

    /// Many consumers: claims the next index that a producer has claimed.
    fn claim_head(&self) -> Result<(u64, *mut Block<T, P::Stamp>), PopError> {
        let mut spins = 0;
        // ORDERING: Acquire pairs with the Release of the consumer that moved
        // the head off a sentinel, so the block load sees its block.
        let mut index = self.head.index.load(Ordering::Acquire);
        loop {
            if index % LAP == BLOCK as u64 {
                Self::pause(&mut spins);
                // ORDERING: Acquire, as above.
                index = self.head.index.load(Ordering::Acquire);
                continue;
            }
            // ORDERING: SeqCst: the waiting consumer's re-check, paired with
            // the producers' SeqCst claims.
            let word = self.tail.index.load_sc();
            // A sentinel tail sorts below the next block's first index, so
            // `<=` also covers a tail that is still moving to that block.
            if Self::tail_index(word) <= index {
                let closed = if P::MANY {
                    word & CLOSED != 0
                } else {
                    self.boundary.is_closed()
                };
                return Err(if closed {
                    PopError::Closed
                } else {
                    PopError::Empty
                });
            }
            // ORDERING: Acquire, as for the tail block in `claim`.
            let block = self.head.block.load(Ordering::Acquire);
            // ORDERING: SeqCst: the claim orders this consumer against the
            // others; Acquire on failure for the reload.
            match self.head.index.compare_exchange_weak(
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

    /// Many consumers, holding the sentinel (last) slot of `block`: waits
    /// for the next block's link and moves the head onto it.
    ///
    /// # Safety
    ///
    /// The caller claimed the last index of `block`.
    #[cold]
    #[inline(never)]
    unsafe fn leave_block(&self, block: *mut Block<T, P::Stamp>) {
        // We hold the sentinel: the producer of this slot links the next
        // block right after its claim.
        let mut spins = 0;
        let following = loop {
            // SAFETY: the block lives until its last slot (ours) is read.
            // ORDERING: Acquire pairs with the producer's Release link.
            let next = unsafe { (*block).next.load(Ordering::Acquire) };
            if !next.is_null() {
                break next;
            }
            Self::pause(&mut spins);
        };
        // ORDERING: Release pairs with the Acquire loads in `claim_head`.
        self.head.block.store(following, Ordering::Release);
        // ORDERING: Release moves the head off the sentinel.
        self.head.index.fetch_add(1, Ordering::Release);
    }

    /// Many consumers, after reading the last slot of `block` (whose first
    /// index is `first`): waits for every other reader of the block, then
    /// puts it in the pool.
    ///
    /// # Safety
    ///
    /// The caller read the last slot of `block`.
    #[cold]
    #[inline(never)]
    unsafe fn retire_block(&self, block: *mut Block<T, P::Stamp>, first: u64) {
        // SAFETY: the block lives until we put it in the pool below.
        let slots = unsafe { &(*block).slots };
        for (k, other) in (0..).zip(slots) {
            let mut spins = 0;
            // ORDERING: Acquire pairs with each reader's Release mark, so
            // their reads happen before the block is reused.
            while other.stamp.load(Ordering::Acquire) != consumed(first + k) {
                Self::pause(&mut spins);
            }
        }
        // SAFETY: every slot has been read; producers and consumers never
        // dereference a block the ends have moved past.
        unsafe { self.pool.put(block) };
    }
}

// SAFETY: see the module docs; every claimed index is written once and read
// once, indices grow per producer, claims before CLOSED (or the boundary) are
// drained, and the condition changes waiters wait for are SeqCst.
unsafe impl<T, P: Arity, C: Arity> Storage for List<T, P, C>
where
    (P, C): Topology,
{
    type Item = T;
    type Front = ListFront<T, P::Stamp>;
    type Senders = P;
    type Receivers = C;
    const CAPACITY: Option<usize> = None;
    // Many consumers claim an index first and wait for its value in
    // `take_front`: only a single consumer reports `Busy`.
    const NOTIFIES_BUSY: bool = P::MANY && is_large::<T>();

    fn new() -> Self {
        let first = Box::into_raw(Block::new());
        let end = |block| End {
            index: AtomicU64::new(0),
            block: AtomicPtr::new(block),
            cache: UnsafeCell::new(0),
        };
        Self {
            tail: CachePadded::new(end(first)),
            head: CachePadded::new(end(first)),
            boundary: CachePadded::new(Boundary::new()),
            fence: CachePadded::new(Fence::new()),
            pool: Pool::new(),
            _arity: PhantomData,
        }
    }

    #[inline]
    unsafe fn try_push(&self, value: T) -> Result<(), PushError<T>> {
        if !P::MANY {
            if self.boundary.is_closed() {
                return Err(PushError::Closed(value));
            }
            // SAFETY: single producer (caller's contract).
            return unsafe { self.push_one(value) }.map_err(PushError::Closed);
        }
        match self.claim() {
            Ok((index, block)) => {
                // SAFETY: `index` was claimed in `block`.
                unsafe { Self::write(block, index, value) };
                Ok(())
            }
            Err(()) => Err(PushError::Closed(value)),
        }
    }

    #[inline]
    unsafe fn front(&self) -> Result<ListFront<T, P::Stamp>, PopError> {
        if C::MANY {
            let (index, block) = self.claim_head()?;
            if (index % LAP) + 1 == BLOCK as u64 {
                // The block crossing is out of line (`leave_block`,
                // `retire_block`), so that the common read inlines.
                // SAFETY: we claimed the sentinel `index` of `block`.
                unsafe { self.leave_block(block) };
            }
            // SAFETY: `block` is alive: its slot `index % LAP` is ours.
            let slot = unsafe { &raw const (*block).slots[(index % LAP) as usize] };
            return Ok(ListFront { index, block, slot });
        }
        // ORDERING: Relaxed; the single consumer reads its own state.
        let index = self.head.index.load(Ordering::Relaxed);
        let block = self.head.block.load(Ordering::Relaxed);
        // SAFETY: the head block is alive while the consumer is on it.
        let slot = unsafe { &raw const (*block).slots[(index % LAP) as usize] };
        if P::MANY {
            // SAFETY: as above.
            let slot = unsafe { &*slot };
            // An acquire load (`SeqCst` for a large value, the re-check of a
            // consumer that registered), paired with the producer's store in
            // `write`.
            if slot.published() != readable(index) {
                // ORDERING: SeqCst: the waiting consumer's re-check, paired
                // with the producers' SeqCst claims.
                let word = self.tail.index.load_sc();
                return Err(if word >> 1 > index {
                    PopError::Busy
                } else if word & CLOSED != 0 {
                    PopError::Closed
                } else {
                    PopError::Empty
                });
            }
        } else {
            // SAFETY: single consumer (caller's contract).
            if index >= unsafe { self.readable_end(index) } {
                let closed = self.boundary.frozen().is_some_and(|end| index >= end);
                return Err(if closed {
                    PopError::Closed
                } else {
                    PopError::Empty
                });
            }
        }
        Ok(ListFront { index, block, slot })
    }

    #[inline]
    unsafe fn take_front(&self, front: &mut ListFront<T, P::Stamp>) -> T {
        let index = front.index;
        // SAFETY: the front's block stays alive until the front is released
        // (a single consumer recycles it in `advance_one`, many consumers in
        // `retire_block`, both after the read); `slot` is in it.
        let slot = unsafe { &*front.slot };
        if C::MANY {
            // A claimed index may still be being written.
            let mut spins = 0;
            // ORDERING: Acquire pairs with the producer's Release publish.
            while slot.stamp.load(Ordering::Acquire) != readable(index) {
                Self::pause(&mut spins);
            }
        }
        // SAFETY: published (checked in `front`, or just above) and owned by
        // this consumer: the only one, or the winner of the claim.
        unsafe { slot.read() }
    }

    #[inline]
    unsafe fn release_front(&self, front: ListFront<T, P::Stamp>) {
        let ListFront { index, block, slot } = front;
        if C::MANY {
            let offset = index % LAP;
            // SAFETY: as in `take_front`.
            let slot = unsafe { &*slot };
            // ORDERING: Release pairs with the retiring consumer's Acquire
            // check.
            slot.stamp.store(consumed(index), Ordering::Release);
            if offset + 1 == BLOCK as u64 {
                // SAFETY: we read the last slot of `block`, whose first index
                // is `index - offset`.
                unsafe { self.retire_block(block, index - offset) };
            }
        } else {
            // SAFETY: single consumer; `index` is the head, in `block`.
            unsafe { self.advance_one(block, index) };
        }
    }

    unsafe fn peek(&self) -> Option<&T> {
        // ORDERING: Relaxed; the single consumer reads its own state.
        let index = self.head.index.load(Ordering::Relaxed);
        let block = self.head.block.load(Ordering::Relaxed);
        // SAFETY: the head block is alive while the consumer is on it.
        let slot = unsafe { &(*block).slots[(index % LAP) as usize] };
        let ready = if P::MANY {
            // ORDERING: Acquire pairs with the producer's publish.
            slot.stamp.load(Ordering::Acquire) == readable(index)
        } else {
            // SAFETY: single consumer.
            index < unsafe { self.readable_end(index) }
        };
        // SAFETY: published, and kept in place while the reference lives
        // (caller's contract).
        ready.then(|| unsafe { slot.get() })
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        if !P::MANY {
            // ORDERING: SeqCst: the closer's re-check (see `Boundary`).
            let published = || self.tail.index.load_sc();
            return self
                .boundary
                .close_single(from_producer, &self.fence, published);
        }
        // ORDERING: SeqCst: freezes the boundary in the claim word.
        self.tail.index.fetch_or(CLOSED, Ordering::SeqCst) & CLOSED == 0
    }

    fn is_closed(&self) -> bool {
        if !P::MANY {
            return self.boundary.is_closed();
        }
        // ORDERING: SeqCst; a query.
        self.tail.index.load_sc() & CLOSED != 0
    }

    fn head_position(&self) -> u64 {
        // ORDERING: SeqCst; a query.
        position(self.head.index.load_sc())
    }

    #[allow(
        clippy::cast_possible_truncation,
        reason = "every value counted sits in an allocated block, so the count fits in `usize`"
    )]
    fn len(&self) -> usize {
        // ORDERING: SeqCst; a query.
        let head = position(self.head.index.load_sc());
        // ORDERING: SeqCst; a query.
        let mut tail = Self::tail_index(self.tail.index.load_sc());
        if !P::MANY {
            if let Some(end) = self.boundary.frozen() {
                tail = tail.min(end);
            }
        }
        position(tail).saturating_sub(head) as usize
    }

    fn is_full(&self) -> bool {
        false
    }

    fn before_recv_wait(&self) {
        if !P::MANY {
            self.fence.before_wait();
        }
    }

    unsafe fn after_push(&self, waiting: impl Fn() -> bool) {
        if !P::MANY {
            // SAFETY: the single producer (caller's contract).
            unsafe {
                self.fence.fenced_publish(waiting, || {
                    // ORDERING: Relaxed; the producer reads its own index.
                    self.tail.index.load(Ordering::Relaxed)
                });
            }
        }
    }

    unsafe fn try_acquire(&self, _n: usize) -> Result<(), PushError<()>> {
        if self.is_closed() {
            Err(PushError::Closed(()))
        } else {
            Ok(())
        }
    }

    fn grant(&self, n: usize) -> usize {
        n
    }

    unsafe fn push_reserved(&self, value: T) -> Result<(), T> {
        // SAFETY: the caller's contract is that of `try_push`.
        unsafe { self.try_push(value) }.map_err(|err| match err {
            PushError::Full(value) | PushError::Closed(value) => value,
        })
    }

    unsafe fn release(&self, _n: usize) {}

    fn set_waiting(&self, _waiting: bool) {}

    unsafe fn drain(&self) {
        // SAFETY: the last consumer (caller's contract).
        drop_each(|| unsafe { self.take_queued() });
    }
}

impl<T, P: Arity, C: Arity> List<T, P, C>
where
    (P, C): Topology,
{
    /// The last consumer's step: the next value still queued (waiting out a
    /// push in flight), with the head moved past it.
    ///
    /// # Safety
    ///
    /// No other consumer exists.
    unsafe fn take_queued(&self) -> Option<T> {
        loop {
            // SAFETY: the only consumer, whatever `C` says.
            match unsafe { self.try_pop() } {
                Ok(value) => return Some(value),
                Err(PopError::Busy) => spin_hint(),
                Err(PopError::Empty | PopError::Closed) => return None,
            }
        }
    }
}

impl<T, P: Arity, C: Arity> Drop for List<T, P, C>
where
    (P, C): Topology,
{
    fn drop(&mut self) {
        // Every endpoint is gone, so nothing is in flight: drop the values
        // (blocks the head leaves go to the pool), then the blocks left.
        // SAFETY: `&mut self`: the only consumer.
        drop_each(|| unsafe { self.take_queued() });
        // ORDERING: Relaxed; `&mut self`.
        let mut block = self.head.block.load(Ordering::Relaxed);
        while !block.is_null() {
            // SAFETY: we own every block now; each came from a `Box`.
            let next = unsafe { (*block).next.load(Ordering::Relaxed) };
            // SAFETY: as above; `block` is not in the pool (the pool only
            // holds blocks the head has left).
            drop(unsafe { Box::from_raw(block) });
            block = next;
        }
    }
}

impl<T, P: Arity, C: Arity> std::fmt::Debug for List<T, P, C>
where
    (P, C): Topology,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("List").finish_non_exhaustive()
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use super::*;
    use crate::arity::{Many, One};
    use std::sync::Arc;

    fn in_order<P: Arity, C: Arity>(n: u64)
    where
        (P, C): Topology,
    {
        let list = Arc::new(List::<u64, P, C>::new());
        let producer = {
            let list = Arc::clone(&list);
            std::thread::spawn(move || {
                for i in 0..n {
                    // SAFETY: the only producer.
                    unsafe { list.try_push(i) }.unwrap();
                }
            })
        };
        let mut next = 0;
        while next < n {
            // SAFETY: the only consumer.
            match unsafe { list.try_pop() } {
                Ok(value) => {
                    assert_eq!(value, next);
                    next += 1;
                }
                Err(_) => std::thread::yield_now(),
            }
        }
        producer.join().unwrap();
    }

    #[test]
    fn every_arity_crosses_blocks_in_order_across_threads() {
        let n = if cfg!(miri) { 100 } else { 20_000 };
        in_order::<One, One>(n);
        in_order::<Many, One>(n);
        in_order::<Many, Many>(n);
    }

    #[test]
    fn a_drained_burst_leaves_at_most_the_pool_and_the_current_block() {
        let list = List::<u64, Many, One>::new();
        let n = if cfg!(miri) { 200 } else { 100_000 };
        // SAFETY: single-threaded.
        unsafe {
            for i in 0..n {
                list.try_push(i).unwrap();
            }
            for i in 0..n {
                assert_eq!(list.try_pop(), Ok(i));
            }
        }
        let pooled = list
            .pool
            .cells
            .iter()
            .filter(|c| !c.load(Ordering::Relaxed).is_null())
            .count();
        assert!(pooled <= POOL);
        assert_eq!(list.len(), 0);
    }

    #[test]
    fn dropping_a_list_drops_what_it_holds_once() {
        let live = Arc::new(());
        {
            let list = List::<Arc<()>, Many, Many>::new();
            let spsc = List::<Arc<()>, One, One>::new();
            // SAFETY: single-threaded.
            unsafe {
                for _ in 0..=(3 * BLOCK) {
                    list.try_push(Arc::clone(&live)).unwrap();
                    spsc.try_push(Arc::clone(&live)).unwrap();
                }
                drop(list.try_pop());
                drop(spsc.try_pop());
            }
        }
        assert_eq!(Arc::strong_count(&live), 1);
    }

    fn close_keeps_what_was_sent<P: Arity, C: Arity>()
    where
        (P, C): Topology,
    {
        let list = List::<u8, P, C>::new();
        // SAFETY: single-threaded.
        unsafe {
            list.try_push(1).unwrap();
            assert!(list.close(false));
            assert_eq!(list.try_push(2), Err(PushError::Closed(2)));
            assert_eq!(list.try_pop(), Ok(1));
            assert_eq!(list.try_pop(), Err(PopError::Closed));
        }
    }

    #[test]
    fn closing_keeps_values_sent_before_and_refuses_later_ones() {
        close_keeps_what_was_sent::<One, One>();
        close_keeps_what_was_sent::<Many, One>();
        close_keeps_what_was_sent::<Many, Many>();
    }

    #[test]
    fn draining_drops_every_queued_value() {
        let live = Arc::new(());
        let list = List::<Arc<()>, Many, One>::new();
        // SAFETY: single-threaded; closed before draining.
        unsafe {
            for _ in 0..(2 * BLOCK + 3) {
                list.try_push(Arc::clone(&live)).unwrap();
            }
            list.close(false);
            list.drain();
        }
        assert_eq!(Arc::strong_count(&live), 1);
    }

    #[test]
    fn peek_sees_the_head_across_a_block_boundary() {
        let list = List::<usize, One, One>::new();
        // SAFETY: single-threaded.
        unsafe {
            for i in 0..=BLOCK {
                list.try_push(i).unwrap();
            }
            for i in 0..=BLOCK {
                assert_eq!(list.peek(), Some(&i));
                assert_eq!(list.try_pop(), Ok(i));
            }
            assert_eq!(list.peek(), None);
        }
    }
}
