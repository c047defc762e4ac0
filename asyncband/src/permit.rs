//! Capacity reserved before a message is built.
//!
//! A permit holds one slot of a bounded channel's capacity. Sending through
//! it never waits; dropping it gives the slot back to the oldest waiting
//! sender or to the free pool. A permit reserves capacity, not a position:
//! its value is ordered with the others by when it is sent. If the channel
//! was closed meanwhile, or every receiver is gone, `send` hands the value
//! back instead of dropping it silently.
//!
//! `mem::forget` of a permit leaks one slot of capacity and nothing else.

use std::fmt;

use asyncband_core::endpoint::{Unit, Units};
use asyncband_core::storage::Capacity;

use crate::error::SendError;
use crate::flavour::Flavour;

/// One reserved slot of a bounded channel, borrowed from its sender.
///
/// Unlike tokio's, a permit does not keep a closed channel open for its
/// value: after `close`, or once every receiver is gone, its `send` hands
/// the value back, so receivers never wait for permits still held.
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
pub struct Permit<'a, F: Flavour<Storage: Capacity>> {
    unit: Unit<'a, F::Storage>,
}

impl<'a, F: Flavour<Storage: Capacity>> Permit<'a, F> {
    #[inline]
    pub(crate) fn new(unit: Unit<'a, F::Storage>) -> Self {
        Self { unit }
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
    pub fn send(self, value: F::Item) -> Result<(), SendError<F::Item>> {
        self.unit.send(value)
    }
}

impl<F: Flavour<Storage: Capacity>> fmt::Debug for Permit<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit").finish_non_exhaustive()
    }
}

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
pub struct Permits<'a, F: Flavour<Storage: Capacity>> {
    units: Units<'a, F::Storage>,
}

impl<'a, F: Flavour<Storage: Capacity>> Permits<'a, F> {
    pub(crate) fn new(units: Units<'a, F::Storage>) -> Self {
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

impl<'a, F: Flavour<Storage: Capacity>> Iterator for Permits<'a, F> {
    type Item = Permit<'a, F>;

    fn next(&mut self) -> Option<Permit<'a, F>> {
        self.units.take_one().map(Permit::new)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.units.len(), Some(self.units.len()))
    }
}

impl<F: Flavour<Storage: Capacity>> ExactSizeIterator for Permits<'_, F> {}

impl<F: Flavour<Storage: Capacity>> fmt::Debug for Permits<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permits")
            .field("remaining", &self.units.len())
            .finish()
    }
}
