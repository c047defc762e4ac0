//! How many endpoints a side of a channel may have: [`One`] or [`Many`].
//!
//! Arity is a type parameter, never a runtime flag: code branches on
//! [`Arity::MANY`], which the compiler folds away.

use crate::slot::{NoStamp, Stamp, Stamped};
use crate::wait::{Cell, Queue, WaitSet};

mod sealed {
    pub trait Sealed {}
}

/// The arity of one side of a channel: [`One`] or [`Many`]. Sealed.
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

    /// Where this side's endpoints wait: a cell for one, a FIFO for many.
    type WaitSet: WaitSet;

    /// The per-slot publication word this arity needs as producers.
    type Stamp: Stamp;
}

/// Exactly one endpoint on this side, which moves values through `&mut`.
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

/// Any number of cloneable endpoints on this side.
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

/// A supported pair of producer and consumer arities: `(One, One)`,
/// `(Many, One)` and `(Many, Many)`. Sealed; a single-producer,
/// many-consumer channel does not compile.
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
/// let (tx, rx) = endpoint::channel::<List<u32, One, Many>>();
/// ```
pub trait Topology: sealed::Sealed {}

impl sealed::Sealed for (One, One) {}
impl sealed::Sealed for (Many, One) {}
impl sealed::Sealed for (Many, Many) {}
impl Topology for (One, One) {}
impl Topology for (Many, One) {}
impl Topology for (Many, Many) {}
