//! Multi-producer, single-consumer channels.
//!
//! Senders are `Clone` and take `&self`; each value sent is one atomic claim.
//! The single receiver takes values with no read-modify-write at all. Each
//! producer's values arrive in the order it sent them. Senders waiting for
//! room are served in the order they began to wait.
//!
//! # Examples
//!
//! ```
//! use asyncband::mpsc;
//!
//! let (tx, mut rx) = mpsc::bounded::<(usize, u64), 4096>();
//! let producers: Vec<_> = (0..4)
//!     .map(|id| {
//!         let tx = tx.clone();
//!         std::thread::spawn(move || {
//!             for seq in 0..1000 {
//!                 tx.send_blocking((id, seq)).unwrap();
//!             }
//!         })
//!     })
//!     .collect();
//! drop(tx);
//! let mut next = [0u64; 4];
//! for (id, seq) in rx.iter() {
//!     assert_eq!(seq, next[id]);
//!     next[id] += 1;
//! }
//! producers.into_iter().for_each(|p| p.join().unwrap());
//! assert_eq!(next, [1000; 4]);
//! ```

use std::fmt;
use std::marker::PhantomData;

use asyncband_core::arity::{Many, One};
use asyncband_core::endpoint;
use asyncband_core::list::List;
use asyncband_core::ring::Ring;

use crate::check;
use crate::flavour::{Flavour, Sealed};

pub use crate::multi::{Sender, WeakSender};
pub use crate::owned::OwnedPermit;
pub use crate::permit::{Permit, Permits};
pub use crate::single::Receiver;

/// A bounded MPSC channel of `CAP` slots (a power of two, at most 2^20)
/// holding `T`s of at most `INLINE` bytes.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::Bounded::<u8, 4>::channel();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
pub struct Bounded<T, const CAP: usize, const INLINE: usize = { usize::MAX }>(
    PhantomData<fn(T) -> T>,
);

/// An unbounded MPSC channel of `T`s of at most `INLINE` bytes.
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::Unbounded::<u8>::channel();
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
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::Bounded::<String, 64>::channel();
    /// assert_eq!(tx.capacity(), Some(64));
    /// # drop(rx);
    /// ```
    #[must_use]
    pub fn channel() -> (Sender<Self>, Receiver<Self>) {
        const { check::capacity::<CAP>() };
        const { check::inline::<T, INLINE>() };
        let (tx, rx) = endpoint::channel();
        (Sender::new(tx.into_shared()), Receiver::new(rx))
    }
}

impl<T, const INLINE: usize> Unbounded<T, INLINE> {
    /// Creates the channel.
    ///
    /// # Examples
    ///
    /// ```
    /// use asyncband::mpsc;
    ///
    /// let (tx, rx) = mpsc::Unbounded::<String>::channel();
    /// assert_eq!(tx.capacity(), None);
    /// # drop(rx);
    /// ```
    #[must_use]
    pub fn channel() -> (Sender<Self>, Receiver<Self>) {
        const { check::inline::<T, INLINE>() };
        let (tx, rx) = endpoint::channel();
        (Sender::new(tx.into_shared()), Receiver::new(rx))
    }
}

/// Creates a bounded MPSC channel of `CAP` slots; the same as
/// [`Bounded::<T, CAP>::channel()`](Bounded::channel).
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::bounded::<u8, 2>();
/// tx.try_send(1).unwrap();
/// assert_eq!(rx.try_recv(), Ok(1));
/// ```
#[must_use]
pub fn bounded<T, const CAP: usize>() -> (Sender<Bounded<T, CAP>>, Receiver<Bounded<T, CAP>>) {
    Bounded::channel()
}

/// Creates an unbounded MPSC channel; the same as
/// [`Unbounded::<T>::channel()`](Unbounded::channel).
///
/// # Examples
///
/// ```
/// use asyncband::mpsc;
///
/// let (tx, mut rx) = mpsc::unbounded::<u8>();
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
    type Senders = Many;
    type Receivers = One;
    type Storage = Ring<T, CAP, Many, One>;
    const CAPACITY: Option<usize> = Some(CAP);
}

impl<T, const INLINE: usize> Flavour for Unbounded<T, INLINE> {
    type Item = T;
    type Senders = Many;
    type Receivers = One;
    type Storage = List<T, Many, One>;
    const CAPACITY: Option<usize> = None;
}

impl<T, const CAP: usize, const INLINE: usize> fmt::Debug for Bounded<T, CAP, INLINE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mpsc::Bounded<{}, {CAP}>", std::any::type_name::<T>())
    }
}

impl<T, const INLINE: usize> fmt::Debug for Unbounded<T, INLINE> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mpsc::Unbounded<{}>", std::any::type_name::<T>())
    }
}
