//! The endpoints of a side with many endpoints: the sender of
//! [`mpsc`](crate::mpsc) and both endpoints of [`mpmc`](crate::mpmc), and
//! their weak forms.
//!
//! Each value moved is one atomic claim; the last sender (or receiver) to
//! go closes the channel.

use asyncband_core::arity::Many;

use crate::endpoint::prelude::*;

/// A sending half of an [`mpsc`](crate::mpsc) or [`mpmc`](crate::mpmc)
/// channel: `Clone`, and every operation takes `&self`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<u32, 8>();
/// let tx2 = tx.clone();
/// std::thread::spawn(move || tx2.send_blocking(2).unwrap()).join().unwrap();
/// tx.try_send(1).unwrap();
/// let mut got: Vec<u32> = rx.try_iter().collect();
/// got.sort_unstable();
/// assert_eq!(got, [1, 2]);
/// ```
pub struct Sender<F: AnyFlavour<Senders = Many>> {
    pub(crate) inner: Producer<F::Storage>,
}

/// A receiving half of an [`mpmc`](crate::mpmc) channel: `Clone`, and every
/// operation that takes a value takes `&self`; each value goes to exactly
/// one receiver.
///
/// # Examples
///
/// ```
/// use asyncband::mpmc;
///
/// let (tx, rx) = mpmc::unbounded::<u32>();
/// tx.try_send(1).unwrap();
/// let rx2 = rx.clone();
/// assert_eq!(rx2.try_recv(), Ok(1));
/// assert!(rx.try_recv().is_err());
/// ```
pub struct Receiver<F: AnyFlavour<Receivers = Many>> {
    pub(crate) inner: Consumer<F::Storage>,
}

impl<F: AnyFlavour<Senders = Many>> Sender<F> {
    /// The right to send, shared.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "on every send's ready path")]
    pub(crate) fn right(&self) -> ProducerRef<'_, F::Storage> {
        self.inner.shared()
    }

    /// Live senders: the same as [`sender_count`](Self::sender_count), by
    /// tokio's name.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = asyncband::mpsc::unbounded::<u8>();
    /// let tx2 = tx.clone();
    /// assert_eq!(tx.strong_count(), 2);
    /// drop(tx2);
    /// assert_eq!(tx.strong_count(), 1);
    /// ```
    #[must_use]
    pub fn strong_count(&self) -> usize {
        self.chan().sender_count()
    }

    /// Live weak senders of this channel.
    ///
    /// # Examples
    ///
    /// ```
    /// let (tx, _rx) = asyncband::mpsc::unbounded::<u8>();
    /// let weak = tx.downgrade();
    /// assert_eq!(tx.weak_count(), 1);
    /// drop(weak);
    /// assert_eq!(tx.weak_count(), 0);
    /// ```
    #[must_use]
    pub fn weak_count(&self) -> usize {
        self.chan().weak_sender_count()
    }
}

impl<F: AnyFlavour<Receivers = Many>> Receiver<F> {
    /// The right to receive, shared.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "on every receive's ready path")]
    pub(crate) fn right(&self) -> ConsumerRef<'_, F::Storage> {
        self.inner.shared()
    }
}

crate::endpoint::sender_methods!("mpsc", Many);
crate::endpoint::receiver_methods!("mpmc", Many);
crate::endpoint::weak!(
    WeakSender,
    Sender,
    Senders,
    Producer,
    "mpsc",
    "tx",
    sender_count,
    weak_sender_count,
);
crate::endpoint::weak!(
    WeakReceiver,
    Receiver,
    Receivers,
    Consumer,
    "mpmc",
    "rx",
    receiver_count,
    weak_receiver_count,
);

impl<'a, F: AnyFlavour<Receivers = Many>> IntoIterator for &'a Receiver<F> {
    type Item = F::Item;
    type IntoIter = Iter<'a, F>;

    fn into_iter(self) -> Iter<'a, F> {
        self.iter()
    }
}
