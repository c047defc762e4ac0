//! # asyncband
//!
//! Channels picked by topology and capacity at compile time: each
//! instantiation carries only the cursor claims and wake logic it needs.
//!
//! # Guarantees
//!
//! - **Lock-free, allocation-free fast paths.** A send or receive that does
//!   not have to wait takes no lock, allocates nothing (bounded channels are
//!   preallocated; unbounded ones recycle their blocks) and touches no waker.
//!   A single side moves a value with plain loads and one store of its own
//!   index; a side with many endpoints claims with one atomic
//!   read-modify-write.
//! - **Full** bounded channels make `try_send` return the value, `send` wait
//!   (senders are served in the order they began to wait), and
//!   `send_blocking` wait by the [wait policy](#choosing-a-wait-policy):
//!   briefly spinning or yielding, then parking, or (`Spin`) busy-waiting,
//!   or (`Yield`) busy-waiting that yields the core.
//! - **Empty** channels make `try_recv` report it, `recv` wait and
//!   `recv_blocking` wait by the policy.
//! - **Closed** channels (by [`close`](mpsc::Sender::close) from either side,
//!   or because every sender or every receiver is gone) refuse sends and hand
//!   the value back, while receivers first drain everything that was sent.
//! - **Nothing is lost:** every value is dropped exactly once, and a send
//!   that returned `Ok` is received, even when `close` races with it.
//!
//! # Example
//!
//! ```
//! use asyncband::{channel, mpsc};
//!
//! #[derive(Debug, PartialEq)]
//! struct Order { id: u64 }
//!
//! let (tx, mut rx) = channel!(mpsc, bounded = 4096, Order);
//! // The same type, without the macro:
//! let _: (mpsc::Sender<mpsc::Bounded<Order, 4096>>, mpsc::Receiver<mpsc::Bounded<Order, 4096>>) =
//!     mpsc::Bounded::<Order, 4096>::channel();
//!
//! let worker = {
//!     let tx = tx.clone();
//!     std::thread::spawn(move || tx.send_blocking(Order { id: 1 }).unwrap())
//! };
//! worker.join().unwrap();
//! drop(tx);
//! assert_eq!(rx.recv_blocking(), Ok(Order { id: 1 }));
//! assert!(rx.recv_blocking().is_err());
//! ```
//!
//! # Flavours
//!
//! | | bounded (`CAP` a power of two, ≤ 2^20) | unbounded |
//! | --- | --- | --- |
//! | [`spsc`]: one sender, one receiver | [`spsc::Bounded<T, CAP>`] | [`spsc::Unbounded<T>`] |
//! | [`mpsc`]: cloneable senders, one receiver | [`mpsc::Bounded<T, CAP>`] | [`mpsc::Unbounded<T>`] |
//! | [`mpmc`]: cloneable senders and receivers | [`mpmc::Bounded<T, CAP>`] | [`mpmc::Unbounded<T>`] |
//! | optional last parameters | `Bounded<T, CAP, INLINE, W>` | `Unbounded<T, INLINE, W>` |
//!
//! Every flavour has try, async (runtime-agnostic futures) and blocking
//! operations, timeouts, close, counts and queries; bounded flavours also
//! have capacity permits (`try_reserve`, `reserve`, `reserve_many`, and for
//! cloneable senders `reserve_owned`). Single-endpoint sides take `&mut self`
//! to move values, so their futures are `Send`; cloneable sides take `&self`.
//! An optional `INLINE` parameter caps the payload size at compile time.
//!
//! Pick the narrowest topology that fits: a single side needs no atomic
//! read-modify-write per message, a many side one claim. Bounded channels
//! preallocate their ring and make senders wait (backpressure); unbounded
//! ones never make a sender wait and grow block by block.
//!
//! # Capacity and permits
//!
//! Queued values plus held permits never exceed `CAP`, also across a
//! cancelled send or receive. A permit ([`mpsc::Permit`], from `reserve`)
//! holds one slot before the value exists; its `send` cannot find the
//! channel full. `reserve_many(n)` holds `n` at once (`n > CAP` is an error,
//! never a hang); `reserve_owned` returns an [`mpsc::OwnedPermit`] that owns
//! its sender, for another task. Dropping a permit gives its slot to the
//! oldest waiting sender. After `close`, or once every receiver is gone, a
//! held permit's `send` hands its value back instead of delivering it (where
//! tokio's permit still delivers). A permit reserves capacity, not a
//! position: its value is ordered with the others by when it is sent.
//!
//! # Disconnection
//!
//! When every sender is gone, or `close` is called, receivers first drain
//! what was sent and then get [`TryRecvError::Disconnected`](error::TryRecvError)
//! / [`RecvError`](error::RecvError). When every receiver is gone, sends fail
//! and hand the value back (a held permit's `send` too), and the values
//! still queued are dropped at that moment, not later.
//!
//! # Cancellation safety
//!
//! Every future can be dropped at any point (`select!`, timeouts): a send
//! that did not complete keeps its value (dropped with the future); a receive
//! takes a value only in the poll that returns it; capacity or a wake-up
//! granted to a dropped future passes to the next waiter. Blocking operations
//! with timeouts are built on the same futures.
//!
//! # Panics and misuse
//!
//! Misuse that safe Rust allows loses nothing, and a panic in user code
//! that runs while the channel holds something for the caller gives it back
//! (the endpoints, permits and futures are `UnwindSafe` for this reason):
//!
//! - an iterator that panics inside `send_many` / `try_send_many` leaves the
//!   values before it sent and returns the capacity reserved for the rest;
//! - futures leaked with `mem::forget` while they wait, or streams whose
//!   `next()` was dropped while registered, however many, keep no wake-up
//!   from the other receivers: a notification handed to a waiting future
//!   also wakes the receivers waiting behind it, up to one blocked in a
//!   thread that was not woken so already, each to look for itself (a
//!   blocked thread whose deadline passes before it looks passes a
//!   notification on). So while several receivers wait in futures, a value
//!   wakes each of them (a receiver woken so may be woken again by the next
//!   value before it has looked: a spurious wake-up); receivers blocked in
//!   threads are woken one per value;
//! - a waker that panics in `wake` does not stop the others: every waiter
//!   that was granted capacity or a notification is woken (at a close:
//!   every waiting receiver, sender and `closed()` future), then the panic
//!   propagates. If that happens inside a receive (which wakes a sender
//!   waiting for the slot it freed, or passes a notification on to another
//!   receiver), the value it had taken is not delivered: up to 128 bytes it
//!   is dropped; a larger one, moved straight from its slot into the
//!   receive's result, is leaked, since Rust does not drop a function's
//!   result when a destructor unwinds out of it. The waiting sender's value
//!   is not lost, and the channel works on. In `select!`, where the arms not
//!   chosen pass on what they were granted as they are dropped, the chosen
//!   arm's value or permit is dropped with the unwind, its slot given back;
//! - a waker whose `drop` panics, dropped when a waiting future is: the
//!   slots the future had been granted go back (or on to the next waiter)
//!   first, then the panic propagates;
//! - polling a future again after it returned `Ready` either starts the
//!   operation again (`recv`, `reserve`, `closed`) or panics with a message
//!   saying so (`send`, `reserve_owned`), never holding a slot;
//! - `mem::forget` of a permit leaks its slot of capacity, and nothing else.
//!   The channel has that slot fewer for good: a `reserve_many(n)` asking
//!   for more than is left waits until it is dropped, and the senders that
//!   began to wait after it wait behind it, since waiting senders are
//!   served in order;
//! - values whose `Drop` panics while the last receiver drops the ones
//!   still queued do not stop the drain: every value is dropped once, every
//!   waiter is woken, and the first panic propagates (one panic, however
//!   many values panicked).
//!
//! # Memory
//!
//! A bounded channel allocates its `CAP` slots once, at creation. An
//! unbounded channel is a list of 31-slot blocks; blocks it leaves go to a
//! pool of two spares, so steady traffic does not allocate, and anything
//! beyond that is freed, so memory after a burst returns to a few blocks.
//! Zero-sized payloads occupy no slot memory on single-producer channels and
//! only their publication stamps otherwise.
//!
//! # Select
//!
//! On threads, [`select!`] and [`select_biased!`] wait on several
//! operations of any flavours and payload types (`recv`, `send` and
//! `reserve` arms, with an optional `default` or `default(timeout)`), and
//! [`Select`] on a run-time number of receivers of one type; see
//! [`select`](mod@select).
//!
//! In async code, use your runtime's select: `tokio::select!` and
//! `futures::select!` (or `futures::future::select`) over asyncband's
//! futures are cancel-safe. A branch not taken drops its future, which then
//! sent, received and reserved nothing ([Cancellation
//! safety](#cancellation-safety)), so a loop around `tokio::select!` may
//! create the futures afresh each time:
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use asyncband::{mpmc, mpsc};
//! use std::time::Duration;
//!
//! let (jobs_tx, mut jobs) = mpsc::bounded::<u32, 8>();
//! let (done_tx, done) = mpmc::unbounded::<()>();
//! let worker = tokio::spawn(async move {
//!     let mut total = 0;
//!     loop {
//!         tokio::select! {
//!             job = jobs.recv() => match job {
//!                 Ok(n) => total += n,
//!                 Err(_) => break,
//!             },
//!             _ = done.recv() => break,
//!             () = tokio::time::sleep(Duration::from_millis(100)) => {}
//!         }
//!     }
//!     // Every value sent before `done` was received or is still queued:
//!     // none was lost by a branch that was not taken.
//!     total + jobs.try_iter().sum::<u32>()
//! });
//! for n in 1..=10 {
//!     jobs_tx.send(n).await.unwrap();
//! }
//! done_tx.send(()).await.unwrap();
//! assert_eq!(worker.await.unwrap(), 55);
//! # }
//! ```
//!
//! # Waiting
//!
//! This section is the default policy's, [`Park`](wait::Park). A blocking call that must wait spins briefly and yields a few times,
//! then parks; a future returns `Pending` and is woken. A send or receive
//! that finds nobody waiting never touches a waker.
//!
//! A blocking receive yields only on a machine with more runnable threads
//! than cores: with a core per thread, a yield hands the receiver's core to
//! whichever thread shares it, often the busy producer, for a time slice,
//! where a parked receiver is woken onto a free core. With a core per
//! thread, a blocking receive whose recent waits were short also spins
//! longer (up to twice its last wait, at most 50 µs), so values tens of
//! microseconds apart find it spinning, at the price of a busy core; one
//! longer wait ends that. On an oversubscribed machine, a blocking receive
//! whose values come one by one parks at once: a spin or a yield would cost
//! it a busy thread's time slice, while a parked receiver is woken by the
//! send within microseconds.
//!
//! "Runnable threads" is the kernel's count for the whole machine (Linux's
//! `/proc/loadavg`, read every few milliseconds through one descriptor kept
//! open from the first read, closed on `exec`); "cores" are those this
//! process may use. In a container, or on some CPUs of a busy host, the
//! machine's count can exceed them while the process's threads each have a
//! core: blocking receives then park at once and pay a wake-up
//! (microseconds) where they could have spun. Such a receiver can spin on
//! `try_recv` itself (below), or the process can be started with
//! `ASYNCBAND_OVERSUBSCRIBED=never` (any case) to count a core for every
//! runnable thread whatever the kernel says, or `=always` to count itself
//! oversubscribed. The variable is read once, when a blocking receive first
//! waits; any other value leaves the count to the kernel. Set `never` only
//! where the sending threads have cores of their own: on a machine that is
//! in fact oversubscribed, a spinning receiver waits for its turn on a core,
//! hundreds of microseconds per value at the median with four busy senders
//! on two cores. Elsewhere than on Linux, without the variable, every
//! machine counts as having a core per thread.
//!
//! A single sender (or a single receiver, freeing slots) publishes with a
//! plain store while nobody waits on it. A waiter that finds it publishing
//! plainly makes one `membarrier(2)` system call (Linux) before it sleeps;
//! the publisher then uses `SeqCst` stores until it has again gone a while
//! with nobody waiting. That system call interrupts every CPU currently
//! running a thread of the process; with the barrier on, making the first
//! channel with a single endpoint (any `spsc` channel, an `mpsc` receiver)
//! also registers the process for it, which takes milliseconds once (no
//! send or receive pays it). Where that jitter matters (busy threads pinned
//! to isolated cores), turn it off:
//!
//! - build with the `no-membarrier` feature (features are additive, so any
//!   crate in the build that enables it turns the barrier off for the whole
//!   program);
//! - or start the process with `ASYNCBAND_MEMBARRIER=off` (any case). It is
//!   read once, when that first channel is made; a later change has no
//!   effect, and any other value leaves the default.
//!
//! Either way every single-endpoint publish is a `SeqCst` store and no
//! waiter makes a system call; nothing else changes. On other operating
//! systems, and on kernels without the call, asyncband always works this
//! way. That store is a locked instruction on every send of a single
//! sender and every receive of a single receiver: streaming between two
//! threads through an `spsc` channel takes about 1.6–1.9 × as long, one
//! thread or one tokio thread 1.1–1.2 ×, while four senders to one
//! receiver, and tasks on two tokio workers, change little
//! (`benches/NOTES.md` in the repository has the measurement).
//!
//! # Choosing a wait policy
//!
//! `W`, the last parameter of every flavour ([`wait`]; `wait = park | spin |
//! yield` in [`channel!`]), picks how a blocked operation waits, and so the
//! wake logic the channel carries:
//!
//! - [`Park`](wait::Park), the default: everything above. Blocking calls
//!   spin, yield, then park; async operations register wakers; every send
//!   and receive checks for a waiter to wake.
//! - [`Spin`](wait::Spin): blocking calls (and their timeouts and
//!   deadlines) busy-wait and never make a system call. The channel keeps
//!   no waiters, so no side looks for one and a single side's publish is a
//!   plain store, with no barrier. Try and blocking operations, permits,
//!   batches, close, counts, weak endpoints and `select!` (which polls a
//!   spin arm in rounds with spin hints between them) work as on `Park`;
//!   async operations, `Stream` and `Sink` do not compile (the error names
//!   `wait = park`). Waiting senders are not
//!   served in order: whichever spinning sender looks first takes the room.
//!   A disconnect is seen at once. Closing an `spsc` channel from the
//!   receiver makes one `membarrier(2)` call (Linux), so that a sender
//!   spinning on its plain stores sees it.
//! - [`Yield`](wait::Yield): `Spin`'s channel (no waiters, no barrier, the
//!   same operations and compile errors), but a blocked call spins only
//!   briefly (not at all while every core has a spinner) and then calls
//!   `sched_yield` between checks. It never parks, so it never makes a
//!   `futex` call; its only system calls are the yields. A `select!` with
//!   a yield arm waits the same way between its rounds.
//!
//! Spin when every spinning thread has a core of its own (pinned
//! pipelines, trading or audio threads): a spin channel streams at a
//! ring buffer's speed and wakes no one. Yield when threads must not sleep
//! in the kernel but may outnumber the cores: a yield hands the core to
//! the thread waited for, where a spinner would burn its time slice. Park
//! in every other case: a parked thread costs no CPU, and tasks need
//! wakers.
//!
//! ```
//! use asyncband::{channel, wait::Spin, spsc};
//!
//! let (mut tx, mut rx) = channel!(spsc, bounded = 64, u64, wait = spin);
//! let _: &spsc::Sender<spsc::Bounded<u64, 64, { usize::MAX }, Spin>> = &tx;
//! let producer = std::thread::spawn(move || {
//!     for value in 0..1_000 {
//!         tx.send_blocking(value).unwrap();
//!     }
//! });
//! let mut sum = 0;
//! while let Ok(value) = rx.recv_blocking() {
//!     sum += value;
//! }
//! producer.join().unwrap();
//! assert_eq!(sum, 999 * 1_000 / 2);
//! ```
//!
//! # Features
//!
//! - `stream` (default): receivers implement `futures_core::Stream`.
//! - `sink` (default): `into_sink` turns a sender into a `futures_sink::Sink`.
//! - `no-membarrier`: never call `membarrier(2)`; see [Waiting](#waiting).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

