//! The methods of the endpoints, written once for both arities of each side
//! and once for the queries every endpoint answers. The macros are given the
//! `mut` of a single endpoint's value-moving methods and the topology the
//! examples use; each endpoint type names its side's right in `right()`.

/// What the macros below name, glob-imported by the modules that invoke them.
pub(crate) mod prelude {
    pub(crate) use std::fmt;
    pub(crate) use std::task::{Context, Poll};
    pub(crate) use std::time::{Duration, Instant};

    pub(crate) use asyncband_core::chan::Chan;
    pub(crate) use asyncband_core::endpoint::{Consumer, ConsumerRef, Producer, ProducerRef};
    pub(crate) use asyncband_core::storage::Capacity;
    pub(crate) use asyncband_core::wait::Asynchronous;

    pub(crate) use crate::error::{
        RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
    };
    pub(crate) use crate::flavour::AnyFlavour;
    pub(crate) use crate::future::{
        ClosedFuture, RecvFuture, RecvManyFuture, ReserveFuture, ReserveManyFuture, SendFuture,
    };
    pub(crate) use crate::iter::{BlockingRecv, IntoIter, Iter, TryIter};
    pub(crate) use crate::permit::{Permit, Permits};
    pub(crate) use crate::{batch, deadline};
}

/// The constructor from the core endpoint `$core`, and the queries every
/// endpoint answers through its `chan()`.
macro_rules! queries {
    ($topology:literal, $core:ident) => {
        pub(crate) fn new(inner: $core<F::Storage>) -> Self {
            Self { inner }
        }

        fn chan(&self) -> &Chan<F::Storage> {
            self.inner.chan()
        }

        /// True after [`close`](Self::close), or once every sender or every
        /// receiver is gone.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
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
        #[doc = concat!("let (mut tx, rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
        /// tx.try_send(1).unwrap();
        /// assert_eq!((tx.len(), rx.len()), (1, 1));
        /// ```
        #[must_use]
        pub fn len(&self) -> usize {
            self.chan().len()
        }

        /// True when no value is queued.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
        /// assert!(tx.is_empty() && rx.is_empty());
        /// ```
        #[must_use]
        pub fn is_empty(&self) -> bool {
            self.chan().is_empty()
        }

        /// True when no `try_send` or `try_reserve` could succeed now: queued
        /// values, held permits and capacity granted to waiting senders fill
        /// the bound. Never for an unbounded channel.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (mut tx, rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
        /// tx.try_send(1).unwrap();
        /// assert!(tx.is_full() && rx.is_full());
        /// ```
        #[must_use]
        pub fn is_full(&self) -> bool {
            self.chan().is_full()
        }

        /// The bound, or `None` for an unbounded channel.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, _rx) = asyncband::", $topology, "::bounded::<u8, 16>();")]
        /// assert_eq!(tx.capacity(), Some(16));
        /// ```
        #[must_use]
        pub fn capacity(&self) -> Option<usize> {
            F::CAPACITY
        }

        /// Live senders, including those held by owned permits; weak senders
        /// do not count.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
        /// assert_eq!(rx.sender_count(), 1);
        /// drop(tx);
        /// assert_eq!(rx.sender_count(), 0);
        /// ```
        #[must_use]
        pub fn sender_count(&self) -> usize {
            self.chan().sender_count()
        }

        /// Live receivers; weak receivers do not count.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
        /// assert_eq!(tx.receiver_count(), 1);
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
        #[doc = concat!("let (a, _ra) = asyncband::", $topology, "::bounded::<u8, 2>();")]
        #[doc = concat!("let (b, _rb) = asyncband::", $topology, "::bounded::<u8, 2>();")]
        /// assert!(a.same_channel(&a));
        /// assert!(!a.same_channel(&b));
        /// ```
        #[must_use]
        pub fn same_channel(&self, other: &Self) -> bool {
            std::ptr::eq(self.chan(), other.chan())
        }

        /// Closes the channel for every endpoint: sends fail from now on,
        /// receivers drain what was sent and then see it closed. Returns
        /// true if this call closed it.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
        /// tx.try_send(1).unwrap();
        /// assert!(rx.close());
        /// assert!(!tx.close());
        /// assert!(tx.try_send(2).is_err());
        /// assert_eq!(rx.try_recv(), Ok(1));
        /// assert!(rx.try_recv().is_err());
        /// ```
        #[allow(
            clippy::must_use_candidate,
            reason = "called for its effect; whether this call was the one that closed is incidental"
        )]
        pub fn close(&self) -> bool {
            self.inner.close()
        }
    };
}

