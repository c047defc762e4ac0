//! The endpoints of a side with many endpoints: the sender of
//! [`mpsc`](crate::mpsc) and [`mpmc`](crate::mpmc), and the receiver of
//! [`mpmc`](crate::mpmc).
//!
//! They are `Clone` and every operation takes `&self`: each value moved is
//! one atomic claim, so clones on many threads or tasks share the channel
//! freely.

use std::fmt;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use asyncband_core::arity::Many;
use asyncband_core::chan::Chan;
use asyncband_core::endpoint::{SharedConsumer, SharedProducer, WeakConsumer, WeakProducer};
use asyncband_core::future::Closed;
use asyncband_core::storage::{Capacity, Storage};

use crate::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use crate::flavour::Flavour;
use crate::future::borrowed::{
    ClosedFuture, RecvFuture, RecvManyFuture, ReserveFuture, ReserveManyFuture, SendFuture,
};
use crate::iter::{IntoIter, Iter, TryIter};
use crate::permit::{Permit, Permits};

/// The sending half of an [`mpsc`](crate::mpsc) or [`mpmc`](crate::mpmc)
/// channel. Clone it for each producer.
///
/// The channel closes when the last sender is dropped (weak senders do not
/// count): receivers drain what was sent, then see it closed.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<u32, 64>();
/// let handles: Vec<_> = (0..4)
///     .map(|id| {
///         let tx = tx.clone();
///         std::thread::spawn(move || tx.send_blocking(id).unwrap())
///     })
///     .collect();
/// drop(tx);
/// handles.into_iter().for_each(|h| h.join().unwrap());
/// let mut got: Vec<u32> = rx.iter().collect();
/// got.sort();
/// assert_eq!(got, [0, 1, 2, 3]);
/// ```
pub struct Sender<F: Flavour<Senders = Many>> {
    pub(crate) tx: SharedProducer<F::Storage>,
}

/// A sender that does not keep the channel open; [`upgrade`](Self::upgrade)
/// it to send.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, _rx) = mpsc::bounded::<u8, 2>();
/// let weak = tx.downgrade();
/// assert!(weak.upgrade().is_some());
/// drop(tx);
/// assert!(weak.upgrade().is_none());
/// ```
pub struct WeakSender<F: Flavour<Senders = Many>> {
    tx: WeakProducer<F::Storage>,
}

/// The receiving half of an [`mpmc`](crate::mpmc) channel. Clone it for each
/// consumer; each value goes to exactly one of them.
///
/// The channel closes when the last receiver is dropped, and the values
/// still queued are dropped then.
///
/// # Examples
///
/// ```
/// use asyncband::mpmc;
///
/// let (tx, rx) = mpmc::bounded::<u32, 8>();
/// let rx2 = rx.clone();
/// tx.try_send(1).unwrap();
/// tx.try_send(2).unwrap();
/// assert_eq!(rx.try_recv().unwrap() + rx2.try_recv().unwrap(), 3);
/// ```
pub struct Receiver<F: Flavour<Receivers = Many>> {
    pub(crate) rx: SharedConsumer<F::Storage>,
}

/// A receiver that does not keep the channel open;
/// [`upgrade`](Self::upgrade) it to receive. Once every receiver is gone the
/// channel is closed and its queued values dropped, and no weak receiver
/// can upgrade any more.
///
/// # Examples
///
/// ```
/// use asyncband::mpmc;
///
/// let (tx, rx) = mpmc::bounded::<u8, 2>();
/// let weak = rx.downgrade();
/// tx.try_send(1).unwrap();
/// assert_eq!(weak.upgrade().unwrap().try_recv(), Ok(1));
/// drop(rx);
/// assert!(weak.upgrade().is_none());
/// assert!(tx.is_closed());
/// ```
pub struct WeakReceiver<F: Flavour<Receivers = Many>> {
    rx: WeakConsumer<F::Storage>,
}

