//! The endpoints of a side with exactly one endpoint: the sender of
//! [`spsc`](crate::spsc) and the receiver of [`spsc`](crate::spsc) and
//! [`mpsc`](crate::mpsc).
//!
//! They are not `Clone`, and operations that move values take `&mut self`:
//! the borrow is the proof that no other operation on this side runs at the
//! same time, which lets the channel move values with plain loads and
//! stores. Their futures borrow the endpoint mutably and are `Send` when the
//! payload is.

use std::fmt;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use asyncband_core::arity::One;
use asyncband_core::chan::Chan;
use asyncband_core::endpoint::{Consumer, Producer};
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

/// The sending half of an [`spsc`](crate::spsc) channel.
///
/// Moving a value takes `&mut self`; queries take `&self`. Dropping the
/// sender closes the channel: the receiver drains what was sent, then sees
/// it closed.
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::bounded::<&str, 8>();
/// tx.try_send("tick").unwrap();
/// assert_eq!(rx.try_recv(), Ok("tick"));
/// ```
pub struct Sender<F: Flavour<Senders = One>> {
    pub(crate) tx: Producer<F::Storage>,
}

/// The receiving half of an [`spsc`](crate::spsc) or [`mpsc`](crate::mpsc)
/// channel.
///
/// Taking a value takes `&mut self`; queries take `&self`. Dropping the
/// receiver closes the channel and drops every value still queued, at once.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::unbounded::<u32>();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
pub struct Receiver<F: Flavour<Receivers = One>> {
    pub(crate) rx: Consumer<F::Storage>,
}

impl<F: Flavour<Senders = One>> Sender<F> {
    pub(crate) fn new(tx: Producer<F::Storage>) -> Self {
        Self { tx }
    }

    fn chan(&self) -> &Chan<F::Storage> {
        self.tx.chan()
    }

    /// Sends `value` if the channel has room now.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when every slot is taken (never for an
    /// unbounded channel), [`TrySendError::Disconnected`] when the channel is
    /// closed or the receiver is gone. Both hand the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::TrySendError, spsc};
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
    /// assert_eq!(tx.try_send(1), Ok(()));
    /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn try_send(&mut self, value: F::Item) -> Result<(), TrySendError<F::Item>> {
        self.tx.by_ref().try_send(value)
    }

