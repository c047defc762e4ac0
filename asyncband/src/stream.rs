//! Receivers as `futures_core::Stream`s (feature `stream`, on by default).
//!
//! `poll_next` is `poll_recv`: the receiver keeps its waiter node between
//! polls (a cloneable one boxes it once, on its first wait). The stream ends
//! (`None`) once the channel is closed and drained, and stays ended: it is a
//! `FusedStream`.

use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::arity::{Many, One};
use futures_core::{FusedStream, Stream};

use asyncband_core::wait::Asynchronous;

use crate::flavour::AnyFlavour;
use crate::{multi, single};

impl<F: AnyFlavour<Receivers = One, Wait: Asynchronous>> Stream for single::Receiver<F> {
    type Item = F::Item;

    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    /// use futures::StreamExt;
    ///
    /// let (mut tx, rx) = spsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// drop(tx);
    /// assert_eq!(futures::executor::block_on(rx.collect::<Vec<_>>()), [1, 2]);
    /// ```
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Item>> {
        self.get_mut().poll_recv(cx).map(Result::ok)
    }
}

impl<F: AnyFlavour<Receivers = One, Wait: Asynchronous>> FusedStream for single::Receiver<F> {
    fn is_terminated(&self) -> bool {
        self.is_closed() && self.is_empty()
    }
}

impl<F: AnyFlavour<Receivers = Many, Wait: Asynchronous>> Stream for multi::Receiver<F> {
    type Item = F::Item;

    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    /// use futures::StreamExt;
    ///
    /// let (tx, rx) = mpmc::unbounded::<u8>();
    /// tx.try_send(1).unwrap();
    /// drop(tx);
    /// assert_eq!(futures::executor::block_on(rx.collect::<Vec<_>>()), [1]);
    /// ```
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<F::Item>> {
        self.get_mut().poll_recv(cx).map(Result::ok)
    }
}

impl<F: AnyFlavour<Receivers = Many, Wait: Asynchronous>> FusedStream for multi::Receiver<F> {
    fn is_terminated(&self) -> bool {
        self.is_closed() && self.is_empty()
    }
}
