//! The consumer side of [`Chan`]: popping, and passing on the notifications
//! that wake waiting receivers.

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
    /// be asleep although the channel holds values: the notification of the
    /// send that woke nobody went to a `recv` future that was leaked while
    /// registered, and at capacity 1 no later send makes up for it. A full
    /// channel has something for receivers, so wake one; its receive frees
    /// the capacity this sender waits for.
    pub(crate) fn nudge_receivers(&self) {
        if many::<S::Receivers>() {
            self.notify_receivers();
        }
    }

    /// After a value was popped: wakes a sender waiting for the room, and
    /// lets a fenced single consumer count the publish (`wait/fence.rs`).
    ///
    /// # Safety
    ///
    /// The consumer contract (module docs) for `cursor`.
    #[inline]
    unsafe fn popped(&self, cursor: &mut S::Cursor) {
        // A waker that unwinds out of the grant skips the count below once;
        // it only decides when the fence goes back to plain stores.
        self.notify_senders();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.storage
                .after_pop(cursor, || self.waiters.tx.is_waiting());
        }
    }

    /// Takes the value `front` found, releases its place and notifies: the
    /// receive of a small value, held in registers until it is returned, so
    /// a waker that panics in the notification drops it once. A large one
    /// goes through [`Chan::popped_guard`] instead (see [`Popped`]).
    ///
    /// # Safety
    ///
    /// The consumer contract for `cursor`; `front` came from this channel's
    /// storage with `cursor`.
    #[inline]
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

    /// Receives the next value if one is ready. A value whose send completed
    /// before this call is found: when the next position is claimed by a
    /// producer still writing it (a few instructions, no user code), the
    /// receive waits the write out rather than report the channel empty
    /// with a completed value behind it.
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
        match unsafe { self.storage.try_front(cursor) } {
            Ok(front) if is_large::<S::Item>() => {
                // SAFETY: forwarded from the caller.
                let mut popped = unsafe { self.popped_guard(cursor, front) };
                // SAFETY: taken once; `popped` releases it afterwards.
                Ok(unsafe { popped.take() })
            }
            Ok(mut front) => {
                // `take_popped`, spelled out: this shape lays out the
                // one-thread ready path best.
                // SAFETY: forwarded from the caller; taken once, then
                // released.
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
            Err(PopError::Busy) => unsafe { self.try_recv_behind_write(cursor) },
        }
    }

    /// [`Chan::try_recv`] once the next position turned out claimed by a
    /// producer still writing it: waits the write out. Out of line, so the
    /// ready path stays small.
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
        // A completed send waits behind the write: spin, as crossbeam does.
        // A yield here would hand the core to senders that, on a full
        // channel, can only spin on it for their whole time slice.
        loop {
            spin_hint();
            // SAFETY: forwarded from the caller.
            match unsafe { self.storage.try_front(cursor) } {
                // SAFETY: forwarded from the caller; `front` came from this
                // storage. (A large value goes through a local here: this
                // path is rare.)
                Ok(front) => return Ok(unsafe { self.take_popped(cursor, front) }),
                Err(PopError::Empty) => return Err(TryRecvError::Empty),
                Err(PopError::Closed) => return Err(TryRecvError::Disconnected),
                Err(PopError::Busy) => {}
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

    /// [`Chan::poll_recv`] past the ready path: spins on a value being
    /// written, registers, re-checks. `first` is what a pop just found.
    /// Out of line, so that the ready path inlines.
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
        // Every registration is followed by one more attempt: only a
        // re-check after raising the flag pairs with a notifier that looked
        // at the flag before it.
        let mut rechecked = false;
        loop {
            let attempt = match first.take() {
                Some(missed) => Err(missed),
                // SAFETY: the consumer contract from the caller.
                None => unsafe { self.storage.front(cursor) },
            };
            match attempt {
                Ok(front) if is_large::<S::Item>() => {
                    // The guard releases the place even if passing the
                    // notification on unwinds (the value is then leaked).
                    // SAFETY: the consumer contract from the caller.
                    let mut popped = unsafe { self.popped_guard(cursor, front) };
                    // SAFETY: the caller's contract on `node`.
                    unsafe { self.cancel_recv(node, registered) };
                    // SAFETY: taken once; `popped` releases it afterwards.
                    return Poll::Ready(Ok(unsafe { popped.take() }));
                }
                Ok(front) => {
                    // Taken, and its place released, before the notification
                    // this receive held is passed on: that runs wakers, and
                    // one that unwinds then drops the value.
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
                Err(PopError::Busy) if !S::NOTIFIES_BUSY => {
                    // Claimed and being written; its producer may not see our
                    // flag, so never sleep on it.
                    spins += 1;
                    if spins < BUSY_POLL_SPINS || cfg!(asyncband_loom) {
                        // (loom loses a thread's own unpark token after a
                        // yield, so models never rely on the self-wake below.)
                        spin_hint();
                    } else if spins == BUSY_POLL_SPINS {
                        crate::sync::thread::yield_now();
                    } else {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
                // A value being written whose producer will see our flag is
                // waited for like an empty channel.
                Err(PopError::Empty | PopError::Busy) => {
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

    /// As [`Chan::cancel_recv`], for a receive that gives up without looking
    /// at the channel again (a dropped future, a blocked thread whose
    /// deadline passed): a parked thread woken to look for a waiter that
    /// may not come back answers for that waiter's notification, so it
    /// passes one on as well ([`crate::wait::Withdrawn::woken_to_look`]).
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
            // The node's waker is dropped here, after its notification is
            // passed on.
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
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_recv(cursor) } {
            Ok(value) => Ok(value),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            // SAFETY: forwarded from the caller.
            Err(TryRecvError::Empty) => unsafe { self.recv_blocking_waiting(cursor, deadline) },
        }
    }

    /// [`Chan::recv_blocking`] once the channel was empty: backs off by the
    /// policy's schedule, then (a park channel) waits as a future parked on,
    /// and records how long the wait lasted for the next one.
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
        // As in `send_blocking_waiting`: the caller has just tried.
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(RecvTimeoutError::Timeout);
            }
            if !backoff.snooze() {
                break;
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_recv(cursor) } {
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

/// A popped value's place, held between [`Storage::front`] and
/// [`Storage::release_front`]: dropping the guard releases the place and
/// wakes a sender waiting for it.
///
/// A receive builds its result from [`Popped::take`] while the guard is
/// alive, and the guard drops after: the value goes from the slot straight
/// into the result, where a value held across the wake is copied twice.
/// The price: if a waker panics in the wake, the unwind leaves through a
/// function whose result is already written, and Rust does not drop it.
/// The value is leaked (safe, and only when a waker panics); the slot, the
/// grant and every other waiter are handled as usual.
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
        // SAFETY: taken from exactly once (`Popped::take`'s contract), with
        // the cursor it came from and the consumer contract.
        unsafe {
            self.chan.storage.release_front(self.cursor, front);
            self.chan.popped(self.cursor);
        }
    }
}
