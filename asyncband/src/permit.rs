//! Capacity reserved before a message is built: [`Permit`] (one slot,
//! borrowed from its sender), [`Permits`] (several), and [`OwnedPermit`]
//! (one slot that owns its sender), with the future that waits for an owned
//! one. What they promise is said in the crate docs' Capacity and permits.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use asyncband_core::arity::Many;
use asyncband_core::endpoint::{Producer, Pusher, Reserve, Units};
use asyncband_core::storage::Capacity;
use pin_project_lite::pin_project;

use crate::error::{SendError, TrySendError};
use asyncband_core::wait::Asynchronous;

use crate::flavour::AnyFlavour;
use crate::multi::Sender;

/// One reserved slot of a bounded channel, borrowed from its sender. A
/// permit does not keep a closed channel open: receivers never wait for
/// permits still held ([Capacity and permits](crate#capacity-and-permits)).
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<Vec<u8>, 1>();
/// let permit = tx.try_reserve().unwrap();
/// // The slot is ours: build the message at leisure.
/// let message = vec![1, 2, 3];
/// permit.send(message).unwrap();
/// assert_eq!(rx.try_recv().unwrap(), [1, 2, 3]);
/// ```
#[must_use = "a permit holds a slot of capacity until it is sent or dropped"]
pub struct Permit<'a, F: AnyFlavour<Storage: Capacity>> {
    /// One unit.
    units: Units<Pusher<'a, F::Storage>>,
}

impl<'a, F: AnyFlavour<Storage: Capacity>> Permit<'a, F> {
    #[inline]
    pub(crate) fn new(units: Units<Pusher<'a, F::Storage>>) -> Self {
        debug_assert_eq!(units.len(), 1, "a permit holds one slot");
        Self { units }
    }

    /// Sends `value` into the reserved slot, without waiting.
    ///
    /// # Errors
    ///
    /// [`SendError`] with the value when the channel was closed or every
    /// receiver is gone since the slot was reserved.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, rx) = spsc::bounded::<u8, 1>();
    /// let permit = tx.try_reserve().unwrap();
    /// drop(rx);
    /// assert_eq!(permit.send(7).unwrap_err().into_inner(), 7);
    /// ```
    #[inline]
    pub fn send(mut self, value: F::Item) -> Result<(), SendError<F::Item>> {
        self.units.send(value)
    }
}

opaque_debug!([F: AnyFlavour<Storage: Capacity>] Permit<'_, F>);

/// Several reserved slots, handed out one [`Permit`] at a time; the slots
/// not handed out are given back on drop.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 4>();
/// let mut permits = tx.try_reserve_many(3).unwrap();
/// permits.next().unwrap().send(1).unwrap();
/// drop(permits); // two unused slots go back
/// assert_eq!(tx.try_reserve_many(3).unwrap().len(), 3);
/// ```
#[must_use = "reserved slots are held until the permits are used or dropped"]
pub struct Permits<'a, F: AnyFlavour<Storage: Capacity>> {
    units: Units<Pusher<'a, F::Storage>>,
}

impl<'a, F: AnyFlavour<Storage: Capacity>> Permits<'a, F> {
    pub(crate) fn new(units: Units<Pusher<'a, F::Storage>>) -> Self {
        Self { units }
    }

    /// Slots not handed out yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, _rx) = mpmc::bounded::<u8, 4>();
    /// assert_eq!(tx.try_reserve_many(2).unwrap().len(), 2);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// True when every slot has been handed out.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, _rx) = mpmc::bounded::<u8, 4>();
    /// assert!(tx.try_reserve_many(0).unwrap().is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }
}

impl<'a, F: AnyFlavour<Storage: Capacity>> Iterator for Permits<'a, F> {
    type Item = Permit<'a, F>;

    fn next(&mut self) -> Option<Permit<'a, F>> {
        (!self.units.is_empty()).then(|| Permit::new(self.units.split(1)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.units.len(), Some(self.units.len()))
    }
}

impl<F: AnyFlavour<Storage: Capacity>> ExactSizeIterator for Permits<'_, F> {}

impl<F: AnyFlavour<Storage: Capacity>> fmt::Debug for Permits<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permits")
            .field("remaining", &self.units.len())
            .finish()
    }
}

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
pub struct OwnedPermit<F: AnyFlavour<Senders = Many, Storage: Capacity>> {
    /// One unit, held with the sender it owns.
    units: Units<Producer<F::Storage>>,
}

impl<F: AnyFlavour<Senders = Many, Storage: Capacity>> OwnedPermit<F> {
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
        let mut units = self.units;
        units.send(value)?;
        Ok(Sender::new(units.into_holder()))
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
        Sender::new(self.units.into_holder())
    }
}

opaque_debug!([F: AnyFlavour<Senders = Many, Storage: Capacity>] OwnedPermit<F>);

crate::future::future! {
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
    ReserveOwnedFuture<F> where [F: AnyFlavour<Senders = Many>, F::Storage: Capacity]
    (Reserve<Producer<F::Storage>>) -> Result<OwnedPermit<F>, SendError<Sender<F>>>,
    map |result| match result {
        Ok(units) => Ok(OwnedPermit { units }),
        Err(SendError(tx)) => Err(SendError(Sender::new(tx))),
    };
    poll
}

impl<F: AnyFlavour<Senders = Many, Storage: Capacity>> Sender<F> {
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
        match self.inner.try_reserve_owned() {
            Ok(units) => Ok(OwnedPermit { units }),
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
    pub fn reserve_owned(self) -> ReserveOwnedFuture<F>
    where
        F::Wait: Asynchronous,
    {
        ReserveOwnedFuture {
            inner: self.inner.reserve_owned(),
        }
    }
}
