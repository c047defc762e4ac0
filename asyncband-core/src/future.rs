//! The waiting operations of a channel: send, receive, reserve capacity,
//! await close.
//!
//! Each operation is a `poll_*` method on [`Chan`] that takes the waiter's
//! node and a `registered` flag, plus a future that owns those and calls it.
//! The futures embed their node (so waiting allocates nothing) and are
//! therefore `!Unpin`; [`Send`] and [`Recv`] build theirs when they first
//! wait, so one that completes at its first poll writes none. `Stream`
//! implementations keep a node of their own and call the `poll_*` methods
//! directly.
//!
//! Every operation is cancel-safe: dropping it at any point loses no value
//! (a send that has not completed still owns its value; a receive takes a
//! value only in the poll that returns it) and no wake-up (units it was
//! granted, capacity for senders or a notification for receivers, are
//! passed on to the next waiter). The blocking operations of [`Chan`] drive
//! these same futures, so threads and tasks share one protocol.

use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll};

use crate::arity::Arity;
use crate::chan::{Chan, RxWait, TxWait};
use crate::error::{RecvError, SendError, TrySendError};
use crate::slot::is_large;
use crate::storage::{PopError, PushError, Storage};
use crate::sync::{spin_hint, thread};
use crate::wait::{QueueNode, WaitSet};

/// The waiter node of a sender of storage `S`.
pub type TxNode<S> = <TxWait<S> as WaitSet>::Node;
/// The waiter node of a receiver of storage `S`.
pub type RxNode<S> = <RxWait<S> as WaitSet>::Node;

/// Spins on a receive whose next value is still being written before the
/// operation yields to the executor instead (fewer under loom, where every
/// spin is a scheduling branch).
const BUSY_SPINS: u32 = if cfg!(asyncband_loom) { 2 } else { 64 };

