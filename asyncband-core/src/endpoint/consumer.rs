//! The consumer side: [`Consumer`] (the one consumer of a channel),
//! [`SharedConsumer`] (cloneable, for [`Many`] consumers) and their borrowed
//! right to receive, [`ConsumerRef`].

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::Arc;
use crate::arity::{Many, One};
use crate::chan::Chan;
use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::future::{Recv, RecvMany, RxNode};
use crate::storage::{Storage, many_consumers_cursor};

/// The one consumer of a channel, made by [`channel`](super::channel).
///
/// Not `Clone`; it owns the consumer's cursor ([`Storage::Cursor`]), and
/// every operation that moves a value borrows it mutably, so no two
/// consumer-side operations ever overlap. A channel with [`Many`] consumers
/// turns it into cloneable [`SharedConsumer`]s with
/// [`Consumer::into_shared`]. Dropping the last consumer closes the channel
/// and drops the values still queued.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (mut tx, mut rx) = endpoint::channel::<Ring<u8, 2, One, One>>();
/// tx.by_ref().try_send(5).unwrap();
/// assert_eq!(rx.peek(), Some(&5));
/// assert_eq!(rx.by_ref().try_recv(), Ok(5));
/// ```
pub struct Consumer<S: Storage> {
    chan: Arc<Chan<S>>,
    /// # Safety
    ///
    /// The channel's one cursor: made with the channel, never given out
    /// except borrowed in a [`ConsumerRef`].
    ///
    /// Written on every receive, so it has lines of its own: apart from
    /// whatever the caller keeps beside the endpoint (a stack frame's
    /// locals, written around every call) and from other threads' data.
    cursor: Box<CachePadded<S::Cursor>>,
    wait: PollWait<S>,
}

/// One of the cloneable consumers of a channel with [`Many`] consumers.
///
/// Every operation that moves a value takes `&self` (one atomic claim per
/// value); only [`SharedConsumer::poll_recv`] takes `&mut self`, for the
/// waiter node each clone keeps between polls.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::Many;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, rx) = endpoint::channel::<Ring<u8, 4, Many, Many>>();
/// let (tx, rx) = (tx.into_shared(), rx.into_shared());
/// tx.by_ref().try_send(1).unwrap();
/// let other = rx.clone();
/// assert_eq!(other.by_ref().try_recv(), Ok(1));
/// assert!(rx.by_ref().try_recv().is_err());
/// ```
pub struct SharedConsumer<S: Storage<Receivers = Many>> {
    chan: Arc<Chan<S>>,
    wait: PollWait<S>,
}

/// A consumer that does not keep the channel open; upgrade it to receive.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::Many;
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (_tx, rx) = endpoint::channel::<List<u8, Many, Many>>();
/// let rx = rx.into_shared();
/// let weak = rx.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(rx);
/// assert!(weak.upgrade().is_none());
/// ```
pub struct WeakConsumer<S: Storage<Receivers = Many>> {
    chan: Arc<Chan<S>>,
}

/// The right to act as the consumer of a channel, borrowed from a
/// [`Consumer`] (mutably) or a [`SharedConsumer`]. Not `Clone`; as
/// [`ProducerRef`](super::ProducerRef) on the other side.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (mut tx, mut rx) = endpoint::channel::<List<u8, One, One>>();
/// for i in 0..3 {
///     tx.by_ref().try_send(i).unwrap();
/// }
/// let mut buf = Vec::new();
/// assert_eq!(rx.by_ref().try_recv_many(&mut buf, 8), 3);
/// assert_eq!(buf, [0, 1, 2]);
/// ```
pub struct ConsumerRef<'a, S: Storage> {
    /// # Safety
    ///
    /// The consumer contract of [`Chan`] holds for `cursor`: on a
    /// single-consumer channel it is the channel's one cursor.
    chan: &'a Chan<S>,
    cursor: &'a mut S::Cursor,
}

/// The waiter node a consumer keeps between calls of `poll_recv`, which has
/// no future to keep it in: allocated on the first poll that waits (nothing
/// at all for a single consumer, whose node is `()`).
struct PollWait<S: Storage> {
    node: Option<Pin<Box<RxNode<S>>>>,
    registered: bool,
}

impl<S: Storage> PollWait<S> {
    fn new() -> Self {
        Self {
            node: None,
            registered: false,
        }
    }
}

impl<S: Storage> Consumer<S> {
    /// The consumer of the new channel `chan`, with its one cursor.
    pub(super) fn new(chan: Arc<Chan<S>>) -> Self {
        Self {
            cursor: Box::new(CachePadded::new(chan.cursor())),
            chan,
            wait: PollWait::new(),
        }
    }

