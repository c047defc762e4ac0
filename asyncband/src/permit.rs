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
use std::mem::ManuallyDrop;

use asyncband_core::chan::Chan;
use asyncband_core::storage::Capacity;

use crate::error::{SendError, TrySendError};
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
    chan: &'a Chan<F::Storage>,
}

impl<'a, F: Flavour<Storage: Capacity>> Permit<'a, F> {
    pub(crate) fn new(chan: &'a Chan<F::Storage>) -> Self {
        Self { chan }
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
    pub fn send(self, value: F::Item) -> Result<(), SendError<F::Item>> {
        let this = ManuallyDrop::new(self);
        // SAFETY: the permit holds one unit, consumed here (hence no Drop).
        // On a single-producer channel permits exist only while the sender
        // is mutably borrowed, so only pushes through units run now, and
        // those may race with each other.
        unsafe { this.chan.push_reserved(value) }
    }
}

impl<F: Flavour<Storage: Capacity>> Drop for Permit<'_, F> {
    fn drop(&mut self) {
        // SAFETY: the permit holds one unit (`send` consumes the permit
        // without this drop).
        unsafe { self.chan.return_units(1) };
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
    chan: &'a Chan<F::Storage>,
    remaining: usize,
}

impl<'a, F: Flavour<Storage: Capacity>> Permits<'a, F> {
    pub(crate) fn new(chan: &'a Chan<F::Storage>, n: usize) -> Self {
        Self { chan, remaining: n }
    }

    /// Reserves `n` units now, for both senders' `try_reserve_many`. Zero
    /// units always fit, but a closed channel is an error all the same.
    ///
    /// # Safety
    ///
    /// The producer-side contract of [`Chan`]: on a single-producer channel
    /// the caller holds the sender exclusively.
    pub(crate) unsafe fn try_reserve(
        chan: &'a Chan<F::Storage>,
        n: usize,
    ) -> Result<Self, TrySendError<()>> {
        if n > <F::Storage as Capacity>::CAP {
            return Err(TrySendError::Full(()));
        }
        if n == 0 {
            if chan.is_closed() {
                return Err(TrySendError::Disconnected(()));
            }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { chan.try_reserve(n) }?;
        }
        Ok(Self::new(chan, n))
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
        self.remaining
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
        self.remaining == 0
    }
}

impl<'a, F: Flavour<Storage: Capacity>> Iterator for Permits<'a, F> {
    type Item = Permit<'a, F>;

    fn next(&mut self) -> Option<Permit<'a, F>> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some(Permit::new(self.chan))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<F: Flavour<Storage: Capacity>> ExactSizeIterator for Permits<'_, F> {}

impl<F: Flavour<Storage: Capacity>> Drop for Permits<'_, F> {
    fn drop(&mut self) {
        // SAFETY: `remaining` units are held: each permit handed out by
        // `next` took one with it.
        unsafe { self.chan.return_units(self.remaining) };
    }
}

impl<F: Flavour<Storage: Capacity>> fmt::Debug for Permits<'_, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permits")
            .field("remaining", &self.remaining)
            .finish()
    }
}