impl<S: Storage> Chan<S> {
    /// Polls a send of `*value` (taken on completion, left in place while
    /// pending).
    ///
    /// # Panics
    ///
    /// If `*value` is `None`: the send was polled after it completed.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`; `node` stays pinned,
    /// is used only with this channel's senders and is passed to
    /// [`Chan::cancel_send`] before it goes away if `registered` is set.
    #[inline]
    pub unsafe fn poll_send(
        &self,
        cursor: &mut S::ProducerCursor,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        value: &mut Option<S::Item>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<S::Item>>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.poll_send_with(cursor, || node, registered, value, cx) }
    }

    /// [`Chan::poll_send`] with the node asked for only when the send has
    /// to wait: a send that finds room at once moves its value straight
    /// from `*value` into its slot, inline, and never calls `node`.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_send`], for the node `node` returns, which is the
    /// same one at every call for the same send.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every send future; out of line it costs a call per message"
    )]
    unsafe fn poll_send_with<'n>(
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
    /// grant), then re-checks once. The value stays in `*value` until it is
    /// sent. Out of line, so that the ready path inlines.
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
        if *registered && !<S::Senders as Arity>::MANY {
            // A single sender polled again while registered tries first. Its
            // cell carries no grant, and the receiver that woke it took its
            // waker: registering first would clone a waker that the send,
            // when it then goes through, drops again (two of the three waker
            // clones per message at capacity 1).
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
            let sent = unsafe { self.push_reserved(&mut *cursor, held(value)) };
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
    /// result is returned; `None` when the channel is still full.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_send`].
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "two call sites in the out-of-line waiting path, each taken once per wait at capacity 1; a call there costs more than the code it runs"
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
    /// flag is raised and the barrier done, and the caller re-checks the
    /// storage once before it returns `Pending`.
    ///
    /// The first registration also offers capacity freed before it to the
    /// front waiter (with many senders, maybe this one, which it then
    /// collects) and nudges the receivers (`Chan::nudge_receivers`).
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
        let on_change = |waiting| self.storage().set_waiting(waiting);
        // SAFETY: the caller's contract on `node`.
        let register = || unsafe { self.tx_wait().register(node, cx.waker(), need, on_change) };
        let got = if *registered {
            let got = register();
            if got == 0 {
                self.storage().before_send_wait();
            }
            got
        } else {
            let got = register();
            debug_assert_eq!(got, 0, "an idle node holds no grant");
            *registered = true;
            self.storage().before_send_wait();
            // A single sender's cell carries no grants. Many senders skip
            // the grant, and the second lock that collects it, when nothing
            // is free after the barrier: any capacity freed before the
            // registration would show here (`Storage::may_grant`).
            let may_grant = <S::Senders as Arity>::MANY && self.storage().may_grant();
            if may_grant {
                self.grant_freed_before_register();
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
    pub unsafe fn cancel_send(&self, node: Pin<&TxNode<S>>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            let withdrawn = unsafe {
                self.tx_wait()
                    .cancel(node, |waiting| self.storage().set_waiting(waiting))
            };
            // SAFETY: `cancel` handed us the units granted to the node.
            unsafe { self.return_units(withdrawn.units()) };
            // The node's waker is dropped here, after its units are back.
        }
    }

    /// Polls a receive.
    ///
    /// # Safety
    ///
    /// Consumer contract of [`Chan`] for `cursor`; `node` as for
    /// [`Chan::poll_send`], with [`Chan::cancel_recv`].
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "the ready path of every receive future; out of line it costs a call per message"
    )]
    pub unsafe fn poll_recv(
        &self,
        cursor: &mut S::Cursor,
        node: Pin<&RxNode<S>>,
        registered: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S::Item, RecvError>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.poll_recv_with(cursor, || node, registered, cx) }
    }

    /// [`Chan::poll_recv`] with the node asked for only when the receive
    /// has to wait: a receive that finds a value takes it, inline, and
    /// never calls `node`.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_recv`], for the node `node` returns, which is the
    /// same one at every call for the same receive.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::poll_recv`: the ready path of every receive"
    )]
    unsafe fn poll_recv_with<'n>(
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
            // SAFETY: consumer contract from the caller.
            match unsafe { self.storage().front(cursor) } {
                Ok(front) if is_large::<S::Item>() => {
                    // SAFETY: consumer contract from the caller.
                    let mut popped = unsafe { self.popped_guard(cursor, front) };
                    // The value lands in the result before `popped` drops
                    // (`chan::Popped`).
                    // SAFETY: taken once; `popped` releases it afterwards.
                    return Poll::Ready(Ok(unsafe { popped.take() }));
                }
                Ok(front) => {
                    // SAFETY: consumer contract from the caller.
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
    /// written, registers, re-checks. `first` is what a pop just found, to
    /// act on before popping again. Out of line, so that the ready path
    /// inlines.
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
        // Every registration is followed by one more attempt: registering
        // raises the waiting flag (a `Cell` even lowers it for an instant
        // while it swaps wakers), and only a re-check after the raise pairs
        // with a notifier that looked at the flag before it.
        let mut rechecked = false;
        loop {
            let attempt = match first.take() {
                Some(missed) => Err(missed),
                // SAFETY: consumer contract from the caller.
                None => unsafe { self.storage().front(cursor) },
            };
            match attempt {
                Ok(front) if is_large::<S::Item>() => {
                    // The guard releases the place even if passing the
                    // notification on unwinds (the value is then leaked).
                    // SAFETY: consumer contract from the caller.
                    let mut popped = unsafe { self.popped_guard(cursor, front) };
                    // SAFETY: the caller's contract on `node`.
                    unsafe { self.cancel_recv(node, registered) };
                    // SAFETY: taken once; `popped` releases it afterwards.
                    return Poll::Ready(Ok(unsafe { popped.take() }));
                }
                Ok(front) => {
                    // Taken, and its place released, before the notification
                    // this receive held is passed on: that runs wakers, and
                    // one that unwinds then drops the value instead of
                    // keeping its place claimed for good.
                    // SAFETY: consumer contract from the caller.
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
                    // The next value is claimed and being written; its
                    // producer may not see our flag, so never sleep on it.
                    spins += 1;
                    if spins < BUSY_SPINS || cfg!(asyncband_loom) {
                        // (loom loses a thread's own unpark token after a
                        // yield, so models never rely on the self-wake below.)
                        spin_hint();
                    } else if spins == BUSY_SPINS {
                        thread::yield_now();
                    } else {
                        cx.waker().wake_by_ref();
                        return Poll::Pending;
                    }
                }
                // A value being written whose producer will see our flag
                // (`Storage::NOTIFIES_BUSY`) is waited for like an empty
                // channel: spinning on a large copy keeps a runtime's tasks
                // on different workers, where every value crosses cores.
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
                    self.storage().before_recv_wait();
                }
            }
        }
    }

    /// Leaves the receivers' wait set, passing on a notification it held.
    ///
    /// # Safety
    ///
    /// `node` was only ever registered with this channel's receivers.
    pub unsafe fn cancel_recv(&self, node: Pin<&RxNode<S>>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            let withdrawn = unsafe { self.rx_wait().cancel(node, |_| ()) };
            self.pass_notifications(withdrawn.units());
            // The node's waker is dropped here, after its notification is
            // passed on.
        }
    }

    /// As [`Chan::cancel_recv`], for a receive that gives up without
    /// looking at the channel again (a dropped future, a blocked thread
    /// whose deadline passed): a parked thread woken to look for a waiter
    /// that may not come back was to answer for that waiter's notification
    /// ([`crate::wait::Withdrawn::woken_to_look`]), so it passes one on as
    /// well.
    ///
    /// # Safety
    ///
    /// As for [`Chan::cancel_recv`].
    pub unsafe fn abandon_recv(&self, node: Pin<&RxNode<S>>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            let withdrawn = unsafe { self.rx_wait().cancel(node, |_| ()) };
            self.pass_notifications(withdrawn.units() + usize::from(withdrawn.woken_to_look()));
        }
    }

    /// Polls for the channel to close; see [`Closed`].
    ///
    /// # Safety
    ///
    /// `node` as for [`Chan::poll_send`], with [`Chan::cancel_closed`].
    pub unsafe fn poll_closed(
        &self,
        node: Pin<&QueueNode>,
        registered: &mut bool,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        if !self.is_closed() {
            // SAFETY: the caller's contract on `node`.
            unsafe { self.closed_wait().register(node, cx.waker(), 1, |_| ()) };
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
    pub unsafe fn cancel_closed(&self, node: Pin<&QueueNode>, registered: &mut bool) {
        if std::mem::take(registered) {
            // SAFETY: the caller's contract.
            drop(unsafe { self.closed_wait().cancel(node, |_| ()) });
        }
    }
}

impl<S: Storage> Chan<S> {
    /// Polls a reservation of `n` units (`1 <= n <= CAP`).
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`: no other reservation can be granted.
    ///
    /// # Safety
    ///
    /// As for [`Chan::poll_send`], with [`Chan::cancel_send`].
    pub unsafe fn poll_reserve(
        &self,
        cursor: &mut S::ProducerCursor,
        node: Pin<&TxNode<S>>,
        registered: &mut bool,
        n: usize,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<()>>> {
        assert_reservable::<S>(n);
        if !*registered {
            // SAFETY: the producer contract from the caller; `n` checked
            // just above.
            match unsafe { self.storage().try_acquire(cursor, n) } {
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
        // SAFETY: the producer contract from the caller.
        match unsafe { self.storage().try_acquire(cursor, n) } {
            Ok(()) => {
                // SAFETY: the caller's contract on `node`.
                unsafe { self.cancel_send(node, registered) };
                Poll::Ready(Ok(()))
            }
            Err(PushError::Closed(())) => {
                // SAFETY: as above.
                unsafe { self.cancel_send(node, registered) };
                Poll::Ready(Err(SendError(())))
            }
            Err(PushError::Full(())) => Poll::Pending,
        }
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

/// Sends one value, waiting for capacity.
///
/// # Cancel safety
///
/// Dropping the future before it completes drops the value it still holds
/// (it was not sent) and passes on any capacity it had been granted.
pub struct Send<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::ProducerCursor,
    value: Option<S::Item>,
    node: LazyNode<TxNode<S>>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<'a, S: Storage> Send<'a, S> {
    /// A future that sends `value` through `chan` with the producer's
    /// `cursor`.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`.
    pub unsafe fn new(
        chan: &'a Chan<S>,
        cursor: &'a mut S::ProducerCursor,
        value: S::Item,
    ) -> Self {
        Self {
            chan,
            cursor,
            value: Some(value),
            // A large value's send builds its node with the future, where
            // its stores sit next to the value's copy; built at the first
            // wait instead, four producers of 1 KiB values on two workers
            // run slower (`benches/NOTES.md`).
            node: if is_large::<S::Item>() {
                LazyNode::built(TxNode::<S>::default())
            } else {
                LazyNode::new()
            },
            registered: false,
            _pinned: PhantomPinned,
        }
    }

    /// Cancels the future and takes back the value if it was not sent.
    #[must_use = "the value that was not sent is handed back; ignoring it drops it"]
    pub fn take_value(self: Pin<&mut Self>) -> Option<S::Item> {
        // SAFETY: `node` is never moved out of the pinned future; the other
        // fields are not structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned (we are) and only used with this chan.
        if let Some(node) = unsafe { Pin::new_unchecked(&this.node) }.get() {
            // SAFETY: as above.
            unsafe { this.chan.cancel_send(node, &mut this.registered) };
        }
        this.value.take()
    }
}

impl<S: Storage> Future for Send<'_, S> {
    type Output = Result<(), SendError<S::Item>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned with us: it is never moved out.
        let node = unsafe { Pin::new_unchecked(&mut this.node) };
        // SAFETY: the node is pinned and only used with this chan; the
        // producer contract from `new`.
        unsafe {
            this.chan.poll_send_with(
                this.cursor,
                || node.get_or_build(TxNode::<S>::default),
                &mut this.registered,
                &mut this.value,
                cx,
            )
        }
    }
}

