//! The producer side: [`Producer`] (the one producer of a channel),
//! [`SharedProducer`] (cloneable, for [`Many`] producers), their borrowed
//! right to send, [`ProducerRef`], and a unit that owns its producer,
//! [`OwnedUnit`].

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::Arc;
use crate::arity::{Arity, Many};
use crate::chan::Chan;
use crate::error::{SendError, SendTimeoutError, TrySendError};
use crate::future::{Reserve, Send, assert_reservable};
use crate::storage::{Storage, conjured_cursor, many_producers_cursor};
use crate::sync::Turns;

use super::units::{Pusher, ReserveUnit, ReserveUnits, Unit, Units};

/// The one producer of a channel, made by [`channel`](super::channel).
///
/// Not `Clone`; it owns the producer's cursor
/// ([`Storage::ProducerCursor`]), and every operation that moves a value
/// goes through [`Producer::by_ref`], which borrows it mutably, so no two
/// producer-side operations ever overlap (units it reserved, which may push
/// from several threads, take turns at the cursor). A channel with
/// [`Many`] producers turns it into cloneable [`SharedProducer`]s with
/// [`Producer::into_shared`]. Dropping the last producer closes the
/// channel.
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
    /// The channel's one producer cursor: made with the channel, never
    /// given out, so every producer-side call of the channel uses it. On
    /// lines of its own: the consumer's traffic on the channel's lines
    /// never takes it away.
    cursor: Box<CachePadded<Turns<S::ProducerCursor>>>,
    hold: Hold<S>,
}

/// One of the cloneable producers of a channel with [`Many`] producers.
///
/// Every operation takes `&self`: each value moved is one atomic claim, so
/// clones on many threads share the channel freely. Cloning counts one more
/// sender; dropping the last one closes the channel.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, mut rx) = endpoint::channel::<List<u32, Many, One>>();
/// let tx = tx.into_shared();
/// let other = tx.clone();
/// std::thread::spawn(move || other.by_ref().try_send(1).unwrap()).join().unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// ```
pub struct SharedProducer<S: Storage<Senders = Many>> {
    chan: Arc<Chan<S>>,
    hold: Hold<S>,
}

/// A producer that does not keep the channel open; upgrade it to send.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::list::List;
///
/// let (tx, _rx) = endpoint::channel::<List<u32, Many, One>>();
/// let tx = tx.into_shared();
/// let weak = tx.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(tx);
/// assert!(weak.upgrade().is_none());
/// ```
pub struct WeakProducer<S: Storage<Senders = Many>> {
    chan: Arc<Chan<S>>,
}

/// The right to act as the producer of a channel, borrowed from a
/// [`Producer`] (mutably) or a [`SharedProducer`].
///
/// Not `Clone`. Operations that end with the call take `&mut self`; those
/// whose result outlives the call (a future, held [`Units`]) consume the
/// right, and [`ProducerRef::reborrow`] lends a shorter one for them.
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
    /// On a single-producer channel, `Some` with the producer's one cursor
    /// (borrowed mutably, so this right is its only user for `'a`); `None`
    /// with many producers, whose cursor holds nothing.
    turns: Option<&'a mut Turns<S::ProducerCursor>>,
}

impl<S: Storage> Producer<S> {
    /// The producer of the new channel `chan`, with its one cursor.
    pub(super) fn new(chan: Arc<Chan<S>>) -> Self {
        Self {
            cursor: Box::new(CachePadded::new(Turns::new(chan.producer_cursor()))),
            chan,
            hold: Hold::new(),
        }
    }

