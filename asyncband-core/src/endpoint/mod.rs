//! Endpoints: the only way to move values through a [`Chan`].
//!
//! The channel's value-moving methods are `unsafe`: a single side promises
//! that the cursor it passes is its one cursor, and a sender that it returns
//! only capacity it holds. The types here carry those promises, so the
//! `asyncband` facade needs no `unsafe`:
//!
//! - [`Producer`] and [`Consumer`] count themselves in the channel until
//!   they drop. A single one owns its side's one cursor and lends it
//!   through `&mut self` ([`Producer::by_ref`], [`Consumer::by_ref`]); with
//!   [`Many`] arity they are `Clone` and also act through `&self`
//!   ([`Producer::shared`], [`Consumer::shared`]).
//! - [`ProducerRef`] and [`ConsumerRef`] are that borrowed right to act,
//!   never `Clone`, so a single side's right is never in two places.
//! - [`Units`], capacity held ahead of a send, alone returns capacity (its own).
//! - [`Weak`] endpoints keep nothing open.
//!
//! Every type is `Send` (and the endpoints `Sync`) when the payload is.
//!
//! # Examples
//!
//! ```
//! use asyncband_core::arity::One;
//! use asyncband_core::endpoint;
//! use asyncband_core::ring::Ring;
//!
//! let (mut tx, mut rx) = endpoint::channel::<Ring<u32, 4, One, One>>();
//! tx.by_ref().try_send(7).unwrap();
//! assert_eq!(rx.by_ref().try_recv(), Ok(7));
//! ```

mod units;

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use crossbeam_utils::CachePadded;

pub use units::{Holder, Pusher, Reserve, Units};

use crate::Arc;
use crate::arity::{Arity, Many, One};
use crate::chan::{Chan, Closed, Recv, RecvMany, RxNode, Send, TxNode, assert_reservable};
use crate::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use crate::storage::{Storage, Turns, conjured, cursor_of};

/// A new open channel over storage `S`: its producer and its consumer.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, mut rx) = endpoint::channel::<List<&str, Many, One>>();
/// tx.clone().shared().try_send("a").unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok("a"));
/// ```
#[must_use]
pub fn channel<S: Storage>() -> (Producer<S>, Consumer<S>) {
    let chan = Chan::<S>::new();
    let producer = Producer {
        cursor: (!<S::Senders as Arity>::MANY).then(|| {
            Box::new(CachePadded::new(Turns::new(
                chan.storage().producer_cursor(),
            )))
        }),
        hold: PollState::default(),
        chan: Arc::clone(&chan),
    };
    let consumer = Consumer {
        cursor: (!<S::Receivers as Arity>::MANY)
            .then(|| Box::new(CachePadded::new(chan.storage().cursor()))),
        wait: PollState::default(),
        chan,
    };
    (producer, consumer)
}

/// A producer of a channel, counted as a sender until it drops; the last
/// one closes the channel. It sends through [`Producer::by_ref`] or, one of
/// [`Many`], [`Producer::shared`] (module docs).
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (mut tx, mut rx) = endpoint::channel::<Ring<u8, 2, One, One>>();
/// tx.by_ref().try_send(1).unwrap();
/// drop(tx);
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// assert!(rx.chan().is_closed());
/// ```
pub struct Producer<S: Storage> {
    chan: Arc<Chan<S>>,
    /// # Safety
    ///
    /// With a single producer, the channel's one producer cursor, never
    /// given out but through this producer's rights; `None` with many.
    cursor: Option<Box<CachePadded<Turns<S::ProducerCursor>>>>,
    hold: PollState<TxNode<S>>,
}

