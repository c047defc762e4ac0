//! How many endpoints a side of a channel may have: [`One`] or [`Many`].
//!
//! Arity is a type parameter of the storage and of the channel, never a
//! runtime flag. Code branches on the associated constant [`Arity::MANY`],
//! which the compiler folds away, so a single-producer channel carries none
//! of the claim logic a multi-producer one needs.

use crate::slot::{NoStamp, Stamp, Stamped};
use crate::wait::{Cell, Queue, WaitSet};

mod sealed {
    pub trait Sealed {}
}

/// The arity of one side of a channel. Sealed: [`One`] and [`Many`] are the
/// only implementations.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Arity, Many, One};
///
/// assert!(!One::MANY);
/// assert!(Many::MANY);
/// ```
pub trait Arity: sealed::Sealed + Send + Sync + Sized + 'static {
    /// True when the side may have several endpoints acting at once.
    const MANY: bool;

    /// Where this side's endpoints wait: one cell for a single endpoint, a
    /// cancel-safe FIFO for many.
    type WaitSet: WaitSet;

    /// The per-slot publication word this arity needs on the producer side:
    /// many producers publish through slot stamps, one producer through its
    /// index (see the private `slot` module).
    type Stamp: Stamp;
}

/// Exactly one endpoint on this side; it takes `&mut self` to move values, so
/// it claims positions with plain loads and stores.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Arity, One};
///
/// assert!(!One::MANY);
/// ```
#[derive(Debug)]
pub enum One {}

/// Any number of cloneable endpoints on this side; each claim is one atomic
/// read-modify-write.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Arity, Many};
///
/// assert!(Many::MANY);
/// ```
#[derive(Debug)]
pub enum Many {}

impl sealed::Sealed for One {}
impl sealed::Sealed for Many {}

impl Arity for One {
    const MANY: bool = false;
    type WaitSet = Cell;
    type Stamp = NoStamp;
}

impl Arity for Many {
    const MANY: bool = true;
    type WaitSet = Queue;
    type Stamp = Stamped;
}

/// A supported pair of producer and consumer arities, `(Senders,
/// Receivers)`: `(One, One)`, `(Many, One)` and `(Many, Many)`. Sealed; the
/// storages implement [`Storage`](crate::storage::Storage) only for these,
/// so a single-producer, many-consumer channel does not compile (its
/// consumers would share cursor state that only a single consumer may use).
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One, Topology};
///
/// fn supported<P, C>() where (P, C): Topology {}
/// supported::<One, One>();
/// supported::<Many, One>();
/// supported::<Many, Many>();
/// ```
///
/// ```compile_fail
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// // One producer, many consumers: not a supported topology.
/// let (tx, rx) = endpoint::channel::<List<u32, One, Many>>();
/// ```
pub trait Topology: sealed::Sealed {}

impl sealed::Sealed for (One, One) {}
impl sealed::Sealed for (Many, One) {}
impl sealed::Sealed for (Many, Many) {}
impl Topology for (One, One) {}
impl Topology for (Many, One) {}
impl Topology for (Many, Many) {}