    /// The right to send, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    #[must_use]
    pub fn by_ref(&mut self) -> ProducerRef<'_, S> {
        // SAFETY: the channel's one producer cursor (field `cursor`). With
        // many producers the right ignores the cursor (its own holds
        // nothing).
        unsafe {
            ProducerRef::new(
                &self.chan,
                (!<S::Senders as Arity>::MANY).then_some(&mut **self.cursor),
            )
        }
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
        // Producer-side operations borrow `self` mutably, so none runs while
        // `&self` is held; a `close` from another thread may (it is atomic
        // operations only, and the publishes happened before `self` was shared).
        // SAFETY: the producer contract of `Chan::close`, as above.
        unsafe { self.chan.close(true) }
    }

    /// Polls for one unit of capacity that the producer keeps until
    /// [`Producer::send_reserved`] or [`Producer::release_reserved`]
    /// (`futures::Sink::poll_ready`). `Ready(Ok)` at once while one is
    /// kept.
    ///
    /// A single producer has one wake-up registration: while this
    /// reservation is pending, another waiting operation of the producer
    /// (a `send` or `reserve` future) takes it over, and this one is woken
    /// only when polled again. Finish or release it first.
    ///
    /// # Errors
    ///
    /// `Ready(Err)` when the channel is closed.
    pub fn poll_reserve(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<()>>> {
        // SAFETY: `&mut self` on the one producer, with its one cursor; the
        // hold belongs to it.
        unsafe { self.hold.poll(&self.chan, self.cursor.get_mut(), cx) }
    }

    /// Sends `value` through the unit [`Producer::poll_reserve`] kept, or,
    /// with none kept, if there is room now.
    ///
    /// # Errors
    ///
    /// As [`ProducerRef::try_send`]; the value is handed back.
    pub fn send_reserved(&mut self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: as in `poll_reserve`.
        unsafe { self.hold.send(&self.chan, self.cursor.get_mut(), value) }
    }

    /// Gives back the unit [`Producer::poll_reserve`] kept, and stops a
    /// reservation in progress.
    pub fn release_reserved(&mut self) {
        // SAFETY: as in `poll_reserve`.
        unsafe { self.hold.release(&self.chan) };
    }

    /// Whether [`Producer::poll_reserve`] keeps a unit.
    #[must_use]
    pub fn has_reserved(&self) -> bool {
        self.hold.held
    }
}

impl<S: Storage<Senders = Many>> Producer<S> {
    /// This producer as the first of any number of [`SharedProducer`]s.
    #[must_use]
    pub fn into_shared(self) -> SharedProducer<S> {
        self.chan.add_sender();
        // `self` drops after the count went up, so the channel stays open.
        SharedProducer::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage> Drop for Producer<S> {
    fn drop(&mut self) {
        let _last = DropSender(&self.chan);
        // SAFETY: `&mut self` on the producer.
        unsafe { self.hold.release(&self.chan) };
    }
}

impl<S: Storage> fmt::Debug for Producer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Producer")
            .field("chan", &*self.chan)
            .finish_non_exhaustive()
    }
}

impl<S: Storage<Senders = Many>> SharedProducer<S> {
    /// A producer already counted in `chan`'s senders.
    fn new(chan: Arc<Chan<S>>) -> Self {
        Self {
            chan,
            hold: Hold::new(),
        }
    }

    /// The right to send, for as long as `self` is borrowed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    #[must_use]
    pub fn by_ref(&self) -> ProducerRef<'_, S> {
        // SAFETY: many producers may act at once, each with a cursor that
        // holds nothing.
        unsafe { ProducerRef::new(&self.chan, None) }
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

    /// A [`WeakProducer`] of the same channel.
    #[must_use]
    pub fn downgrade(&self) -> WeakProducer<S> {
        WeakProducer::new(Arc::clone(&self.chan))
    }

    /// As [`Producer::poll_reserve`]; each clone keeps its own unit.
    ///
    /// # Errors
    ///
    /// `Ready(Err)` when the channel is closed.
    pub fn poll_reserve(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), SendError<()>>> {
        // SAFETY: many producers may act at once, with cursors that hold
        // nothing; the hold is this clone's.
        unsafe { self.hold.poll(&self.chan, many_producers_cursor::<S>(), cx) }
    }

    /// As [`Producer::send_reserved`].
    ///
    /// # Errors
    ///
    /// As [`ProducerRef::try_send`]; the value is handed back.
    pub fn send_reserved(&mut self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        // SAFETY: as in `poll_reserve`.
        unsafe {
            self.hold
                .send(&self.chan, many_producers_cursor::<S>(), value)
        }
    }

    /// As [`Producer::release_reserved`].
    pub fn release_reserved(&mut self) {
        // SAFETY: as in `poll_reserve`.
        unsafe { self.hold.release(&self.chan) };
    }

    /// Whether [`SharedProducer::poll_reserve`] keeps a unit.
    #[must_use]
    pub fn has_reserved(&self) -> bool {
        self.hold.held
    }