/// A consumer of a channel, counted as a receiver until it drops; the last
/// one closes the channel and drops the values still queued. It receives
/// through [`Consumer::by_ref`] or, one of [`Many`], [`Consumer::shared`].
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::Many;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, rx) = endpoint::channel::<Ring<u8, 4, Many, Many>>();
/// tx.shared().try_send(1).unwrap();
/// assert_eq!(rx.clone().shared().try_recv(), Ok(1));
/// assert!(rx.shared().try_recv().is_err());
/// ```
pub struct Consumer<S: Storage> {
    chan: Arc<Chan<S>>,
    /// # Safety
    ///
    /// With a single consumer, the channel's one cursor, never given out
    /// but through this consumer's rights; `None` with many.
    cursor: Option<Box<CachePadded<S::Cursor>>>,
    wait: PollState<RxNode<S>>,
}

/// An endpoint that does not keep the channel open; upgrade it to act.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, _rx) = endpoint::channel::<List<u32, Many, One>>();
/// let weak = tx.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(tx);
/// assert!(weak.upgrade().is_none());
/// ```
pub struct Weak<E: Endpoint> {
    chan: Arc<Chan<E::Storage>>,
}

mod sealed {
    pub trait Sealed {}
}

/// A side's endpoint type, [`Producer`] or [`Consumer`]. Sealed.
pub trait Endpoint: sealed::Sealed + Sized {
    /// The channel's storage.
    type Storage: Storage;
    /// Whether this is the consumer side.
    #[doc(hidden)]
    const RECEIVES: bool;

    /// An endpoint already counted in `chan`, of a side with many.
    #[doc(hidden)]
    fn counted(chan: Arc<Chan<Self::Storage>>) -> Self;
}

/// What both sides' endpoints answer alike; `$waits` is the waiting state.
macro_rules! endpoint_common {
    ($endpoint:ident, $side:ident, $receives:literal, $waits:ident) => {
        impl<S: Storage> sealed::Sealed for $endpoint<S> {}

        impl<S: Storage> Endpoint for $endpoint<S> {
            type Storage = S;
            const RECEIVES: bool = $receives;

            fn counted(chan: Arc<Chan<S>>) -> Self {
                Self {
                    chan,
                    cursor: None,
                    $waits: Default::default(),
                }
            }
        }

        impl<S: Storage> $endpoint<S> {
            /// The channel, for queries.
            #[must_use]
            pub fn chan(&self) -> &Chan<S> {
                &self.chan
            }

            /// Closes the channel: sends fail, receivers drain what was sent
            /// and then see it closed. True if this call closed it.
            #[allow(clippy::must_use_candidate, reason = "called for its effect")]
            pub fn close(&self) -> bool {
                let from_producer = !Self::RECEIVES && !<S::Senders as Arity>::MANY;
                // SAFETY: a single producer's operations borrow it mutably,
                // so none runs now; any other close binds nothing.
                unsafe { self.chan.close(from_producer) }
            }
        }

        impl<S: Storage<$side = Many>> $endpoint<S> {
            /// A [`Weak`] endpoint of the same channel.
            #[must_use]
            pub fn downgrade(&self) -> Weak<Self> {
                Weak::new(Arc::clone(&self.chan))
            }
        }

        impl<S: Storage<$side = Many>> Clone for $endpoint<S> {
            fn clone(&self) -> Self {
                assert!(
                    self.chan.try_count_in(Self::RECEIVES),
                    "a live endpoint keeps its side counted"
                );
                Self::counted(Arc::clone(&self.chan))
            }
        }

        impl<S: Storage> fmt::Debug for $endpoint<S> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($endpoint))
                    .field("chan", &*self.chan)
                    .finish_non_exhaustive()
            }
        }
    };
}

endpoint_common!(Producer, Senders, false, hold);
endpoint_common!(Consumer, Receivers, true, wait);

