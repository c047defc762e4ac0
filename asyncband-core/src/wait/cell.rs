//! A waiter cell for a side with exactly one endpoint.
//!
//! `state` is `0` (nobody waits; the slot is empty or holds a stale waker),
//! `WAITING` (the slot holds the waker of a waiter that wants one wake) or
//! `BUSY` (one party owns the slot for a moment):
//!
//! - `register`: `0 | WAITING → BUSY` (compare-exchange), store the waker,
//!   then `BUSY → WAITING` with a `SeqCst` store. If a notifier holds `BUSY`,
//!   the waiter is woken at once to poll and re-register: at worst a
//!   spurious poll, never a lost wake.
//! - `grant`: a `SeqCst` load; if `WAITING`, `WAITING → BUSY`, take the
//!   waker, store `0`, wake it. If `BUSY`, the other party is registering
//!   (and re-checks after raising `WAITING`) or notifying: nothing is lost.
//! - `cancel`: nothing ([`WaitSet::cancel`]).

use std::fmt;
use std::pin::Pin;
use std::task::Waker;

use super::spin_hint;
use super::{WaitSet, Withdrawn};
use crate::sync::{AtomicUsize, Ordering, SeqCst, UnsafeCell};

const WAITING: usize = 1;
const BUSY: usize = 2;

/// The wait cell of a single endpoint: one waker slot and one flag.
///
/// # Examples
///
/// ```
/// use asyncband_core::wait::{Cell, WaitSet};
/// use std::pin::pin;
/// use std::task::Waker;
///
/// let cell = Cell::default();
/// let node = pin!(());
/// // SAFETY: the node is pinned and only used with this cell.
/// unsafe { cell.register(node.as_ref(), Waker::noop(), 1, |_| ()) };
/// assert!(cell.is_waiting());
/// cell.grant(|_| 0, |_| ());
/// assert!(!cell.is_waiting());
/// ```
#[derive(Default)]
pub struct Cell {
    /// `0`, `WAITING` or `BUSY` (module docs).
    state: AtomicUsize,
    /// # Safety
    ///
    /// Read or written only by the party that moved `state` to `BUSY`.
    waker: UnsafeCell<Option<Waker>>,
}

impl fmt::Debug for Cell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cell")
            .field("waiting", &self.is_waiting())
            .finish()
    }
}

// SAFETY: the waker slot is only touched by the one party holding `BUSY`;
// `Waker` is `Send + Sync`.
unsafe impl Send for Cell {}
// SAFETY: as for `Send`.
unsafe impl Sync for Cell {}

impl Cell {
    /// Moves `state` from `from` to `BUSY`; true on success.
    fn lock_from(&self, from: usize) -> bool {
        // ORDERING: Acquire pairs with the Release (SeqCst) store that last
        // released the slot, so this party sees the waker written under it.
        self.state
            .compare_exchange(from, BUSY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes the waker out, releasing the slot to `0`.
    fn take(&self) -> Option<Waker> {
        // SAFETY: the caller holds `BUSY` (just acquired with `lock_from`).
        let waker = self.waker.with_mut(|slot| unsafe { (*slot).take() });
        // ORDERING: Release hands the emptied slot to the next party.
        self.state.store_at(0, Ordering::Release);
        waker
    }
}

/// Releases a cell's slot, not waiting, if user code unwinds while held.
struct Unlock<'a>(&'a AtomicUsize);

impl Drop for Unlock<'_> {
    fn drop(&mut self) {
        // ORDERING: SeqCst, as every store that releases the slot.
        self.0.store_sc(0);
    }
}

// SAFETY: `register` stores `WAITING` with SeqCst before returning; grants
// are never lost (see the module docs); `cancel` is idempotent.
unsafe impl WaitSet for Cell {
    type Node = ();

    #[inline]
    fn is_waiting(&self) -> bool {
        self.state.load_sc() & WAITING != 0
    }

    unsafe fn register(
        &self,
        _node: Pin<&()>,
        waker: &Waker,
        _need: usize,
        _on_change: impl FnOnce(bool),
    ) -> usize {
        loop {
            // ORDERING: Relaxed; the compare-exchange below re-validates.
            let state = self.state.load(Ordering::Relaxed);
            if state == BUSY {
                // A notifier is taking the old waker: wake this task to re-register.
                spin_hint();
                waker.wake_by_ref();
                return 0;
            }
            if self.lock_from(state) {
                break;
            }
        }
        // Cloning a waker is user code: if it unwinds, the guard releases
        // the slot (not waiting: the registering poll is unwinding too).
        let unlock = Unlock(&self.state);
        // SAFETY: we hold BUSY.
        let stale = self.waker.with_mut(|slot| unsafe {
            match &mut *slot {
                Some(old) if old.will_wake(waker) => None,
                other => other.replace(waker.clone()),
            }
        });
        std::mem::forget(unlock);
        // ORDERING: SeqCst: the waiter's flag write of the store-buffer race
        // (module docs of `wait`); it also releases the slot.
        self.state.store_sc(WAITING);
        // A replaced waker's `drop` is user code too: not while BUSY.
        drop(stale);
        0
    }

    fn grant(&self, _acquire: impl FnMut(usize) -> usize, _on_change: impl FnOnce(bool)) {
        if self.is_waiting() && self.lock_from(WAITING) {
            if let Some(waker) = self.take() {
                waker.wake();
            }
        }
    }

    fn wake_all(&self, on_change: impl FnOnce(bool)) {
        self.grant(|_| 0, on_change);
    }

    unsafe fn cancel(&self, _node: Pin<&()>, _on_change: impl FnOnce(bool)) -> Withdrawn {
        Withdrawn::new(0, None)
    }
}
