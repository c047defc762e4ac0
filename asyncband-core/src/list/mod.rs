//! Unbounded storage: a linked list of blocks of slots. `buffer.rs` has the
//! blocks, the pool, the index arithmetic and the ends' traits; `tail.rs`
//! the producers' ends; `head.rs` the consumers'.
//!
//! Both ends walk an *index* that counts `LAP = BLOCK + 1` values per block:
//! offsets `0..BLOCK` name its slots, and offset `BLOCK` is a sentinel (the
//! end is moving to the next block). Slot stamps carry the index, so a
//! recycled block needs no reset.
//!
//! Many producers claim with one compare-exchange on a claim word
//! (`index << 2 | POLLING | CLOSED`). On a sentinel they wait for the
//! producer of the last slot to link the next block (taken *before* that
//! claim) and move the word on; as the tail block changes only then, a
//! successful claim knows the block it loaded after the word is right, and
//! no producer dereferences a block before its claim succeeds, so retired
//! blocks can be freed. A single producer owns its index, publishes it
//! through its fence, and closes through a `Boundary`.
//!
//! A single consumer checks the slot before taking it, with no
//! read-modify-write. Finding it unwritten, it reads the claim word to tell
//! "empty" from "claimed, being written", until its first `try_recv` finds
//! the list empty and sets `POLLING`: from then on each producer marks the
//! claimed, unwritten slots of its block before publishing its own, so a
//! `try_recv` reads "empty" from an unmarked slot and an unlinked next
//! block, and leaves the producers' line to them. Many consumers compare
//! the claim word with the producers' index (touching no block before a
//! claim), claim with one compare-exchange, then wait for the value if it
//! is still being written; the one that takes a block's last slot moves the
//! head on and recycles the block once every slot has been read. Left
//! blocks go to a pool of [`POOL`] spares that producers draw from; the
//! rest are freed.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use crossbeam_utils::CachePadded;

use crate::arity::{Arity, Many, One, Topology};
use crate::storage::{PopError, PushError, Storage, drop_each};
use crate::sync::Ordering;
use crate::wait::{Park, Wait, spin_hint};

mod buffer;
mod head;
mod tail;

pub use buffer::{BLOCK, ListFront, POOL};
use buffer::{Block, Head, Pool, Tail, position};
pub use head::{ManyHead, MarksFrom, OneHead, OneHeadCursor, TailCache};
pub use tail::{ManyTail, OneTail, OneTailCursor};

/// The ends of a list for a supported pair of producer and consumer
/// arities, `(Senders, Receivers)` (sealed through [`Topology`]).
pub trait ListTopology: Topology {
    /// The producers' end, under wait policy `W`.
    type Tail<T, W: Wait>: buffer::Tail<T>;
    /// The consumers' end, fed by [`ListTopology::Tail`].
    type Head<T, W: Wait>: buffer::Head<T, Self::Tail<T, W>>;
}

impl ListTopology for (One, One) {
    type Tail<T, W: Wait> = OneTail<T, W>;
    type Head<T, W: Wait> = OneHead<T, OneTail<T, W>>;
}

impl ListTopology for (Many, One) {
    type Tail<T, W: Wait> = ManyTail<T, W, One>;
    type Head<T, W: Wait> = OneHead<T, ManyTail<T, W, One>>;
}

impl ListTopology for (Many, Many) {
    type Tail<T, W: Wait> = ManyTail<T, W, Many>;
    type Head<T, W: Wait> = ManyHead<T, W>;
}

/// Unbounded storage for producer arity `P`, consumer arity `C` and wait
/// policy `W`. One producer with many consumers has no list:
///
/// ```compile_fail
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, rx) = endpoint::channel::<List<u32, One, Many>>();
/// ```
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, mut rx) = endpoint::channel::<List<u32, Many, One>>();
/// for i in 0..100 {
///     tx.shared().try_send(i).unwrap();
/// }
/// assert!((0..100).all(|i| rx.by_ref().try_recv() == Ok(i)));
/// ```
pub struct List<T, P: Arity, C: Arity, W: Wait = Park>
where
    (P, C): ListTopology,
{
    /// Written by producers, on lines of its own.
    tail: CachePadded<TailOf<T, P, C, W>>,
    /// Written by consumers, on lines of its own.
    head: CachePadded<<(P, C) as ListTopology>::Head<T, W>>,
    pool: Pool<T, StampOf<T, P, C, W>>,
}