    /// One unit of capacity now, held by a value that owns this producer.
    ///
    /// # Errors
    ///
    /// Hands the producer back in [`TrySendError::Full`] when no unit is
    /// free or senders are queued ahead, and in
    /// [`TrySendError::Disconnected`] when the channel is closed.
    pub fn try_reserve_owned(self) -> Result<OwnedUnit<S>, TrySendError<Self>> {
        // SAFETY: many producers may reserve at once, with cursors that
        // hold nothing.
        match unsafe { self.chan.try_reserve(many_producers_cursor::<S>(), 1) } {
            // SAFETY: the unit just reserved goes to the value.
            Ok(()) => Ok(unsafe { OwnedUnit::new(self) }),
            Err(TrySendError::Full(())) => Err(TrySendError::Full(self)),
            Err(TrySendError::Disconnected(())) => Err(TrySendError::Disconnected(self)),
        }
    }

    /// Waits in line for one unit of capacity, held by a value that owns
    /// this producer.
    #[must_use = "futures do nothing unless polled"]
    pub fn reserve_owned(self) -> ReserveOwned<S> {
        ReserveOwned {
            inner: Reserve::new(Arc::clone(&self.chan), 1),
            producer: Some(self),
        }
    }
}

impl<S: Storage<Senders = Many>> Clone for SharedProducer<S> {
    fn clone(&self) -> Self {
        self.chan.add_sender();
        Self::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage<Senders = Many>> Drop for SharedProducer<S> {
    fn drop(&mut self) {
        let _last = DropSender(&self.chan);
        // SAFETY: the hold is this clone's; many producers may act at once.
        unsafe { self.hold.release(&self.chan) };
    }
}

impl<S: Storage<Senders = Many>> fmt::Debug for SharedProducer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedProducer")
            .field("chan", &*self.chan)
            .finish_non_exhaustive()
    }
}

/// Counts a producer out of its channel when dropped, also while a waker
/// unwinds out of the release before it: the last one closes the channel.
struct DropSender<'a, S: Storage>(&'a Chan<S>);

impl<S: Storage> Drop for DropSender<'_, S> {
    fn drop(&mut self) {
        // SAFETY: made only in the `Drop` of a producer, which is then the
        // only producer-side access on a single-producer channel.
        unsafe { self.0.drop_sender() };
    }
}

impl<S: Storage<Senders = Many>> WeakProducer<S> {
    fn new(chan: Arc<Chan<S>>) -> Self {
        chan.count_weak_sender(true);
        Self { chan }
    }

    /// A [`SharedProducer`], if any producer is still alive.
    #[must_use]
    pub fn upgrade(&self) -> Option<SharedProducer<S>> {
        self.chan
            .try_add_sender()
            .then(|| SharedProducer::new(Arc::clone(&self.chan)))
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &Chan<S> {
        &self.chan
    }
}

impl<S: Storage<Senders = Many>> Clone for WeakProducer<S> {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.chan))
    }
}

impl<S: Storage<Senders = Many>> Drop for WeakProducer<S> {
    fn drop(&mut self) {
        self.chan.count_weak_sender(false);
    }
}

impl<S: Storage<Senders = Many>> fmt::Debug for WeakProducer<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakProducer")
            .field("chan", &*self.chan)
            .finish()
    }
}