impl<S: Storage> Drop for Send<'_, S> {
    fn drop(&mut self) {
        // SAFETY: a future is only dropped in place, so `node` is still
        // pinned; it was only used with this channel.
        if let Some(node) = unsafe { Pin::new_unchecked(&self.node) }.get() {
            // SAFETY: as above.
            unsafe { self.chan.cancel_send(node, &mut self.registered) };
        }
    }
}

impl<S: Storage> fmt::Debug for Send<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Send")
            .field("waiting", &self.registered)
            .finish_non_exhaustive()
    }
}

/// Receives one value, waiting for one.
///
/// # Cancel safety
///
/// A value is taken only in the poll that returns it, so dropping the
/// future loses no value; a wake-up it received is passed to the next
/// waiting receiver.
pub struct Recv<'a, S: Storage> {
    chan: &'a Chan<S>,
    cursor: &'a mut S::Cursor,
    node: LazyNode<RxNode<S>>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<'a, S: Storage> Recv<'a, S> {
    /// A future that receives from `chan` with the consumer's `cursor`.
    ///
    /// # Safety
    ///
    /// The consumer contract of [`Chan`] for `cursor`.
    pub unsafe fn new(chan: &'a Chan<S>, cursor: &'a mut S::Cursor) -> Self {
        Self {
            chan,
            cursor,
            node: LazyNode::new(),
            registered: false,
            _pinned: PhantomPinned,
        }
    }

    /// A future that receives from `chan` for a thread that parks until it
    /// is woken ([`crate::park::block_on`]): its node says it always comes
    /// back for a notification ([`WaitSet::notify`]).
    ///
    /// # Safety
    ///
    /// As for [`Recv::new`]; the future is driven to completion or dropped
    /// by the thread that parks on it.
    pub unsafe fn parked(chan: &'a Chan<S>, cursor: &'a mut S::Cursor) -> Self {
        Self {
            chan,
            cursor,
            // Built at once: a thread gets here only after spinning, so a
            // parked receive is about to wait anyway.
            node: LazyNode::built(RxWait::<S>::parked_node()),
            registered: false,
            _pinned: PhantomPinned,
        }
    }
}

