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

use asyncband_core::arity::{Many, One};
use asyncband_core::endpoint::Producer;
use asyncband_core::storage::Storage;
use asyncband_core::wait::Asynchronous;
use futures_sink::Sink;

use crate::error::SendError;
use crate::flavour::AnyFlavour;
use crate::{multi, single};

/// A sender a [`SenderSink`] can own: the sender of any park flavour.
/// Sealed.
#[doc(hidden)]
pub trait SinkSender: crate::flavour::Sealed + Unpin {
    /// The channel's storage.
    type Storage: Storage;
    /// The core producer the sender wraps.
    fn producer(&mut self) -> &mut Producer<Self::Storage>;
    /// Whether the producer keeps a slot for the next `start_send`.
    fn has_reserved(&self) -> bool;
}

/// Both arities' senders are sink senders.
macro_rules! sink_sender {
    ($($module:ident: $arity:ident),*) => {$(
        impl<F: AnyFlavour<Senders = $arity>> crate::flavour::Sealed for $module::Sender<F> {}

        impl<F: AnyFlavour<Senders = $arity, Wait: Asynchronous>> SinkSender for $module::Sender<F> {
            type Storage = F::Storage;

            fn producer(&mut self) -> &mut Producer<F::Storage> {
                &mut self.inner
            }

            fn has_reserved(&self) -> bool {
                self.inner.has_reserved()
            }
        }
    )*};
}

sink_sender!(single: One, multi: Many);

type Item<Tx> = <<Tx as SinkSender>::Storage as Storage>::Item;

/// A sender as a `Sink`. Created by `Sender::into_sink`.
///
/// The error is [`SendError`] holding `Some(value)` when `start_send` found
/// the channel closed, and `None` when `poll_ready` did. Each result on the
/// way through `futures`' `SinkExt::send` can thus hold a value: in a debug
/// build, where each takes a stack slot of the value's size, a value of tens
/// of KiB can overflow a thread's default 2 MiB stack. Box such values, or
/// send them with [`Sender::send`](crate::mpsc::Sender::send).
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
    /// The sender; it keeps the unit `poll_ready` reserves, and the
    /// reservation while it waits, between polls.
    tx: Option<Tx>,
}

impl<Tx: SinkSender> SenderSink<Tx> {
    pub(crate) fn new(tx: Tx) -> Self {
        Self { tx: Some(tx) }
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
        if let Some(tx) = &mut self.tx {
            tx.producer().release_reserved();
        }
    }
}

impl<Tx: SinkSender> Sink<Item<Tx>> for SenderSink<Tx> {
    type Error = SendError<Option<Item<Tx>>>;

    fn poll_ready(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        match &mut self.get_mut().tx {
            Some(tx) => tx
                .producer()
                .poll_reserve(cx)
                .map_err(|SendError(())| SendError(None)),
            None => Poll::Ready(Err(SendError(None))),
        }
    }

    fn start_send(self: Pin<&mut Self>, item: Item<Tx>) -> Result<(), Self::Error> {
        match &mut self.get_mut().tx {
            // Through the unit `poll_ready` reserved, or without a
            // successful `poll_ready` first, if there is room.
            Some(tx) => tx
                .producer()
                .send_reserved(item)
                .map_err(|err| SendError(Some(err.into_inner()))),
            None => Err(SendError(Some(item))),
        }
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
            .field("ready", &self.tx.as_ref().is_some_and(Tx::has_reserved))
            .finish_non_exhaustive()
    }
}