impl<'a, S: Storage> ProducerRef<'a, S> {
    /// # Safety
    ///
    /// `turns` as for the field: on a single-producer channel, its one
    /// producer cursor; with many producers, `None`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    unsafe fn new(chan: &'a Chan<S>, turns: Option<&'a mut Turns<S::ProducerCursor>>) -> Self {
        Self { chan, turns }
    }

    /// A shorter right, for an operation whose result outlives the call,
    /// after which this one can act again.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    #[must_use]
    pub fn reborrow(&mut self) -> ProducerRef<'_, S> {
        // SAFETY: the same cursor, reborrowed.
        unsafe { ProducerRef::new(self.chan, self.turns.as_deref_mut()) }
    }

    /// The producer's cursor, for one call.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    fn cursor(&mut self) -> &mut S::ProducerCursor {
        self.reborrow().into_cursor()
    }

    /// The producer's cursor, for the rest of `'a`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    fn into_cursor(self) -> &'a mut S::ProducerCursor {
        if <S::Senders as Arity>::MANY {
            // SAFETY: many producers: the cursor holds nothing.
            unsafe { conjured_cursor() }
        } else {
            // SAFETY: a single producer's right has its cursor (field
            // `turns`).
            unsafe { self.turns.unwrap_unchecked() }.get_mut()
        }
    }

    /// The right, given to units, which take turns at the cursor, or to a
    /// reservation that makes them.
    fn into_pusher(self) -> Pusher<'a, S> {
        // SAFETY: `turns` as for this right, which the pusher takes: shared
        // from now on, by the pusher's copies, which take turns.
        unsafe { Pusher::new(self.chan, self.turns.map(|turns| &*turns)) }
    }

    /// The channel, for queries.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.chan
    }

    /// Sends `value` if there is capacity now.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`TrySendError::Full`] when no capacity is free
    /// or senders are queued ahead, and in [`TrySendError::Disconnected`]
    /// when the channel is closed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every try send's ready path; out of line it costs a call per message"
    )]
    pub fn try_send(&mut self, value: S::Item) -> Result<(), TrySendError<S::Item>> {
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.try_send_unchecked(self.cursor(), value) }
    }

    /// Sends `value`, parking the thread while the channel is full, until
    /// `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`SendTimeoutError::Timeout`] when `deadline`
    /// passes first, and in [`SendTimeoutError::Disconnected`] when the
    /// channel is closed.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "every blocking send's ready path; out of line it costs a call per message"
    )]
    pub fn send_blocking(
        &mut self,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.send_blocking(self.cursor(), value, deadline) }
    }

    /// A future that sends `value`, waiting for capacity.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn send(self, value: S::Item) -> Send<'a, S> {
        let chan = self.chan;
        // SAFETY: the future takes this right's cursor for its life (`'a`).
        unsafe { Send::new(chan, self.into_cursor(), value) }
    }

    /// `n` units of capacity now. `n == 0` succeeds on an open channel; more
    /// than the capacity never does.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when fewer than `n` units are free or senders
    /// are queued ahead, and [`TrySendError::Disconnected`] when the channel
    /// is closed.
    #[inline]
    pub fn try_reserve(mut self, n: usize) -> Result<Units<'a, S>, TrySendError<()>> {
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.try_reserve(self.cursor(), n) }?;
        // SAFETY: the `n` units were just reserved; they take this right.
        Ok(unsafe { Units::new(self.into_pusher(), n) })
    }

    /// One unit of capacity now: [`try_reserve(1)`](Self::try_reserve) as
    /// a [`Unit`].
    ///
    /// # Errors
    ///
    /// As for [`try_reserve`](Self::try_reserve).
    #[inline]
    pub fn try_reserve_one(mut self) -> Result<Unit<'a, S>, TrySendError<()>> {
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.try_reserve(self.cursor(), 1) }?;
        // SAFETY: the unit was just reserved; it takes this right.
        Ok(unsafe { Unit::new(self.into_pusher()) })
    }

    /// One unit, parking the thread until it is free or `deadline` passes:
    /// [`reserve_blocking(1, ..)`](Self::reserve_blocking) as a [`Unit`].
    ///
    /// # Errors
    ///
    /// As for [`reserve_blocking`](Self::reserve_blocking).
    #[inline]
    pub fn reserve_one_blocking(
        mut self,
        deadline: Option<Instant>,
    ) -> Result<Unit<'a, S>, SendTimeoutError<()>> {
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.reserve_blocking(self.cursor(), 1, deadline) }?;
        // SAFETY: the unit was just reserved; as in `try_reserve_one`.
        Ok(unsafe { Unit::new(self.into_pusher()) })
    }

    /// A future that waits in line for one unit:
    /// [`reserve(1)`](Self::reserve) resolving to a [`Unit`].
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn reserve_one(self) -> ReserveUnit<'a, S> {
        // SAFETY: the future takes this right for `'a`.
        unsafe { ReserveUnit::new(self.into_pusher()) }
    }

    /// Reserves `n` units, parking the thread until they are free or
    /// `deadline` passes.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when `deadline` passes first, and
    /// [`SendTimeoutError::Disconnected`] when the channel is closed.
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`.
    #[inline]
    pub fn reserve_blocking(
        mut self,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<Units<'a, S>, SendTimeoutError<()>> {
        assert_reservable::<S>(n);
        let chan = self.chan;
        // SAFETY: this right's cursor (field `turns`).
        unsafe { chan.reserve_blocking(self.cursor(), n, deadline) }?;
        // SAFETY: the `n` units were just reserved; as in `try_reserve`.
        Ok(unsafe { Units::new(self.into_pusher(), n) })
    }

    /// A future that waits in line for `n` units.
    ///
    /// # Panics
    ///
    /// Unless `1 <= n <= CAP`.
    #[must_use = "futures do nothing unless polled"]
    #[inline]
    pub fn reserve(self, n: usize) -> ReserveUnits<'a, S> {
        // `Reserve::new` checks `n`.
        // SAFETY: the future takes this right for `'a`.
        unsafe { ReserveUnits::new(self.into_pusher(), n) }
    }
}

