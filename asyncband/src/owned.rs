//! Capacity reserved by a permit that owns its sender: [`OwnedPermit`],
//! and the future that waits for one, for a slot reserved in one task and
//! filled in another. Only cloneable senders have them (a single sender
//! cannot be shared with the task that would hold it).
//!
//! An owned permit counts as a sender while it lives: the channel stays
//! open for it, and sending or releasing hands the sender back.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use asyncband_core::arity::Many;
use asyncband_core::endpoint::{OwnedUnit, ReserveOwned};
use asyncband_core::storage::Capacity;

use crate::error::{SendError, TrySendError};
use crate::flavour::Flavour;
use crate::multi::Sender;

/// One reserved slot that owns its [`Sender`], for moving into a spawned
/// task. It counts as a sender while it lives.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
/// let permit = tx.try_reserve_owned().unwrap();
/// std::thread::spawn(move || permit.send(1).unwrap()).join().unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use = "an owned permit holds a slot of capacity until it is sent, released or dropped"]
pub struct OwnedPermit<F: Flavour<Senders = Many, Storage: Capacity>> {
    unit: OwnedUnit<F::Storage>,
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> OwnedPermit<F> {
    /// Sends `value` into the reserved slot, without waiting, and gives the
    /// sender back.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel was closed or every
    /// receiver is gone; the sender is dropped then.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 2>();
    /// let tx = tx.try_reserve_owned().unwrap().send(1).unwrap();
    /// tx.try_send(2).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    pub fn send(self, value: F::Item) -> Result<Sender<F>, SendError<F::Item>> {
        self.unit.send(value).map(Sender::new)
    }

    /// Gives the slot back and returns the sender.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, _rx) = mpsc::bounded::<u8, 1>();
    /// let tx = tx.try_reserve_owned().unwrap().release();
    /// assert!(tx.try_send(1).is_ok());
    /// ```
    #[must_use = "the sender is handed back; drop the permit instead if it is not needed"]
    pub fn release(self) -> Sender<F> {
        Sender::new(self.unit.release())
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> fmt::Debug for OwnedPermit<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").finish_non_exhaustive()
    }
}

pin_project! {
    /// Reserves one slot with a permit that owns the sender. Created by
    /// `Sender::reserve_owned`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    /// use futures::executor::block_on;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// let permit = block_on(tx.reserve_owned()).unwrap();
    /// permit.send(1).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(1));
    /// ```
    #[must_use = "futures do nothing unless polled"]
    pub struct ReserveOwnedFuture<F>
    where
        F: Flavour<Senders = Many>,
        F::Storage: Capacity,
    {
        #[pin]
        inner: ReserveOwned<F::Storage>,
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Future for ReserveOwnedFuture<F> {
    type Output = Result<OwnedPermit<F>, SendError<Sender<F>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.project().inner.poll(cx).map(|result| match result {
            Ok(unit) => Ok(OwnedPermit { unit }),
            Err(SendError(tx)) => Err(SendError(Sender::new(tx))),
        })
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> fmt::Debug for ReserveOwnedFuture<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReserveOwnedFuture").finish_non_exhaustive()
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Sender<F> {
    /// Reserves one slot now with a permit that owns this sender, for use
    /// in a spawned task.
    ///
    /// # Errors
    ///
    /// [`TrySendError::Full`] or [`TrySendError::Disconnected`], each handing
    /// the sender back.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// let permit = tx.try_reserve_owned().unwrap();
    /// let tx = permit.send(3).unwrap();
    /// assert_eq!(rx.try_recv(), Ok(3));
    /// assert!(tx.try_reserve_owned().is_ok());
    /// ```
    pub fn try_reserve_owned(self) -> Result<OwnedPermit<F>, TrySendError<Self>> {
        match self.tx.try_reserve_owned() {
            Ok(unit) => Ok(OwnedPermit { unit }),
            Err(TrySendError::Full(tx)) => Err(TrySendError::Full(Self::new(tx))),
            Err(TrySendError::Disconnected(tx)) => Err(TrySendError::Disconnected(Self::new(tx))),
        }
    }

    /// Reserves one slot, waiting in line for it, with a permit that owns
    /// this sender.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the sender when the channel is closed.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future drops the sender and passes a slot it had been
    /// granted to the next waiting sender.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use asyncband::mpsc;
    ///
    /// let (tx, mut rx) = mpsc::bounded::<u8, 1>();
    /// let permit = tx.reserve_owned().await.unwrap();
    /// tokio::spawn(async move { permit.send(8).unwrap() });
    /// assert_eq!(rx.recv().await, Ok(8));
    /// # }
    /// ```
    pub fn reserve_owned(self) -> ReserveOwnedFuture<F> {
        ReserveOwnedFuture {
            inner: self.tx.reserve_owned(),
        }
    }
}