impl<S: Storage> Producer<S> {
    /// The right to send, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every send's ready path")]
    #[must_use]
    pub fn by_ref(&mut self) -> ProducerRef<'_, S> {
        ProducerRef {
            chan: &self.chan,
            turns: self.cursor.as_deref_mut().map(|turns| &mut **turns),
        }
    }

    /// Polls for a unit of capacity kept until [`Producer::send_reserved`]
    /// or [`Producer::release_reserved`] (`futures::Sink::poll_ready`);
    /// `Ready(Ok)` at once while one is kept.
    ///
    /// # Errors
    ///
    /// `Ready(Err)` when the channel is closed.
    pub fn poll_reserve(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<()>>> {
        let Self { chan, hold, .. } = self;
        if hold.held {
            return Poll::Ready(Ok(()));
        }
        if !hold.registered {
            // SAFETY: this producer acts; the unit goes to its hold.
            match unsafe { chan.try_reserve(1) } {
                Ok(()) => {
                    hold.held = true;
                    return Poll::Ready(Ok(()));
                }
                Err(TrySendError::Disconnected(())) => return Poll::Ready(Err(SendError(()))),
                Err(TrySendError::Full(())) => {}
            }
        }
        let node = hold
            .node
            .get_or_insert_with(|| Box::pin(Default::default()))
            .as_ref();
        // SAFETY: as above; the node is pinned, only used with this channel,
        // and withdrawn by `release_reserved`.
        let result =
            std::task::ready!(unsafe { chan.poll_reserve(node, &mut hold.registered, 1, cx) });
        hold.held = result.is_ok();
        Poll::Ready(result)
    }

    /// Sends `value` through the unit [`Producer::poll_reserve`] kept, else
    /// if there is room now.
    ///
    /// # Errors
    ///
    /// As [`ProducerRef::try_send`]; the value is handed back.
    pub fn send_reserved(&mut self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        let held = std::mem::take(&mut self.hold.held);
        let mut right = self.by_ref();
        if held {
            let chan = right.chan;
            // SAFETY: the hold's unit, given up here; this right's cursor.
            let sent = unsafe { chan.push_unit(right.cursor(), value) };
            if sent.is_ok() {
                chan.pushed_unit();
            }
            return sent.map_err(|SendError(value)| TrySendError::Disconnected(value));
        }
        right.try_send(value)
    }

    /// Gives back the unit [`Producer::poll_reserve`] kept, and stops a
    /// reservation in progress.
    pub fn release_reserved(&mut self) {
        Self::release(&self.chan, &mut self.hold);
    }

    /// As [`Producer::release_reserved`], borrowing only what it uses.
    fn release(chan: &Chan<S>, hold: &mut PollState<TxNode<S>>) {
        if let Some(node) = &hold.node {
            // SAFETY: the node is pinned and only used with this channel.
            unsafe { chan.cancel_send(node.as_ref(), &mut hold.registered) };
        }
        if std::mem::take(&mut hold.held) {
            // SAFETY: `held` said a unit is held; it is given up here.
            unsafe { chan.return_units(1) };
        }
    }

    /// Whether [`Producer::poll_reserve`] keeps a unit.
    #[must_use]
    pub fn has_reserved(&self) -> bool {
        self.hold.held
    }
}

impl<S: Storage<Senders = Many>> Producer<S> {
    /// The right to send of one of many producers, while `self` is borrowed.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every send's ready path")]
    #[must_use]
    pub fn shared(&self) -> ProducerRef<'_, S> {
        ProducerRef {
            chan: &self.chan,
            turns: None,
        }
    }
}

impl<S: Storage> Drop for Producer<S> {
    fn drop(&mut self) {
        let _last = DropCounted(&self.chan, false);
        Self::release(&self.chan, &mut self.hold);
    }
}