    /// Sends `value`, waiting for room.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel is closed or the
    /// receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future before it completes drops the value; it was not
    /// sent.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u64, 4>();
    /// tx.send(7).await.unwrap();
    /// assert_eq!(rx.recv().await, Ok(7));
    /// # }
    /// ```
    pub fn send(&mut self, value: F::Item) -> SendFuture<'_, F> {
        SendFuture {
            inner: self.tx.by_ref().send(value),
        }
    }

    /// Sends `value`, parking the thread while the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel is closed or the
    /// receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u32, 1>();
    /// let consumer = std::thread::spawn(move || (0..3).map(|_| rx.recv_blocking().unwrap()).sum::<u32>());
    /// for i in 0..3 {
    ///     tx.send_blocking(i).unwrap();
    /// }
    /// assert_eq!(consumer.join().unwrap(), 3);
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn send_blocking(&mut self, value: F::Item) -> Result<(), SendError<F::Item>> {
        self.tx
            .by_ref()
            .send_blocking(value, None)
            .map_err(|err| SendError(err.into_inner()))
    }

    /// Sends `value`, parking the thread for at most `timeout` while the
    /// channel is full.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when no room came in time,
    /// [`SendTimeoutError::Disconnected`] when the channel is closed or the
    /// receiver is gone. Both hand the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::SendTimeoutError, spsc};
    /// use std::time::Duration;
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// let err = tx.send_timeout(2, Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err, SendTimeoutError::Timeout(2));
    /// ```
    pub fn send_timeout(
        &mut self,
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u32, 4>();
    /// let mut values = 0..10;
    /// assert_eq!(tx.try_send_many(&mut values), Ok(4));
    /// assert_eq!(values.next(), Some(4), "the rest stays in the iterator");
    /// assert_eq!(rx.try_recv(), Ok(0));
    /// ```
    pub fn try_send_many<I: Iterator<Item = F::Item>>(
        &mut self,
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u32, 4>();
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
        &mut self,
        values: &mut I,
    ) -> Result<usize, SendError<F::Item>> {
        crate::batch::send_all(self.tx.by_ref(), values).await
    }

    /// Closes the channel: sends fail from now on, the receiver drains what
    /// was sent and then sees the channel closed. Returns true if this call
    /// closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// assert!(tx.close());
    /// assert!(tx.try_send(2).is_err());
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

    /// Resolves once the channel is closed or the receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Holds nothing; dropping it has no effect on the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::spsc;
    ///
    /// let (tx, rx) = spsc::bounded::<u8, 2>();
    /// drop(rx);
    /// tx.closed().await;
    /// assert!(tx.is_closed());
    /// # }
    /// ```
    pub fn closed(&self) -> ClosedFuture<'_, F> {
        ClosedFuture {
            inner: Closed::new(self.tx.chan()),
        }
    }

    /// True after [`close`](Self::close), or once the receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (tx, rx) = spsc::bounded::<u8, 2>();
    /// assert!(!tx.is_closed());
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 4>();
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
    /// use asyncband::spsc;
    ///
    /// let (tx, _rx) = spsc::unbounded::<u8>();
    /// assert!(tx.is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when no `try_send` or `try_reserve` could succeed now: queued
    /// values plus held permits fill the capacity. Never for unbounded.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
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
    /// use asyncband::spsc;
    ///
    /// let (tx, _rx) = spsc::bounded::<u8, 16>();
    /// assert_eq!(tx.capacity(), Some(16));
    /// ```
    #[must_use]
    pub fn capacity(&self) -> Option<usize> {
        F::CAPACITY
    }

    /// Live senders: 1 while this sender lives.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (tx, _rx) = spsc::bounded::<u8, 2>();
    /// assert_eq!(tx.sender_count(), 1);
    /// ```
    #[must_use]
    pub fn sender_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live receivers: 1, or 0 once the receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (tx, rx) = spsc::bounded::<u8, 2>();
    /// drop(rx);
    /// assert_eq!(tx.receiver_count(), 0);
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
    /// use asyncband::spsc;
    ///
    /// let (a, _ra) = spsc::bounded::<u8, 2>();
    /// let (b, _rb) = spsc::bounded::<u8, 2>();
    /// assert!(a.same_channel(&a));
    /// assert!(!a.same_channel(&b));
    /// ```
    #[must_use]
    pub fn same_channel(&self, other: &Self) -> bool {
        std::ptr::eq(self.chan(), other.chan())
    }
}

