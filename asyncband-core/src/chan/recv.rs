//! The consumer side of [`Chan`]: popping, and passing on the notifications
//! that wake waiting receivers.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

use std::mem::ManuallyDrop;
use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Instant;

use super::{Chan, ClosingNode, Recv, RxNode, many};
use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::slot::is_large;
use crate::storage::{PopError, Storage};
use crate::wait::{BUSY_POLL_SPINS, Wait, WaitSet, block_on, spin_hint};

impl<S: Storage> Chan<S> {
    /// After a push: wakes one waiting receiver.
    #[inline]
    pub(crate) fn notify_receivers(&self) {
        if self.waiters.rx.is_waiting() {
            self.waiters.rx.notify(1);
        }
    }

    /// A sender is about to wait for capacity. With many receivers, one may
    /// sleep on a full channel (its send's notification went to a leaked
    /// registered `recv`), so wake one: its receive frees the capacity.
    pub(crate) fn nudge_receivers(&self) {
        if many::<S::Receivers>() {
            self.notify_receivers();
        }
    }

    /// After a pop: wakes a sender; a fenced single consumer counts it.
    ///
    /// # Safety
    ///
    /// The consumer contract (module docs) for `cursor`.
    #[inline(always)]
    unsafe fn popped(&self, cursor: &mut S::Cursor) {
        // A waker unwinding from the grant skips this; it only tunes the fence.
        self.notify_senders();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.storage
                .after_pop(cursor, || self.waiters.tx.is_waiting());
        }
    }

    /// Takes a small value `front` found, releases its place and notifies (a
    /// panicking waker drops it); a large one uses [`Chan::popped_guard`].
    ///
    /// # Safety
    ///
    /// The consumer contract for `cursor`; `front` came from this channel's
    /// storage with `cursor`.
    #[inline(always)]
    unsafe fn take_popped(&self, cursor: &mut S::Cursor, mut front: S::Front) -> S::Item {
        // SAFETY: the caller's contract; taken once, then released.
        let value = unsafe { self.storage.take_front(&mut front) };
        // SAFETY: as above.
        unsafe {
            self.storage.release_front(cursor, front);
            self.popped(cursor);
        }
        value
    }

    /// Holds the value `front` found until the guard drops; see [`Popped`].
    ///
    /// # Safety
    ///
    /// As for [`Chan::take_popped`].
    #[inline]
    unsafe fn popped_guard<'a>(
        &'a self,
        cursor: &'a mut S::Cursor,
        front: S::Front,
    ) -> Popped<'a, S> {
        Popped {
            chan: self,
            cursor,
            front: ManuallyDrop::new(front),
        }
    }

    /// Receives the next value if one is ready. A send completed before this
    /// call is found: a claimed position being written (a few instructions)
    /// is waited out rather than reported empty with a value behind it.
    ///
    /// # Safety
    ///
    /// The consumer contract for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a ready path: out of line it costs a call per message"
    )]
    pub(crate) unsafe fn try_recv(&self, cursor: &mut S::Cursor) -> Result<S::Item, TryRecvError> {
        // SAFETY: forwarded from the caller.
        unsafe { self.recv_now(cursor, false) }
    }

    /// [`Chan::try_recv`], or for a receiver that keeps `waiting`: then
    /// `Empty` may stand for a value being written, and looking costs the
    /// producers nothing ([`Storage::try_front`]).
    ///
    /// # Safety
    ///
    /// As for [`Chan::try_recv`].
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "as `try_recv`")]
    unsafe fn recv_now(
        &self,
        cursor: &mut S::Cursor,
        waiting: bool,
    ) -> Result<S::Item, TryRecvError> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.try_front(cursor, waiting) } {
            Ok(front) if is_large::<S::Item>() => {
                // SAFETY: forwarded from the caller.
                let mut popped = unsafe { self.popped_guard(cursor, front) };
                // SAFETY: taken once; `popped` releases it afterwards.
                Ok(unsafe { popped.take() })
            }
            Ok(mut front) => {
                // `take_popped`, spelled out: the best one-thread layout.
                // SAFETY: forwarded from the caller; taken once, then released.
                let value = unsafe { self.storage.take_front(&mut front) };
                // SAFETY: as above.
                unsafe {
                    self.storage.release_front(cursor, front);
                    self.popped(cursor);
                }
                Ok(value)
            }
            Err(PopError::Empty) => Err(TryRecvError::Empty),
            Err(PopError::Closed) => Err(TryRecvError::Disconnected),
            // SAFETY: forwarded from the caller.
            Err(PopError::Busy | PopError::Writing) => unsafe {
                self.try_recv_behind_write(cursor)
            },
        }
    }

    /// [`Chan::try_recv`] behind a claimed position: waits the write out.
    ///
    /// # Safety
    ///
    /// As for [`Chan::try_recv`].
    #[cold]
    #[inline(never)]
    unsafe fn try_recv_behind_write(
        &self,
        cursor: &mut S::Cursor,
    ) -> Result<S::Item, TryRecvError> {
        // SAFETY: forwarded from the caller.
        if !unsafe { self.storage.published_behind(cursor) } {
            return Err(TryRecvError::Empty);
        }
        // Spin, as crossbeam does: a yield hands the core to spinning senders.
        loop {
            spin_hint();
            // SAFETY: forwarded from the caller.
            match unsafe { self.storage.try_front(cursor, false) } {
                // SAFETY: forwarded; `front` came from here (rare: no guard).
                Ok(front) => return Ok(unsafe { self.take_popped(cursor, front) }),
                Err(PopError::Empty) => return Err(TryRecvError::Empty),
                Err(PopError::Closed) => return Err(TryRecvError::Disconnected),
                Err(PopError::Busy | PopError::Writing) => {}
            }
        }
    }

    /// Polls a receive, with the node asked for only when it has to wait.
    ///
    /// # Safety
    ///
    /// The consumer contract for `cursor`; `node` returns the same node at
    /// every call for the same receive, which stays pinned, is used only
    /// with this channel's receivers, and is passed to
    /// [`Chan::cancel_recv`] (or [`Chan::abandon_recv`]) before it goes away
    /// if `registered` is set.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every receive future; out of line it costs a call per message"
    )]
    pub(crate) unsafe fn poll_recv<'n>(
        &self,
        cursor: &mut S::Cursor,
        node: impl FnOnce() -> Pin<&'n RxNode<S>>,
        registered: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S::Item, RecvError>>
    where
        RxNode<S>: 'n,
    {
        let mut first = None;
        if !*registered {
            // SAFETY: the consumer contract from the caller.
            match unsafe { self.storage.front(cursor) } {
                Ok(front) if is_large::<S::Item>() => {
                    // SAFETY: the consumer contract from the caller.
                    let mut popped = unsafe { self.popped_guard(cursor, front) };
                    // SAFETY: taken once; `popped` releases it afterwards.
                    return Poll::Ready(Ok(unsafe { popped.take() }));
                }
                Ok(front) => {
                    // SAFETY: the consumer contract from the caller.
                    return Poll::Ready(Ok(unsafe { self.take_popped(cursor, front) }));
                }
                Err(PopError::Closed) => return Poll::Ready(Err(RecvError)),
                Err(missed) => first = Some(missed),
            }
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.poll_recv_waiting(cursor, node(), registered, first, cx) }
    }

    /// [`Chan::poll_recv`] past the ready path, `first` what a pop found:
    /// spins on a value being written, registers, re-checks.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_recv`].
    #[inline(never)]
    unsafe fn poll_recv_waiting(
        &self,
        cursor: &mut S::Cursor,
        node: Pin<&RxNode<S>>,
        registered: &mut bool,
        mut first: Option<PopError>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S::Item, RecvError>> {
        let mut spins = 0;
        // Each registration gets one more attempt: only a re-check after
        // raising the flag pairs with a notifier that looked before.
        let mut rechecked = false;
        loop {
            let attempt = match first.take() {
                Some(missed) => Err(missed),
                // SAFETY: the consumer contract from the caller.
                None => unsafe { self.storage.front(cursor) },
            };
            match attempt {
                Ok(front) if is_large::<S::Item>() => {
                    // The guard releases even if the notification unwinds.
                    // SAFETY: the consumer contract from the caller.
                    let mut popped = unsafe { self.popped_guard(cursor, front) };
                    // SAFETY: the caller's contract on `node`.
                    unsafe { self.cancel_recv(node, registered) };
                    // SAFETY: taken once; `popped` releases it afterwards.
                    return Poll::Ready(Ok(unsafe { popped.take() }));
                }
                Ok(front) => {
                    // Taken and released before the held notification is
                    // passed on: a waker unwinding there drops the value.
                    // SAFETY: the consumer contract from the caller.
                    let value = unsafe { self.take_popped(cursor, front) };
                    // SAFETY: the caller's contract on `node`.
                    unsafe { self.cancel_recv(node, registered) };
                    return Poll::Ready(Ok(value));
                }
                Err(PopError::Closed) => {
                    // SAFETY: as above.
                    unsafe { self.cancel_recv(node, registered) };
                    return Poll::Ready(Err(RecvError));
                }
                Err(PopError::Busy) => {
                    // Being written by a producer that may miss our flag.
                    // Later producers of a large value will not.
                    if spins == 0 {
                        self.storage.watch_writes();
                    }
                    spins += 1;
                    if spins < BUSY_POLL_SPINS || cfg!(asyncband_loom) {
                        // (loom loses a thread's own unpark token after a
                        // yield: models never rely on the self-wake below.)
                        spin_hint();
                    } else if spins == BUSY_POLL_SPINS {
                        crate::sync::thread::yield_now();
                    } else {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
                // A producer that will see our flag: wait as if empty.
                Err(PopError::Empty | PopError::Writing) => {
                    if rechecked {
                        return Poll::Pending;
                    }
                    // SAFETY: as above.
                    let got = unsafe { self.rx_wait().register(node, cx.waker(), 1, |_| ()) };
                    if got > 0 {
                        // A notification: the node is idle again; retry.
                        *registered = false;
                        continue;
                    }
                    *registered = true;
                    rechecked = true;
                    self.storage.before_recv_wait();
                }
            }
        }
    }

    /// Leaves the receivers' wait set, passing on a notification it held.
    ///
    /// # Safety
    ///
    /// `node` was only ever registered with this channel's receivers.
    pub(crate) unsafe fn cancel_recv(&self, node: Pin<&RxNode<S>>, registered: &mut bool) {
        // SAFETY: forwarded from the caller.
        unsafe { self.withdraw_recv(node, registered, false) };
    }

    /// As [`Chan::cancel_recv`], for a receive giving up without looking
    /// again (dropped, or past its deadline): a thread woken to look for a
    /// waiter that may not come back passes that notification on too
    /// ([`crate::wait::Withdrawn::woken_to_look`]).
    ///
    /// # Safety
    ///
    /// As for [`Chan::cancel_recv`].
    pub(crate) unsafe fn abandon_recv(&self, node: Pin<&RxNode<S>>, registered: &mut bool) {
        // SAFETY: forwarded from the caller.
        unsafe { self.withdraw_recv(node, registered, true) };
    }

    /// [`Chan::cancel_recv`] or, `abandoned`, [`Chan::abandon_recv`].
    ///
    /// # Safety
    ///
    /// As for [`Chan::cancel_recv`].
    unsafe fn withdraw_recv(&self, node: Pin<&RxNode<S>>, registered: &mut bool, abandoned: bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            let withdrawn = unsafe { self.rx_wait().cancel(node, |_| ()) };
            let units = withdrawn.units() + usize::from(abandoned && withdrawn.woken_to_look());
            if units > 0 {
                self.waiters.rx.notify(units);
            }
            // The node's waker drops here, after its notification.
        }
    }

    /// Polls for the channel to close.
    ///
    /// # Safety
    ///
    /// `node` stays pinned, is used only with this channel's close waiters,
    /// and is passed to [`Chan::cancel_closed`] before it goes away.
    pub(crate) unsafe fn poll_closed(
        &self,
        node: Pin<&ClosingNode<S>>,
        registered: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        if !self.is_closed() {
            // SAFETY: the caller's contract on `node`.
            unsafe { self.waiters.closed.register(node, cx.waker(), 1, |_| ()) };
            *registered = true;
            // Re-check after raising the flag.
            if !self.is_closed() {
                return Poll::Pending;
            }
        }
        // SAFETY: as above.
        unsafe { self.cancel_closed(node, registered) };
        Poll::Ready(())
    }

    /// Leaves the close waiters.
    ///
    /// # Safety
    ///
    /// `node` was only ever registered with this channel's close waiters.
    pub(crate) unsafe fn cancel_closed(&self, node: Pin<&ClosingNode<S>>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            drop(unsafe { self.waiters.closed.cancel(node, |_| ()) });
        }
    }

    /// Receives a value, waiting while the channel is empty, until
    /// `deadline` if there is one.
    ///
    /// # Safety
    ///
    /// The consumer contract for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::try_recv`: a ready path, a call per message out of line"
    )]
    pub(crate) unsafe fn recv_blocking(
        &self,
        cursor: &mut S::Cursor,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        // A waiting look: polling receivers ask nothing of the producers.
        // SAFETY: forwarded from the caller.
        match unsafe { self.recv_now(cursor, true) } {
            Ok(value) => Ok(value),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            // SAFETY: forwarded from the caller.
            Err(TryRecvError::Empty) => unsafe { self.recv_blocking_waiting(cursor, deadline) },
        }
    }

    /// [`Chan::recv_blocking`] once empty: backs off, then parks on a
    /// future, and records the wait's length for the next one.
    ///
    /// # Safety
    ///
    /// As for [`Chan::recv_blocking`].
    #[inline(never)]
    unsafe fn recv_blocking_waiting(
        &self,
        cursor: &mut S::Cursor,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        let waits = &self.waiters.receive_waits;
        let (schedule, spin_nanos) =
            S::Wait::receiver_backoff(waits, || self.storage.head_position());
        let mut backoff = schedule().lengthened(spin_nanos);
        // As in `send_blocking_waiting`: the caller has just looked.
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                // A timeout means `try_recv` found nothing at the deadline:
                // the waiting looks may have passed over a value in flight.
                // SAFETY: forwarded from the caller.
                return match unsafe { self.try_recv(cursor) } {
                    Ok(value) => Ok(value),
                    Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
                    Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
                };
            }
            if !backoff.snooze() {
                break;
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.recv_now(cursor, true) } {
                Ok(value) => {
                    waits.record(backoff.began());
                    return Ok(value);
                }
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
        }
        let began = backoff.began();
        drop(backoff);
        // Only a park channel's schedule ends.
        // SAFETY: forwarded from the caller.
        let future = pin!(unsafe { Recv::parked(self, cursor) });
        match block_on(future, deadline, schedule) {
            Some(Ok(value)) => {
                waits.record(began);
                Ok(value)
            }
            Some(Err(RecvError)) => Err(RecvTimeoutError::Disconnected),
            None => Err(RecvTimeoutError::Timeout),
        }
    }
}

/// A popped value's place, held from [`Storage::front`] until the guard
/// drops, which releases it and wakes a sender. Built from [`Popped::take`]
/// while the guard lives, a result gets the value straight from the slot
/// (held across the wake it is copied twice); if a waker panics there, the
/// already written result is leaked (safe), all else handled as usual.
struct Popped<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::Cursor,
    front: ManuallyDrop<S::Front>,
}

impl<S: Storage> Popped<'_, S> {
    /// Moves the value out.
    ///
    /// # Safety
    ///
    /// Called exactly once before the guard drops.
    #[inline]
    unsafe fn take(&mut self) -> S::Item {
        // SAFETY: the front came from this storage and is taken once.
        unsafe { self.chan.storage.take_front(&mut self.front) }
    }
}

impl<S: Storage> Drop for Popped<'_, S> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the front is moved out only here, once.
        let front = unsafe { ManuallyDrop::take(&mut self.front) };
        // SAFETY: taken exactly once (`Popped::take`), with its cursor.
        unsafe {
            self.chan.storage.release_front(self.cursor, front);
            self.chan.popped(self.cursor);
        }
    }
}