    /// The right to receive, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every receive's ready path"
    )]
    #[must_use]
    pub fn by_ref(&mut self) -> ConsumerRef<'_, S> {
        // SAFETY: the channel's one cursor (field `cursor`), borrowed
        // mutably for `'_`.
        unsafe { ConsumerRef::new(&self.chan, &mut self.cursor) }
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &Chan<S> {
        &self.chan
    }

    /// Closes the channel (see [`Chan::close`]); true if this call closed it.
    #[allow(
        clippy::must_use_candidate,
        reason = "called for its effect; whether this call was the one that closed is incidental"
    )]
    pub fn close(&self) -> bool {
        // SAFETY: not as the single producer: `close(false)` binds nothing.
        unsafe { self.chan.close(false) }
    }

    /// Polls for a value, keeping the waiter node in the consumer between
    /// polls (`futures::Stream::poll_next`). `Ready(Err)` once the channel
    /// is closed and drained.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is closed and drained.
    #[inline]
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<S::Item, RecvError>> {
        // SAFETY: the channel's one cursor (field `cursor`); the node is
        // this consumer's.
        unsafe { self.wait.poll(&self.chan, &mut self.cursor, cx) }
    }

    /// Withdraws the registration a pending [`Consumer::poll_recv`] left,
    /// passing on a wake-up it received.
    #[inline]
    pub fn stop_waiting(&mut self) {
        // SAFETY: the node is this consumer's and only waited on its channel.
        unsafe { self.wait.cancel(&self.chan) };
    }
}

impl<S: Storage<Receivers = One>> Consumer<S> {
    /// The next value, left in place, if one is ready.
    #[must_use]
    pub fn peek(&mut self) -> Option<&S::Item> {
        // SAFETY: the one consumer, with the channel's one cursor (field
        // `cursor`), borrowed for as long as the reference lives.
        unsafe { self.chan.storage().peek(&mut self.cursor) }
    }
}

impl<S: Storage<Receivers = Many>> Consumer<S> {
    /// This consumer as the first of any number of [`SharedConsumer`]s.
    #[must_use]
    pub fn into_shared(self) -> SharedConsumer<S> {
        self.chan.add_receiver();
        // `self` drops after the count went up, so the channel stays open.
        SharedConsumer::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage> Drop for Consumer<S> {
    fn drop(&mut self) {
        let _last = DropReceiver(&self.chan);
        // SAFETY: the node is this consumer's and only waited on its channel.
        unsafe { self.wait.cancel(&self.chan) };
    }
}

impl<S: Storage> fmt::Debug for Consumer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("chan", &*self.chan)
            .finish_non_exhaustive()
    }
}

impl<S: Storage<Receivers = Many>> SharedConsumer<S> {
    /// A consumer already counted in `chan`'s receivers.
    fn new(chan: Arc<Chan<S>>) -> Self {
        Self {
            chan,
            wait: PollWait::new(),
        }
    }

    /// The right to receive, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every receive's ready path"
    )]
    #[must_use]
    pub fn by_ref(&self) -> ConsumerRef<'_, S> {
        // SAFETY: many consumers may act at once; the contract binds only a
        // single consumer's cursor.
        unsafe { ConsumerRef::new(&self.chan, many_consumers_cursor::<S>()) }
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &Chan<S> {
        &self.chan
    }

    /// Closes the channel (see [`Chan::close`]); true if this call closed it.
    #[allow(
        clippy::must_use_candidate,
        reason = "called for its effect; whether this call was the one that closed is incidental"
    )]
    pub fn close(&self) -> bool {
        // SAFETY: not as the single producer: `close(false)` binds nothing.
        unsafe { self.chan.close(false) }
    }

    /// As [`Consumer::poll_recv`]; each clone keeps its own node.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is closed and drained.
    #[inline]
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<S::Item, RecvError>> {
        // SAFETY: many consumers may act at once; the node is this clone's.
        unsafe { self.wait.poll(&self.chan, many_consumers_cursor::<S>(), cx) }
    }

    /// As [`Consumer::stop_waiting`].
    #[inline]
    pub fn stop_waiting(&mut self) {
        // SAFETY: the node is this clone's and only waited on its channel.
        unsafe { self.wait.cancel(&self.chan) };
    }

    /// A [`WeakConsumer`] of the same channel.
    #[must_use]
    pub fn downgrade(&self) -> WeakConsumer<S> {
        WeakConsumer::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage<Receivers = Many>> Clone for SharedConsumer<S> {
    fn clone(&self) -> Self {
        self.chan.add_receiver();
        Self::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage<Receivers = Many>> Drop for SharedConsumer<S> {
    fn drop(&mut self) {
        let _last = DropReceiver(&self.chan);
        // SAFETY: the node is this consumer's and only waited on its channel.
        unsafe { self.wait.cancel(&self.chan) };
    }
}

impl<S: Storage<Receivers = Many>> fmt::Debug for SharedConsumer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedConsumer")
            .field("chan", &*self.chan)
            .finish_non_exhaustive()
    }
}

/// Counts a consumer out of its channel when dropped, also while a waker
/// unwinds out of the withdrawal before it: the last one closes the channel
/// and drops what is queued.
struct DropReceiver<'a, S: Storage>(&'a Chan<S>);

impl<S: Storage> Drop for DropReceiver<'_, S> {
    fn drop(&mut self) {
        // SAFETY: made only in the `Drop` of a consumer, which goes away
        // with its cursor and gives up the receiver it counted, once.
        unsafe { self.0.drop_receiver() };
    }
}