impl<S: Storage> Future for Recv<'_, S> {
    type Output = Result<S::Item, RecvError>;

    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::poll_recv`: the ready path of every receive"
    )]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: the node is pinned with us: it is never moved out.
        let node = unsafe { Pin::new_unchecked(&mut this.node) };
        // SAFETY: the node is pinned and only used with this chan; consumer
        // contract from `new`.
        unsafe {
            this.chan.poll_recv_with(
                this.cursor,
                || node.get_or_build(RxNode::<S>::default),
                &mut this.registered,
                cx,
            )
        }
    }
}

impl<S: Storage> Drop for Recv<'_, S> {
    fn drop(&mut self) {
        // SAFETY: dropped in place, so still pinned; only used with this chan.
        if let Some(node) = unsafe { Pin::new_unchecked(&self.node) }.get() {
            // Dropped: whatever woke it last, it did not look.
            // SAFETY: as above.
            unsafe { self.chan.abandon_recv(node, &mut self.registered) };
        }
    }
}

impl<S: Storage> fmt::Debug for Recv<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Recv")
            .field("waiting", &self.registered)
            .finish_non_exhaustive()
    }
}

/// A reservation of `n` units of capacity in progress, waiting in line for
/// them: the node it waits with and the state between its polls. Not a
/// future: each poll passes the producer's cursor
/// ([`Reserve::poll_with`]), so a single producer lends it only for the
/// poll; the endpoint's reservation futures wrap it. The handle is
/// dereferenced at the first poll, and that channel is the one it waits on
/// until it is dropped.
///
/// # Cancel safety
///
/// Dropping it returns every unit it was granted, in full or in part, and
/// passes them to the next waiting sender.
///
/// # Examples
///
/// ```
/// use std::pin::pin;
/// use std::task::{Context, Poll, Waker};
///
/// use asyncband_core::arity::One;
/// use asyncband_core::chan::Chan;
/// use asyncband_core::future::Reserve;
/// use asyncband_core::ring::Ring;
///
/// let chan = Chan::<Ring<u8, 2, One, One>>::new();
/// let mut tail = chan.producer_cursor();
/// let mut reserve = pin!(Reserve::new(&*chan, 2));
/// let mut cx = Context::from_waker(Waker::noop());
/// // SAFETY: `tail` is the only producer's only cursor.
/// let polled = unsafe { reserve.as_mut().poll_with(&mut tail, &mut cx) };
/// assert_eq!(polled, Poll::Ready(Ok(())));
/// // The two units are the caller's now; give them back.
/// // SAFETY: the units the reservation just took.
/// unsafe { chan.return_units(2) };
/// ```
pub struct Reserve<S: Storage, H: Deref<Target = Chan<S>>> {
    chan: H,
    /// The channel the node waits with: `chan` dereferenced at the first
    /// poll.
    at: FixedChan<S>,
    n: usize,
    node: TxNode<S>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Reserve<S, H> {
    /// A reservation of `n` units (`1 <= n <= CAP`) of `chan`.
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`.
    pub fn new(chan: H, n: usize) -> Self {
        assert_reservable::<S>(n);
        Self {
            chan,
            at: FixedChan::unset(),
            n,
            node: Default::default(),
            registered: false,
            _pinned: PhantomPinned,
        }
    }

    /// The channel handle.
    pub fn chan(&self) -> &H {
        &self.chan
    }

    /// How many units it reserves.
    pub fn units(&self) -> usize {
        self.n
    }

    /// Polls the reservation with the producer's `cursor`; `Ready(Ok(()))`
    /// once the caller holds the `n` units.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`.
    pub unsafe fn poll_with(
        self: Pin<&mut Self>,
        cursor: &mut S::ProducerCursor,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<()>>> {
        // SAFETY: `node` is never moved out of the pinned reservation.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: `this` is pinned, never moves or mutably borrows `chan`,
        // and drops it after its own `Drop`.
        let chan = unsafe { this.at.get(&this.chan) };
        // SAFETY: the node is pinned with us; the producer contract from the
        // caller.
        unsafe {
            chan.poll_reserve(
                cursor,
                Pin::new_unchecked(&this.node),
                &mut this.registered,
                this.n,
                cx,
            )
        }
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Drop for Reserve<S, H> {
    fn drop(&mut self) {
        // SAFETY: as in `poll_with`; while `self` lives.
        let Some(chan) = (unsafe { self.at.fixed() }) else {
            return; // never polled, so never registered
        };
        // SAFETY: dropped in place, so the node is still pinned, and it was
        // only used with `chan`, the channel of every poll.
        unsafe { chan.cancel_send(Pin::new_unchecked(&self.node), &mut self.registered) };
    }
}

/// A future's waiter node, built the first time the future waits: a send or
/// receive that completes at its first poll never writes one. Once built, it
/// stays in place (the future is pinned) until the future is dropped.
///
/// A node with no bytes and no drop (a single producer's or consumer's cell
/// needs none) is there from the start and its flag is never written or
/// read: a poll then checks nothing, and making the future stores nothing
/// more than it would with the node embedded (a flag stored beside
/// `registered` would be merged with it into one wider store, which the
/// later one-byte load of `registered` cannot be forwarded from).
struct LazyNode<N> {
    node: MaybeUninit<N>,
    /// Whether `node` holds a node; written and read only for a node that
    /// is not free.
    built: MaybeUninit<bool>,
}

impl<N> LazyNode<N> {
    /// Whether a node costs nothing to hold: no bytes to write, nothing to
    /// drop.
    const FREE: bool = size_of::<N>() == 0 && !std::mem::needs_drop::<N>();

    /// Whether `node` holds a node.
    fn is_built(&self) -> bool {
        // SAFETY: `built` is written at construction unless the node is free
        // (`new`, `built`).
        Self::FREE || unsafe { self.built.assume_init() }
    }
}

impl<N: Default> LazyNode<N> {
    /// No node yet, or a free one.
    fn new() -> Self {
        if Self::FREE {
            Self {
                node: MaybeUninit::new(N::default()),
                built: MaybeUninit::uninit(),
            }
        } else {
            Self {
                node: MaybeUninit::uninit(),
                built: MaybeUninit::new(false),
            }
        }
    }

    /// `node`, built already.
    fn built(node: N) -> Self {
        Self {
            node: MaybeUninit::new(node),
            built: MaybeUninit::new(true),
        }
    }

    /// The node, if it was built.
    fn get(self: Pin<&Self>) -> Option<Pin<&N>> {
        let this = self.get_ref();
        // SAFETY: `is_built` says `node` holds a node; it is pinned with us.
        this.is_built()
            .then(|| unsafe { Pin::new_unchecked(this.node.assume_init_ref()) })
    }

    /// The node, built with `build` if it was not yet.
    fn get_or_build(self: Pin<&mut Self>, build: impl FnOnce() -> N) -> Pin<&N> {
        // SAFETY: `node` is written in place, never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        if !this.is_built() {
            this.node.write(build());
            this.built.write(true);
        }
        // SAFETY: built just above, before, or in `new`; pinned with us.
        unsafe { Pin::new_unchecked(this.node.assume_init_ref()) }
    }
}

impl<N> Drop for LazyNode<N> {
    fn drop(&mut self) {
        if self.is_built() {
            // SAFETY: `node` holds a node, dropped only here.
            unsafe { self.node.assume_init_drop() };
        }
    }
}

/// The channel a future's node waits with: what its handle dereferenced to
/// at the first poll, used by every later poll and by its `Drop`. A user's
/// `Deref` may answer a different channel each time, and a node registered
/// with one channel must be polled and withdrawn with that one.
struct FixedChan<S: Storage>(Option<NonNull<Chan<S>>>);

// SAFETY: it stands for a `&Chan<S>` (`FixedChan::get`), which is `Send`
// and `Sync` when `Chan<S>` is `Sync`.
unsafe impl<S: Storage> std::marker::Send for FixedChan<S> where Chan<S>: Sync {}
// SAFETY: as for `Send`.
unsafe impl<S: Storage> Sync for FixedChan<S> where Chan<S>: Sync {}

impl<S: Storage> FixedChan<S> {
    /// Not fixed yet.
    const fn unset() -> Self {
        Self(None)
    }

    /// The channel `handle` dereferences to, fixed by the first call.
    ///
    /// # Safety
    ///
    /// `self` and `handle` are fields of one pinned value that never moves
    /// or mutably borrows `handle`, passes the same `handle` to every call,
    /// and drops it only after its own `Drop` (which may call
    /// [`FixedChan::fixed`]): what a shared borrow of `handle` dereferenced
    /// to then stays valid while that value lives.
    unsafe fn get<'a, H: Deref<Target = Chan<S>>>(&mut self, handle: &'a H) -> &'a Chan<S> {
        let chan = *self.0.get_or_insert_with(|| NonNull::from(&**handle));
        // SAFETY: the caller's contract keeps the first borrow's target alive.
        unsafe { chan.as_ref() }
    }

    /// The channel fixed by [`FixedChan::get`], if it was called.
    ///
    /// # Safety
    ///
    /// As for [`FixedChan::get`]; the reference is used only while the
    /// value holding `self` lives.
    unsafe fn fixed(&self) -> Option<&Chan<S>> {
        // SAFETY: the caller's contract, as in `get`.
        self.0.map(|chan| unsafe { chan.as_ref() })
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> fmt::Debug for Reserve<S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserve")
            .field("units", &self.n)
            .field("waiting", &self.registered)
            .finish_non_exhaustive()
    }
}

/// Resolves once the channel is closed or every receiver is gone.
///
/// The handle is dereferenced at the first poll, and that channel is the one
/// the future waits on until it is dropped.
///
/// # Cancel safety
///
/// Holds nothing; dropping it only leaves the wait list.
///
/// # Examples
///
/// ```
/// use std::future::Future;
/// use std::pin::pin;
/// use std::task::{Context, Waker};
///
/// use asyncband_core::arity::One;
/// use asyncband_core::chan::Chan;
/// use asyncband_core::future::Closed;
/// use asyncband_core::ring::Ring;
///
/// let chan = Chan::<Ring<u8, 2, One, One>>::new();
/// let mut closed = pin!(Closed::new(&*chan));
/// let mut cx = Context::from_waker(Waker::noop());
/// assert!(closed.as_mut().poll(&mut cx).is_pending());
/// // SAFETY: a close from no producer has no contract.
/// unsafe { chan.close(false) };
/// assert!(closed.as_mut().poll(&mut cx).is_ready());
/// ```
pub struct Closed<S: Storage, H: Deref<Target = Chan<S>>> {
    chan: H,
    /// The channel the node waits with, as in [`Reserve`].
    at: FixedChan<S>,
    node: QueueNode,
    registered: bool,
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Closed<S, H> {
    /// A future that waits for `chan` to close.
    pub fn new(chan: H) -> Self {
        Self {
            chan,
            at: FixedChan::unset(),
            node: QueueNode::default(),
            registered: false,
        }
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Future for Closed<S, H> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `node` is never moved out of the pinned future.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: `this` is pinned, never moves or mutably borrows `chan`,
        // and drops it after its own `Drop`.
        let chan = unsafe { this.at.get(&this.chan) };
        // SAFETY: the node is pinned with us and only used with this chan.
        unsafe { chan.poll_closed(Pin::new_unchecked(&this.node), &mut this.registered, cx) }
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Drop for Closed<S, H> {
    fn drop(&mut self) {
        // SAFETY: as in `poll`; while `self` lives.
        let Some(chan) = (unsafe { self.at.fixed() }) else {
            return; // never polled, so never registered
        };
        // SAFETY: dropped in place, so the node is still pinned, and it was
        // only used with `chan`, the channel of every poll.
        unsafe { chan.cancel_closed(Pin::new_unchecked(&self.node), &mut self.registered) };
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> fmt::Debug for Closed<S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closed")
            .field("waiting", &self.registered)
            .finish_non_exhaustive()
    }
}

/// Waits for one value, then takes up to `limit - 1` more that are ready;
/// resolves to how many it appended to the buffer (0 once the channel is
/// closed and drained, or when `limit` is 0).
///
/// # Cancel safety
///
/// As [`Recv`]: values are appended only by the poll that returns.
pub struct RecvMany<'a, 'b, S: Storage> {
    recv: Recv<'a, S>,
    buf: &'b mut Vec<S::Item>,
    limit: usize,
}

impl<'a, 'b, S: Storage> RecvMany<'a, 'b, S> {
    /// A future that receives into `buf` from `chan` with the consumer's
    /// `cursor`.
    ///
    /// # Safety
    ///
    /// As for [`Recv::new`].
    pub unsafe fn new(
        chan: &'a Chan<S>,
        cursor: &'a mut S::Cursor,
        buf: &'b mut Vec<S::Item>,
        limit: usize,
    ) -> Self {
        Self {
            // SAFETY: forwarded from the caller.
            recv: unsafe { Recv::new(chan, cursor) },
            buf,
            limit,
        }
    }
}

impl<S: Storage> Future for RecvMany<'_, '_, S> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        // SAFETY: `recv` is structurally pinned: never moved out of `self`;
        // `buf` and `limit` are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        if this.limit == 0 {
            return Poll::Ready(0);
        }
        // SAFETY: as above.
        let recv = unsafe { Pin::new_unchecked(&mut this.recv) };
        match std::task::ready!(recv.poll(cx)) {
            Err(RecvError) => Poll::Ready(0),
            Ok(first) => {
                this.buf.push(first);
                let mut taken = 1;
                while taken < this.limit {
                    // SAFETY: the consumer contract `new` was made with
                    // holds for the future's life.
                    match unsafe { this.recv.chan.try_recv(this.recv.cursor) } {
                        Ok(value) => {
                            this.buf.push(value);
                            taken += 1;
                        }
                        Err(_) => break,
                    }
                }
                Poll::Ready(taken)
            }
        }
    }
}

impl<S: Storage> fmt::Debug for RecvMany<'_, '_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvMany")
            .field("recv", &self.recv)
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests {
    use std::cell::Cell;
    use std::future::Future;
    use std::ops::Deref;
    use std::task::{Context, Waker};

    use super::{Closed, LazyNode, Recv, Reserve};
    use crate::arity::{Many, One};
    use crate::chan::Chan;
    use crate::ring::Ring;
    use crate::wait::WaitSet;

    type S = Ring<u8, 1, Many, One>;

    /// A handle whose `Deref` answers `first` once and `then` after that,
    /// as a safe `Deref` may.
    struct Flip<'c> {
        first: &'c Chan<S>,
        then: &'c Chan<S>,
        calls: Cell<u32>,
    }