type TailOf<T, P, C, W> = <(P, C) as ListTopology>::Tail<T, W>;
type StampOf<T, P, C, W> = <TailOf<T, P, C, W> as Tail<T>>::Stamp;

// SAFETY: values move between threads through the list, so `T: Send` is
// required and enough; shared cells follow the module docs' protocol.
unsafe impl<T: Send, P: Arity, C: Arity, W: Wait> Send for List<T, P, C, W> where
    (P, C): ListTopology
{
}
// SAFETY: as for `Send`.
unsafe impl<T: Send, P: Arity, C: Arity, W: Wait> Sync for List<T, P, C, W> where
    (P, C): ListTopology
{
}

// SAFETY: see the module docs; every claimed index is written once and read
// once, indices grow per producer, claims before CLOSED (or the boundary) are
// drained, and the condition changes waiters wait for are SeqCst.
unsafe impl<T, P: Arity, C: Arity, W: Wait> Storage for List<T, P, C, W>
where
    (P, C): ListTopology,
{
    type Item = T;
    type Front = ListFront<T, StampOf<T, P, C, W>>;
    type Cursor = <<(P, C) as ListTopology>::Head<T, W> as Head<T, TailOf<T, P, C, W>>>::Cursor;
    type ProducerCursor = <TailOf<T, P, C, W> as Tail<T>>::Cursor;
    type Senders = P;
    type Receivers = C;
    type Wait = W;
    const CAPACITY: Option<usize> = None;

    fn new() -> Self {
        let first = Box::into_raw(Block::new());
        Self {
            tail: CachePadded::new(Tail::new(first)),
            head: CachePadded::new(Head::new(first)),
            pool: Pool::new(),
        }
    }

    fn cursor(&self) -> Self::Cursor {
        self.head.cursor()
    }

    fn producer_cursor(&self) -> Self::ProducerCursor {
        self.tail.cursor()
    }

    #[inline(always)]
    unsafe fn try_push(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: T,
    ) -> Result<(), PushError<T>> {
        // SAFETY: the caller's contract is that of `push`.
        unsafe { self.tail.push(cursor, &self.pool, value) }.map_err(PushError::Closed)
    }

    // The default's steps, so that the whole push inlines into the send.
    #[inline(always)]
    unsafe fn try_push_from(
        &self,
        cursor: &mut Self::ProducerCursor,
        value: &mut Option<T>,
    ) -> Result<(), PushError<()>> {
        let item = value.take().expect("a value to push");
        // SAFETY: the caller's contract is that of `push`.
        unsafe { self.tail.push(cursor, &self.pool, item) }.map_err(|item| {
            *value = Some(item);
            PushError::Closed(())
        })
    }

    #[inline(always)]
    unsafe fn front(&self, cursor: &mut Self::Cursor) -> Result<Self::Front, PopError> {
        // SAFETY: the caller's contract is that of `front`.
        unsafe { self.head.front(cursor, &self.tail) }
    }

    #[inline(always)]
    unsafe fn try_front(
        &self,
        cursor: &mut Self::Cursor,
        waiting: bool,
    ) -> Result<Self::Front, PopError> {
        // SAFETY: the caller's contract is that of `try_front`.
        unsafe { self.head.try_front(cursor, &self.tail, waiting) }
    }

    #[inline(always)]
    unsafe fn take_front(&self, front: &mut Self::Front) -> T {
        // SAFETY: the caller's contract is that of `take_front`.
        unsafe { self.head.take_front(front) }
    }

    #[inline(always)]
    unsafe fn release_front(&self, cursor: &mut Self::Cursor, front: Self::Front) {
        // SAFETY: the caller's contract is that of `release_front`.
        unsafe { self.head.release_front(cursor, &self.pool, front) }
    }

    unsafe fn peek<'a>(&'a self, cursor: &'a mut Self::Cursor) -> Option<&'a T> {
        // SAFETY: the caller's contract is that of `peek`.
        unsafe { self.head.peek(cursor, &self.tail) }
    }

    unsafe fn close(&self, from_producer: bool) -> bool {
        // SAFETY: the caller's contract is that of `close`.
        let first = unsafe { self.tail.close(from_producer) };
        self.head.after_close();
        first
    }

    fn is_closed(&self) -> bool {
        self.tail.is_closed()
    }

    fn head_position(&self) -> u64 {
        position(self.head.index())
    }

    #[allow(clippy::cast_possible_truncation, reason = "values fit in memory")]
    fn len(&self) -> usize {
        position(self.tail.end()).saturating_sub(self.head_position()) as usize
    }

    fn is_full(&self) -> bool {
        false
    }

    fn before_recv_wait(&self) {
        self.tail.before_recv_wait();
    }

    fn watch_writes(&self) {
        self.tail.watch_writes();
    }

    unsafe fn after_push(&self, cursor: &mut Self::ProducerCursor, waiting: impl Fn() -> bool) {
        // SAFETY: the caller's contract is that of `after_push`.
        unsafe { self.tail.after_push(cursor, waiting) };
    }

    unsafe fn try_acquire(&self, _n: usize) -> Result<(), PushError<()>> {
        if self.is_closed() {
            Err(PushError::Closed(()))
        } else {
            Ok(())
        }
    }

    unsafe fn grant(&self, n: usize) -> usize {
        n
    }

    unsafe fn push_reserved(&self, cursor: &mut Self::ProducerCursor, value: T) -> Result<(), T> {
        // SAFETY: the caller's contract is that of `push`.
        unsafe { self.tail.push(cursor, &self.pool, value) }
    }

    unsafe fn release(&self, _n: usize) {}

    unsafe fn set_waiting(&self, _waiting: bool) {}

    unsafe fn drain(&self) {
        // SAFETY: the last consumer (caller's contract).
        unsafe { self.drop_queued() };
    }
}

