//! The futures returned by the async operations of the endpoints.
//!
//! They are runtime-agnostic (any executor, or `futures::executor`), `Send`
//! when the payload is, and `!Unpin`: each embeds its place in the wait list,
//! so waiting allocates nothing. Pin them (`std::pin::pin!`, `Box::pin`, or
//! just `.await` them) to poll by hand.
//!
//! # Cancel safety
//!
//! Every one of them can be dropped at any point (`select!`, timeouts)
//! without losing a value or a wake-up: an unsent value stays in the future
//! and is dropped with it; a value is taken only in the poll that returns it;
//! capacity or a wake-up granted to a dropped future passes to the next
//! waiter.

pub(crate) mod borrowed;

pub use borrowed::{
    ClosedFuture, RecvFuture, RecvManyFuture, ReserveFuture, ReserveManyFuture, SendFuture,
};

pub use crate::owned::ReserveOwnedFuture;
