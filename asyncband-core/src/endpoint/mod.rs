//! Endpoints: the only safe way to move values through a [`Chan`].
//!
//! [`Chan`]'s value-moving methods are `unsafe`: on a side with one
//! endpoint, the caller promises that no other call on that side runs at the
//! same time, and a sender promises to return only capacity it holds. The
//! types here carry those promises, so code built on them (the `asyncband`
//! facade) needs no `unsafe`:
//!
//! | side | single endpoint | many endpoints |
//! | --- | --- | --- |
//! | producer | [`Producer`]: not `Clone`, moves values through `&mut self` | [`SharedProducer`]: `Clone`, moves values through `&self` |
//! | consumer | [`Consumer`]: not `Clone`, moves values through `&mut self` | [`SharedConsumer`]: `Clone`, moves values through `&self` |
//!
//! [`channel`] makes the one producer and the one consumer of a new
//! channel; [`Producer::into_shared`] and [`Consumer::into_shared`] turn a
//! side with [`Many`](crate::arity::Many) arity into cloneable handles.
//! Every operation goes through a borrowed right to act, a [`ProducerRef`]
//! or [`ConsumerRef`]: from `&mut` a single handle, from `&` a shared one,
//! and never `Clone`, so a single side's right cannot be in two places.
//! Capacity reserved ahead of a send is a [`Units`] value (or an
//! [`OwnedUnit`] that owns its producer): the only thing that can return
//! capacity, and only the capacity it holds.
//!
//! # Examples
//!
//! ```
//! use asyncband_core::arity::One;
//! use asyncband_core::endpoint;
//! use asyncband_core::ring::Ring;
//!
//! let (mut tx, mut rx) = endpoint::channel::<Ring<u32, 4, One, One>>();
//! tx.by_ref().try_send(7).unwrap();
//! assert_eq!(rx.by_ref().try_recv(), Ok(7));
//! ```
//!
//! [`Chan`]: crate::chan::Chan

mod consumer;
mod producer;
mod units;

pub use consumer::{Consumer, ConsumerRef, SharedConsumer, WeakConsumer};
pub use producer::{OwnedUnit, Producer, ProducerRef, ReserveOwned, SharedProducer, WeakProducer};
pub use units::{ReserveUnits, Units};

use crate::chan::Chan;
use crate::storage::Storage;

/// A new open channel over storage `S`: its one producer and its one
/// consumer.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, mut rx) = endpoint::channel::<List<&str, Many, One>>();
/// let tx = tx.into_shared();
/// tx.clone().by_ref().try_send("a").unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok("a"));
/// ```
#[must_use]
pub fn channel<S: Storage>() -> (Producer<S>, Consumer<S>) {
    let chan = Chan::<S>::new();
    (Producer::new(crate::Arc::clone(&chan)), Consumer::new(chan))
}