impl<F: Flavour<Senders = One, Storage: Capacity>> Sender<F> {
    /// Reserves one slot now, to send into later without waiting.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] when no slot is free,
    /// [`TrySendError::Disconnected`] when the channel is closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<String, 2>();
    /// let permit = tx.try_reserve().unwrap();
    /// permit.send("built after reserving".to_string()).unwrap();
    /// assert_eq!(rx.try_recv().unwrap(), "built after reserving");
    /// ```
    pub fn try_reserve(&mut self) -> Result<Permit<'_, F>, TrySendError<()>> {
        self.tx.by_ref().try_reserve_one().map(Permit::new)
    }

    /// Reserves one slot, waiting for one.
    ///
    /// # Errors
    ///
    /// [`SendError`] when the channel is closed or the receiver is gone.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future gives back a slot it had been granted.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 1>();
    /// tx.reserve().await.unwrap().send(3).unwrap();
    /// assert_eq!(rx.recv().await, Ok(3));
    /// # }
    /// ```
    pub fn reserve(&mut self) -> ReserveFuture<'_, F> {
        ReserveFuture {
            inner: self.tx.by_ref().reserve_one(),
        }
    }

    /// Reserves one slot, parking the thread while the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendError`] when the channel is closed or the receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 1>();
    /// tx.reserve_blocking().unwrap().send(4).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(4));
    /// ```
    pub fn reserve_blocking(&mut self) -> Result<Permit<'_, F>, SendError<()>> {
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
    /// use asyncband::spsc;
    /// use std::time::Duration;
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// assert!(tx.reserve_timeout(Duration::from_millis(5)).unwrap_err().is_timeout());
    /// ```
    pub fn reserve_timeout(
        &mut self,
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
    /// [`TrySendError::Full`] when fewer than `n` slots are free, or when `n`
    /// is above the capacity (it could never succeed);
    /// [`TrySendError::Disconnected`] when the channel is closed, whatever `n`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 4>();
    /// let permits = tx.try_reserve_many(3).unwrap();
    /// for (i, permit) in permits.enumerate() {
    ///     permit.send(i as u8).unwrap();
    /// }
    /// assert_eq!(rx.try_recv(), Ok(0));
    /// ```
    pub fn try_reserve_many(&mut self, n: usize) -> Result<Permits<'_, F>, TrySendError<()>> {
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
    /// Dropping the future gives back every slot it had been granted.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::spsc;
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 4>();
    /// let permits = tx.reserve_many(4).await.unwrap();
    /// assert_eq!(permits.len(), 4);
    /// # }
    /// ```
    pub fn reserve_many(&mut self, n: usize) -> ReserveManyFuture<'_, F> {
        ReserveManyFuture::new(self.tx.by_ref(), n)
    }
}

impl<F: Flavour<Senders = One>> fmt::Debug for Sender<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sender").field("chan", self.chan()).finish()
    }
}

impl<F: Flavour<Receivers = One>> Receiver<F> {
    pub(crate) fn new(rx: Consumer<F::Storage>) -> Self {
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
    /// use asyncband::{error::TryRecvError, spsc};
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 2>();
    /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    /// tx.try_send(5).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(5));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn try_recv(&mut self) -> Result<F::Item, TryRecvError> {
        self.rx.by_ref().try_recv()
    }