impl<F: Flavour<Senders = Many>> Sender<F> {
    pub(crate) fn new(tx: SharedProducer<F::Storage>) -> Self {
        Self { tx }
    }

    fn chan(&self) -> &Chan<F::Storage> {
        self.tx.chan()
    }

    /// Sends `value` if the channel has room now. Never barges past senders
    /// that are waiting for room.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when every slot is taken (or senders are
    /// waiting; never for an unbounded channel),
    /// [`TrySendError::Disconnected`] when the channel is closed or every
    /// receiver is gone. Both hand the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::TrySendError, mpsc};
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn try_send(&self, value: F::Item) -> Result<(), TrySendError<F::Item>> {
        self.tx.by_ref().try_send(value)
    }

    /// Sends `value`, waiting for room. Waiting senders are served in the
    /// order they began to wait.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel is closed or every
    /// receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes drops the value (it was not
    /// sent) and passes any slot it had been granted to the next waiter.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// tx.send(1).await.unwrap();
    /// assert_eq!(rx.recv().await, Ok(1));
    /// # }
    /// ```
    pub fn send(&self, value: F::Item) -> SendFuture<'_, F> {
        SendFuture {
            inner: self.tx.by_ref().send(value),
        }
    }

    /// Sends `value`, parking the thread while the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel is closed or every
    /// receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 1>();
    /// let consumer = std::thread::spawn(move || rx.recv_blocking().unwrap() + rx.recv_blocking().unwrap());
    /// tx.send_blocking(1).unwrap();
    /// tx.send_blocking(2).unwrap();
    /// assert_eq!(consumer.join().unwrap(), 3);
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn send_blocking(&self, value: F::Item) -> Result<(), SendError<F::Item>> {
        self.tx
            .by_ref()
            .send_blocking(value, None)
            .map_err(|err| SendError(err.into_inner()))
    }

    /// Sends `value`, parking the thread for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] or [`SendTimeoutError::Disconnected`],
    /// each with the value.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// assert!(tx.send_timeout(2, Duration::from_millis(5)).unwrap_err().is_timeout());
    /// ```
    pub fn send_timeout(
        &self,
        value: F::Item,
        timeout: Duration,
    ) -> Result<(), SendTimeoutError<F::Item>> {
        self.tx
            .by_ref()
            .send_blocking(value, crate::deadline::after(timeout))
    }

    /// Sends values taken from `values` while there is room now, reserving
    /// room for a batch of them in one step; a value is taken from the
    /// iterator only once its slot is reserved, so what could not be sent
    /// stays in the iterator. Returns how many were sent.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value in hand when the channel is closed (or
    /// every receiver is gone); the values before it were sent.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u32, 4>();
    /// let mut values = 0..10;
    /// assert_eq!(tx.try_send_many(&mut values), Ok(4));
    /// assert_eq!(values.next(), Some(4), "the rest stays in the iterator");
    /// assert_eq!(rx.try_recv(), Ok(0));
    /// ```
    pub fn try_send_many<I: Iterator<Item = F::Item>>(
        &self,
        values: &mut I,
    ) -> Result<usize, SendError<F::Item>> {
        crate::batch::send_from(self.tx.by_ref(), values).map(|(sent, _)| sent)
    }

    /// Sends every value of `values`, in batches where there is room,
    /// waiting in line for room when there is none. Returns how many were
    /// sent.
    ///
    /// It returns once the iterator is exhausted: `next` gave `None`, or
    /// `size_hint` says nothing is left, as the iterators of ranges and
    /// collections and their adapters do. An iterator that cannot say so
    /// (`iter::from_fn`, say) is asked for its next value only once a slot
    /// is reserved for it, so on a full channel the future waits for room
    /// before it learns that the iterator has ended.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value in hand when the channel is closed (or
    /// every receiver is gone); the values before it were sent, those after
    /// it stay in the iterator.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future stops the batch: values already sent stay sent,
    /// values not yet taken stay in the iterator; a slot granted to it is
    /// passed on. Only a value taken for a slot being waited for can be lost
    /// with the future; none is, since the slot is reserved before the value
    /// is taken.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u32, 4>();
    /// let consumer = tokio::spawn(async move {
    ///     let mut sum = 0;
    ///     while let Ok(v) = rx.recv().await {
    ///         sum += v;
    ///     }
    ///     sum
    /// });
    /// assert_eq!(tx.send_many(&mut (1..=100)).await, Ok(100));
    /// drop(tx);
    /// assert_eq!(consumer.await.unwrap(), 5050);
    /// # }
    /// ```
    pub async fn send_many<I: Iterator<Item = F::Item>>(
        &self,
        values: &mut I,
    ) -> Result<usize, SendError<F::Item>> {
        crate::batch::send_all(self.tx.by_ref(), values).await
    }

    /// Closes the channel for every endpoint: sends fail from now on,
    /// receivers drain what was sent and then see it closed. Returns true if
    /// this call closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// assert!(tx.close());
    /// assert!(!tx.close());
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// assert!(rx.try_recv().is_err());
    /// ```
    #[allow(
        clippy::must_use_candidate,
        reason = "called for its effect; whether this call was the one that closed is incidental"
    )]
    pub fn close(&self) -> bool {
        self.tx.close()
    }

    /// Resolves once the channel is closed or every receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Holds nothing; dropping it has no effect on the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::unbounded::<u8>();
    /// tokio::spawn(async move { drop(rx) });
    /// tx.closed().await;
    /// # }
    /// ```
    pub fn closed(&self) -> ClosedFuture<'_, F> {
        ClosedFuture {
            inner: Closed::new(self.tx.chan()),
        }
    }

    /// True after `close`, or once every receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 2>();
    /// drop(rx);
    /// assert!(tx.is_closed());
    /// ```
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.chan().is_closed()
    }

    /// Values queued now (held permits are not values).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// assert_eq!(tx.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.chan().storage().len()
    }

    /// True when no value is queued.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 4>();
    /// assert!(tx.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when no `try_send` or `try_reserve` could succeed now: queued
    /// values, held permits and capacity granted to waiting senders fill the
    /// bound. Never for unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 2>();
    /// let _permit = tx.try_reserve().unwrap();
    /// tx.try_send(1).unwrap();
    /// assert!(tx.is_full());
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.chan().storage().is_full()
    }

    /// The bound, or `None` for an unbounded channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 8>();
    /// assert_eq!(tx.capacity(), Some(8));
    /// ```
    #[must_use]
    pub fn capacity(&self) -> Option<usize> {
        F::CAPACITY
    }

    /// Live senders, including those held by owned permits; weak senders do
    /// not count.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 2>();
    /// let _tx2 = tx.clone();
    /// let _weak = tx.downgrade();
    /// assert_eq!(tx.sender_count(), 2);
    /// ```
    #[must_use]
    pub fn sender_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live receivers.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// let _rx2 = rx.clone();
    /// assert_eq!(tx.receiver_count(), 2);
    /// ```
    #[must_use]
    pub fn receiver_count(&self) -> usize {
        self.chan().receiver_count()
    }

    /// True if `other` is an endpoint of the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 2>();
    /// assert!(tx.same_channel(&tx.clone()));
    /// ```
    #[must_use]
    pub fn same_channel(&self, other: &Self) -> bool {
        std::ptr::eq(self.chan(), other.chan())
    }

    /// Live senders: the same as [`sender_count`](Self::sender_count), by
    /// tokio's name.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded::<u8>();
    /// let tx2 = tx.clone();
    /// assert_eq!(tx.strong_count(), 2);
    /// drop(tx2);
    /// assert_eq!(tx.strong_count(), 1);
    /// ```
    #[must_use]
    pub fn strong_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live weak senders of this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// assert_eq!(tx.weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(tx.weak_count(), 0);
    /// ```
    #[must_use]
    pub fn weak_count(&self) -> usize {
        self.chan().weak_sender_count()
    }

    /// A [`WeakSender`] to this channel, which does not keep it open.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// weak.upgrade().unwrap().try_send(1).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// assert!(rx.try_recv().is_err());
    /// ```
    #[must_use]
    pub fn downgrade(&self) -> WeakSender<F> {
        WeakSender {
            tx: self.tx.downgrade(),
        }
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Sender<F> {
    /// Reserves one slot now, to send into later without waiting. A permit
    /// reserves capacity, not a position: its value is ordered by when it is
    /// sent.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when no slot is free (or senders are waiting),
    /// [`TrySendError::Disconnected`] when the channel is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// let permit = tx.try_reserve().unwrap();
    /// assert!(tx.try_send(1).is_err());
    /// permit.send(2).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(2));
    /// ```
    pub fn try_reserve(&self) -> Result<Permit<'_, F>, TrySendError<()>> {
        self.tx.by_ref().try_reserve_one().map(Permit::new)
    }

    /// Reserves one slot, waiting in line for it.
    ///
    /// # Errors
    ///
    /// [`SendError`] when the channel is closed or every receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future passes a slot it had been granted to the next
    /// waiting sender.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 1>();
    /// let permit = tx.reserve().await.unwrap();
    /// permit.send(5).unwrap();
    /// assert_eq!(rx.recv().await, Ok(5));
    /// # }
    /// ```
    pub fn reserve(&self) -> ReserveFuture<'_, F> {
        ReserveFuture {
            inner: self.tx.by_ref().reserve_one(),
        }
    }

    /// Reserves one slot, parking the thread while the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendError`] when the channel is closed or every receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// tx.reserve_blocking().unwrap().send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn reserve_blocking(&self) -> Result<Permit<'_, F>, SendError<()>> {
        self.tx
            .by_ref()
            .reserve_one_blocking(None)
            .map(Permit::new)
            .map_err(|_| SendError(()))
    }

    /// Reserves one slot, parking the thread for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] or [`SendTimeoutError::Disconnected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    /// use std::time::Duration;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 1>();
    /// let _held = tx.try_reserve().unwrap();
    /// assert!(tx.reserve_timeout(Duration::from_millis(5)).unwrap_err().is_timeout());
    /// ```
    pub fn reserve_timeout(
        &self,
        timeout: Duration,
    ) -> Result<Permit<'_, F>, SendTimeoutError<()>> {
        self.tx
            .by_ref()
            .reserve_one_blocking(crate::deadline::after(timeout))
            .map(Permit::new)
    }

    /// Reserves `n` slots at once, now.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when fewer than `n` slots are free (or senders
    /// are waiting), or when `n` is above the capacity;
    /// [`TrySendError::Disconnected`] when the channel is closed, whatever `n`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 4>();
    /// assert_eq!(tx.try_reserve_many(4).unwrap().len(), 4);
    /// assert!(tx.try_reserve_many(5).is_err());
    /// ```
    pub fn try_reserve_many(&self, n: usize) -> Result<Permits<'_, F>, TrySendError<()>> {
        self.tx.by_ref().try_reserve(n).map(Permits::new)
    }

    /// Reserves `n` slots at once, waiting in line for them.
    ///
    /// # Errors
    ///
    /// [`SendError`] when the channel is closed, or at once when `n` is above
    /// the capacity (it could never succeed).
    ///
    /// # Cancel safety
    ///
    /// Dropping the future passes every slot it had been granted to the
    /// next waiting sender.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 4>();
    /// for permit in tx.reserve_many(2).await.unwrap() {
    ///     permit.send(1).unwrap();
    /// }
    /// assert_eq!(rx.len(), 2);
    /// # }
    /// ```
    pub fn reserve_many(&self, n: usize) -> ReserveManyFuture<'_, F> {
        ReserveManyFuture::new(self.tx.by_ref(), n)
    }
}

