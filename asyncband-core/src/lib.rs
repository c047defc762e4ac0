//! The shared lock-free core of [asyncband](https://docs.rs/asyncband).
//!
//! The machinery `asyncband`'s channels are made from, one axis per module:
//!
//! | axis | modules |
//! | --- | --- |
//! | storage | [`ring`] (bounded), [`list`] (unbounded), behind the [`storage`] seam; each keeps its positions in the cursors of its topology |
//! | arity | [`arity`]: [`One`](arity::One) or [`Many`](arity::Many) per side, a type parameter |
//! | waiting | [`wait`]: the [`Park`](wait::Park), [`Spin`](wait::Spin) or [`Yield`](wait::Yield) policy, its wait sets and fences, and every loop a waiting thread runs |
//! | composition | [`chan`]: one generic [`Chan`](chan::Chan) and its futures |
//! | endpoints | [`endpoint`]: the handles that own each side's right to act, the only way to move values |
//!
//! Public are the endpoints and read-only queries; every operation that
//! changes counts, capacity or waiting state is crate-private or `unsafe`.
//!
//! # Guarantees
//!
//! - **Lock-free fast paths.** A send or receive that does not wait takes
//!   no lock and allocates nothing: a single side stores its own index; a
//!   multi side claims its position with one compare-exchange. Whether
//!   anybody waits costs one `SeqCst` load (nothing, for a spin or yield channel).
//! - **Nothing lost.** Every value is dropped exactly once: received, handed
//!   back in an error, or dropped when the last receiver goes. A send that
//!   returned `Ok` is received by a receiver that keeps receiving until the
//!   channel reports it closed, even when `close` races with it.
//! - **Fair capacity.** Senders waiting for capacity are granted it in the
//!   order they began to wait; queued values plus held units plus granted
//!   capacity never exceed the bound.
//! - **Cancel safety.** Dropping any future at any point loses no value and
//!   no wake-up.
//!
//! # Verification
//!
//! Under `--cfg asyncband_loom` every atomic, lock and cell comes from loom
//! (the private `sync` module), blocks shrink to three slots, and the models
//! in `src/tests.rs` check each protocol.

#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(not(target_has_atomic = "64"))]
compile_error!(
    "asyncband needs 64-bit atomics (`target_has_atomic = \"64\"`): its positions are 64-bit \
     counters that must never wrap. This target does not provide them."
);

/// `Debug` impls that show only the type's name.
macro_rules! opaque_debug {
    ($(impl[$($generics:tt)*] $name:ident<$($args:tt),*> $(where [$($bound:tt)*])?);* $(;)?) => {$(
        impl<$($generics)*> std::fmt::Debug for $name<$($args),*> $(where $($bound)*)? {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    )*};
}

pub mod arity;
pub mod chan;
pub mod endpoint;
pub mod error;
pub mod list;
pub mod ring;
pub mod storage;
pub mod wait;

mod boundary;
mod slot;
mod sync;
mod unwind;

#[cfg(all(test, asyncband_loom))]
mod tests;

/// The reference count endpoints share a [`Chan`](chan::Chan) through.
#[doc(hidden)]
#[cfg(asyncband_loom)]
pub use loom::sync::Arc;
/// The reference count that endpoints share a [`Chan`](chan::Chan) through
/// (loom's under `--cfg asyncband_loom`).
#[doc(hidden)]
#[cfg(not(asyncband_loom))]
pub use std::sync::Arc;
