//! Waiting, the third axis beside topology and storage: where endpoints
//! wait, how they are woken, and how a thread spends the wait:
//!
//! | policy | waiters | single-endpoint publish | blocking operations | async operations |
//! | --- | --- | --- | --- | --- |
//! | [`Park`] | a [`Cell`] per single side, a [`Queue`] per many side | plain while nobody waits, else `SeqCst` (`fence.rs`) | spin, yield, then park | yes |
//! | [`Spin`] | none | plain (`SeqCst` only where `membarrier` is unavailable) | spin, checking the clock for deadlines | none |
//! | [`Yield`] | none | as [`Spin`] | spin briefly, then `sched_yield` between checks | none |
//!
//! Every loop and constant of a waiting thread lives in `backoff.rs`.
//!
//! # Units and grants
//!
//! A waiter asks for `need` *units* and is woken once *granted* all of
//! them, in registration order: for senders, slots of capacity the granter
//! takes from the storage, so nobody barges past a woken sender; for
//! receivers, notifications of published values. A waiter that goes away
//! hands its units back to be passed on, so no wake is swallowed. A
//! [`Cell`] holds one waiter and no units: granting wakes it, it retries.
//!
//! # The store-buffer race
//!
//! A waiter raises its flag and then re-checks the condition it waits for;
//! a notifier changes the condition and then loads the flag. Acquire and
//! release alone let both loads miss. Here the flag is raised with a
//! `SeqCst` store inside [`WaitSet::register`] (a queue's once while its
//! list stays non-empty), the re-check and [`WaitSet::is_waiting`] are
//! `SeqCst` loads, and every change to a condition is a `SeqCst` store or
//! read-modify-write, so in their single total order one of the two loads
//! sees the other side's write. The storage modules name the operation for
//! each condition; `fence.rs` covers a single endpoint's plain publishes.

mod backoff;
mod cell;
mod fence;
mod queue;

use std::pin::Pin;
use std::task::Waker;

use crate::arity::Arity;
use crate::storage::drop_each;

#[doc(hidden)]
pub use backoff::ReceiveWaits;
pub(crate) use backoff::{BUSY_POLL_SPINS, Latch, after_lost_claim, pause, spin_hint};
pub use backoff::{Backoff, Rounds, YIELDS, block_on, oversubscribed_now};
pub use cell::Cell;
#[doc(hidden)]
pub use fence::{Fence, PLAIN_AFTER, membarrier_calls, membarrier_decided, membarrier_in_use};
pub use queue::{Queue, QueueNode};

mod sealed {
    pub trait Sealed {}
}

/// How a channel waits: [`Park`], [`Spin`] or [`Yield`], chosen by type.
/// Sealed.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Park, Spin, Wait, Yield};
///
/// assert!(Park::PARKS && Park::YIELDING);
/// assert!(!Spin::PARKS && !Spin::YIELDING);
/// assert!(!Yield::PARKS && Yield::YIELDING);
/// ```
pub trait Wait: sealed::Sealed + Send + Sync + Sized + std::fmt::Debug + 'static {
    /// Whether waiters park (and the channel has async operations).
    const PARKS: bool;
    /// Whether a thread that has spun a while gives its core away
    /// (`sched_yield`), so that one preempted mid-step can finish it.
    const YIELDING: bool;
    /// Where the endpoints of a side of arity `A` wait.
    #[doc(hidden)]
    type Waiters<A: Arity>: WaitSet;
    /// Where futures that wait for the close wait.
    #[doc(hidden)]
    type Closing: WaitSet;
    /// How a single endpoint publishes its index.
    #[doc(hidden)]
    type Fence: Fence;

    /// How a blocked sender of a channel with `P` senders and `C`
    /// receivers waits before it parks.
    #[doc(hidden)]
    fn sender_backoff<P: Arity, C: Arity>() -> Backoff;

    /// Runs as a channel is made: what the first wait would otherwise do
    /// then, in the middle of a stream.
    #[doc(hidden)]
    fn prepare() {}

    /// How a blocked receiver waits before it parks, and how long it may
    /// spin (`ReceiveWaits::schedule`); `head` reads the consumers' position.
    #[doc(hidden)]
    fn receiver_backoff(waits: &ReceiveWaits, head: impl FnOnce() -> u64)
    -> (fn() -> Backoff, u64);
}

/// The default policy: a blocking call spins briefly, yields, then parks;
/// async operations register wakers.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Park, Wait};
///
/// assert!(Park::PARKS);
/// ```
#[derive(Debug)]
pub enum Park {}