impl<F: Flavour<Senders = Many>> Clone for Sender<F> {
    fn clone(&self) -> Self {
        Self::new(self.tx.clone())
    }
}

impl<F: Flavour<Senders = Many>> fmt::Debug for Sender<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").field("chan", self.chan()).finish()
    }
}

impl<F: Flavour<Senders = Many>> WeakSender<F> {
    fn chan(&self) -> &Chan<F::Storage> {
        self.tx.chan()
    }

    /// Live senders of this channel (weak ones do not count).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// assert_eq!(weak.strong_count(), 1);
    /// drop(tx);
    /// assert_eq!(weak.strong_count(), 0);
    /// ```
    #[must_use]
    pub fn strong_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live weak senders of this channel, this one included.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// let weak2 = weak.clone();
    /// assert_eq!(weak.weak_count(), 2);
    /// drop(weak2);
    /// assert_eq!(weak.weak_count(), 1);
    /// ```
    #[must_use]
    pub fn weak_count(&self) -> usize {
        self.chan().weak_sender_count()
    }

    /// A sender, if any sender is still alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, _rx) = mpmc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// let tx2 = weak.upgrade().unwrap();
    /// drop((tx, tx2));
    /// assert!(weak.upgrade().is_none());
    /// ```
    #[must_use]
    pub fn upgrade(&self) -> Option<Sender<F>> {
        self.tx.upgrade().map(Sender::new)
    }
}