impl<S: Storage> fmt::Debug for ProducerRef<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProducerRef").finish_non_exhaustive()
    }
}

/// One unit of capacity held by a value that owns its [`SharedProducer`]:
/// for a slot reserved in one task and filled in another. It counts as a
/// sender while it lives.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 1, Many, One>>();
/// let unit = tx.into_shared().try_reserve_owned().unwrap();
/// let tx = std::thread::spawn(move || unit.send(9).unwrap()).join().unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(9));
/// assert_eq!(tx.chan().sender_count(), 1);
/// ```
pub struct OwnedUnit<S: Storage<Senders = Many>> {
    /// # Safety
    ///
    /// While `Some`, the value holds one unit of the producer's channel.
    producer: Option<SharedProducer<S>>,
}

impl<S: Storage<Senders = Many>> OwnedUnit<S> {
    /// # Safety
    ///
    /// The caller holds one unit of `producer`'s channel and gives it to the
    /// value.
    unsafe fn new(producer: SharedProducer<S>) -> Self {
        Self {
            producer: Some(producer),
        }
    }

    fn take(&mut self) -> SharedProducer<S> {
        self.producer
            .take()
            .expect("an owned unit holds its producer until it is used")
    }

    /// Sends `value` through the unit and hands the producer back.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the channel is closed; the unit goes back to
    /// the pool and the producer is dropped.
    pub fn send(mut self, value: S::Item) -> Result<SharedProducer<S>, SendError<S::Item>> {
        let producer = self.take();
        // SAFETY: the unit was held (field `producer`) and is consumed here,
        // once: `self` is now empty; many producers may push at once, with
        // cursors that hold nothing.
        unsafe {
            producer
                .chan
                .push_reserved(many_producers_cursor::<S>(), value)
        }?;
        Ok(producer)
    }

    /// Gives the unit back and hands the producer back.
    #[must_use = "the producer is handed back; drop the unit instead if it is not needed"]
    pub fn release(mut self) -> SharedProducer<S> {
        let producer = self.take();
        // SAFETY: the unit was held and is given up here, once.
        unsafe { producer.chan.return_units(1) };
        producer
    }

    /// The channel, for queries.
    ///
    /// # Panics
    ///
    /// Never: the producer is only taken by the methods that consume the
    /// unit.
    #[must_use]
    pub fn chan(&self) -> &Chan<S> {
        self.producer
            .as_ref()
            .expect("an owned unit holds its producer until it is used")
            .chan()
    }
}

impl<S: Storage<Senders = Many>> Drop for OwnedUnit<S> {
    fn drop(&mut self) {
        // Taken first, so the producer is dropped even if a waker unwinds
        // out of the grant below.
        if let Some(producer) = self.producer.take() {
            // SAFETY: the unit was held (field `producer`); given up once.
            unsafe { producer.chan.return_units(1) };
        }
    }
}

impl<S: Storage<Senders = Many>> fmt::Debug for OwnedUnit<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedUnit").finish_non_exhaustive()
    }
}

