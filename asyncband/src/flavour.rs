//! What a channel is, at the type level, and the flavour types of the three
//! topologies, written once ([`flavours!`](crate::flavour::flavours)).
//!
//! A flavour type such as [`mpsc::Bounded<T, 64>`](crate::mpsc::Bounded) is
//! never instantiated; endpoints are generic over it, so each channel carries
//! only the claim and wake logic of its own flavour.

use asyncband_core::arity::Arity;
use asyncband_core::storage::Storage;
use asyncband_core::wait::{Park, Wait};

mod sealed {
    pub trait Sealed {}
}

pub(crate) use sealed::Sealed;

/// Every channel flavour, whatever its wait policy: payload, topology,
/// storage and [`Wait`]. Sealed: the flavours are the `Bounded` and
/// `Unbounded` types of [`spsc`](crate::spsc), [`mpsc`](crate::mpsc) and
/// [`mpmc`](crate::mpmc). Generic code over park flavours, the default,
/// names [`Flavour`]; this trait admits spin flavours too.
///
/// # Examples
///
/// ```
/// use asyncband::{AnyFlavour, mpsc, wait::Spin};
///
/// fn capacity_of<F: AnyFlavour>() -> Option<usize> {
///     F::CAPACITY
/// }
///
/// assert_eq!(capacity_of::<mpsc::Bounded<u64, 64, { usize::MAX }, Spin>>(), Some(64));
/// ```
pub trait AnyFlavour: Sealed + Sized {
    /// The payload.
    type Item;
    /// Producer arity: [`One`](crate::arity::One) or
    /// [`Many`](crate::arity::Many).
    type Senders: Arity;
    /// Consumer arity.
    type Receivers: Arity;
    /// How the channel waits: [`Park`](crate::wait::Park),
    /// [`Spin`](crate::wait::Spin) or [`Yield`](crate::wait::Yield).
    type Wait: Wait;
    /// The storage the channel is instantiated with.
    #[doc(hidden)]
    type Storage: Storage<
            Item = Self::Item,
            Senders = Self::Senders,
            Receivers = Self::Receivers,
            Wait = Self::Wait,
        >;
    /// The bound, or `None` when unbounded.
    const CAPACITY: Option<usize>;
}

/// A channel flavour that parks (`wait = park`, the default): every
/// operation, async ones included. Every [`AnyFlavour`] whose `Wait` is
/// [`Park`](crate::wait::Park) is one.
///
/// # Examples
///
/// ```
/// use asyncband::{Flavour, mpsc};
///
/// fn capacity_of<F: Flavour>() -> Option<usize> {
///     F::CAPACITY
/// }
///
/// assert_eq!(capacity_of::<mpsc::Bounded<u64, 64>>(), Some(64));
/// assert_eq!(capacity_of::<mpsc::Unbounded<u64>>(), None);
/// ```
pub trait Flavour: AnyFlavour<Wait = Park> {}

impl<F: AnyFlavour<Wait = Park>> Flavour for F {}