impl<F: Flavour<Senders = Many>> Clone for WeakSender<F> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<F: Flavour<Senders = Many>> fmt::Debug for WeakSender<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakSender")
            .field("chan", self.chan())
            .finish()
    }
}

impl<F: Flavour<Receivers = Many>> Receiver<F> {
    pub(crate) fn new(rx: SharedConsumer<F::Storage>) -> Self {
        Self { rx }
    }

    fn chan(&self) -> &Chan<F::Storage> {
        self.rx.chan()
    }

    /// Takes the next value if one is ready.
    ///
    /// # Errors
    ///
    /// [`TryRecvError::Empty`] when nothing is ready,
    /// [`TryRecvError::Disconnected`] when the channel is closed (or every
    /// sender is gone) and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::TryRecvError, mpmc};
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn try_recv(&self) -> Result<F::Item, TryRecvError> {
        self.rx.by_ref().try_recv()
    }

    /// Takes the next value, waiting for one. Waiting receivers are woken in
    /// the order they began to wait.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is closed and drained.
    ///
    /// # Cancel safety
    ///
    /// A value is taken only when the future completes; dropping it earlier
    /// loses nothing and passes a wake-up it received to the next receiver.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(2).unwrap();
    /// assert_eq!(rx.recv().await, Ok(2));
    /// # }
    /// ```
    pub fn recv(&self) -> RecvFuture<'_, F> {
        RecvFuture {
            inner: self.rx.by_ref().recv(),
        }
    }

    /// Takes the next value, parking the thread while the channel is empty.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// std::thread::spawn(move || tx.send_blocking(1).unwrap());
    /// assert_eq!(rx.recv_blocking(), Ok(1));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn recv_blocking(&self) -> Result<F::Item, RecvError> {
        self.rx.by_ref().recv_blocking(None).map_err(|_| RecvError)
    }

    /// Takes the next value, parking the thread for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] or [`RecvTimeoutError::Disconnected`].
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::RecvTimeoutError, mpmc};
    /// use std::time::Duration;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<F::Item, RecvTimeoutError> {
        self.rx
            .by_ref()
            .recv_blocking(crate::deadline::after(timeout))
    }

    /// Appends up to `limit` ready values to `buf` without waiting; returns
    /// how many.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.try_recv_many(&mut buf, 8), 1);
    /// ```
    pub fn try_recv_many(&self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
        self.rx.by_ref().try_recv_many(buf, limit)
    }

    /// Waits for at least one value, then appends up to `limit` ready values
    /// to `buf`; returns how many, `0` once the channel is closed and drained
    /// (or when `limit` is 0).
    ///
    /// # Cancel safety
    ///
    /// Values are moved into `buf` only when the future completes.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many(&mut buf, 4).await, 1);
    /// # }
    /// ```
    pub fn recv_many<'a>(
        &'a self,
        buf: &'a mut Vec<F::Item>,
        limit: usize,
    ) -> RecvManyFuture<'a, F> {
        RecvManyFuture {
            inner: self.rx.by_ref().recv_many(buf, limit),
        }
    }

    /// Parks the thread until at least one value is ready, then appends up
    /// to `limit` ready values to `buf`; returns how many, `0` once the
    /// channel is closed and drained (or when `limit` is 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many_blocking(&mut buf, 4), 1);
    /// ```
    pub fn recv_many_blocking(&self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
        if limit == 0 {
            return 0;
        }
        match self.recv_blocking() {
            Ok(first) => {
                buf.push(first);
                1 + self.try_recv_many(buf, limit - 1)
            }
            Err(RecvError) => 0,
        }
    }

    /// An iterator over the values ready now.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.try_iter().count(), 1);
    /// ```
    #[must_use = "iterators are lazy and receive nothing unless consumed"]
    pub fn try_iter(&self) -> TryIter<'_, F> {
        TryIter::new(self.rx.by_ref())
    }

    /// A blocking iterator that ends once the channel is closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// drop(tx);
    /// assert_eq!(rx.iter().collect::<Vec<_>>(), [1]);
    /// ```
    #[must_use = "iterators are lazy and receive nothing unless consumed"]
    pub fn iter(&self) -> Iter<'_, F> {
        Iter::new(self.rx.by_ref())
    }

    /// Closes the channel for every endpoint. Returns true if this call
    /// closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert!(rx.close());
    /// assert!(tx.try_send(1).is_err());
    /// ```
    #[allow(
        clippy::must_use_candidate,
        reason = "called for its effect; whether this call was the one that closed is incidental"
    )]
    pub fn close(&self) -> bool {
        self.rx.close()
    }

    /// True after `close`, or once every sender is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// drop(tx);
    /// assert!(rx.is_closed());
    /// ```
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.chan().is_closed()
    }

    /// Values queued now.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.len(), 1);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.chan().storage().len()
    }

    /// True when no value is queued.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert!(rx.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when no `try_send` or `try_reserve` could succeed now. Never for
    /// unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// assert!(rx.is_full());
    /// ```
    #[must_use]
    pub fn is_full(&self) -> bool {
        self.chan().storage().is_full()
    }

    /// The bound, or `None` for an unbounded channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert_eq!(rx.capacity(), Some(2));
    /// ```
    #[must_use]
    pub fn capacity(&self) -> Option<usize> {
        F::CAPACITY
    }

    /// Live senders.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 2>();
    /// drop(tx);
    /// assert_eq!(rx.sender_count(), 0);
    /// ```
    #[must_use]
    pub fn sender_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live receivers.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// let _rx2 = rx.clone();
    /// assert_eq!(rx.receiver_count(), 2);
    /// ```
    #[must_use]
    pub fn receiver_count(&self) -> usize {
        self.chan().receiver_count()
    }

    /// True if `other` is an endpoint of the same channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::bounded::<u8, 2>();
    /// assert!(rx.same_channel(&rx.clone()));
    /// ```
    #[must_use]
    pub fn same_channel(&self, other: &Self) -> bool {
        std::ptr::eq(self.chan(), other.chan())
    }

    /// A [`WeakReceiver`] to this channel, which does not keep it open.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// let weak = rx.downgrade();
    /// drop(rx);
    /// assert!(tx.try_send(1).is_err(), "the weak receiver kept nothing open");
    /// assert!(weak.upgrade().is_none());
    /// ```
    #[must_use]
    pub fn downgrade(&self) -> WeakReceiver<F> {
        WeakReceiver {
            rx: self.rx.downgrade(),
        }
    }
}

