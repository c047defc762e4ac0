//! Senders as `futures_sink::Sink`s (feature `sink`, on by default).
//!
//! [`SenderSink`] owns a sender. `poll_ready` reserves one slot of capacity
//! (at once when one is free, otherwise waiting in line like `reserve`),
//! `start_send` fills it, `poll_flush` has nothing to do (a sent value is in
//! the channel), and `poll_close` gives back an unused slot and drops the
//! sender, which closes the channel if it was the last one.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::Arc;
use asyncband_core::arity::{Many, One};
use asyncband_core::chan::Chan;
use asyncband_core::future::Reserve;
use asyncband_core::storage::Storage;
use futures_sink::Sink;

use crate::error::{SendError, TrySendError};
use crate::flavour::Flavour;
use crate::{multi, single};

/// A sender a [`SenderSink`] can own.
#[doc(hidden)]
pub trait SinkSender: crate::flavour::Sealed + Unpin {
    /// The channel's storage.
    type Storage: Storage;
    /// The channel.
    fn chan(&self) -> &Arc<Chan<Self::Storage>>;
}

impl<F: Flavour<Senders = One>> crate::flavour::Sealed for single::Sender<F> {}
impl<F: Flavour<Senders = Many>> crate::flavour::Sealed for multi::Sender<F> {}

impl<F: Flavour<Senders = One>> SinkSender for single::Sender<F> {
    type Storage = F::Storage;

    fn chan(&self) -> &Arc<Chan<F::Storage>> {
        &self.chan
    }
}

impl<F: Flavour<Senders = Many>> SinkSender for multi::Sender<F> {
    type Storage = F::Storage;

    fn chan(&self) -> &Arc<Chan<F::Storage>> {
        &self.chan
    }
}

type Item<Tx> = <<Tx as SinkSender>::Storage as Storage>::Item;

/// A reservation kept pinned across polls of `poll_ready`.
type Waiting<S> = Pin<Box<Reserve<S, Arc<Chan<S>>>>>;

/// A sender as a `Sink`. Created by `Sender::into_sink`.
///
/// The error is [`SendError`] holding `Some(value)` when `start_send` found
/// the channel closed, and `None` when `poll_ready` did.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
/// use futures::{SinkExt, StreamExt, executor::block_on, stream};
///
/// let (tx, rx) = mpsc::bounded::<u32, 2>();
/// let mut sink = tx.into_sink();
/// let consumer = std::thread::spawn(move || block_on(rx.collect::<Vec<_>>()));
/// block_on(sink.send_all(&mut stream::iter(0..10).map(Ok))).unwrap();
/// drop(sink);
/// assert_eq!(consumer.join().unwrap(), (0..10).collect::<Vec<_>>());
/// ```
pub struct SenderSink<Tx: SinkSender> {
    tx: Option<Tx>,
    /// A reservation being waited for; boxed once so it can stay pinned
    /// across polls.
    waiting: Option<Waiting<Tx::Storage>>,
    /// One unit of capacity is held for the next `start_send`.
    held: bool,
}

impl<Tx: SinkSender> SenderSink<Tx> {
    pub(crate) fn new(tx: Tx) -> Self {
        Self {
            tx: Some(tx),
            waiting: None,
            held: false,
        }
    }

    /// The sender, unless the sink was closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 2>();
    /// let sink = tx.into_sink();
    /// assert!(sink.get_ref().is_some());
    /// ```
    pub fn get_ref(&self) -> Option<&Tx> {
        self.tx.as_ref()
    }

    /// Gives back a held slot and returns the sender, unless the sink was
    /// closed.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 2>();
    /// let tx = tx.into_sink().into_inner().unwrap();
    /// tx.try_send(1).unwrap();
    /// ```
    pub fn into_inner(mut self) -> Option<Tx> {
        self.release();
        self.tx.take()
    }

    fn release(&mut self) {
        self.waiting = None;
        if std::mem::take(&mut self.held) {
            if let Some(tx) = &self.tx {
                // SAFETY: `held` said the sink holds one unit.
                unsafe { tx.chan().return_units(1) };
            }
        }
    }
}

impl<Tx: SinkSender> Sink<Item<Tx>> for SenderSink<Tx> {
    type Error = SendError<Option<Item<Tx>>>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let this = self.get_mut();
        let Some(tx) = &this.tx else {
            return Poll::Ready(Err(SendError(None)));
        };
        if this.held {
            return Poll::Ready(Ok(()));
        }
        if this.waiting.is_none() {
            // SAFETY: the sink owns the sender and takes `&mut self`, so on a
            // single-producer channel it is the only producer.
            match unsafe { tx.chan().try_reserve(1) } {
                Ok(()) => {
                    this.held = true;
                    return Poll::Ready(Ok(()));
                }
                Err(TrySendError::Disconnected(())) => return Poll::Ready(Err(SendError(None))),
                Err(TrySendError::Full(())) => {
                    // SAFETY: as above, for the life of the reservation.
                    this.waiting =
                        Some(Box::pin(unsafe { Reserve::new(Arc::clone(tx.chan()), 1) }));
                }
            }
        }
        let Some(waiting) = &mut this.waiting else {
            unreachable!("a reservation was just created")
        };
        let result = std::task::ready!(waiting.as_mut().poll(cx));
        this.waiting = None;
        Poll::Ready(match result {
            Ok(()) => {
                this.held = true;
                Ok(())
            }
            Err(SendError(())) => Err(SendError(None)),
        })
    }

    fn start_send(self: Pin<&mut Self>, item: Item<Tx>) -> Result<(), Self::Error> {
        let this = self.get_mut();
        let Some(tx) = &this.tx else {
            return Err(SendError(Some(item)));
        };
        if std::mem::take(&mut this.held) {
            // SAFETY: we hold one unit; the sink is the only producer of a
            // single-producer channel (see `poll_ready`).
            return unsafe { tx.chan().push_reserved(item) }
                .map_err(|SendError(v)| SendError(Some(v)));
        }
        // Without a successful `poll_ready` first: send if there is room.
        // SAFETY: as above.
        unsafe { tx.chan().try_send_unchecked(item) }
            .map_err(|err| SendError(Some(err.into_inner())))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let this = self.get_mut();
        this.release();
        this.tx = None;
        Poll::Ready(Ok(()))
    }
}

impl<Tx: SinkSender> Drop for SenderSink<Tx> {
    fn drop(&mut self) {
        self.release();
    }
}

impl<Tx: SinkSender> fmt::Debug for SenderSink<Tx> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SenderSink")
            .field("open", &self.tx.is_some())
            .field("ready", &self.held)
            .finish_non_exhaustive()
    }
}

impl<F: Flavour<Senders = One>> single::Sender<F> {
    /// Turns this sender into a `futures_sink::Sink` that owns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    /// use futures::{SinkExt, executor::block_on};
    ///
    /// let (tx, mut rx) = spsc::bounded::<u8, 4>();
    /// let mut sink = tx.into_sink();
    /// block_on(sink.send(1)).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    #[must_use = "the sink owns the sender; dropping it drops the sender"]
    pub fn into_sink(self) -> SenderSink<Self> {
        SenderSink::new(self)
    }
}

impl<F: Flavour<Senders = Many>> multi::Sender<F> {
    /// Turns this sender into a `futures_sink::Sink` that owns it.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    /// use futures::{SinkExt, executor::block_on};
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// let mut sink = tx.into_sink();
    /// block_on(sink.send(1)).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    #[must_use = "the sink owns the sender; dropping it drops the sender"]
    pub fn into_sink(self) -> SenderSink<Self> {
        SenderSink::new(self)
    }
}