/// The methods of a sender: `$($mut)?` is the receiver's mutability for
/// operations that move values, `$topology` the module the examples use.
macro_rules! sender_methods {
    ($topology:literal, $arity:ident $(, $mut:tt)?) => {
        #[allow(
            clippy::inline_always,
            reason = "`try_*` and `*_blocking` are thin wrappers over the channel's inlined ready path; out of line each costs a call per message"
        )]
        impl<F: AnyFlavour<Senders = asyncband_core::arity::$arity>> Sender<F> {
            /// Sends `value` if the channel has room now.
            ///
            /// # Errors
            ///
            /// [`TrySendError::Full`] when every slot is taken (never for an
            /// unbounded channel), [`TrySendError::Disconnected`] once the
            /// channel is closed; both hand the value back.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::TrySendError;
            ///
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// assert_eq!(tx.try_send(1), Ok(()));
            /// assert_eq!(tx.try_send(2), Err(TrySendError::Full(2)));
            /// ```
            #[inline(always)]
            pub fn try_send(&$($mut)? self, value: F::Item) -> Result<(), TrySendError<F::Item>> {
                self.right().try_send(value)
            }

            /// Sends `value`, waiting for room.
            ///
            /// # Errors
            ///
            /// [`SendError`] with the value once the channel is closed.
            ///
            /// # Cancel safety
            ///
            /// Dropping the future before it completes drops the value; it
            /// was not sent.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u64, 4>();")]
            /// tx.send(7).await.unwrap();
            /// assert_eq!(rx.recv().await, Ok(7));
            /// # }
            /// ```
            pub fn send(&$($mut)? self, value: F::Item) -> SendFuture<'_, F>
            where
                F::Wait: Asynchronous,
            {
                SendFuture {
                    inner: self.right().send(value),
                }
            }

            /// Sends `value`, waiting while the channel is full: spinning
            /// briefly, then parking the thread (or, `wait = spin`,
            /// spinning; `wait = yield`, spinning, then yielding).
            ///
            /// # Errors
            ///
            /// [`SendError`] with the value once the channel is closed.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u32, 1>();")]
            /// let consumer = std::thread::spawn(move || (0..3).map(|_| rx.recv_blocking().unwrap()).sum::<u32>());
            /// for i in 0..3 {
            ///     tx.send_blocking(i).unwrap();
            /// }
            /// assert_eq!(consumer.join().unwrap(), 3);
            /// ```
            #[inline(always)]
            pub fn send_blocking(&$($mut)? self, value: F::Item) -> Result<(), SendError<F::Item>> {
                self.right()
                    .send_blocking(value, None)
                    .map_err(|err| SendError(err.into_inner()))
            }

            /// Sends `value`, waiting at most `timeout` while the channel is
            /// full.
            ///
            /// # Errors
            ///
            /// [`SendTimeoutError::Timeout`] when no room came in time,
            /// [`SendTimeoutError::Disconnected`] once closed; both hand the
            /// value back.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::SendTimeoutError;
            /// use std::time::Duration;
            ///
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// tx.try_send(1).unwrap();
            /// let err = tx.send_timeout(2, Duration::from_millis(5)).unwrap_err();
            /// assert_eq!(err, SendTimeoutError::Timeout(2));
            /// ```
            pub fn send_timeout(
                &$($mut)? self,
                value: F::Item,
                timeout: Duration,
            ) -> Result<(), SendTimeoutError<F::Item>> {
                self.right().send_blocking(value, deadline::after(timeout))
            }

            /// Sends `value`, waiting until `deadline` at the latest while
            /// the channel is full.
            ///
            /// # Errors
            ///
            /// [`SendTimeoutError::Timeout`] when no room came before
            /// `deadline`, [`SendTimeoutError::Disconnected`] once closed;
            /// both hand the value back.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::SendTimeoutError;
            /// use std::time::{Duration, Instant};
            ///
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// tx.try_send(1).unwrap();
            /// let deadline = Instant::now() + Duration::from_millis(5);
            /// assert_eq!(tx.send_deadline(2, deadline), Err(SendTimeoutError::Timeout(2)));
            /// ```
            pub fn send_deadline(
                &$($mut)? self,
                value: F::Item,
                deadline: Instant,
            ) -> Result<(), SendTimeoutError<F::Item>> {
                self.right().send_blocking(value, Some(deadline))
            }

            /// Sends values from `values` while there is room now, reserving
            /// room for a batch at a time; a value is taken only once its
            /// slot is reserved, so what could not be sent stays in the
            /// iterator. Returns how many were sent.
            ///
            /// # Errors
            ///
            /// [`SendError`] with the value in hand once the channel is
            /// closed; the values before it were sent.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u32, 4>();")]
            /// let mut values = 0..10;
            /// assert_eq!(tx.try_send_many(&mut values), Ok(4));
            /// assert_eq!(values.next(), Some(4), "the rest stays in the iterator");
            /// assert_eq!(rx.try_recv(), Ok(0));
            /// ```
            pub fn try_send_many<I: Iterator<Item = F::Item>>(
                &$($mut)? self,
                values: &mut I,
            ) -> Result<usize, SendError<F::Item>> {
                batch::send_from(self.right(), values).map(|(sent, _)| sent)
            }

            /// Sends every value of `values`, in batches where there is room,
            /// waiting in line for room when there is none. Returns how many
            /// were sent, once the iterator is exhausted: `next` gave `None`,
            /// or `size_hint` says nothing is left. An iterator that cannot
            /// say so (`iter::from_fn`) is asked for its next value only once
            /// a slot is reserved for it.
            ///
            /// # Errors
            ///
            /// [`SendError`] with the value in hand once the channel is
            /// closed; the values before it were sent, the rest stay in the
            /// iterator.
            ///
            /// # Cancel safety
            ///
            /// Dropping the future stops the batch: values sent stay sent,
            /// the rest stay in the iterator (none is taken without a slot),
            /// and a slot granted to it is passed on.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u32, 4>();")]
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
                &$($mut)? self,
                values: &mut I,
            ) -> Result<usize, SendError<F::Item>>
            where
                F::Wait: Asynchronous,
            {
                batch::send_all(self.right(), values).await
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
            #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// tokio::spawn(async move { drop(rx) });
            /// tx.closed().await;
            /// assert!(tx.is_closed());
            /// # }
            /// ```
            pub fn closed(&self) -> ClosedFuture<'_, F>
            where
                F::Wait: Asynchronous,
            {
                ClosedFuture {
                    inner: asyncband_core::endpoint::closed(self.chan()),
                }
            }

            /// Turns this sender into a `futures_sink::Sink` that owns it
            /// (feature `sink`).
            ///
            /// # Examples
            ///
            /// ```
            /// use futures::{SinkExt, executor::block_on};
            ///
            #[doc = concat!("let (tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
            /// let mut sink = tx.into_sink();
            /// block_on(sink.send(1)).unwrap();
            /// assert_eq!(rx.try_recv(), Ok(1));
            /// ```
            #[cfg(feature = "sink")]
            #[cfg_attr(docsrs, doc(cfg(feature = "sink")))]
            #[must_use = "the sink owns the sender; dropping it drops the sender"]
            pub fn into_sink(self) -> crate::sink::SenderSink<Self>
            where
                F::Wait: Asynchronous,
            {
                crate::sink::SenderSink::new(self)
            }

            $crate::endpoint::queries!($topology, Producer);
        }

        impl<F: AnyFlavour<Senders = asyncband_core::arity::$arity, Storage: Capacity>> Sender<F> {
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
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<String, 2>();")]
            /// let permit = tx.try_reserve().unwrap();
            /// permit.send("built after reserving".to_string()).unwrap();
            /// assert_eq!(rx.try_recv().unwrap(), "built after reserving");
            /// ```
            pub fn try_reserve(&$($mut)? self) -> Result<Permit<'_, F>, TrySendError<()>> {
                self.right().try_reserve(1).map(Permit::new)
            }

            /// Reserves one slot, waiting in line for it.
            ///
            /// # Errors
            ///
            /// [`SendError`] once the channel is closed.
            ///
            /// # Cancel safety
            ///
            /// Dropping the future gives back a slot it had been granted.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// tx.reserve().await.unwrap().send(3).unwrap();
            /// assert_eq!(rx.recv().await, Ok(3));
            /// # }
            /// ```
            pub fn reserve(&$($mut)? self) -> ReserveFuture<'_, F>
            where
                F::Wait: Asynchronous,
            {
                ReserveFuture {
                    inner: self.right().reserve(1),
                }
            }

            /// Reserves one slot, waiting while the channel is full.
            ///
            /// # Errors
            ///
            /// [`SendError`] once the channel is closed.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// tx.reserve_blocking().unwrap().send(4).unwrap();
            /// assert_eq!(rx.try_recv(), Ok(4));
            /// ```
            pub fn reserve_blocking(&$($mut)? self) -> Result<Permit<'_, F>, SendError<()>> {
                self.right()
                    .reserve_blocking(1, None)
                    .map(Permit::new)
                    .map_err(|_| SendError(()))
            }

            /// Reserves one slot, waiting at most `timeout`.
            ///
            /// # Errors
            ///
            /// [`SendTimeoutError::Timeout`] or
            /// [`SendTimeoutError::Disconnected`].
            ///
            /// # Examples
            ///
            /// ```
            /// use std::time::Duration;
            ///
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// tx.try_send(1).unwrap();
            /// assert!(tx.reserve_timeout(Duration::from_millis(5)).unwrap_err().is_timeout());
            /// ```
            pub fn reserve_timeout(
                &$($mut)? self,
                timeout: Duration,
            ) -> Result<Permit<'_, F>, SendTimeoutError<()>> {
                self.right()
                    .reserve_blocking(1, deadline::after(timeout))
                    .map(Permit::new)
            }

            /// Reserves one slot, waiting until `deadline` at the latest.
            ///
            /// # Errors
            ///
            /// [`SendTimeoutError::Timeout`] when no slot came before
            /// `deadline`, [`SendTimeoutError::Disconnected`] once closed.
            ///
            /// # Examples
            ///
            /// ```
            /// use std::time::{Duration, Instant};
            ///
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 1>();")]
            /// let deadline = Instant::now() + Duration::from_millis(5);
            /// drop(tx.reserve_deadline(deadline).unwrap());
            /// tx.try_send(1).unwrap();
            /// assert!(tx.reserve_deadline(deadline).unwrap_err().is_timeout());
            /// ```
            pub fn reserve_deadline(
                &$($mut)? self,
                deadline: Instant,
            ) -> Result<Permit<'_, F>, SendTimeoutError<()>> {
                self.right()
                    .reserve_blocking(1, Some(deadline))
                    .map(Permit::new)
            }

            /// Reserves `n` slots at once, now.
            ///
            /// # Errors
            ///
            /// [`TrySendError::Full`] when fewer than `n` slots are free, or
            /// when `n` is above the capacity (it could never succeed);
            /// [`TrySendError::Disconnected`] when the channel is closed,
            /// whatever `n`.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
            /// let permits = tx.try_reserve_many(3).unwrap();
            /// for (i, permit) in (0..).zip(permits) {
            ///     permit.send(i).unwrap();
            /// }
            /// assert_eq!(rx.try_recv(), Ok(0));
            /// ```
            pub fn try_reserve_many(&$($mut)? self, n: usize) -> Result<Permits<'_, F>, TrySendError<()>> {
                self.right().try_reserve(n).map(Permits::new)
            }

            /// Reserves `n` slots at once, waiting in line for them.
            ///
            /// # Errors
            ///
            /// [`SendError`] when the channel is closed, or at once when `n`
            /// is above the capacity (it could never succeed).
            ///
            /// # Cancel safety
            ///
            /// Dropping the future gives back every slot it had been granted.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, _rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
            /// assert_eq!(tx.reserve_many(4).await.unwrap().len(), 4);
            /// assert!(tx.reserve_many(5).await.is_err());
            /// # }
            /// ```
            pub fn reserve_many(&$($mut)? self, n: usize) -> ReserveManyFuture<'_, F>
            where
                F::Wait: Asynchronous,
            {
                ReserveManyFuture::new(self.right(), n)
            }
        }

        impl<F: AnyFlavour<Senders = asyncband_core::arity::$arity>> fmt::Debug for Sender<F> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("Sender").field("chan", self.chan()).finish()
            }
        }
    };
}