impl<F: Flavour<Receivers = Many>> WeakReceiver<F> {
    fn chan(&self) -> &Chan<F::Storage> {
        self.rx.chan()
    }

    /// A receiver, if any receiver is still alive.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::unbounded::<u8>();
    /// let weak = rx.downgrade();
    /// let rx2 = weak.upgrade().unwrap();
    /// assert_eq!(rx.receiver_count(), 2);
    /// drop((rx, rx2));
    /// assert!(weak.upgrade().is_none());
    /// ```
    #[must_use]
    pub fn upgrade(&self) -> Option<Receiver<F>> {
        self.rx.upgrade().map(Receiver::new)
    }

    /// Live receivers of this channel (weak ones do not count).
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::unbounded::<u8>();
    /// let weak = rx.downgrade();
    /// assert_eq!(weak.strong_count(), 1);
    /// ```
    #[must_use]
    pub fn strong_count(&self) -> usize {
        self.chan().receiver_count()
    }

    /// Live weak receivers of this channel, this one included.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (_tx, rx) = mpmc::unbounded::<u8>();
    /// let weak = rx.downgrade();
    /// assert_eq!(weak.weak_count(), 1);
    /// ```
    #[must_use]
    pub fn weak_count(&self) -> usize {
        self.chan().weak_receiver_count()
    }
}

