//! What a channel is, at the type level.
//!
//! A flavour type such as [`mpsc::Bounded<T, 64>`](crate::mpsc::Bounded)
//! names the payload, the topology and the storage of a channel. It is never
//! instantiated; endpoints are generic over it, so each channel carries only
//! the claim and wake logic of its own flavour.

use asyncband_core::arity::Arity;
use asyncband_core::storage::Storage;

mod sealed {
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// A channel flavour: payload, topology and storage. Sealed: the flavours
/// are the `Bounded` and `Unbounded` types of [`spsc`](crate::spsc),
/// [`mpsc`](crate::mpsc) and [`mpmc`](crate::mpmc).
///
/// # Examples
///
/// ```
/// use asyncband::{Flavour, mpsc};
///
/// fn capacity_of<F: Flavour>() -> Option<usize> {
///     F::CAPACITY
/// }
///
/// assert_eq!(capacity_of::<mpsc::Bounded<u64, 64>>(), Some(64));
/// assert_eq!(capacity_of::<mpsc::Unbounded<u64>>(), None);
/// ```
pub trait Flavour: Sealed + Sized {
    /// The payload.
    type Item;
    /// Producer arity: [`One`](asyncband_core::arity::One) or
    /// [`Many`](asyncband_core::arity::Many).
    type Senders: Arity;
    /// Consumer arity.
    type Receivers: Arity;
    /// The storage the channel is instantiated with.
    #[doc(hidden)]
    type Storage: Storage<Item = Self::Item, Senders = Self::Senders, Receivers = Self::Receivers>;
    /// The bound, or `None` when unbounded.
    const CAPACITY: Option<usize>;
}