impl<S: Storage> Consumer<S> {
    /// The right to receive, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every receive's ready path")]
    #[must_use]
    pub fn by_ref(&mut self) -> ConsumerRef<'_, S> {
        let own = self.cursor.as_deref_mut().map(|cursor| &mut **cursor);
        ConsumerRef {
            chan: &self.chan,
            // SAFETY: a single consumer keeps its cursor (field `cursor`).
            cursor: unsafe { cursor_of::<S::Receivers, _>(own) },
        }
    }

    /// Polls for a value, keeping the waiter node in the consumer
    /// (`futures::Stream::poll_next`).
    ///
    /// # Errors
    ///
    /// `Ready(Err)` once the channel is closed and drained.
    #[inline]
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<S::Item, RecvError>> {
        let Self { chan, cursor, wait } = self;
        let own = cursor.as_deref_mut().map(|cursor| &mut **cursor);
        // SAFETY: a single consumer keeps its cursor (field `cursor`).
        let cursor = unsafe { cursor_of::<S::Receivers, _>(own) };
        // SAFETY: this consumer's cursor; the node is pinned, only used with
        // this channel, and withdrawn by `stop_waiting` or the drop.
        unsafe {
            chan.poll_recv(
                cursor,
                || {
                    wait.node
                        .get_or_insert_with(|| Box::pin(Default::default()))
                        .as_ref()
                },
                &mut wait.registered,
                cx,
            )
        }
    }

    /// Withdraws the registration a pending [`Consumer::poll_recv`] left,
    /// passing on a wake-up it received.
    #[inline]
    pub fn stop_waiting(&mut self) {
        Self::withdraw(&self.chan, &mut self.wait);
    }

    /// As [`Consumer::stop_waiting`], borrowing only what it uses.
    fn withdraw(chan: &Chan<S>, wait: &mut PollState<RxNode<S>>) {
        if let Some(node) = &wait.node {
            // SAFETY: the node is pinned and only waited on this channel.
            unsafe { chan.cancel_recv(node.as_ref(), &mut wait.registered) };
        }
    }
}

impl<S: Storage<Receivers = One>> Consumer<S> {
    /// The next value, left in place, if one is ready.
    #[must_use]
    pub fn peek(&mut self) -> Option<&S::Item> {
        let cursor = self.cursor.as_deref_mut();
        // SAFETY: a single consumer has its cursor, lent while the result lives.
        unsafe { self.chan.storage().peek(cursor.unwrap_unchecked()) }
    }
}

impl<S: Storage<Receivers = Many>> Consumer<S> {
    /// The right to receive of one of many consumers, while `self` is lent.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every receive's ready path")]
    #[must_use]
    pub fn shared(&self) -> ConsumerRef<'_, S> {
        ConsumerRef {
            chan: &self.chan,
            // SAFETY: many consumers: the cursor holds nothing.
            cursor: unsafe { conjured() },
        }
    }
}

impl<S: Storage> Drop for Consumer<S> {
    fn drop(&mut self) {
        let _last = DropCounted(&self.chan, true);
        Self::withdraw(&self.chan, &mut self.wait);
    }
}

/// Counts an endpoint out of its channel when dropped, also on unwind.
struct DropCounted<'a, S: Storage>(&'a Chan<S>, bool);

impl<S: Storage> Drop for DropCounted<'_, S> {
    fn drop(&mut self) {
        // SAFETY: made only in an endpoint's `Drop`, giving up count and cursor.
        unsafe {
            if self.1 {
                self.0.drop_receiver();
            } else {
                self.0.drop_sender();
            }
        }
    }
}

impl<E: Endpoint> Weak<E> {
    fn new(chan: Arc<Chan<E::Storage>>) -> Self {
        chan.count_weak(E::RECEIVES, true);
        Self { chan }
    }

    /// The endpoint, if any of its side is still alive.
    #[must_use]
    pub fn upgrade(&self) -> Option<E> {
        self.chan
            .try_count_in(E::RECEIVES)
            .then(|| E::counted(Arc::clone(&self.chan)))
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &Chan<E::Storage> {
        &self.chan
    }
}

impl<E: Endpoint> Clone for Weak<E> {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.chan))
    }
}

impl<E: Endpoint> Drop for Weak<E> {
    fn drop(&mut self) {
        self.chan.count_weak(E::RECEIVES, false);
    }
}

impl<E: Endpoint> fmt::Debug for Weak<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Weak").field("chan", &*self.chan).finish()
    }
}

