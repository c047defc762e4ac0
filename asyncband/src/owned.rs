//! Capacity reserved by a permit that owns its sender: [`OwnedPermit`],
//! and the future that waits for one, for a slot reserved in one task and
//! filled in another. Only cloneable senders have them (a single sender
//! cannot be shared with the task that would hold it).
//!
//! An owned permit counts as a sender while it lives: the channel stays
//! open for it, and sending or releasing hands the sender back.

use std::fmt;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::Arc;
use asyncband_core::arity::Many;
use asyncband_core::chan::Chan;
use asyncband_core::future::Reserve;
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
    sender: ManuallyDrop<Sender<F>>,
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> OwnedPermit<F> {
    pub(crate) fn new(sender: Sender<F>) -> Self {
        Self {
            sender: ManuallyDrop::new(sender),
        }
    }

    fn into_sender(self) -> Sender<F> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the sender is
        // taken exactly once.
        unsafe { ManuallyDrop::take(&mut this.sender) }
    }

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
        let sender = self.into_sender();
        // SAFETY: the permit held one unit, consumed here; many producers
        // may push concurrently.
        unsafe { sender.chan.push_reserved(value) }?;
        Ok(sender)
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
        let sender = self.into_sender();
        // SAFETY: the permit held one unit; `into_sender` skipped its Drop.
        unsafe { sender.chan.return_units(1) };
        sender
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Drop for OwnedPermit<F> {
    fn drop(&mut self) {
        // SAFETY: taken exactly once, here; `into_sender` skips this Drop.
        // Taken first, so that the sender is dropped even if a waker unwinds
        // out of the grant below.
        let sender = unsafe { ManuallyDrop::take(&mut self.sender) };
        // SAFETY: the permit holds one unit.
        unsafe { sender.chan.return_units(1) };
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> fmt::Debug for OwnedPermit<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedPermit").finish_non_exhaustive()
    }
}

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
pub struct ReserveOwnedFuture<F: Flavour<Senders = Many, Storage: Capacity>> {
    inner: Reserve<F::Storage, Arc<Chan<F::Storage>>>,
    sender: Option<Sender<F>>,
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> ReserveOwnedFuture<F> {
    pub(crate) fn new(sender: Sender<F>) -> Self {
        // SAFETY: many producers may reserve concurrently.
        let inner = unsafe { Reserve::new(Arc::clone(&sender.chan), 1) };
        Self {
            inner,
            sender: Some(sender),
        }
    }
}

impl<F: Flavour<Senders = Many, Storage: Capacity>> Future for ReserveOwnedFuture<F> {
    type Output = Result<OwnedPermit<F>, SendError<Sender<F>>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned; `sender` is not.
        let this = unsafe { self.get_unchecked_mut() };
        // Checked before the reservation is polled: polled again after it
        // completed, it would take a unit with no sender left to hold it.
        assert!(
            this.sender.is_some(),
            "`ReserveOwnedFuture` polled after completion"
        );
        // SAFETY: as above.
        let result = std::task::ready!(unsafe { Pin::new_unchecked(&mut this.inner) }.poll(cx));
        let Some(sender) = this.sender.take() else {
            unreachable!("checked above")
        };
        Poll::Ready(match result {
            Ok(()) => Ok(OwnedPermit::new(sender)),
            Err(SendError(())) => Err(SendError(sender)),
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
        // SAFETY: many producers may reserve concurrently.
        match unsafe { self.chan.try_reserve(1) } {
            Ok(()) => Ok(OwnedPermit::new(self)),
            Err(TrySendError::Full(())) => Err(TrySendError::Full(self)),
            Err(TrySendError::Disconnected(())) => Err(TrySendError::Disconnected(self)),
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
        ReserveOwnedFuture::new(self)
    }
}