    /// Takes the next value, waiting for one.
    ///
    /// # Errors
    ///
    /// [`RecvError`] once the channel is closed (or every sender is gone)
    /// and drained.
    ///
    /// # Cancel safety
    ///
    /// A value is taken only when the future completes; dropping it earlier
    /// loses nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 2>();
    /// tokio::spawn(async move { tx.send(9).await.unwrap() });
    /// assert_eq!(rx.recv().await, Ok(9));
    /// # }
    /// ```
    pub fn recv(&mut self) -> RecvFuture<'_, F> {
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::unbounded::<u8>();
    /// std::thread::spawn(move || tx.send_blocking(1).unwrap());
    /// assert_eq!(rx.recv_blocking(), Ok(1));
    /// ```
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a thin wrapper over the channel's inlined ready path; out of line it costs a call per message"
    )]
    pub fn recv_blocking(&mut self) -> Result<F::Item, RecvError> {
        self.rx.by_ref().recv_blocking(None).map_err(|_| RecvError)
    }

    /// Takes the next value, parking the thread for at most `timeout`.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] when nothing came in time,
    /// [`RecvTimeoutError::Disconnected`] once closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::RecvTimeoutError, spsc};
    /// use std::time::Duration;
    ///
    /// let (_tx, mut rx) = spsc::bounded::<u8, 2>();
    /// assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(RecvTimeoutError::Timeout));
    /// ```
    pub fn recv_timeout(&mut self, timeout: Duration) -> Result<F::Item, RecvTimeoutError> {
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 8>();
    /// for i in 0..5 {
    ///     tx.try_send(i).unwrap();
    /// }
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.try_recv_many(&mut buf, 3), 3);
    /// assert_eq!(buf, [0, 1, 2]);
    /// ```
    pub fn try_recv_many(&mut self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
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
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many(&mut buf, 10).await, 2);
    /// # }
    /// ```
    pub fn recv_many<'a>(
        &'a mut self,
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
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// drop(tx);
    /// let mut buf = Vec::new();
    /// assert_eq!(rx.recv_many_blocking(&mut buf, 4), 1);
    /// assert_eq!(rx.recv_many_blocking(&mut buf, 4), 0);
    /// ```
    pub fn recv_many_blocking(&mut self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
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

    /// An iterator over the values ready now; it ends at the first empty
    /// check.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
    /// ```
    pub fn try_iter(&mut self) -> TryIter<'_, F> {
        TryIter::new(self.rx.by_ref())
    }

    /// A blocking iterator: it parks while the channel is empty and ends
    /// once the channel is closed and drained.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::unbounded::<u8>();
    /// std::thread::spawn(move || {
    ///     for i in 0..3 {
    ///         tx.send_blocking(i).unwrap();
    ///     }
    /// });
    /// assert_eq!(rx.iter().sum::<u8>(), 3);
    /// ```
    pub fn iter(&mut self) -> Iter<'_, F> {
        Iter::new(self.rx.by_ref())
    }

    /// The next value, left in place: it still counts in `len` and against
    /// the capacity. `None` when nothing is ready.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<String, 2>();
    /// tx.try_send("first".to_string()).unwrap();
    /// assert_eq!(rx.peek().map(String::as_str), Some("first"));
    /// assert_eq!(rx.len(), 1);
    /// assert_eq!(rx.try_recv().unwrap(), "first");
    /// ```
    pub fn peek(&mut self) -> Option<&F::Item> {
        self.rx.peek()
    }

    /// Closes the channel: sends fail from now on; this receiver drains
    /// what was sent, then sees the channel closed. Returns true if this call
    /// closed it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 2>();
    /// tx.try_send(1).unwrap();
    /// assert!(rx.close());
    /// assert!(tx.try_send(2).is_err());
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    #[allow(
        clippy::must_use_candidate,
        reason = "called for its effect; whether this call was the one that closed is incidental"
    )]
    pub fn close(&self) -> bool {
        self.rx.close()
    }

    /// True after [`close`](Self::close), or once every sender is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 2>();
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
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 2>();
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
    /// use asyncband::mpsc;
    ///
    /// let (_tx, rx) = mpsc::bounded::<u8, 2>();
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
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 1>();
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
    /// use asyncband::mpsc;
    ///
    /// let (_tx, rx) = mpsc::unbounded::<u8>();
    /// assert_eq!(rx.capacity(), None);
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
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::bounded::<u8, 2>();
    /// let tx2 = tx.clone();
    /// assert_eq!(rx.sender_count(), 2);
    /// ```
    #[must_use]
    pub fn sender_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live receivers: 1 while this receiver lives.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (_tx, rx) = mpsc::bounded::<u8, 2>();
    /// assert_eq!(rx.receiver_count(), 1);
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
    /// let (_a, ra) = mpsc::bounded::<u8, 2>();
    /// assert!(ra.same_channel(&ra));
    /// ```
    #[must_use]
    pub fn same_channel(&self, other: &Self) -> bool {
        std::ptr::eq(self.chan(), other.chan())
    }
}

impl<F: Flavour<Receivers = One>> fmt::Debug for Receiver<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("chan", self.chan())
            .finish_non_exhaustive()
    }
}

#[allow(
    clippy::into_iter_without_iter,
    reason = "`Receiver::iter` already takes `&mut self` (one receiver); an `iter_mut` would only repeat it"
)]
impl<'a, F: Flavour<Receivers = One>> IntoIterator for &'a mut Receiver<F> {
    type Item = F::Item;
    type IntoIter = Iter<'a, F>;

    fn into_iter(self) -> Iter<'a, F> {
        self.iter()
    }
}

impl<F: Flavour<Receivers = One>> IntoIterator for Receiver<F> {
    type Item = F::Item;
    type IntoIter = IntoIter<Self>;

