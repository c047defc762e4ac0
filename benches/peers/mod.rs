//! One small adapter per implementation, behind the traits the workloads are
//! written against.
//!
//! An implementation is a marker type (`Tokio`, `Flume`, `AsyncbandSpsc`, …)
//! that makes channels through the factory traits ([`SyncBounded`],
//! [`SyncUnbounded`], [`AsyncBounded`], [`AsyncUnbounded`]); a workload names
//! the factory it needs, so a peer that lacks a flavour or an API (rtrb has
//! no unbounded channel, crossbeam-channel no async API) simply cannot be
//! listed in that cell, and one whose endpoint is not `Clone` cannot be listed in a
//! multi-producer or multi-consumer cell. The endpoint traits are
//! implemented directly on the peers' endpoint types, each with that peer's
//! own method for the job: blocking calls for threads, futures for tasks.
//!
//! Futures are the peers' own, not wrapped: [`SendAsync::send`] returns the
//! peer's send future unchanged and the workload reads its output through
//! [`Outcome`].
//!
//! Every adapter method is `#[inline(always)]`: a program calls a channel's
//! methods directly, so the adapter layer must not add a call of its own.
//! With plain `#[inline]`, LLVM left some adapters out of line (asyncband's
//! unbounded `try_send`, kanal's `recv_blocking`, among others), one call per
//! message in the middle of the measurement.

#![allow(
    clippy::inline_always,
    reason = "the adapters must vanish into the workloads (module docs)"
)]

mod async_channel;
mod asyncband;
mod crossbeam;
mod flume;
mod kanal;
mod rapidfire;
mod rtrb;
mod std_mpsc;
mod thingbuf;
mod tokio;

use std::future::Future;

pub use self::async_channel::AsyncChannel;
pub use self::asyncband::{
    AsyncbandMpmc, AsyncbandMpmcSpin, AsyncbandMpmcYield, AsyncbandMpsc, AsyncbandMpscSpin,
    AsyncbandMpscYield, AsyncbandSpsc, AsyncbandSpscSpin,
};
pub use self::crossbeam::Crossbeam;
pub use self::flume::Flume;
pub use self::kanal::Kanal;
pub use self::rapidfire::{Rapidfire, RapidfireMpsc};
pub use self::rtrb::Rtrb;
pub use self::std_mpsc::StdMpsc;
pub use self::thingbuf::Thingbuf;
pub use self::tokio::Tokio;

/// Sends without waiting.
pub trait TrySend<T> {
    /// Sends `value` if there is room; `false` if the channel is full.
    ///
    /// Panics if the channel is disconnected: no workload lets that happen.
    fn try_send(&mut self, value: T) -> bool;
}

/// Receives without waiting.
pub trait TryRecv<T> {
    /// The next value, or `None` if there is none now.
    fn try_recv(&mut self) -> Option<T>;
}

/// Sends from a thread, waiting for room.
pub trait SendBlocking<T>: Send {
    /// Sends `value`, parking (or, for rtrb and rapidfire, which cannot
    /// wait on a thread, spinning) while the channel is full.
    ///
    /// Panics if the channel is disconnected: no workload lets that happen.
    fn send_blocking(&mut self, value: T);
}

/// Receives on a thread, waiting for a value.
pub trait RecvBlocking<T>: Send {
    /// The next value, or `None` once every sender is gone and the channel
    /// is drained.
    fn recv_blocking(&mut self) -> Option<T>;
}

/// The output of a peer's operation, read the same way for every peer:
/// `Result<T, E>` or `Option<T>`.
pub trait Outcome<T> {
    /// The value, or `None` if the operation failed.
    fn into_option(self) -> Option<T>;
}

impl<T, E> Outcome<T> for Result<T, E> {
    #[inline(always)]
    fn into_option(self) -> Option<T> {
        self.ok()
    }
}

impl<T> Outcome<T> for Option<T> {
    #[inline(always)]
    fn into_option(self) -> Option<T> {
        self
    }
}

/// Sends from a task.
pub trait SendAsync<T>: Send {
    /// The peer's own send future (or, for a peer whose unbounded send is
    /// not async, a ready future around it).
    fn send(&mut self, value: T) -> impl Future<Output = impl Outcome<()>> + Send + '_;
}

/// Receives in a task.
pub trait RecvAsync<T>: Send {
    /// The peer's own receive future; its outcome is `None` once every
    /// sender is gone and the channel is drained.
    fn recv(&mut self) -> impl Future<Output = impl Outcome<T>> + Send + '_;
}

/// Reserves a slot in a task, then sends into it.
pub trait ReserveAsync<T>: Send {
    /// A reserved slot.
    type Permit<'a>: SendPermit<T>
    where
        Self: 'a;

    /// The peer's own reserve future.
    fn reserve(&mut self) -> impl Future<Output = impl Outcome<Self::Permit<'_>>> + Send + '_;
}

/// A reserved slot.
pub trait SendPermit<T> {
    /// Sends `value` into the slot.
    ///
    /// Panics if the channel is disconnected: no workload lets that happen.
    fn send(self, value: T);
}

/// Makes bounded channels used from threads (or one thread).
pub trait SyncBounded<T, const CAP: usize> {
    /// The sending side.
    type Tx: TrySend<T> + SendBlocking<T> + 'static;
    /// The receiving side.
    type Rx: TryRecv<T> + RecvBlocking<T> + 'static;
    /// A channel of capacity `CAP`.
    fn channel() -> (Self::Tx, Self::Rx);
}

/// Makes unbounded channels used from threads (or one thread).
pub trait SyncUnbounded<T> {
    /// The sending side.
    type Tx: TrySend<T> + SendBlocking<T> + 'static;
    /// The receiving side.
    type Rx: TryRecv<T> + RecvBlocking<T> + 'static;
    /// An unbounded channel.
    fn channel() -> (Self::Tx, Self::Rx);
}

/// Makes bounded channels used from tasks.
pub trait AsyncBounded<T, const CAP: usize> {
    /// The sending side.
    type Tx: SendAsync<T> + 'static;
    /// The receiving side.
    type Rx: RecvAsync<T> + 'static;
    /// A channel of capacity `CAP`.
    fn channel() -> (Self::Tx, Self::Rx);
}

/// Makes unbounded channels used from tasks.
pub trait AsyncUnbounded<T> {
    /// The sending side.
    type Tx: SendAsync<T> + 'static;
    /// The receiving side.
    type Rx: RecvAsync<T> + 'static;
    /// An unbounded channel.
    fn channel() -> (Self::Tx, Self::Rx);
}

/// Copies a sender for `producers` producers.
pub fn fan_out<Tx: Clone>(tx: Tx, producers: usize) -> Vec<Tx> {
    let mut senders: Vec<Tx> = (1..producers).map(|_| tx.clone()).collect();
    senders.push(tx);
    senders
}
