//! The producer side of [`Chan`]: pushing, reserving capacity, and giving
//! it back to the senders that wait for it, in the order they queued.
//!
//! Each waiting operation is a `poll_*` method that takes the waiter's node
//! and a `registered` flag; the futures own those and call it, and the
//! blocking operations drive the same futures with a parking waker.

use std::pin::{Pin, pin};
use std::task::{Context, Poll};
use std::time::Instant;

use super::{Chan, Send as SendFuture, TxNode, many};
use crate::error::{SendError, SendTimeoutError, TrySendError};
use crate::slot::is_large;
use crate::storage::{PushError, Storage};
use crate::wait::{Backoff, Wait, WaitSet, block_on};

impl<S: Storage> Chan<S> {
    /// Sends `value` if there is capacity now.
    ///
    /// # Safety
    ///
    /// The producer contract (module docs) for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every blocking and try call; LLVM otherwise often leaves it out of line, a call per message"
    )]
    pub(crate) unsafe fn try_send(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.try_push(cursor, value) } {
            Ok(()) => {
                // SAFETY: forwarded from the caller.
                unsafe { self.pushed(cursor) };
                Ok(())
            }
            Err(PushError::Full(value)) => Err(TrySendError::Full(value)),
            Err(PushError::Closed(value)) => Err(TrySendError::Disconnected(value)),
        }
    }

    /// As [`Chan::try_send`], with the value in `*value`, taken out only by
    /// a send that succeeds (see [`Storage::try_push_from`]).
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`, and `*value` holds a value.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every send future's ready path; LLVM otherwise leaves it out of line"
    )]
    pub(crate) unsafe fn try_send_from(
        &self,
        cursor: &mut S::ProducerCursor,
        value: &mut Option<S::Item>,
    ) -> Result<(), TrySendError<()>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.storage.try_push_from(cursor, value) } {
            Ok(()) => {
                // SAFETY: forwarded from the caller.
                unsafe { self.pushed(cursor) };
                Ok(())
            }
            Err(PushError::Full(())) => Err(TrySendError::Full(())),
            Err(PushError::Closed(())) => Err(TrySendError::Disconnected(())),
        }
    }

    /// After a value was pushed: wakes a waiting receiver, and lets a fenced
    /// single producer count the publish (`wait/fence.rs`).
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`.
    #[inline]
    unsafe fn pushed(&self, cursor: &mut S::ProducerCursor) {
        self.notify_receivers();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.storage
                .after_push(cursor, || self.waiters.rx.is_waiting());
        }
    }

    /// Pushes through a held unit, which is used up either way; does not
    /// notify (see [`Chan::pushed_unit`]).
    ///
    /// # Safety
    ///
    /// The caller holds a unit and gives it up here; the producer contract
    /// for `cursor`.
    pub(crate) unsafe fn push_unit(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), SendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.storage.push_reserved(cursor, value) }.map_err(SendError)
    }

    /// After [`Chan::push_unit`], outside any turn at the cursor: notifies a
    /// receiver. A single producer's push also wakes the producer's own
    /// waiting reservation, which may have counted the value both as a
    /// unit and as queued while the push ran (`Storage::try_acquire`).
    pub(crate) fn pushed_unit(&self) {
        self.notify_receivers();
        if !many::<S::Senders>() {
            self.notify_senders();
        }
    }

    /// Reserves `n` units of capacity now. Zero units reserve nothing; more
    /// than the capacity can never be held at once, so that is refused as
    /// full.
    ///
    /// # Safety
    ///
    /// The caller acts as a producer, and takes the `n` units on success.
    pub(crate) unsafe fn try_reserve(&self, n: usize) -> Result<(), TrySendError<()>> {
        let beyond = S::CAPACITY.is_some_and(|cap| n > cap);
        if n == 0 || beyond {
            return if self.is_closed() {
                Err(TrySendError::Disconnected(()))
            } else if beyond {
                Err(TrySendError::Full(()))
            } else {
                Ok(())
            };
        }
        // SAFETY: forwarded from the caller; `1 <= n <= CAP`, checked above.
        match unsafe { self.storage.try_acquire(n) } {
            Ok(()) => Ok(()),
            Err(PushError::Full(())) => Err(TrySendError::Full(())),
            Err(PushError::Closed(())) => Err(TrySendError::Disconnected(())),
        }
    }

    /// Gives back `units` of capacity and passes them on.
    ///
    /// # Safety
    ///
    /// The caller holds `units` units of this channel and gives each up.
    pub(crate) unsafe fn return_units(&self, units: usize) {
        if units > 0 {
            // SAFETY: the caller's contract.
            unsafe { self.storage.release(units) };
            self.grant_senders();
        }
    }

    /// After capacity was freed: grants it to waiting senders, in order.
    #[inline]
    pub(crate) fn notify_senders(&self) {
        if self.waiters.tx.is_waiting() {
            self.grant_senders();
        }
    }

    /// Grants free capacity to waiting senders, front first.
    pub(crate) fn grant_senders(&self) {
        // SAFETY: the wait set hands every unit it takes to a waiter, and
        // marks the storage exactly when it turns non-empty or empty.
        self.waiters.tx.grant(
            |n| unsafe { self.storage.grant(n) },
            |waiting| unsafe { self.storage.set_waiting(waiting) },
        );
    }

    /// Polls a send of `*value` (taken on completion, left in place while
    /// pending), with the node asked for only when the send has to wait.
    ///
    /// # Panics
    ///
    /// If `*value` is `None`: the send was polled after it completed.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`; `node` returns the same node at
    /// every call for the same send, which stays pinned, is used only with
    /// this channel's senders, and is passed to [`Chan::cancel_send`]
    /// before it goes away if `registered` is set.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every send future; out of line it costs a call per message"
    )]
    pub(crate) unsafe fn poll_send<'n>(
        &self,
        cursor: &mut S::ProducerCursor,
        node: impl FnOnce() -> Pin<&'n TxNode<S>>,
        registered: &mut bool,
        value: &mut Option<S::Item>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<S::Item>>>
    where
        TxNode<S>: 'n,
    {
        assert!(value.is_some(), "send polled after completion");
        if !*registered {
            // SAFETY: the producer contract from the caller.
            match unsafe { self.try_send_from(cursor, value) } {
                Ok(()) => return Poll::Ready(Ok(())),
                Err(TrySendError::Disconnected(())) => {
                    return Poll::Ready(Err(SendError(held(value))));
                }
                Err(TrySendError::Full(())) => {}
            }
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.poll_send_waiting(cursor, node(), registered, value, cx) }
    }

    /// [`Chan::poll_send`] past the ready path: registers (or takes a
    /// grant), then re-checks once. Out of line, so that the ready path
    /// inlines.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_send`].
    #[inline(never)]
    unsafe fn poll_send_waiting(
        &self,
        cursor: &mut S::ProducerCursor,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        value: &mut Option<S::Item>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<S::Item>>> {
        if *registered && !many::<S::Senders>() {
            // A single sender polled again while registered tries first: its
            // cell carries no grant, and registering first would clone a
            // waker that the send, when it then goes through, drops again.
            // SAFETY: forwarded from the caller.
            if let Some(done) = unsafe { self.retry_send(cursor, node, registered, value) } {
                return Poll::Ready(done);
            }
        }
        // SAFETY: forwarded from the caller.
        let got = unsafe { self.wait_for_units(node, registered, 1, cx) };
        if got > 0 {
            // SAFETY: we hold `got >= 1` units; the producer contract from
            // the caller.
            let sent = unsafe { self.push_unit(&mut *cursor, held(value)) };
            if sent.is_ok() {
                self.notify_receivers();
            }
            // SAFETY: the `got - 1` granted units the push did not use.
            unsafe { self.return_units(got - 1) };
            return Poll::Ready(sent);
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.retry_send(cursor, node, registered, value) }
            .map_or(Poll::Pending, Poll::Ready)
    }

    /// One attempt of a send that may be registered: when it goes through,
    /// or finds the channel closed, the send leaves the wait set and the
    /// result is returned; `None` while the channel is full.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_send`].
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "two call sites in the out-of-line waiting path, each taken once per wait at capacity 1"
    )]
    unsafe fn retry_send(
        &self,
        cursor: &mut S::ProducerCursor,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        value: &mut Option<S::Item>,
    ) -> Option<Result<(), SendError<S::Item>>> {
        // SAFETY: the producer contract from the caller.
        let done = match unsafe { self.try_send_from(cursor, value) } {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(())) => Err(SendError(held(value))),
            Err(TrySendError::Full(())) => return None,
        };
        // SAFETY: the caller's contract on `node`.
        unsafe { self.cancel_send(node, registered) };
        Some(done)
    }

    /// A sender (a send or a reservation) that found no room for `need`
    /// units: registers, or refreshes its registration, and returns the
    /// units granted to it (its node is then idle again). With none, the
    /// flag is raised and the barrier done, and the caller re-checks once
    /// before it returns `Pending`. The first registration also offers
    /// capacity freed before it to the front waiter (with many senders,
    /// maybe this one) and wakes a receiver (`Chan::nudge_receivers`).
    ///
    /// # Safety
    ///
    /// `node` as for [`Chan::poll_send`].
    unsafe fn wait_for_units(
        &self,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        need: usize,
        cx: &mut Context<'_>,
    ) -> usize {
        // SAFETY: the wait set marks the storage exactly when it turns
        // non-empty or empty.
        let on_change = |waiting| unsafe { self.storage.set_waiting(waiting) };
        // SAFETY: the caller's contract on `node`.
        let register = || unsafe { self.tx_wait().register(node, cx.waker(), need, on_change) };
        let got = if *registered {
            let got = register();
            if got == 0 {
                self.storage.before_send_wait();
            }
            got
        } else {
            let got = register();
            debug_assert_eq!(got, 0, "an idle node holds no grant");
            *registered = true;
            self.storage.before_send_wait();
            // Many senders skip the grant, and the second lock that collects
            // it, when nothing is free after the barrier (`may_grant`); a
            // single sender's cell carries no grants.
            let may_grant = many::<S::Senders>() && self.storage.may_grant();
            if may_grant {
                self.grant_senders();
            }
            self.nudge_receivers();
            if may_grant { register() } else { 0 }
        };
        if got > 0 {
            *registered = false;
        }
        got
    }

    /// Leaves the senders' wait set, passing on any capacity granted.
    ///
    /// # Safety
    ///
    /// `node` was only ever registered with this channel's senders.
    pub(crate) unsafe fn cancel_send(&self, node: Pin<&TxNode<S>>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract; the storage is marked as the
            // set turns empty.
            let withdrawn = unsafe {
                self.tx_wait()
                    .cancel(node, |waiting| self.storage.set_waiting(waiting))
            };
            // SAFETY: `cancel` handed us the units granted to the node.
            unsafe { self.return_units(withdrawn.units()) };
            // The node's waker is dropped here, after its units are back.
        }
    }

    /// Polls a reservation of `n` units (`1 <= n <= CAP`); `Ready(Ok(()))`
    /// once the caller holds them.
    ///
    /// # Safety
    ///
    /// The caller acts as a producer and takes the units; `node` as for
    /// [`Chan::poll_send`].
    pub(crate) unsafe fn poll_reserve(
        &self,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        n: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<()>>> {
        assert_reservable::<S>(n);
        if !*registered {
            // SAFETY: forwarded from the caller; `n` checked just above.
            match unsafe { self.storage.try_acquire(n) } {
                Ok(()) => return Poll::Ready(Ok(())),
                Err(PushError::Closed(())) => return Poll::Ready(Err(SendError(()))),
                Err(PushError::Full(())) => {}
            }
        }
        // SAFETY: forwarded from the caller.
        let got = unsafe { self.wait_for_units(node, registered, n, cx) };
        if got == n {
            return Poll::Ready(Ok(()));
        }
        if got > 0 {
            // Woken part-way by a close: give the part back.
            // SAFETY: the `got` units were granted to this reservation.
            unsafe { self.return_units(got) };
            return Poll::Ready(Err(SendError(())));
        }
        // SAFETY: forwarded from the caller.
        let result = match unsafe { self.storage.try_acquire(n) } {
            Ok(()) => Ok(()),
            Err(PushError::Closed(())) => Err(SendError(())),
            Err(PushError::Full(())) => return Poll::Pending,
        };
        // SAFETY: the caller's contract on `node`.
        unsafe { self.cancel_send(node, registered) };
        Poll::Ready(result)
    }

    /// Sends `value`, waiting while the channel is full, until `deadline` if
    /// there is one.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::try_send`: a ready path, a call per message out of line"
    )]
    pub(crate) unsafe fn send_blocking(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_send(cursor, value) } {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(value)) => Err(SendTimeoutError::Disconnected(value)),
            // SAFETY: forwarded from the caller.
            Err(TrySendError::Full(value)) if is_large::<S::Item>() => unsafe {
                self.send_blocking_reserving(cursor, value, deadline)
            },
            // SAFETY: forwarded from the caller.
            Err(TrySendError::Full(value)) => unsafe {
                self.send_blocking_waiting(cursor, value, deadline)
            },
        }
    }

    /// [`Chan::send_blocking`] of a large value once the channel was full:
    /// waits as a reservation, then moves the value once into its slot.
    /// Waiting as a send future would carry the value through every frame
    /// of the wait, which in a debug build can overflow a thread's stack.
    ///
    /// # Safety
    ///
    /// As for [`Chan::send_blocking`].
    #[inline(never)]
    unsafe fn send_blocking_reserving(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.reserve_blocking(1, deadline) } {
            Ok(()) => {
                // SAFETY: the unit just reserved; the producer contract is
                // the caller's.
                let sent = unsafe { self.push_unit(cursor, value) };
                if sent.is_ok() {
                    self.pushed_unit();
                }
                sent.map_err(|SendError(value)| SendTimeoutError::Disconnected(value))
            }
            Err(SendTimeoutError::Timeout(())) => Err(SendTimeoutError::Timeout(value)),
            Err(SendTimeoutError::Disconnected(())) => Err(SendTimeoutError::Disconnected(value)),
        }
    }

    /// [`Chan::send_blocking`] once the channel was full: backs off, then
    /// (a park channel) waits as a future parked on.
    ///
    /// # Safety
    ///
    /// As for [`Chan::send_blocking`].
    #[inline(never)]
    unsafe fn send_blocking_waiting(
        &self,
        cursor: &mut S::ProducerCursor,
        mut value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        let mut backoff = Self::sender_backoff();
        // The caller has just tried: wait a little before each attempt.
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(SendTimeoutError::Timeout(value));
            }
            if !backoff.snooze() {
                break;
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_send(cursor, value) } {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(v)) => {
                    return Err(SendTimeoutError::Disconnected(v));
                }
                Err(TrySendError::Full(v)) => value = v,
            }
        }
        drop(backoff);
        // Only a park channel's schedule ends.
        // SAFETY: forwarded from the caller; the future borrows `self` and
        // is driven to completion (or dropped) before we return.
        let mut future = pin!(unsafe { SendFuture::new(self, cursor, value) });
        match block_on(future.as_mut(), deadline, Self::sender_backoff) {
            Some(Ok(())) => Ok(()),
            Some(Err(SendError(value))) => Err(SendTimeoutError::Disconnected(value)),
            None => match future.take_value() {
                Some(value) => Err(SendTimeoutError::Timeout(value)),
                // Completed on its last poll after all: nothing to hand back.
                None => Ok(()),
            },
        }
    }

    /// Reserves `n` units (`1 <= n <= CAP`), waiting while the channel is
    /// full, until `deadline` if there is one.
    ///
    /// # Safety
    ///
    /// The caller acts as a producer and takes the units.
    pub(crate) unsafe fn reserve_blocking(
        &self,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<()>> {
        let mut backoff = Self::sender_backoff();
        loop {
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_reserve(n) } {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(())) => {
                    return Err(SendTimeoutError::Disconnected(()));
                }
                Err(TrySendError::Full(())) => {}
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(SendTimeoutError::Timeout(()));
            }
            if !backoff.snooze() {
                break;
            }
        }
        drop(backoff);
        let node = pin!(TxNode::<S>::default());
        let mut reserving = Reserving {
            chan: self,
            node: node.as_ref(),
            registered: false,
        };
        let future = pin!(std::future::poll_fn(|cx| {
            // SAFETY: the node is pinned above and withdrawn by `reserving`'s
            // drop; the units are the caller's (forwarded contract).
            unsafe {
                reserving
                    .chan
                    .poll_reserve(reserving.node, &mut reserving.registered, n, cx)
            }
        }));
        match block_on(future, deadline, Self::sender_backoff) {
            Some(Ok(())) => Ok(()),
            Some(Err(SendError(()))) => Err(SendTimeoutError::Disconnected(())),
            None => Err(SendTimeoutError::Timeout(())),
        }
    }

    /// How a blocked sender waits before it parks (see the policy).
    fn sender_backoff() -> Backoff {
        S::Wait::sender_backoff::<S::Senders, S::Receivers>()
    }
}

/// A blocking reservation's registration, withdrawn when it drops (the
/// deadline passed, or a waker unwound).
struct Reserving<'a, S: Storage> {
    chan: &'a Chan<S>,
    node: Pin<&'a TxNode<S>>,
    registered: bool,
}

impl<S: Storage> Drop for Reserving<'_, S> {
    fn drop(&mut self) {
        // SAFETY: the node was only used with this channel's senders.
        unsafe { self.chan.cancel_send(self.node, &mut self.registered) };
    }
}

/// Panics unless a reservation of `n` units can be granted: `1 <= n <= CAP`.
#[inline]
pub(crate) fn assert_reservable<S: Storage>(n: usize) {
    assert!(
        n >= 1 && S::CAPACITY.is_none_or(|cap| n <= cap),
        "a reservation of {n} units: between 1 and the capacity can be granted"
    );
}

/// The value a send still holds, to hand back in a [`SendError`] or push
/// through a granted unit.
fn held<T>(value: &mut Option<T>) -> T {
    value
        .take()
        .expect("a send holds its value until it is sent")
}