/// The right to act as a producer, borrowed from a [`Producer`]. Not
/// `Clone`. Operations whose result outlives the call (a future, held
/// [`Units`]) consume it; [`ProducerRef::reborrow`] lends a shorter one.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (mut tx, mut rx) = endpoint::channel::<Ring<u8, 4, One, One>>();
/// let mut right = tx.by_ref();
/// let mut units = right.reborrow().try_reserve(2).unwrap();
/// units.send(1).unwrap();
/// drop(units);
/// right.try_send(2).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// assert_eq!(rx.by_ref().try_recv(), Ok(2));
/// ```
pub struct ProducerRef<'a, S: Storage> {
    chan: &'a Chan<S>,
    /// # Safety
    ///
    /// With a single producer, its one cursor, borrowed mutably for `'a`;
    /// `None` with many.
    turns: Option<&'a mut Turns<S::ProducerCursor>>,
}

impl<'a, S: Storage> ProducerRef<'a, S> {
    /// A shorter right, for an operation whose result outlives the call.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every send's ready path")]
    #[must_use]
    pub fn reborrow(&mut self) -> ProducerRef<'_, S> {
        ProducerRef {
            chan: self.chan,
            turns: self.turns.as_deref_mut(),
        }
    }

    /// The producer's cursor, for this right's own use.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every send's ready path")]
    fn cursor(&mut self) -> &mut S::ProducerCursor {
        // SAFETY: a single producer's right has its cursor (field `turns`).
        unsafe { cursor_of::<S::Senders, _>(self.turns.as_deref_mut().map(Turns::get_mut)) }
    }

    /// The right, as the pusher of held units (or of a reservation).
    ///
    /// # Safety
    ///
    /// Whatever uses the pusher holds the units it pushes through.
    unsafe fn into_pusher(self) -> Pusher<'a, S> {
        // SAFETY: this right's cursor, shared from now on by the pusher's
        // copies, which take turns.
        unsafe { Pusher::new(self.chan, self.turns.map(|turns| &*turns)) }
    }

    /// Sends `value` if there is capacity now.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`TrySendError::Full`] (no capacity, or
    /// senders queued ahead) or [`TrySendError::Disconnected`] (closed).
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every try send's ready path")]
    pub fn try_send(&mut self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: this right's cursor (field `turns`).
        unsafe { self.chan.try_send(self.cursor(), value) }
    }

    /// Sends `value`, waiting while the channel is full, until `deadline` if
    /// there is one.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`SendTimeoutError::Timeout`] (the deadline
    /// passed) or [`SendTimeoutError::Disconnected`] (closed).
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every blocking send's ready path")]
    pub fn send_blocking(
        &mut self,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        // SAFETY: this right's cursor (field `turns`).
        unsafe { self.chan.send_blocking(self.cursor(), value, deadline) }
    }

    /// `n` units of capacity now. `n == 0` succeeds on an open channel; more
    /// than the capacity never does.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] (fewer than `n` free, or senders queued
    /// ahead), [`TrySendError::Disconnected`] (closed).
    #[inline]
    pub fn try_reserve(self, n: usize) -> Result<Units<Pusher<'a, S>>, TrySendError<()>> {
        // SAFETY: this right acts as the producer; the units go to the value.
        unsafe { self.chan.try_reserve(n) }?;
        // SAFETY: the `n` units were just reserved; they take this right.
        Ok(unsafe { Units::new(self.into_pusher(), n) })
    }

    /// Reserves `n` units, waiting until they are free or `deadline` passes.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] (the deadline passed),
    /// [`SendTimeoutError::Disconnected`] (closed).
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`.
    #[inline]
    pub fn reserve_blocking(
        self,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<Units<Pusher<'a, S>>, SendTimeoutError<()>> {
        assert_reservable::<S>(n);
        // SAFETY: this right acts as the producer; the units go to the value.
        unsafe { self.chan.reserve_blocking(n, deadline) }?;
        // SAFETY: the `n` units were just reserved; they take this right.
        Ok(unsafe { Units::new(self.into_pusher(), n) })
    }
}

impl<'a, S: Storage> ProducerRef<'a, S> {
    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.chan
    }

    /// A future that sends `value`, waiting for capacity.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn send(self, value: S::Item) -> Send<'a, S> {
        // SAFETY: a single producer's right has its cursor (field `turns`).
        let cursor = unsafe { cursor_of::<S::Senders, _>(self.turns.map(Turns::get_mut)) };
        // SAFETY: the future takes this right's cursor for its life (`'a`).
        unsafe { Send::new(self.chan, cursor, value) }
    }

    /// A future that waits in line for `n` units.
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn reserve(self, n: usize) -> Reserve<Pusher<'a, S>> {
        // SAFETY: the reservation holds the units it is granted.
        Reserve::new(unsafe { self.into_pusher() }, n)
    }
}