/// The methods of a receiver, as [`sender_methods`] for a sender.
macro_rules! receiver_methods {
    ($topology:literal, $arity:ident $(, $mut:tt)?) => {
        #[allow(
            clippy::inline_always,
            reason = "`try_*` and `*_blocking` are thin wrappers over the channel's inlined ready path; out of line each costs a call per message"
        )]
        impl<F: AnyFlavour<Receivers = asyncband_core::arity::$arity>> Receiver<F> {
            /// Takes the next value if one is ready.
            ///
            /// # Errors
            ///
            /// [`TryRecvError::Empty`] when nothing is ready,
            /// [`TryRecvError::Disconnected`] once closed and drained.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::TryRecvError;
            ///
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
            /// assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
            /// tx.try_send(5).unwrap();
            /// assert_eq!(rx.try_recv(), Ok(5));
            /// ```
            #[inline(always)]
            pub fn try_recv(&$($mut)? self) -> Result<F::Item, TryRecvError> {
                self.right().try_recv()
            }

            /// Takes the next value, waiting for one.
            ///
            /// # Errors
            ///
            /// [`RecvError`] once the channel is closed and drained.
            ///
            /// # Cancel safety
            ///
            /// A value is taken only when the future completes; dropping it
            /// earlier loses nothing.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
            /// tokio::spawn(async move { tx.send(9).await.unwrap() });
            /// assert_eq!(rx.recv().await, Ok(9));
            /// # }
            /// ```
            pub fn recv(&$($mut)? self) -> RecvFuture<'_, F>
            where
                F::Wait: Asynchronous,
            {
                RecvFuture {
                    inner: self.right().recv(),
                }
            }

            /// Takes the next value, waiting while the channel is empty:
            /// spinning briefly, then parking the thread (or, `wait = spin`,
            /// spinning; `wait = yield`, spinning, then yielding).
            ///
            /// # Errors
            ///
            /// [`RecvError`] once the channel is closed and drained.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// std::thread::spawn(move || tx.send_blocking(1).unwrap());
            /// assert_eq!(rx.recv_blocking(), Ok(1));
            /// ```
            #[inline(always)]
            pub fn recv_blocking(&$($mut)? self) -> Result<F::Item, RecvError> {
                self.right().recv_blocking(None).map_err(|_| RecvError)
            }

            /// Takes the next value, waiting at most `timeout`.
            ///
            /// # Errors
            ///
            /// [`RecvTimeoutError::Timeout`] when nothing came in time,
            /// [`RecvTimeoutError::Disconnected`] once closed and drained.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::RecvTimeoutError;
            /// use std::time::Duration;
            ///
            #[doc = concat!("let (_tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
            /// assert_eq!(rx.recv_timeout(Duration::from_millis(5)), Err(RecvTimeoutError::Timeout));
            /// ```
            pub fn recv_timeout(&$($mut)? self, timeout: Duration) -> Result<F::Item, RecvTimeoutError> {
                self.right().recv_blocking(deadline::after(timeout))
            }

            /// Takes the next value, waiting until `deadline` at the latest.
            /// A ready value is taken even past the deadline.
            ///
            /// # Errors
            ///
            /// [`RecvTimeoutError::Timeout`] when nothing came before
            /// `deadline`, [`RecvTimeoutError::Disconnected`] once closed and
            /// drained.
            ///
            /// # Examples
            ///
            /// ```
            /// use asyncband::error::RecvTimeoutError;
            /// use std::time::{Duration, Instant};
            ///
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
            /// let deadline = Instant::now() + Duration::from_millis(5);
            /// assert_eq!(rx.recv_deadline(deadline), Err(RecvTimeoutError::Timeout));
            /// tx.try_send(1).unwrap();
            /// assert_eq!(rx.recv_deadline(deadline), Ok(1));
            /// ```
            pub fn recv_deadline(&$($mut)? self, deadline: Instant) -> Result<F::Item, RecvTimeoutError> {
                self.right().recv_blocking(Some(deadline))
            }

            /// Appends up to `limit` ready values to `buf` without waiting;
            /// returns how many.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 8>();")]
            /// for i in 0..5 {
            ///     tx.try_send(i).unwrap();
            /// }
            /// let mut buf = Vec::new();
            /// assert_eq!(rx.try_recv_many(&mut buf, 3), 3);
            /// assert_eq!(buf, [0, 1, 2]);
            /// ```
            pub fn try_recv_many(&$($mut)? self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
                self.right().try_recv_many(buf, limit)
            }

            /// Waits for at least one value, then appends up to `limit`
            /// ready values to `buf`; returns how many, `0` once the channel
            /// is closed and drained (or when `limit` is 0).
            ///
            /// # Cancel safety
            ///
            /// Values are moved into `buf` only when the future completes.
            ///
            /// # Examples
            ///
            /// ```
            /// # #[tokio::main(flavor = "current_thread")] async fn main() {
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// tx.try_send(1).unwrap();
            /// tx.try_send(2).unwrap();
            /// let mut buf = Vec::new();
            /// assert_eq!(rx.recv_many(&mut buf, 10).await, 2);
            /// # }
            /// ```
            pub fn recv_many<'a>(
                &'a $($mut)? self,
                buf: &'a mut Vec<F::Item>,
                limit: usize,
            ) -> RecvManyFuture<'a, F>
            where
                F::Wait: Asynchronous,
            {
                RecvManyFuture {
                    inner: self.right().recv_many(buf, limit),
                }
            }

            /// [`recv_many`](Self::recv_many), waiting like
            /// [`recv_blocking`](Self::recv_blocking).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// tx.try_send(1).unwrap();
            /// drop(tx);
            /// let mut buf = Vec::new();
            /// assert_eq!(rx.recv_many_blocking(&mut buf, 4), 1);
            /// assert_eq!(rx.recv_many_blocking(&mut buf, 4), 0);
            /// ```
            pub fn recv_many_blocking(&$($mut)? self, buf: &mut Vec<F::Item>, limit: usize) -> usize {
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

            /// An iterator over the values ready now; it ends at the first
            /// empty check.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
            /// tx.try_send(1).unwrap();
            /// tx.try_send(2).unwrap();
            /// assert_eq!(rx.try_iter().collect::<Vec<_>>(), [1, 2]);
            /// ```
            pub fn try_iter(&$($mut)? self) -> TryIter<'_, F> {
                TryIter::new(self.right())
            }

            /// A blocking iterator: it waits while the channel is empty and
            /// ends once the channel is closed and drained.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// std::thread::spawn(move || {
            ///     for i in 0..3 {
            ///         tx.send_blocking(i).unwrap();
            ///     }
            /// });
            /// assert_eq!(rx.iter().sum::<u8>(), 3);
            /// ```
            pub fn iter(&$($mut)? self) -> Iter<'_, F> {
                Iter::new(self.right())
            }

            /// Polls for the next value, for hand-written futures and poll
            /// loops: `Ready(Ok(value))` takes it; `Pending` arranges for
            /// `cx`'s waker to be woken when a value may be ready. The
            /// registration it leaves lives in the receiver (the `Stream`'s
            /// too) and loses nothing: it holds no value, no other receive
            /// waits behind it, and dropping the receiver withdraws it.
            ///
            /// # Errors
            ///
            /// `Ready(Err(RecvError))` once the channel is closed and drained.
            ///
            /// # Cancel safety
            ///
            /// A value is taken only by the poll that returns it.
            ///
            /// # Examples
            ///
            /// ```
            /// use std::future::poll_fn;
            ///
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            /// tx.try_send(3).unwrap();
            /// let value = futures::executor::block_on(poll_fn(|cx| rx.poll_recv(cx)));
            /// assert_eq!(value, Ok(3));
            /// ```
            pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Result<F::Item, RecvError>>
            where
                F::Wait: Asynchronous,
            {
                self.inner.poll_recv(cx)
            }

            /// Polls for at least one value, then appends up to `limit` ready
            /// values to `buf`: `Ready(n)` with how many were appended,
            /// `Ready(0)` once the channel is closed and drained (or when
            /// `limit` is 0), `Pending` as for [`poll_recv`](Self::poll_recv).
            ///
            /// # Cancel safety
            ///
            /// Values are moved into `buf` only by the poll that returns them.
            ///
            /// # Examples
            ///
            /// ```
            /// use std::future::poll_fn;
            ///
            #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 4>();")]
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
            ) -> Poll<usize>
            where
                F::Wait: Asynchronous,
            {
                if limit == 0 {
                    return Poll::Ready(0);
                }
                match std::task::ready!(self.poll_recv(cx)) {
                    Ok(first) => {
                        buf.push(first);
                        Poll::Ready(1 + self.try_recv_many(buf, limit - 1))
                    }
                    Err(RecvError) => Poll::Ready(0),
                }
            }

            $crate::endpoint::queries!($topology, Consumer);
        }

        impl<F: AnyFlavour<Receivers = asyncband_core::arity::$arity>> fmt::Debug for Receiver<F> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct("Receiver")
                    .field("chan", self.chan())
                    .finish_non_exhaustive()
            }
        }

        impl<F: AnyFlavour<Receivers = asyncband_core::arity::$arity>> IntoIterator for Receiver<F> {
            type Item = F::Item;
            type IntoIter = IntoIter<Self>;

            fn into_iter(self) -> IntoIter<Self> {
                IntoIter::new(self)
            }
        }

        impl<F: AnyFlavour<Receivers = asyncband_core::arity::$arity>> BlockingRecv for Receiver<F> {
            type Item = F::Item;

            fn next_blocking(&mut self) -> Option<F::Item> {
                self.recv_blocking().ok()
            }
        }
    };
}