/// Busy-waiting: a blocking call spins (deadlines checked against the
/// clock) and never parks or makes a system call; the channel keeps no
/// waiters and has no async operations ([`Asynchronous`]).
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Spin, Wait};
///
/// assert!(!Spin::PARKS);
/// ```
#[derive(Debug)]
pub enum Spin {}

/// Busy-waiting that gives way: a blocking call spins briefly, then calls
/// `sched_yield` between checks, and never parks; like [`Spin`], the
/// channel keeps no waiters and has no async operations. For threads that
/// must not sleep in the kernel on a machine with more of them than cores.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Wait, Yield};
///
/// assert!(!Yield::PARKS && Yield::YIELDING);
/// ```
#[derive(Debug)]
pub enum Yield {}

impl sealed::Sealed for Park {}
impl sealed::Sealed for Spin {}
impl sealed::Sealed for Yield {}

/// The wait policies whose channels have async operations: [`Park`]. A
/// future cannot busy-wait and a spin channel keeps no waiters to wake one,
/// so calling one of its async operations is a compile error.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Asynchronous, Park};
///
/// fn parks<W: Asynchronous>() {}
/// parks::<Park>();
/// ```
///
/// ```compile_fail
/// use asyncband_core::wait::{Asynchronous, Spin};
///
/// fn parks<W: Asynchronous>() {}
/// parks::<Spin>();
/// ```
#[diagnostic::on_unimplemented(
    message = "a `wait = spin` or `wait = yield` channel has no async operations",
    label = "async operations, `Stream` and `Sink` need a channel that parks",
    note = "make the channel with `wait = park` (the default) to `send`, `recv`, `reserve`, await `closed`, poll it, or use it as a `Stream` or `Sink`"
)]
pub trait Asynchronous: Wait {}

impl Asynchronous for Park {}

impl Wait for Park {
    const PARKS: bool = true;
    const YIELDING: bool = true;
    type Waiters<A: Arity> = A::WaitSet;
    type Closing = Queue;
    type Fence = fence::SingleFence;

    fn sender_backoff<P: Arity, C: Arity>() -> Backoff {
        if C::MANY {
            Backoff::without_yields()
        } else if P::MANY {
            Backoff::yields_only()
        } else {
            Backoff::new()
        }
    }

    fn receiver_backoff(
        waits: &ReceiveWaits,
        head: impl FnOnce() -> u64,
    ) -> (fn() -> Backoff, u64) {
        waits.schedule(head)
    }
}

impl Wait for Spin {
    const PARKS: bool = false;
    const YIELDING: bool = false;
    type Waiters<A: Arity> = NoWaiters;
    type Closing = NoWaiters;
    type Fence = fence::SpinFence;

    fn sender_backoff<P: Arity, C: Arity>() -> Backoff {
        Backoff::endless()
    }

    fn receiver_backoff(_: &ReceiveWaits, _: impl FnOnce() -> u64) -> (fn() -> Backoff, u64) {
        (Backoff::endless, 0)
    }
}

/// [`Spin`]'s storage, wait sets and fence; only the schedule differs.
impl Wait for Yield {
    const PARKS: bool = false;
    const YIELDING: bool = true;
    type Waiters<A: Arity> = NoWaiters;
    type Closing = NoWaiters;
    type Fence = fence::SpinFence;

    fn sender_backoff<P: Arity, C: Arity>() -> Backoff {
        // As `Park`'s: many senders of one receiver yield at once.
        if P::MANY && !C::MANY {
            Backoff::yielding_only()
        } else {
            Backoff::yielding()
        }
    }

    fn receiver_backoff(_: &ReceiveWaits, _: impl FnOnce() -> u64) -> (fn() -> Backoff, u64) {
        (Backoff::yielding, 0)
    }

    fn prepare() {
        // The spin phase reads the core count, found once per process
        // (system calls, and a futex if two threads race to it).
        backoff::cores();
    }
}

