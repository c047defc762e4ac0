//! Where endpoints wait, and how they are woken.
//!
//! A side with one endpoint waits in a [`Cell`]; a side with many waits in a
//! [`Queue`]. Both implement [`WaitSet`], the one interface the channel uses.
//!
//! # Units and grants
//!
//! A waiter asks for `need` *units* and is woken once it has been *granted*
//! all of them. What a unit is belongs to the caller: for senders of a bounded
//! channel it is one slot of capacity, taken from the storage by whoever
//! grants it, so a woken sender already owns its slot and nobody can barge
//! past it; for receivers it is one notification that a value was published.
//! Grants go to waiters strictly in the order they registered. A waiter that
//! goes away (a dropped future, a timed-out thread) hands back the units it
//! held, and the caller passes them on, so a wake is never swallowed.
//!
//! A [`Cell`] holds a single waiter and has no units: granting wakes it, and
//! it re-tries its operation.
//!
//! # The store-buffer race
//!
//! A waiter raises its flag and then re-checks the condition it waits for; a
//! notifier changes the condition and then loads the flag. Acquire/release
//! alone allows both loads to miss. Here the flag is raised with a `SeqCst`
//! store inside [`WaitSet::register`] (a queue's once for as long as its
//! list stays non-empty: a waiter that joins others relies on the store
//! that raised it, made under the queue's lock before it), the caller's
//! re-check is a `SeqCst` load, [`WaitSet::is_waiting`] is a `SeqCst` load, and every notifier's
//! change to the condition is a `SeqCst` store or read-modify-write. In the
//! single total order of those operations one of the two loads must see the
//! other side's write. The storage modules state, for each condition, which
//! operation that is.

mod cell;
mod fence;
mod queue;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::Waker;

use crate::unwind::resume;

pub use cell::Cell;
pub use fence::PLAIN_AFTER;
pub(crate) use fence::{Fence, SingleFence};
#[doc(hidden)]
pub use fence::{membarrier_calls, membarrier_decided, membarrier_in_use};
pub use queue::{Queue, QueueNode};

/// A place where the endpoints of one side wait. Implemented by [`Cell`] (one
/// endpoint) and [`Queue`] (many).
///
/// # Safety
///
/// Implementations must keep the promises documented on each method; the
/// channel relies on them to never lose a wake or a unit.
pub unsafe trait WaitSet: Default + Send + Sync + std::fmt::Debug + 'static {
    /// Per-waiter state, stored pinned inside the waiting future.
    type Node: Default + Send + Sync + std::fmt::Debug;

    /// Whether a waiter may be registered. One `SeqCst` load of a word that
    /// changes only when waiters come and go.
    fn is_waiting(&self) -> bool;

    /// Registers `node` (or refreshes its waker) wanting `need` units.
    /// Returns `need` once the node has been granted all it needs: it is
    /// then no longer registered, and its units are the caller's. Returns 0
    /// while the node stays queued, also when it holds part of `need` (those
    /// units come with the rest, or back from [`WaitSet::cancel`]).
    ///
    /// The waiting flag is raised with a `SeqCst` store before this
    /// returns (by this call, or, where it was already up, by the call that
    /// raised it, which happens before this one), so a `SeqCst` re-check by
    /// the caller pairs with the notifier.
    ///
    /// `on_change(true)` runs under the set's lock when it goes from empty to
    /// non-empty, `on_change(false)` when it becomes empty (queues only).
    ///
    /// # Safety
    ///
    /// `node` must stay pinned and registered only with this set until it is
    /// passed to [`WaitSet::cancel`] or has been granted everything it needs.
    unsafe fn register(
        &self,
        node: Pin<&Self::Node>,
        waker: &Waker,
        need: usize,
        on_change: impl FnOnce(bool),
    ) -> usize;

    /// Grants units to waiters in registration order. `acquire(n)` is asked
    /// for up to `n` units for the first waiter and returns how many it could
    /// take; zero stops the round. Waiters that have all they need are
    /// removed and woken after the lock is released. A [`Cell`] does not call
    /// `acquire`; it just wakes its waiter.
    fn grant(&self, acquire: impl FnMut(usize) -> usize, on_change: impl FnOnce(bool));

    /// Hands `units` notifications to the front waiters, one each, as
    /// [`WaitSet::grant`] does with `units` units. When a [`Queue`] notifies a
    /// waiter that may never come back (a future, not a parked thread), it
    /// also wakes the waiters behind it without a notification, up to a
    /// parked thread not woken so yet, which answers for that notification,
    /// so that leaked futures and abandoned registrations, however many,
    /// never keep a notification from a waiter that will act on it. A
    /// parked thread comes back unless its deadline passes; one that gives
    /// up after such a wake passes a notification on
    /// ([`Withdrawn::woken_to_look`]).
    fn notify(&self, units: usize) {
        let mut units = units;
        self.grant(
            move |want| {
                let take = want.min(units);
                units -= take;
                take
            },
            |_| (),
        );
    }

    /// A node for a thread that parks until it is woken: it always comes
    /// back for what it is handed (see [`WaitSet::notify`]).
    #[must_use]
    fn parked_node() -> Self::Node {
        Self::Node::default()
    }

    /// Wakes every waiter without granting anything (the channel closed).
    fn wake_all(&self, on_change: impl FnOnce(bool));

    /// Removes `node` if it is registered and returns what it held: the
    /// units granted to it (in full or in part), which the caller must pass
    /// on or give back, and its waker, which the returned value drops after
    /// that; and whether it was a parked thread woken to look for itself
    /// (see [`Withdrawn::woken_to_look`]). Idempotent.
    ///
    /// # Safety
    ///
    /// `node` must only ever have been registered with this set.
    unsafe fn cancel(&self, node: Pin<&Self::Node>, on_change: impl FnOnce(bool)) -> Withdrawn;
}

/// What [`WaitSet::cancel`] took from a node: the units it held, and its
/// waker. A waker's `drop` is user code that may panic, so the waker is
/// dropped with this value, after the caller has passed the units on or
/// given them back: a panic there loses no unit.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::Withdrawn;
///
/// let withdrawn = Withdrawn::new(2, None);
/// assert_eq!(withdrawn.units(), 2);
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

    /// Whether the node was a parked thread that a [`Queue`] had woken,
    /// without units, to look at the channel for a waiter that may not
    /// come back (see [`WaitSet::notify`]), and that had not registered
    /// since. Such a thread answers for that notification; one that gives
    /// up without looking (its deadline passed) must pass a notification
    /// on, or a waiter behind it may sleep with a value queued.
    ///
    /// ```
    /// use asyncband_core::wait::Withdrawn;
    ///
    /// assert!(!Withdrawn::new(0, None).woken_to_look());
    /// ```
    #[must_use]
    pub fn woken_to_look(&self) -> bool {
        self.woken_to_look
    }
}

impl Drop for Withdrawn {
    #[inline]
    fn drop(&mut self) {
        if let Some(waker) = self.waker.take() {
            // Caught, so that a waker whose drop panics while this thread is
            // already unwinding (the units' hand-over panicked) cannot
            // abort.
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| drop(waker))) {
                resume(Some(panic));
            }
        }
    }
}