/// The flavour types, constructors and `Flavour` impls of one topology
/// module, written once for all three; the module names its `Sender` and
/// `Receiver` in scope.
macro_rules! flavours {
    ($topology:literal, $title:literal, $senders:ident, $receivers:ident) => {
        use std::marker::PhantomData;

        use asyncband_core::endpoint;
        use asyncband_core::list::List;
        use asyncband_core::ring::Ring;
        use asyncband_core::wait::{Park, Wait};

        use crate::check;
        use crate::flavour::{AnyFlavour, Sealed};

        #[doc = concat!("A bounded ", $title, " channel of `CAP` slots (a power of two, at")]
        /// most 2^20) holding `T`s of at most `INLINE` bytes, waiting by
        /// policy `W`.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use asyncband::", $topology, ";")]
        ///
        #[doc = concat!("let (mut tx, mut rx) = ", $topology, "::Bounded::<u8, 4>::channel();")]
        /// tx.try_send(1).unwrap();
        /// assert_eq!(rx.try_recv(), Ok(1));
        /// ```
        pub struct Bounded<T, const CAP: usize, const INLINE: usize = { usize::MAX }, W = Park>(
            PhantomData<fn(T) -> (T, W)>,
        );

        #[doc = concat!("An unbounded ", $title, " channel of `T`s of at most `INLINE` bytes,")]
        /// waiting by policy `W`.
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("use asyncband::", $topology, ";")]
        ///
        #[doc = concat!("let (mut tx, mut rx) = ", $topology, "::Unbounded::<u8>::channel();")]
        /// tx.try_send(1).unwrap();
        /// assert_eq!(rx.try_recv(), Ok(1));
        /// ```
        pub struct Unbounded<T, const INLINE: usize = { usize::MAX }, W = Park>(
            PhantomData<fn(T) -> (T, W)>,
        );

        impl<T, const CAP: usize, const INLINE: usize, W: Wait> Bounded<T, CAP, INLINE, W> {
            /// Creates the channel.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use asyncband::", $topology, ";")]
            ///
            #[doc = concat!("let (tx, rx) = ", $topology, "::Bounded::<String, 64>::channel();")]
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

        impl<T, const INLINE: usize, W: Wait> Unbounded<T, INLINE, W> {
            /// Creates the channel.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("use asyncband::", $topology, ";")]
            ///
            #[doc = concat!("let (tx, rx) = ", $topology, "::Unbounded::<String>::channel();")]
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

        #[doc = concat!("Creates a bounded ", $title, " channel of `CAP` slots; the same as")]
        /// [`Bounded::<T, CAP>::channel()`](Bounded::channel).
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::bounded::<u8, 2>();")]
        /// tx.try_send(1).unwrap();
        /// assert_eq!(rx.try_recv(), Ok(1));
        /// ```
        #[must_use]
        pub fn bounded<T, const CAP: usize>()
        -> (Sender<Bounded<T, CAP>>, Receiver<Bounded<T, CAP>>) {
            Bounded::channel()
        }

        #[doc = concat!("Creates an unbounded ", $title, " channel; the same as")]
        /// [`Unbounded::<T>::channel()`](Unbounded::channel).
        ///
        /// # Examples
        ///
        /// ```
        #[doc = concat!("let (mut tx, mut rx) = asyncband::", $topology, "::unbounded::<u8>();")]
        /// tx.try_send(1).unwrap();
        /// assert_eq!(rx.try_recv(), Ok(1));
        /// ```
        #[must_use]
        pub fn unbounded<T>() -> (Sender<Unbounded<T>>, Receiver<Unbounded<T>>) {
            Unbounded::channel()
        }

        impl<T, const CAP: usize, const INLINE: usize, W> Sealed for Bounded<T, CAP, INLINE, W> {}
        impl<T, const INLINE: usize, W> Sealed for Unbounded<T, INLINE, W> {}

        impl<T, const CAP: usize, const INLINE: usize, W: Wait> AnyFlavour
            for Bounded<T, CAP, INLINE, W>
        {
            type Item = T;
            type Senders = asyncband_core::arity::$senders;
            type Receivers = asyncband_core::arity::$receivers;
            type Wait = W;
            type Storage = Ring<T, CAP, Self::Senders, Self::Receivers, W>;
            const CAPACITY: Option<usize> = Some(CAP);
        }

        impl<T, const INLINE: usize, W: Wait> AnyFlavour for Unbounded<T, INLINE, W> {
            type Item = T;
            type Senders = asyncband_core::arity::$senders;
            type Receivers = asyncband_core::arity::$receivers;
            type Wait = W;
            type Storage = List<T, Self::Senders, Self::Receivers, W>;
            const CAPACITY: Option<usize> = None;
        }

        impl<T, const CAP: usize, const INLINE: usize, W: Wait> std::fmt::Debug
            for Bounded<T, CAP, INLINE, W>
        {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}::Bounded<{}, {CAP}>", $topology, std::any::type_name::<T>())
            }
        }

        impl<T, const INLINE: usize, W: Wait> std::fmt::Debug for Unbounded<T, INLINE, W> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}::Unbounded<{}>", $topology, std::any::type_name::<T>())
            }
        }
    };
}

pub(crate) use flavours;
