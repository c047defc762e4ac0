//! The endpoints of a side with exactly one endpoint: the sender of
//! [`spsc`](crate::spsc) and the receiver of [`spsc`](crate::spsc) and
//! [`mpsc`](crate::mpsc).
//!
//! Operations that move values take `&mut self`: the borrow proves that no
//! other operation on this side runs at the same time, so the channel moves
//! values with plain loads and stores.

use asyncband_core::arity::One;

use crate::endpoint::prelude::*;

/// The sending half of an [`spsc`](crate::spsc) channel.
///
/// Moving a value takes `&mut self`; queries take `&self`. Dropping the
/// sender closes the channel: the receiver drains what was sent, then sees
/// it closed.
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::bounded::<&str, 8>();
/// tx.try_send("tick").unwrap();
/// assert_eq!(rx.try_recv(), Ok("tick"));
/// ```
pub struct Sender<F: AnyFlavour<Senders = One>> {
    pub(crate) inner: Producer<F::Storage>,
}

/// The receiving half of an [`spsc`](crate::spsc) or [`mpsc`](crate::mpsc)
/// channel.
///
/// Taking a value takes `&mut self`; queries take `&self`. Dropping the
/// receiver closes the channel and drops every value still queued, at once.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::unbounded::<u32>();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
pub struct Receiver<F: AnyFlavour<Receivers = One>> {
    pub(crate) inner: Consumer<F::Storage>,
}

impl<F: AnyFlavour<Senders = One>> Sender<F> {
    /// The right to send, borrowed mutably.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "on every send's ready path")]
    pub(crate) fn right(&mut self) -> ProducerRef<'_, F::Storage> {
        self.inner.by_ref()
    }
}

impl<F: AnyFlavour<Receivers = One>> Receiver<F> {
    /// The right to receive, borrowed mutably.
    #[inline(always)]
    #[allow(clippy::inline_always, reason = "on every receive's ready path")]
    pub(crate) fn right(&mut self) -> ConsumerRef<'_, F::Storage> {
        self.inner.by_ref()
    }

    /// The next value, left in place: it still counts in `len` and against
    /// the capacity. `None` when nothing is ready.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<String, 2>();
    /// tx.try_send("first".to_string()).unwrap();
    /// assert_eq!(rx.peek().map(String::as_str), Some("first"));
    /// assert_eq!(rx.len(), 1);
    /// assert_eq!(rx.try_recv().unwrap(), "first");
    /// ```
    pub fn peek(&mut self) -> Option<&F::Item> {
        self.inner.peek()
    }
}

crate::endpoint::sender_methods!("spsc", One, mut);
crate::endpoint::receiver_methods!("mpsc", One, mut);

#[allow(
    clippy::into_iter_without_iter,
    reason = "`Receiver::iter` already takes `&mut self` (one receiver); an `iter_mut` would only repeat it"
)]
impl<'a, F: AnyFlavour<Receivers = One>> IntoIterator for &'a mut Receiver<F> {
    type Item = F::Item;
    type IntoIter = Iter<'a, F>;

    fn into_iter(self) -> Iter<'a, F> {
        self.iter()
    }
}