impl<F: Flavour<Receivers = Many>> Clone for WeakReceiver<F> {
    fn clone(&self) -> Self {
        Self {
            rx: self.rx.clone(),
        }
    }
}

impl<F: Flavour<Receivers = Many>> fmt::Debug for WeakReceiver<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakReceiver")
            .field("chan", self.chan())
            .finish()
    }
}

impl<F: Flavour<Receivers = Many>> Clone for Receiver<F> {
    fn clone(&self) -> Self {
        Self::new(self.rx.clone())
    }
}

impl<F: Flavour<Receivers = Many>> fmt::Debug for Receiver<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("chan", self.chan())
            .finish_non_exhaustive()
    }
}

impl<'a, F: Flavour<Receivers = Many>> IntoIterator for &'a Receiver<F> {
    type Item = F::Item;
    type IntoIter = Iter<'a, F>;

    fn into_iter(self) -> Iter<'a, F> {
        self.iter()
    }
}

impl<F: Flavour<Receivers = Many>> IntoIterator for Receiver<F> {
    type Item = F::Item;
    type IntoIter = IntoIter<Self>;

    fn into_iter(self) -> IntoIter<Self> {
        IntoIter::new(self)
    }
}

impl<F: Flavour<Receivers = Many>> crate::iter::BlockingRecv for Receiver<F> {
    type Item = F::Item;

