//! The producer side of [`Chan`]: pushing, reserving capacity, and granting
//! it to waiting senders in queue order. Each waiting operation is a `poll_*`
//! method on the waiter's node and `registered` flag, which its future owns;
//! blocking operations drive the same futures with a parking waker.

#![allow(
    clippy::inline_always,
    reason = "each message's steps are `inline(always)`: with a hint alone LLVM leaves one out of line in some builds, a call per message"
)]

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
        unsafe { self.storage.try_push(cursor, value) }.map_err(refused)?;
        // SAFETY: forwarded from the caller.
        unsafe { self.pushed(cursor) };
        Ok(())
    }

    /// As [`Chan::try_send`], from `*value`, taken only on success.
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
        unsafe { self.storage.try_push_from(cursor, value) }.map_err(refused)?;
        // SAFETY: forwarded from the caller.
        unsafe { self.pushed(cursor) };
        Ok(())
    }

    /// After a push: wakes a receiver; a fenced single producer counts it.
    ///
    /// # Safety
    ///
    /// The producer contract for `cursor`.
    #[inline(always)]
    unsafe fn pushed(&self, cursor: &mut S::ProducerCursor) {
        self.notify_receivers();
        // SAFETY: forwarded from the caller.
        unsafe {
            self.storage
                .after_push(cursor, || self.waiters.rx.is_waiting());
        }
    }

    /// Pushes through a held unit, used up either way; no notification.
    ///
    /// # Safety
    ///
    /// The caller gives up a held unit; the producer contract for `cursor`.
    pub(crate) unsafe fn push_unit(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), SendError<S::Item>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.storage.push_reserved(cursor, value) }.map_err(SendError)
    }

    /// After [`Chan::push_unit`], outside any turn at the cursor: notifies a
    /// receiver, and a single producer's own waiting reservation, which may
    /// have counted the value as a unit and as queued (`Storage::try_acquire`).
    pub(crate) fn pushed_unit(&self) {
        self.notify_receivers();
        if !many::<S::Senders>() {
            self.notify_senders();
        }
    }

    /// Reserves `n` units of capacity now: zero reserve nothing; more than
    /// the capacity can never be held, so are refused as full.
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
        unsafe { self.storage.try_acquire(n) }.map_err(refused)
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

    /// Polls a send of `*value` (taken on completion); the node only to wait.
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

    /// [`Chan::poll_send`] past the ready path: registers, then re-checks.
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
            // A registered single sender tries first: its cell carries no
            // grant, and registering would clone a waker a success then drops.
            // SAFETY: forwarded from the caller.
            if let Some(done) = unsafe { self.retry_send(cursor, node, registered, value) } {
                return Poll::Ready(done);
            }
        }
        // SAFETY: forwarded from the caller.
        let got = unsafe { self.wait_for_units(node, registered, 1, cx) };
        if got > 0 {
            // SAFETY: we hold `got >= 1` units; the caller's producer contract.
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

    /// One try of a maybe registered send: `None` while full, else its result.
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

    /// A sender short of `need` units (re-)registers and returns the units
    /// granted (node idle again), or 0 with the flag raised and the barrier
    /// done: the caller re-checks. A first registration also grants capacity
    /// freed before it and wakes a receiver (`Chan::nudge_receivers`).
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
        // SAFETY: the wait set marks the storage as it turns (non-)empty.
        let on_change = |waiting| unsafe { self.storage.set_waiting(waiting) };
        // SAFETY: the caller's contract on `node`.
        let register = || unsafe { self.tx_wait().register(node, cx.waker(), need, on_change) };
        let first = !*registered;
        let mut got = register();
        debug_assert!(!first || got == 0, "an idle node holds no grant");
        if got == 0 {
            *registered = true;
            self.storage.before_send_wait();
        }
        if first {
            // Skip the grant and its second lock when nothing is free after the
            // barrier; a single sender's cell carries no grants.
            let may_grant = many::<S::Senders>() && self.storage.may_grant();
            if may_grant {
                self.grant_senders();
            }
            self.nudge_receivers();
            got = if may_grant { register() } else { 0 };
        }
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
            // SAFETY: the caller's contract; the storage marked as it empties.
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

    /// [`Chan::send_blocking`] of a large value once full: reserves, then
    /// moves it once (through a future's frames it can overflow a debug stack).
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
                // SAFETY: the unit just reserved; the caller's producer side.
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

    /// [`Chan::send_blocking`] once full: backs off, then parks on a future.
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
        // SAFETY: forwarded; the future is done or dropped before we return.
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
            // SAFETY: the node is pinned, withdrawn by `reserving`'s drop; the
            // units are the caller's.
            unsafe { self.poll_reserve(reserving.node, &mut reserving.registered, n, cx) }
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

/// A blocking reservation's registration, withdrawn on drop (deadline or
/// unwind).
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

/// The value a send still holds, to hand back or push through a grant.
fn held<T>(value: &mut Option<T>) -> T {
    value
        .take()
        .expect("a send holds its value until it is sent")
}

/// A push's refusal as a [`TrySendError`].
fn refused<T>(err: PushError<T>) -> TrySendError<T> {
    match err {
        PushError::Full(value) => TrySendError::Full(value),
        PushError::Closed(value) => TrySendError::Disconnected(value),
    }
}
