//! Single-producer, single-consumer channels.
//!
//! One sender, one receiver, neither `Clone`. Both sides move values with
//! plain loads and one store of their own index, and read the other side's
//! index only when their cached copy says full or empty: the cheapest channel
//! there is. Values arrive in the order they were sent.
//!
//! # Examples
//!
//! ```
//! use asyncband::spsc;
//!
//! let (mut tx, mut rx) = spsc::bounded::<u64, 1024>();
//! let producer = std::thread::spawn(move || {
//!     for tick in 0..10_000 {
//!         tx.send_blocking(tick).unwrap();
//!     }
//! });
//! let mut expected = 0;
//! while let Ok(tick) = rx.recv_blocking() {
//!     assert_eq!(tick, expected);
//!     expected += 1;
//! }
//! producer.join().unwrap();
//! assert_eq!(expected, 10_000);
//! ```

use std::fmt;
use std::marker::PhantomData;

use asyncband_core::arity::One;
use asyncband_core::endpoint;
use asyncband_core::list::List;
use asyncband_core::ring::Ring;

use crate::check;
use crate::flavour::{Flavour, Sealed};

pub use crate::permit::{Permit, Permits};
pub use crate::single::{Receiver, Sender};

/// A bounded SPSC channel of `CAP` slots (a power of two, at most 2^20)
/// holding `T`s of at most `INLINE` bytes.
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::Bounded::<u8, 4>::channel();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
pub struct Bounded<T, const CAP: usize, const INLINE: usize = { usize::MAX }>(
    PhantomData<fn(T) -> T>,
);

/// An unbounded SPSC channel of `T`s of at most `INLINE` bytes.
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::Unbounded::<u8>::channel();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
pub struct Unbounded<T, const INLINE: usize = { usize::MAX }>(PhantomData<fn(T) -> T>);

impl<T, const CAP: usize, const INLINE: usize> Bounded<T, CAP, INLINE> {
    /// Creates the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (tx, rx) = spsc::Bounded::<String, 64>::channel();
    /// assert_eq!(tx.capacity(), Some(64));
    /// # drop(rx);
    /// ```
    #[must_use]
    pub fn channel() -> (Sender<Self>, Receiver<Self>) {
        const { check::capacity::<CAP>() };
        const { check::inline::<T, INLINE>() };
        let (tx, rx) = endpoint::channel();
        (Sender::new(tx), Receiver::new(rx))
    }
}

impl<T, const INLINE: usize> Unbounded<T, INLINE> {
    /// Creates the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::spsc;
    ///
    /// let (tx, rx) = spsc::Unbounded::<String>::channel();
    /// assert_eq!(tx.capacity(), None);
    /// # drop(rx);
    /// ```
    #[must_use]
    pub fn channel() -> (Sender<Self>, Receiver<Self>) {
        const { check::inline::<T, INLINE>() };
        let (tx, rx) = endpoint::channel();
        (Sender::new(tx), Receiver::new(rx))
    }
}

/// Creates a bounded SPSC channel of `CAP` slots; the same as
/// [`Bounded::<T, CAP>::channel()`](Bounded::channel).
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::bounded::<u8, 2>();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use]
pub fn bounded<T, const CAP: usize>() -> (Sender<Bounded<T, CAP>>, Receiver<Bounded<T, CAP>>) {
    Bounded::channel()
}

/// Creates an unbounded SPSC channel; the same as
/// [`Unbounded::<T>::channel()`](Unbounded::channel).
///
/// # Examples
///
/// ```
/// use asyncband::spsc;
///
/// let (mut tx, mut rx) = spsc::unbounded::<u8>();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use]
pub fn unbounded<T>() -> (Sender<Unbounded<T>>, Receiver<Unbounded<T>>) {
    Unbounded::channel()
}

impl<T, const CAP: usize, const INLINE: usize> Sealed for Bounded<T, CAP, INLINE> {}
impl<T, const INLINE: usize> Sealed for Unbounded<T, INLINE> {}

impl<T, const CAP: usize, const INLINE: usize> Flavour for Bounded<T, CAP, INLINE> {
    type Item = T;
    type Senders = One;
    type Receivers = One;
    type Storage = Ring<T, CAP, One, One>;
    const CAPACITY: Option<usize> = Some(CAP);
}

impl<T, const INLINE: usize> Flavour for Unbounded<T, INLINE> {
    type Item = T;
    type Senders = One;
    type Receivers = One;
    type Storage = List<T, One, One>;
    const CAPACITY: Option<usize> = None;
}

impl<T, const CAP: usize, const INLINE: usize> fmt::Debug for Bounded<T, CAP, INLINE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "spsc::Bounded<{}, {CAP}>", std::any::type_name::<T>())
    }
}

impl<T, const INLINE: usize> fmt::Debug for Unbounded<T, INLINE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "spsc::Unbounded<{}>", std::any::type_name::<T>())
    }
}