impl<T, P: Arity, C: Arity, W: Wait> List<T, P, C, W>
where
    (P, C): ListTopology,
{
    /// Drops every value still queued, waiting out a push in flight.
    ///
    /// # Safety
    ///
    /// No other consumer exists, or will.
    unsafe fn drop_queued(&self) {
        let mut cursor = self.cursor();
        drop_each(|| {
            loop {
                // SAFETY: the only consumer, with the only cursor in use.
                match unsafe { self.try_pop(&mut cursor) } {
                    Ok(value) => return Some(value),
                    Err(PopError::Busy | PopError::Writing) => spin_hint(),
                    Err(PopError::Empty | PopError::Closed) => return None,
                }
            }
        });
    }
}

impl<T, P: Arity, C: Arity, W: Wait> Drop for List<T, P, C, W>
where
    (P, C): ListTopology,
{
    fn drop(&mut self) {
        // The values, then the blocks, also if a destructor panics.
        let _blocks = FreeBlocks(self);
        // SAFETY: `&mut self`: the only consumer.
        unsafe { self.drop_queued() };
    }
}

/// Frees the blocks from a dropped list's head on, when dropped.
struct FreeBlocks<'a, T, P: Arity, C: Arity, W: Wait>(&'a List<T, P, C, W>)
where
    (P, C): ListTopology;

impl<T, P: Arity, C: Arity, W: Wait> Drop for FreeBlocks<'_, T, P, C, W>
where
    (P, C): ListTopology,
{
    fn drop(&mut self) {
        let mut block = self.0.head.block();
        while !block.is_null() {
            // SAFETY: the list is being dropped (`&mut`): we own every block,
            // each from a `Box` and drained.
            // ORDERING: Relaxed; as above.
            let next = unsafe { (*block).next.load(Ordering::Relaxed) };
            // SAFETY: as above; the pool holds only blocks the head left.
            drop(unsafe { Box::from_raw(block) });
            block = next;
        }
    }
}

opaque_debug!(impl[T, P: Arity, C: Arity, W: Wait] List<T, P, C, W> where [(P, C): ListTopology]);

#[cfg(all(test, not(asyncband_loom)))]
mod tests;