/// A place where the endpoints of one side wait: [`Cell`] (one endpoint),
/// [`Queue`] (many), or [`NoWaiters`] (a spin channel).
///
/// # Safety
///
/// Implementations keep the promises documented on each method, on which
/// the channel relies never to lose a wake or a unit.
pub unsafe trait WaitSet: Default + Send + Sync + std::fmt::Debug + 'static {
    /// Per-waiter state, stored pinned inside the waiting future.
    type Node: Default + Send + Sync + std::fmt::Debug;

    /// Whether a waiter may be registered: one `SeqCst` load of a word that
    /// changes only when waiters come and go.
    fn is_waiting(&self) -> bool;

    /// Registers `node` (or refreshes its waker) wanting `need` units.
    /// Returns `need` once the node has been granted all of it (it is idle
    /// again, the units the caller's), else 0. The waiting flag is then up,
    /// raised by a `SeqCst` store. `on_change(waiting)` runs under the
    /// set's lock whenever the set turns non-empty or empty (queues only).
    ///
    /// # Safety
    ///
    /// `node` stays pinned and registered only with this set until it is
    /// passed to [`WaitSet::cancel`] or granted everything it needs.
    unsafe fn register(
        &self,
        node: Pin<&Self::Node>,
        waker: &Waker,
        need: usize,
        on_change: impl FnOnce(bool),
    ) -> usize;

    /// Grants units to waiters in registration order: `acquire(n)` takes
    /// up to `n` units for the front waiter and returns how many it took;
    /// zero ends the round. Waiters granted all they need leave the set and
    /// are woken after the lock is released. A [`Cell`] just wakes.
    fn grant(&self, acquire: impl FnMut(usize) -> usize, on_change: impl FnOnce(bool));

    /// Hands `units` notifications to the front waiters, one each; a
    /// [`Queue`] also wakes some behind a future ([`Withdrawn::woken_to_look`]).
    fn notify(&self, units: usize) {
        self.grant(up_to(units), |_| ());
    }

    /// A node for a thread that parks until it is woken: it always comes
    /// back for what it is handed.
    #[must_use]
    fn parked_node() -> Self::Node {
        Self::Node::default()
    }

    /// Wakes every waiter without granting anything (the channel closed).
    fn wake_all(&self, on_change: impl FnOnce(bool));

    /// Withdraws `node`, if registered, and returns its units and waker
    /// ([`Withdrawn`]). A [`Cell`] withdraws nothing: its one registration
    /// may be shared by several operations of its endpoint, and a stale
    /// waker costs a spurious wake at most. Idempotent.
    ///
    /// # Safety
    ///
    /// `node` was only ever registered with this set.
    unsafe fn cancel(&self, node: Pin<&Self::Node>, on_change: impl FnOnce(bool)) -> Withdrawn;
}

/// The wait set of a spin or yield channel: nobody ever waits. A future that would
/// wait is woken at once: it busy-polls.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{NoWaiters, WaitSet};
///
/// assert!(!NoWaiters::default().is_waiting());
/// ```
#[derive(Debug, Default)]
pub struct NoWaiters;

// SAFETY: nothing registers (spin channels have no async operations and
// their blocking operations never park), so there is nothing to lose.
unsafe impl WaitSet for NoWaiters {
    type Node = ();

    #[inline]
    fn is_waiting(&self) -> bool {
        false
    }

    unsafe fn register(&self, _: Pin<&()>, waker: &Waker, _: usize, _: impl FnOnce(bool)) -> usize {
        waker.wake_by_ref();
        0
    }

    fn grant(&self, _: impl FnMut(usize) -> usize, _: impl FnOnce(bool)) {}

    fn wake_all(&self, _: impl FnOnce(bool)) {}

    unsafe fn cancel(&self, _: Pin<&()>, _: impl FnOnce(bool)) -> Withdrawn {
        Withdrawn::new(0, None)
    }
}

/// `acquire` for [`WaitSet::grant`]: up to `units` in all.
fn up_to(mut units: usize) -> impl FnMut(usize) -> usize {
    move |want| {
        let take = want.min(units);
        units -= take;
        take
    }
}

/// What [`WaitSet::cancel`] took from a node: its units, and its waker,
/// whose `drop` (user code) comes with this value's, after the caller has
/// dealt with the units.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::Withdrawn;
///
/// let withdrawn = Withdrawn::new(2, None);
/// assert_eq!(withdrawn.units(), 2);
/// assert!(!withdrawn.woken_to_look());
/// ```
#[derive(Debug)]
#[must_use = "the units it holds must be passed on or given back"]
pub struct Withdrawn {
    units: usize,
    waker: Option<Waker>,
    /// Set by a [`Queue`] for a parked node it had woken to look.
    woken_to_look: bool,
}

impl Withdrawn {
    /// `units` taken from a node, with the waker it was registered with.
    pub fn new(units: usize, waker: Option<Waker>) -> Self {
        Self {
            units,
            waker,
            woken_to_look: false,
        }
    }

    /// The units the node held.
    #[must_use]
    pub fn units(&self) -> usize {
        self.units
    }

    /// Whether the node was a parked thread a [`Queue`] had woken without
    /// units to look, not registered since: giving up, it passes one on.
    #[must_use]
    pub fn woken_to_look(&self) -> bool {
        self.woken_to_look
    }
}

impl Drop for Withdrawn {
    #[inline]
    fn drop(&mut self) {
        // Caught, so a panicking drop during an unwind cannot abort.
        drop_each(|| self.waker.take());
    }
}