/// Waits in line for one unit held by an [`OwnedUnit`]; made by
/// [`SharedProducer::reserve_owned`]. Resolves to the unit, or to the
/// producer when the channel is closed.
///
/// # Cancel safety
///
/// Dropping it gives back a unit it was granted and drops the producer.
///
/// # Panics
///
/// Polled again after it completed.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 1, Many, One>>();
/// let unit = futures::executor::block_on(tx.into_shared().reserve_owned()).unwrap();
/// unit.send(4).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(4));
/// ```
pub struct ReserveOwned<S: Storage<Senders = Many>> {
    inner: Reserve<S, Arc<Chan<S>>>,
    producer: Option<SharedProducer<S>>,
}

impl<S: Storage<Senders = Many>> Future for ReserveOwned<S> {
    type Output = Result<OwnedUnit<S>, SendError<SharedProducer<S>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: never moved out of `self`;
        // `producer` is not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // Checked before the reservation is polled: polled again after it
        // completed, it would take a unit with no producer left to hold it.
        assert!(
            this.producer.is_some(),
            "`ReserveOwned` polled after completion"
        );
        // SAFETY: as above.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        // SAFETY: many producers may reserve at once, with cursors that hold
        // nothing.
        let result =
            std::task::ready!(unsafe { inner.poll_with(many_producers_cursor::<S>(), cx) });
        let producer = this.producer.take().expect("checked above");
        Poll::Ready(match result {
            // SAFETY: the reservation just granted the unit.
            Ok(()) => Ok(unsafe { OwnedUnit::new(producer) }),
            Err(SendError(())) => Err(SendError(producer)),
        })
    }
}

impl<S: Storage<Senders = Many>> fmt::Debug for ReserveOwned<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReserveOwned")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// A reservation a producer keeps pinned between polls.
type Waiting<S> = Pin<Box<Reserve<S, Arc<Chan<S>>>>>;

/// The unit a producer keeps between [`Producer::poll_reserve`] and the send
/// that uses it, and the reservation that waits for it.
struct Hold<S: Storage> {
    waiting: Option<Waiting<S>>,
    /// # Safety
    ///
    /// True while the producer owning this holds one unit for it.
    held: bool,
}

impl<S: Storage> Hold<S> {
    fn new() -> Self {
        Self {
            waiting: None,
            held: false,
        }
    }

    /// # Safety
    ///
    /// `chan` is the channel of the producer that owns this hold, and the
    /// producer contract of [`Chan`] holds for `cursor`.
    unsafe fn poll(
        &mut self,
        chan: &Arc<Chan<S>>,
        cursor: &mut S::ProducerCursor,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), SendError<()>>> {
        if self.held {
            return Poll::Ready(Ok(()));
        }
        let waiting = match &mut self.waiting {
            Some(waiting) => waiting,
            // SAFETY: the caller's contract.
            None => match unsafe { chan.try_reserve(cursor, 1) } {
                Ok(()) => {
                    self.held = true;
                    return Poll::Ready(Ok(()));
                }
                Err(TrySendError::Disconnected(())) => return Poll::Ready(Err(SendError(()))),
                Err(TrySendError::Full(())) => self
                    .waiting
                    .insert(Box::pin(Reserve::new(Arc::clone(chan), 1))),
            },
        };
        // SAFETY: the caller's contract.
        let result = std::task::ready!(unsafe { waiting.as_mut().poll_with(cursor, cx) });
        self.waiting = None;
        self.held = result.is_ok();
        Poll::Ready(result)
    }

    /// # Safety
    ///
    /// As for [`Hold::poll`].
    unsafe fn send(
        &mut self,
        chan: &Chan<S>,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
    ) -> Result<(), TrySendError<S::Item>> {
        if std::mem::take(&mut self.held) {
            // SAFETY: `held` said a unit is held; it is consumed here, with
            // the caller's cursor.
            return unsafe { chan.push_reserved(cursor, value) }
                .map_err(|SendError(value)| TrySendError::Disconnected(value));
        }
        // SAFETY: the caller's contract.
        unsafe { chan.try_send_unchecked(cursor, value) }
    }

    /// # Safety
    ///
    /// As for [`Hold::poll`].
    unsafe fn release(&mut self, chan: &Chan<S>) {
        self.waiting = None;
        if std::mem::take(&mut self.held) {
            // SAFETY: `held` said a unit is held; it is given up here.
            unsafe { chan.return_units(1) };
        }
    }
}
