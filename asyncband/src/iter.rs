//! Blocking iteration over a receiver.

use asyncband_core::endpoint::ConsumerRef;

use crate::flavour::AnyFlavour;

/// The iterators over a receiver's right to receive, borrowed for `'a` (from
/// `&'a mut` a single receiver, or `&'a` a multi receiver): each `next` is
/// `$next` on that right, `$rx`.
macro_rules! iter {
    ($($(#[$attr:meta])* $name:ident: |$rx:ident| $next:expr;)*) => {$(
        $(#[$attr])*
        pub struct $name<'a, F: AnyFlavour> {
            rx: ConsumerRef<'a, F::Storage>,
        }

        impl<'a, F: AnyFlavour> $name<'a, F> {
            pub(crate) fn new(rx: ConsumerRef<'a, F::Storage>) -> Self {
                Self { rx }
            }
        }

        impl<F: AnyFlavour> Iterator for $name<'_, F> {
            type Item = F::Item;

            fn next(&mut self) -> Option<F::Item> {
                let $rx = &mut self.rx;
                $next
            }
        }

        opaque_debug!([F: AnyFlavour] $name<'_, F>);
    )*};
}

iter! {
    /// Parks on each call to `next` until a value arrives; ends once the channel
    /// is closed and drained. Created by `Receiver::iter`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpmc;
    ///
    /// let (tx, rx) = mpmc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// drop(tx);
    /// let mut iter = rx.iter();
    /// assert_eq!(iter.next(), Some(1));
    /// assert_eq!(iter.next(), None);
    /// ```
    Iter: |rx| rx.recv_blocking(None).ok();

    /// Yields the values ready now; ends at the first empty check. Created by
    /// `Receiver::try_iter`.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (mut tx, mut rx) = spsc::bounded::<u8, 4>();
    /// tx.try_send(1).unwrap();
    /// let mut iter = rx.try_iter();
    /// assert_eq!(iter.next(), Some(1));
    /// assert_eq!(iter.next(), None);
    /// ```
    TryIter: |rx| rx.try_recv().ok();
}

/// An owning blocking iterator over a receiver. Created by
/// `Receiver::into_iter`.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, rx) = mpsc::unbounded::<u8>();
/// tx.try_send(1).unwrap();
/// drop(tx);
/// assert_eq!(rx.into_iter().collect::<Vec<_>>(), [1]);
/// ```
pub struct IntoIter<R> {
    rx: R,
}

/// A receiver that can block for its next value.
#[doc(hidden)]
pub trait BlockingRecv {
    /// The payload.
    type Item;
    /// The next value, or `None` once closed and drained.
    fn next_blocking(&mut self) -> Option<Self::Item>;
}

impl<R> IntoIter<R> {
    pub(crate) fn new(rx: R) -> Self {
        Self { rx }
    }
}

impl<R: BlockingRecv> Iterator for IntoIter<R> {
    type Item = R::Item;

    fn next(&mut self) -> Option<R::Item> {
        self.rx.next_blocking()
    }
}

opaque_debug!([R] IntoIter<R>);