opaque_debug!(impl[S: Storage] ProducerRef<'_, S>; impl[S: Storage] ConsumerRef<'_, S>);

/// The right to act as a consumer, borrowed from a [`Consumer`]; as
/// [`ProducerRef`] on the other side.
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
    chan: &'a Chan<S>,
    /// # Safety
    ///
    /// The single consumer's cursor, borrowed mutably; with many, nothing.
    cursor: &'a mut S::Cursor,
}

impl<S: Storage> ConsumerRef<'_, S> {
    /// A shorter right, for an operation whose result outlives the call.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every receive's ready path")]
    #[must_use]
    pub fn reborrow(&mut self) -> ConsumerRef<'_, S> {
        ConsumerRef {
            chan: self.chan,
            cursor: self.cursor,
        }
    }

    /// Receives the next value if one is ready.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] (no value ready),
    /// [`TryRecvError::Disconnected`] (closed and drained).
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every try receive's ready path")]
    pub fn try_recv(&mut self) -> Result<S::Item, TryRecvError> {
        // SAFETY: the consumer contract (field `cursor`).
        unsafe { self.chan.try_recv(self.cursor) }
    }

    /// Receives a value, waiting while the channel is empty, until
    /// `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] (the deadline passed),
    /// [`RecvTimeoutError::Disconnected`] (closed and drained).
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "every blocking receive's ready path")]
    pub fn recv_blocking(
        &mut self,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        // SAFETY: the consumer contract (field `cursor`).
        unsafe { self.chan.recv_blocking(self.cursor, deadline) }
    }

    /// Appends up to `limit` ready values to `buf`; returns how many.
    pub fn try_recv_many(&mut self, buf: &mut Vec<S::Item>, limit: usize) -> usize {
        let before = buf.len();
        buf.extend(std::iter::from_fn(|| self.try_recv().ok()).take(limit));
        buf.len() - before
    }
}

impl<'a, S: Storage> ConsumerRef<'a, S> {
    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.chan
    }

    /// A future that receives one value, waiting for one.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn recv(self) -> Recv<'a, S> {
        // SAFETY: the future takes this right for its life (`'a`).
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

/// A future that resolves once `chan` is closed or every receiver is gone.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::One;
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, rx) = endpoint::channel::<Ring<u8, 2, One, One>>();
/// drop(rx);
/// futures::executor::block_on(endpoint::closed(tx.chan()));
/// ```
#[must_use = "futures do nothing unless polled"]
pub fn closed<S: Storage>(chan: &Chan<S>) -> Closed<'_, S> {
    Closed::new(chan)
}

/// The waiter node an endpoint keeps between `poll_*` calls, which have no
/// future to keep it in: allocated on the first poll that waits.
#[derive(Default)]
struct PollState<N> {
    node: Option<Pin<Box<N>>>,
    registered: bool,
    /// # Safety
    ///
    /// A producer's: true while it holds one unit for `poll_reserve`.
    held: bool,
}

#[cfg(all(test, not(asyncband_loom)))]
mod tests;