    fn into_iter(self) -> IntoIter<Self> {
        IntoIter::new(self)
    }
}

impl<F: Flavour<Receivers = One>> crate::iter::BlockingRecv for Receiver<F> {
    type Item = F::Item;

    fn next_blocking(&mut self) -> Option<F::Item> {
        self.recv_blocking().ok()
    }
}

impl<F: Flavour<Senders = One>> Sender<F> {
    /// Sends `value`, parking the thread until `deadline` at the latest while
    /// the channel is full.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when no room came before `deadline`,
    /// [`SendTimeoutError::Disconnected`] when the channel is closed or the
    /// receiver is gone. Both hand the value back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::{error::SendTimeoutError, spsc};
    /// use std::time::{Duration, Instant};
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
    /// tx.try_send(1).unwrap();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(tx.send_deadline(2, deadline), Err(SendTimeoutError::Timeout(2)));
    /// ```
    pub fn send_deadline(
        &mut self,
        value: F::Item,
        deadline: Instant,
    ) -> Result<(), SendTimeoutError<F::Item>> {
        self.tx.by_ref().send_blocking(value, Some(deadline))
    }
}

impl<F: Flavour<Senders = One, Storage: Capacity>> Sender<F> {
    /// Reserves one slot, parking the thread until `deadline` at the latest.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when no slot came before `deadline`,
    /// [`SendTimeoutError::Disconnected`] when the channel is closed or the
    /// receiver is gone.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    /// use std::time::{Duration, Instant};
    ///
    /// let (mut tx, _rx) = spsc::bounded::<u8, 1>();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// let permit = tx.reserve_deadline(deadline).unwrap();
    /// drop(permit);
    /// tx.try_send(1).unwrap();
    /// assert!(tx.reserve_deadline(deadline).unwrap_err().is_timeout());
    /// ```
    pub fn reserve_deadline(
        &mut self,
        deadline: Instant,
    ) -> Result<Permit<'_, F>, SendTimeoutError<()>> {
        self.tx
            .by_ref()
            .reserve_one_blocking(Some(deadline))
            .map(Permit::new)
    }
}

impl<F: Flavour<Receivers = One>> Receiver<F> {
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
    /// use asyncband::{error::RecvTimeoutError, mpsc};
    /// use std::time::{Duration, Instant};
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 2>();
    /// let deadline = Instant::now() + Duration::from_millis(5);
    /// assert_eq!(rx.recv_deadline(deadline), Err(RecvTimeoutError::Timeout));
    /// tx.try_send(1).unwrap();
    /// assert_eq!(rx.recv_deadline(deadline), Ok(1), "a ready value is taken even past the deadline");
    /// ```
    pub fn recv_deadline(&mut self, deadline: Instant) -> Result<F::Item, RecvTimeoutError> {
        self.rx.by_ref().recv_blocking(Some(deadline))
    }

    /// Polls for the next value, for hand-written futures and poll loops:
    /// `Ready(Ok(value))` takes it, `Ready(Err(RecvError))` once the channel
    /// is closed and drained, `Pending` after arranging for `cx`'s waker to
    /// be woken when a value may be ready.
    ///
    /// The registration a `Pending` poll leaves lives in the receiver, like
    /// the `Stream`'s (they share it), and only the waker of the latest poll
    /// is woken. It loses nothing: it holds no value, a receive through
    /// [`recv`](Self::recv) or any other method does not wait behind it, and
    /// dropping the receiver withdraws it.
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
    /// use asyncband::mpsc;
    /// use std::future::poll_fn;
    ///
    /// let (tx, mut rx) = mpsc::unbounded::<u8>();
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
    /// use asyncband::spsc;
    /// use std::future::poll_fn;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// let mut buf = Vec::new();
    /// let n = futures::executor::block_on(poll_fn(|cx| rx.poll_recv_many(cx, &mut buf, 8)));
    /// assert_eq!((n, buf), (2, vec![1, 2]));
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