    impl Deref for Flip<'_> {
        type Target = Chan<S>;

        fn deref(&self) -> &Chan<S> {
            let calls = self.calls.get();
            self.calls.set(calls + 1);
            if calls == 0 { self.first } else { self.then }
        }
    }

    thread_local! {
        static DROPS: Cell<u32> = const { Cell::new(0) };
    }

    /// Counts its drops in `DROPS`; `0` is what `default` builds.
    #[derive(Default)]
    struct Counted(u32);

    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.with(|drops| drops.set(drops.get() + 1));
        }
    }

    #[test]
    fn a_lazy_node_is_built_once_when_first_asked_for_and_dropped_once() {
        let unbuilt = Box::pin(LazyNode::<Counted>::new());
        assert!(unbuilt.as_ref().get().is_none());
        drop(unbuilt);
        assert_eq!(DROPS.get(), 0, "nothing was built, so nothing is dropped");

        let mut lazy = Box::pin(LazyNode::new());
        let builds = Cell::new(0);
        let build = || {
            builds.set(builds.get() + 1);
            Counted(7)
        };
        let first: *const Counted = &raw const *lazy.as_mut().get_or_build(build);
        let again: *const Counted = &raw const *lazy.as_mut().get_or_build(|| unreachable!());
        assert_eq!((builds.get(), first), (1, again), "built once, in place");
        assert_eq!(lazy.as_ref().get().map(|node| node.0), Some(7));
        drop(lazy);
        assert_eq!(DROPS.get(), 1);
    }

    #[test]
    fn a_free_node_is_there_from_the_start_and_never_built() {
        let mut lazy = Box::pin(LazyNode::<()>::new());
        assert!(lazy.as_ref().get().is_some());
        lazy.as_mut()
            .get_or_build(|| unreachable!("a free node is never built"));
    }

    #[test]
    fn a_closed_future_withdraws_from_the_channel_it_registered_with() {
        let (first, then) = (Chan::<S>::new(), Chan::<S>::new());
        let flip = Flip {
            first: &first,
            then: &then,
            calls: Cell::new(0),
        };
        let mut closed = Box::pin(Closed::new(flip));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(closed.as_mut().poll(&mut cx).is_pending());
        assert!(first.closed_wait().is_waiting());
        drop(closed);
        assert!(!first.closed_wait().is_waiting(), "the node left behind");
        // Wakes whatever is still queued: under Miri, a freed node fails.
        // SAFETY: not from a producer.
        unsafe { first.close(false) };
    }

    #[test]
    fn a_reservation_withdraws_from_the_channel_it_registered_with() {
        let (first, then) = (Chan::<S>::new(), Chan::<S>::new());
        first.try_send(1).unwrap();
        let flip = Flip {
            first: &first,
            then: &then,
            calls: Cell::new(0),
        };
        let mut reserve = Box::pin(Reserve::new(flip, 1));
        let mut cx = Context::from_waker(Waker::noop());
        // SAFETY: many producers: the producer contract binds nobody, and
        // `()` is their cursor.
        let polled = unsafe { reserve.as_mut().poll_with(&mut (), &mut cx) };
        assert!(polled.is_pending(), "the ring is full");
        assert!(first.tx_wait().is_waiting());
        drop(reserve);
        assert!(!first.tx_wait().is_waiting(), "the node left behind");
        // SAFETY: as above.
        unsafe { first.close(false) };
    }

    /// Counts its wakes.
    struct Wakes(std::sync::atomic::AtomicUsize);

    impl std::task::Wake for Wakes {
        fn wake(self: std::sync::Arc<Self>) {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }

    impl Wakes {
        fn new() -> (std::sync::Arc<Self>, Waker) {
            let wakes = std::sync::Arc::new(Self(std::sync::atomic::AtomicUsize::new(0)));
            (std::sync::Arc::clone(&wakes), Waker::from(wakes))
        }

        fn count(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::Relaxed)
        }
    }

    /// A parked receive woken to look for a leaked one, and dropped
    /// without looking (its deadline passed as the value came), passes a
    /// notification on to the receive waiting behind it.
    fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on<
        S: crate::storage::Storage<Item = u32, Senders = Many, Receivers = Many>,
    >() {
        use std::pin::pin;

        let chan = Chan::<S>::new();
        let (mut leaked_cursor, mut parked_cursor, mut live_cursor) =
            (chan.cursor(), chan.cursor(), chan.cursor());
        // SAFETY: many consumers: the consumer contract binds nobody, and
        // every cursor is the same empty one.
        let mut leaked = pin!(unsafe { Recv::new(&chan, &mut leaked_cursor) });
        let mut cx = Context::from_waker(Waker::noop());
        // Registered and never polled again: to the queue, as good as
        // leaked (it is dropped when the test ends).
        assert!(leaked.as_mut().poll(&mut cx).is_pending());
        // SAFETY: as above; dropped by this thread, as on a timeout.
        let mut parked = Box::pin(unsafe { Recv::parked(&chan, &mut parked_cursor) });
        assert!(parked.as_mut().poll(&mut cx).is_pending());
        let (woken_behind, live_waker) = Wakes::new();
        // SAFETY: as above.
        let mut live = pin!(unsafe { Recv::new(&chan, &mut live_cursor) });
        assert!(
            live.as_mut()
                .poll(&mut Context::from_waker(&live_waker))
                .is_pending()
        );
        // The notification goes to the leaked receive; the parked one is
        // woken to look for it, and gives up without looking.
        chan.try_send(7).unwrap();
        assert_eq!(woken_behind.count(), 0);
        drop(parked);
        assert!(woken_behind.count() > 0, "the receive behind is woken");
        let polled = live.as_mut().poll(&mut Context::from_waker(&live_waker));
        assert_eq!(polled, std::task::Poll::Ready(Ok(7)));
    }

    /// As above, but the parked receive is also granted the second value's
    /// notification before it gives up: it passes that one on, the receive
    /// it wakes takes a value without using the notification and passes it
    /// on again, so each receive behind is woken and gets a value.
    fn a_parked_receive_granted_after_a_wake_to_look_loses_neither_value<
        S: crate::storage::Storage<Item = u32, Senders = Many, Receivers = Many>,
    >() {
        use std::pin::pin;
        use std::task::Poll;

        let chan = Chan::<S>::new();
        let mut cursors = [chan.cursor(), chan.cursor(), chan.cursor(), chan.cursor()];
        let [leaked_cursor, parked_cursor, first_cursor, second_cursor] = &mut cursors;
        let mut cx = Context::from_waker(Waker::noop());
        let (woken_first, first_waker) = Wakes::new();
        let (woken_second, second_waker) = Wakes::new();
        // SAFETY: many consumers: the consumer contract binds nobody, and
        // every cursor is the same empty one.
        let (mut leaked, mut parked, mut first, mut second) = unsafe {
            (
                pin!(Recv::new(&chan, leaked_cursor)),
                Box::pin(Recv::parked(&chan, parked_cursor)),
                pin!(Recv::parked(&chan, first_cursor)),
                pin!(Recv::parked(&chan, second_cursor)),
            )
        };
        assert!(leaked.as_mut().poll(&mut cx).is_pending());
        assert!(parked.as_mut().poll(&mut cx).is_pending());
        let mut first_cx = Context::from_waker(&first_waker);
        let mut second_cx = Context::from_waker(&second_waker);
        assert!(first.as_mut().poll(&mut first_cx).is_pending());
        assert!(second.as_mut().poll(&mut second_cx).is_pending());
        // 1 is notified to the leaked receive (the parked one is woken to
        // look for it), 2 to the parked one, now at the front.
        chan.try_send(1).unwrap();
        chan.try_send(2).unwrap();
        drop(parked);
        assert!(woken_first.count() > 0, "the first receive behind is woken");
        let Poll::Ready(Ok(one)) = first.as_mut().poll(&mut first_cx) else {
            panic!("a value for the first receive");
        };
        assert!(
            woken_second.count() > 0,
            "so is the second, while a value is queued"
        );
        let Poll::Ready(Ok(other)) = second.as_mut().poll(&mut second_cx) else {
            panic!("a value for the second receive");
        };
        assert_eq!(one + other, 3, "1 and 2, once each");
    }

    #[test]
    fn a_parked_receive_granted_after_a_wake_to_look_loses_neither_value_ring_and_list() {
        a_parked_receive_granted_after_a_wake_to_look_loses_neither_value::<Ring<u32, 4, Many, Many>>(
        );
        a_parked_receive_granted_after_a_wake_to_look_loses_neither_value::<
            crate::list::List<u32, Many, Many>,
        >();
    }

    #[test]
    fn a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on_ring_and_list() {
        a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<Ring<u32, 4, Many, Many>>(
        );
        a_parked_receive_that_gives_up_after_a_wake_to_look_passes_it_on::<
            crate::list::List<u32, Many, Many>,
        >();
    }
}