#[cfg(not(target_has_atomic = "64"))]
compile_error!(
    "asyncband needs 64-bit atomics (`target_has_atomic = \"64\"`): its positions are 64-bit \
     counters that must never wrap. This target does not provide them."
);

/// `Debug` showing only the type's name: `opaque_debug!([generics] Name<args>)`.
macro_rules! opaque_debug {
    ([$($generics:tt)*] $name:ident $($args:tt)*) => {
        impl<$($generics)*> std::fmt::Debug for $name $($args)* {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).finish_non_exhaustive()
            }
        }
    };
}

pub mod error;
pub mod future;
pub mod iter;
pub mod mpmc;
pub mod mpsc;
pub mod select;
#[cfg(feature = "sink")]
#[cfg_attr(docsrs, doc(cfg(feature = "sink")))]
pub mod sink;
pub mod spsc;

mod batch;
mod check;
mod deadline;
mod endpoint;
mod flavour;
mod macros;
mod multi;
mod permit;
mod single;
#[cfg(feature = "stream")]
mod stream;
mod unwind;

pub use flavour::{AnyFlavour, Flavour};
pub use select::Select;

/// The arities of a side of a channel, the types of
/// [`AnyFlavour::Senders`] and [`AnyFlavour::Receivers`]: code generic over
/// flavours names them from here.
///
/// # Examples
///
/// ```
/// use asyncband::arity::{Arity, Many, One};
/// use asyncband::{Flavour, mpsc};
///
/// fn senders_share<F: Flavour>() -> bool {
///     <F::Senders as Arity>::MANY
/// }
/// assert!(senders_share::<mpsc::Bounded<u8, 4>>());
/// assert!(!<One as Arity>::MANY && <Many as Arity>::MANY);
/// ```
pub mod arity {
    pub use asyncband_core::arity::{Arity, Many, One};
}

/// How a channel waits, the last parameter of every flavour type:
/// [`Park`](wait::Park) (the default), [`Spin`](wait::Spin) or
/// [`Yield`](wait::Yield). See
/// [Choosing a wait policy](crate#choosing-a-wait-policy).
///
/// # Examples
///
/// ```
/// use asyncband::{mpsc, spsc, wait::{Spin, Yield}};
///
/// let (mut tx, mut rx) = spsc::Bounded::<u64, 1024, { usize::MAX }, Spin>::channel();
/// tx.send_blocking(1).unwrap();
/// assert_eq!(rx.recv_blocking(), Ok(1));
///
/// let (tx, mut rx) = mpsc::Unbounded::<u64, { usize::MAX }, Yield>::channel();
/// tx.send_blocking(2).unwrap();
/// assert_eq!(rx.recv_blocking(), Ok(2));
/// ```
pub mod wait {
    pub use asyncband_core::wait::{Asynchronous, Park, Spin, Wait, Yield};
}

/// What the `channel!` expansion reaches the runtime through. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use asyncband_macros::channel as channel_impl;

    pub use crate::select::rt as select;
}

/// The README's code, run as doctests so that it stays true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;
