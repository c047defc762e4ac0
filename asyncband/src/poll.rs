//! The wake-up of a cloneable receiver's `poll_recv` registration.
//!
//! `poll_recv` leaves its registration in the receiver, first in the wait
//! line of the channel's receivers. Unlike a future's, nothing guarantees
//! that whoever owns that registration ever polls it again: the future
//! that polled may be gone, and the receiver used through `recv` or a clone
//! that waits behind it. A notification the registration holds would then
//! strand a receiver that waits with values queued.
//!
//! So its waker does two things: it wakes the task that polled, and it
//! gives one more notification to the next waiting receiver
//! ([`Chan::notify_one_receiver`]). A wake that reaches a task that is
//! gone is thus never the only one. The extra notification does not travel
//! further: a forwarding waker woken while forwarding (the next receiver is
//! itself a `poll_recv` registration) only wakes its task. So a value wakes
//! at most two receivers; the one that finds nothing registers again.

use std::cell::Cell;
use std::sync::Arc as StdArc;
use std::task::{Wake, Waker};

use asyncband_core::Arc;
use asyncband_core::chan::Chan;
use asyncband_core::storage::Storage;

/// The waker a cloneable receiver's `poll_recv` registers.
struct Forward<S: Storage> {
    task: Waker,
    chan: Arc<Chan<S>>,
}

thread_local! {
    /// Whether this thread is inside a forwarding wake, so that the
    /// notification it passes on is not passed on again.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

impl<S: Storage + Send + Sync + 'static> Wake for Forward<S> {
    fn wake(self: StdArc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &StdArc<Self>) {
        self.task.wake_by_ref();
        let nested = FORWARDING.with(|forwarding| forwarding.replace(true));
        if !nested {
            // A panicking wake inside leaves the flag raised on this thread:
            // later forwards from it would only wake their own task, which is
            // what a registration without forwarding does.
            self.chan.notify_one_receiver();
            FORWARDING.with(|forwarding| forwarding.set(false));
        }
    }
}

/// A waker that wakes `task` and passes a notification on (module docs).
pub(crate) fn forwarding_waker<S: Storage + Send + Sync + 'static>(
    task: &Waker,
    chan: &Arc<Chan<S>>,
) -> Waker {
    Waker::from(StdArc::new(Forward {
        task: task.clone(),
        chan: Arc::clone(chan),
    }))
}