    fn next_blocking(&mut self) -> Option<F::Item> {
        self.recv_blocking().ok()
    }
}

impl<F: Flavour<Senders = Many>> Sender<F> {
    /// Sends `value`, parking the thread until `deadline` at the latest while
    /// the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when no room came before `deadline`,
    /// [`SendTimeoutError::Disconnected`] when the channel is closed or every
    /// receiver is gone. Both hand the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::SendTimeoutError, mpsc};
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(tx.send_deadline(2, deadline), Err(SendTimeoutError::Timeout(2)));
    /// ```
    pub fn send_deadline(
        &self,
        value: F::Item,
        deadline: Instant,
    ) -> Result<(), SendTimeoutError<F::Item>> {
        self.tx.by_ref().send_blocking(value, Some(deadline))
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Sender<F> {
    /// Reserves one slot, parking the thread until `deadline` at the latest.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when no slot came before `deadline`,
    /// [`SendTimeoutError::Disconnected`] when the channel is closed or every
    /// receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, _rx) = mpmc::bounded::<u8, 1>();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// let permit = tx.reserve_deadline(deadline).unwrap();
    /// assert!(tx.reserve_deadline(deadline).unwrap_err().is_timeout());
    /// drop(permit);
    /// ```
    pub fn reserve_deadline(
        &self,
        deadline: Instant,
    ) -> Result<Permit<'_, F>, SendTimeoutError<()>> {
        self.tx
            .by_ref()
            .reserve_one_blocking(Some(deadline))
            .map(Permit::new)
    }
}

impl<F: Flavour<Receivers = Many>> Receiver<F> {
    /// Takes the next value, parking the thread until `deadline` at the
    /// latest while the channel is empty.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] when nothing came before `deadline`,
    /// [`RecvTimeoutError::Disconnected`] once closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::RecvTimeoutError, mpmc};
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(rx.recv_deadline(deadline), Err(RecvTimeoutError::Timeout));
    /// drop(tx);
    /// assert_eq!(rx.recv_deadline(deadline), Err(RecvTimeoutError::Disconnected));
    /// ```
    pub fn recv_deadline(&self, deadline: Instant) -> Result<F::Item, RecvTimeoutError> {
        self.rx.by_ref().recv_blocking(Some(deadline))
    }
}

impl<F: Flavour<Receivers = Many>> Receiver<F> {
    /// Polls for the next value, for hand-written futures and poll loops:
    /// `Ready(Ok(value))` takes it, `Ready(Err(RecvError))` once the channel
    /// is closed and drained, `Pending` after arranging for `cx`'s waker to
    /// be woken when a value may be ready.
    ///
    /// The registration a `Pending` poll leaves lives in this receiver (a
    /// clone has its own), like the `Stream`'s (they share it); only the
    /// waker of the latest poll is woken. It loses nothing: it holds no
    /// value, and a notification handed to it also wakes the receivers
    /// waiting behind it, so a receive through [`recv`](Self::recv), or a
    /// clone, waiting behind it is never stranded by registrations that are
    /// not polled again, however many. Dropping the receiver withdraws it.
    ///
    /// # Errors
    ///
    /// `Ready(Err(RecvError))` once the channel is closed (or every sender is
    /// gone) and drained.
    ///
    /// # Cancel safety
    ///
    /// A value is taken only by the poll that returns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    /// use std::future::poll_fn;
    ///
    /// let (tx, mut rx) = mpmc::bounded::<u8, 4>();
    /// tx.try_send(3).unwrap();
    /// let value = futures::executor::block_on(poll_fn(|cx| rx.poll_recv(cx)));
    /// assert_eq!(value, Ok(3));
    /// ```
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<F::Item, RecvError>> {
        self.rx.poll_recv(cx)
    }

    /// Polls for at least one value, then appends up to `limit` ready values
    /// to `buf`: `Ready(n)` with how many were appended, `Ready(0)` once the
    /// channel is closed and drained (or when `limit` is 0), `Pending` as for
    /// [`poll_recv`](Self::poll_recv).
    ///
    /// # Cancel safety
    ///
    /// Values are moved into `buf` only by the poll that returns them.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    /// use std::future::poll_fn;
    ///
    /// let (tx, mut rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// let mut buf = Vec::new();
    /// let n = futures::executor::block_on(poll_fn(|cx| rx.poll_recv_many(cx, &mut buf, 1)));
    /// assert_eq!((n, buf), (1, vec![1]));
    /// ```
    pub fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut Vec<F::Item>,
        limit: usize,
    ) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let first = self.poll_recv(cx);
        crate::batch::then_drain(first, buf, |buf| self.try_recv_many(buf, limit - 1))
    }
}
