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
//! [`Ring`] names the ring of a pair of arities; [`RingTopology`] maps each
//! supported pair to its cursors, so a pair without cursors (one producer,
//! many consumers) has no ring.

use crate::arity::{Many, One, Topology};

mod buffer;
mod indexed;
mod stamped;

pub use buffer::{Buffer, Cursors, MAX_CAPACITY, RingFront};
pub use indexed::Indexed;
pub use stamped::{Claiming, Consumers, ManyConsumers, OneConsumer};

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
/// `C`: the [`Buffer`] with the cursors of that pair.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::ring::Ring;
/// use asyncband_core::storage::{PopError, PushError, Storage};
///
/// let ring = Ring::<u32, 2, One, One>::new();
/// // SAFETY: this thread is the only producer and the only consumer.
/// unsafe {
///     ring.try_push(1).unwrap();
///     ring.try_push(2).unwrap();
///     assert_eq!(ring.try_push(3), Err(PushError::Full(3)));
///     assert_eq!(ring.try_pop(), Ok(1));
///     assert_eq!(ring.try_pop(), Ok(2));
///     assert_eq!(ring.try_pop(), Err(PopError::Empty));
/// }
/// ```
pub type Ring<T, const CAP: usize, P, C> = Buffer<T, CAP, <(P, C) as RingTopology>::Cursors>;

#[cfg(all(test, not(asyncband_loom)))]
mod tests;
