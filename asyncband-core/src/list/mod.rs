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
//!
//! # Files
//!
//! The cursors are types, one per arity of each end, and the list is
//! generic over a producers' end and a consumers' end; [`ListTopology`]
//! picks them for the supported pairs of arities, and [`List`] names the
//! result.
//!
//! - `buffer.rs`: what every list shares: the blocks, the pool, the index
//!   arithmetic, and [`Unbounded`], which holds the blocks and the two ends
//!   and implements [`Storage`] by handing each method to its end.
//! - `tail.rs`: the producers' end: [`OneTail`] (its own index, its fence
//!   and a `Boundary` for closing) and [`ManyTail`] (the claim word with
//!   the close bit).
//! - `head.rs`: the consumers' end: [`OneHead`] (its own index and, with a
//!   single producer, its copy of the producer's) and [`ManyHead`] (the
//!   consumers' claim word).

use crate::arity::{Many, One, Topology};
#[cfg(doc)]
use crate::storage::Storage;

mod buffer;
mod head;
mod tail;
#[cfg(all(test, not(asyncband_loom)))]
mod tests;

pub use buffer::{BLOCK, ListFront, POOL, Unbounded};
pub use head::{ManyHead, OneHead, TailCache};
pub use tail::{ManyTail, OneTail};

/// The ends of a list for a supported pair of producer and consumer
/// arities, `(Senders, Receivers)`: `(One, One)`, `(Many, One)` and
/// `(Many, Many)` (sealed through [`Topology`]). A single consumer of a
/// single producer keeps a copy of the producer's index; a single consumer
/// of many producers reads the slot stamps instead.
pub trait ListTopology: Topology {
    /// The producers' end.
    type Tail<T>: buffer::Tail<T>;
    /// The consumers' end, fed by [`ListTopology::Tail`].
    type Head<T>: buffer::Head<T, Self::Tail<T>>;
}

impl ListTopology for (One, One) {
    type Tail<T> = OneTail<T>;
    type Head<T> = OneHead<T, OneTail<T>>;
}

impl ListTopology for (Many, One) {
    type Tail<T> = ManyTail<T>;
    type Head<T> = OneHead<T, ManyTail<T>>;
}

impl ListTopology for (Many, Many) {
    type Tail<T> = ManyTail<T>;
    type Head<T> = ManyHead<T>;
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
///
/// A single producer with many consumers is not a list:
///
/// ```compile_fail
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::list::List;
/// use asyncband_core::storage::Storage;
///
/// let list = List::<u32, One, Many>::new();
/// ```
pub type List<T, P, C> =
    Unbounded<T, <(P, C) as ListTopology>::Tail<T>, <(P, C) as ListTopology>::Head<T>>;