impl<S: Storage<Receivers = Many>> WeakConsumer<S> {
    fn new(chan: Arc<Chan<S>>) -> Self {
        chan.count_weak_receiver(true);
        Self { chan }
    }

    /// A [`SharedConsumer`], if any consumer is still alive.
    #[must_use]
    pub fn upgrade(&self) -> Option<SharedConsumer<S>> {
        self.chan
            .try_add_receiver()
            .then(|| SharedConsumer::new(Arc::clone(&self.chan)))
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &Chan<S> {
        &self.chan
    }
}

impl<S: Storage<Receivers = Many>> Clone for WeakConsumer<S> {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage<Receivers = Many>> Drop for WeakConsumer<S> {
    fn drop(&mut self) {
        self.chan.count_weak_receiver(false);
    }
}

impl<S: Storage<Receivers = Many>> fmt::Debug for WeakConsumer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakConsumer")
            .field("chan", &*self.chan)
            .finish()
    }
}

impl<'a, S: Storage> ConsumerRef<'a, S> {
    /// # Safety
    ///
    /// The consumer contract of [`Chan`] holds for `cursor` (field `chan`).
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every receive's ready path"
    )]
    unsafe fn new(chan: &'a Chan<S>, cursor: &'a mut S::Cursor) -> Self {
        Self { chan, cursor }
    }

    /// A shorter right, for an operation whose result outlives the call.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every receive's ready path"
    )]
    #[must_use]
    pub fn reborrow(&mut self) -> ConsumerRef<'_, S> {
        // SAFETY: the same cursor, reborrowed, so the contract passes to the
        // new right and this one is unused meanwhile.
        unsafe { ConsumerRef::new(self.chan, self.cursor) }
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.chan
    }

    /// Receives the next value if one is ready (see [`Chan::try_recv`]).
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] when no value is ready, and
    /// [`TryRecvError::Disconnected`] when the channel is closed and
    /// drained.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every try receive's ready path; out of line it costs a call per message"
    )]
    pub fn try_recv(&mut self) -> Result<S::Item, TryRecvError> {
        // SAFETY: the consumer contract (field `chan`).
        unsafe { self.chan.try_recv(self.cursor) }
    }

    /// Receives a value, parking the thread while the channel is empty,
    /// until `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] when `deadline` passes first, and
    /// [`RecvTimeoutError::Disconnected`] when the channel is closed and
    /// drained.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every blocking receive's ready path; out of line it costs a call per message"
    )]
    pub fn recv_blocking(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        // SAFETY: the consumer contract (field `chan`).
        unsafe { self.chan.recv_blocking(self.cursor, deadline) }
    }

    /// Appends up to `limit` values that are ready to `buf`; returns how
    /// many.
    pub fn try_recv_many(&mut self, buf: &mut Vec<S::Item>, limit: usize) -> usize {
        let mut taken = 0;
        while taken < limit {
            match self.try_recv() {
                Ok(value) => {
                    buf.push(value);
                    taken += 1;
                }
                Err(_) => break,
            }
        }
        taken
    }

    /// A future that receives one value, waiting for one.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn recv(self) -> Recv<'a, S> {
        // SAFETY: the future takes this right, and with it the contract, for
        // its life (`'a`).
        unsafe { Recv::new(self.chan, self.cursor) }
    }

    /// A future that waits for one value, then appends it and up to
    /// `limit - 1` more that are ready to `buf`; resolves to how many.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn recv_many<'b>(self, buf: &'b mut Vec<S::Item>, limit: usize) -> RecvMany<'a, 'b, S> {
        // SAFETY: as in `recv`.
        unsafe { RecvMany::new(self.chan, self.cursor, buf, limit) }
    }
}

impl<S: Storage> fmt::Debug for ConsumerRef<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsumerRef").finish_non_exhaustive()
    }
}

impl<S: Storage> PollWait<S> {
    /// The node, allocated on first use, and the flag that says whether it
    /// is registered.
    fn parts(&mut self) -> (Pin<&RxNode<S>>, &mut bool) {
        let node = self
            .node
            .get_or_insert_with(|| Box::pin(RxNode::<S>::default()))
            .as_ref();
        (node, &mut self.registered)
    }

    /// # Safety
    ///
    /// The consumer contract of `chan` holds for `cursor`; this wait state
    /// is used with `chan` only.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "the ready path of every `poll_recv`")]
    unsafe fn poll(
        &mut self,
        chan: &Chan<S>,
        cursor: &mut S::Cursor,
        cx: &mut Context<'_>,
    ) -> Poll<Result<S::Item, RecvError>> {
        let (node, registered) = self.parts();
        // SAFETY: the caller's contract; the node is pinned in its box, only
        // used with `chan`, and withdrawn by the consumer's `Drop`.
        unsafe { chan.poll_recv(cursor, node, registered, cx) }
    }

    /// # Safety
    ///
    /// This wait state is used with `chan` only.
    #[inline]
    unsafe fn cancel(&mut self, chan: &Chan<S>) {
        if let Some(node) = &self.node {
            // SAFETY: the node only ever waited on `chan`'s receivers.
            unsafe { chan.cancel_recv(node.as_ref(), &mut self.registered) };
        }
    }
}