/// A weak endpoint of a cloneable side: `$weak` of `$strong`, whose side's
/// arity is named `$side`.
macro_rules! weak {
    (
        $weak:ident, $strong:ident, $side:ident, $core:ident, $topology:literal, $make:literal,
        $count:ident, $weak_count:ident $(,)?
    ) => {
        #[doc = concat!("A [`", stringify!($strong), "`] that does not keep the channel open; [`upgrade`](Self::upgrade) it to use it.")]
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
        #[doc = concat!("let weak = ", $make, ".downgrade();")]
        /// assert!(weak.upgrade().is_some());
        #[doc = concat!("drop(", $make, ");")]
        /// assert!(weak.upgrade().is_none());
        /// ```
        pub struct $weak<F: AnyFlavour<$side = Many>> {
            inner: asyncband_core::endpoint::Weak<$core<F::Storage>>,
        }

        impl<F: AnyFlavour<$side = Many>> $strong<F> {
            #[doc = concat!("A [`", stringify!($weak), "`] of this channel, which does not keep it open.")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            #[doc = concat!("let weak = ", $make, ".downgrade();")]
            /// assert!(weak.upgrade().is_some());
            /// ```
            #[must_use]
            pub fn downgrade(&self) -> $weak<F> {
                $weak {
                    inner: self.inner.downgrade(),
                }
            }
        }

        impl<F: AnyFlavour<$side = Many>> Clone for $strong<F> {
            fn clone(&self) -> Self {
                Self::new(self.inner.clone())
            }
        }

        impl<F: AnyFlavour<$side = Many>> $weak<F> {
            #[doc = concat!("The [`", stringify!($strong), "`], if any of its side is still alive.")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            #[doc = concat!("let weak = ", $make, ".downgrade();")]
            /// assert!(weak.upgrade().is_some());
            /// ```
            #[must_use]
            pub fn upgrade(&self) -> Option<$strong<F>> {
                self.inner.upgrade().map($strong::new)
            }

            /// Live endpoints of this side, not counting weak ones.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            #[doc = concat!("let weak = ", $make, ".downgrade();")]
            /// assert_eq!(weak.strong_count(), 1);
            /// ```
            #[must_use]
            pub fn strong_count(&self) -> usize {
                self.inner.chan().$count()
            }

            /// Live weak endpoints of this side.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let (tx, rx) = asyncband::", $topology, "::unbounded::<u8>();")]
            #[doc = concat!("let weak = ", $make, ".downgrade();")]
            /// assert_eq!(weak.weak_count(), 1);
            /// ```
            #[must_use]
            pub fn weak_count(&self) -> usize {
                self.inner.chan().$weak_count()
            }
        }

        impl<F: AnyFlavour<$side = Many>> Clone for $weak<F> {
            fn clone(&self) -> Self {
                Self {
                    inner: self.inner.clone(),
                }
            }
        }

        impl<F: AnyFlavour<$side = Many>> fmt::Debug for $weak<F> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($weak))
                    .field("chan", self.inner.chan())
                    .finish()
            }
        }
    };
}

pub(crate) use {queries, receiver_methods, sender_methods, weak};
