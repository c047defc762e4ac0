//! Capacity held ahead of a send: [`Units`] and the single [`Unit`], and
//! the futures that wait for them, [`ReserveUnits`] and [`ReserveUnit`].
//!
//! A unit is one slot's worth of a bounded channel's capacity, taken out of
//! the free pool (see [`Capacity`](crate::storage::Capacity)). Only the
//! endpoint types make `Units`, from capacity they just reserved, so a
//! `Units` value is the proof that its units are held: sending through one
//! consumes it, dropping the rest gives them back. Nothing else can return
//! capacity, so no safe call can free a unit nobody holds (which would let
//! a producer overwrite a queued value).

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::chan::Chan;
use crate::error::SendError;
use crate::future::Reserve;
use crate::storage::Storage;

/// `n` units of capacity of one channel, held by the caller until each is
/// sent through or the rest are dropped.
///
/// `H` is how the units reach their channel: a shared reference borrowed
/// from the producer that reserved them, which keeps that producer's side
/// to pushes through units while they live.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 4, Many, One>>();
/// let tx = tx.into_shared();
/// let mut units = tx.by_ref().try_reserve(3).unwrap();
/// units.send(1).unwrap();
/// drop(units); // the other two go back
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// assert_eq!(tx.by_ref().try_reserve(4).map(|units| units.len()), Ok(4));
/// ```
pub struct Units<S: Storage, H: Deref<Target = Chan<S>>> {
    chan: H,
    /// # Safety
    ///
    /// The holder of this value holds exactly `n` units of `chan`, and the
    /// producer-side contract for pushes through units (no producer-side
    /// call other than another push through a unit runs at the same time)
    /// holds while it lives: `H` is borrowed from the producer's right.
    n: usize,
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Units<S, H> {
    /// `n` units the caller holds.
    ///
    /// # Safety
    ///
    /// The caller holds `n` units of `*chan` and gives them to the value;
    /// the producer-side contract for pushes through units holds for as
    /// long as it lives (see the field `n`).
    #[inline]
    pub(crate) unsafe fn new(chan: H, n: usize) -> Self {
        Self { chan, n }
    }

    /// How many units are held.
    #[must_use]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether every unit has been used.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The channel the units belong to.
    pub fn chan(&self) -> &Chan<S> {
        &self.chan
    }

    /// Sends `value` through one held unit, which is consumed either way.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the channel is closed; the unit goes back to
    /// the pool.
    ///
    /// # Panics
    ///
    /// If no unit is left.
    #[inline]
    pub fn send(&mut self, value: S::Item) -> Result<(), SendError<S::Item>> {
        assert!(self.n > 0, "a send through `Units` with none left");
        self.n -= 1;
        // SAFETY: the unit counted off just above is held (field `n`), and so
        // is the contract for pushes through units.
        unsafe { self.chan.push_reserved(value) }
    }

    /// Splits off `n` of the held units into a value of their own.
    ///
    /// # Panics
    ///
    /// If fewer than `n` are held.
    #[must_use = "dropping the split-off units gives them back at once"]
    pub fn split(&mut self, n: usize) -> Self
    where
        H: Clone,
    {
        assert!(n <= self.n, "split {n} units off {} held", self.n);
        self.n -= n;
        // SAFETY: the `n` units move from `self` to the new value, with the
        // same handle and so the same contract.
        unsafe { Self::new(self.chan.clone(), n) }
    }
}

impl<'a, S: Storage> Units<S, &'a Chan<S>> {
    /// Takes one of the held units out as a [`Unit`] of its own, or `None`
    /// when none is left.
    #[inline]
    pub fn take_one(&mut self) -> Option<Unit<'a, S>> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        // SAFETY: the unit counted off just above moves to the new value,
        // with the same borrowed right and so the same contract.
        Some(unsafe { Unit::new(self.chan) })
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> Drop for Units<S, H> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the `n` units left are held (field `n`) and given up here.
        unsafe { self.chan.return_units(self.n) };
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>>> fmt::Debug for Units<S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Units")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

/// One unit of capacity of one channel, held by the caller until a value is
/// sent through it or it is dropped: [`Units`] with a count of one that
/// need not be kept, so sending and dropping check nothing.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 1, Many, One>>();
/// let tx = tx.into_shared();
/// let unit = tx.by_ref().try_reserve_one().unwrap();
/// assert!(tx.by_ref().try_reserve_one().is_err(), "the one slot is held");
/// unit.send(7).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(7));
/// ```
pub struct Unit<'a, S: Storage> {
    /// # Safety
    ///
    /// The holder of this value holds one unit of `chan`, under the
    /// producer-side contract for pushes through units, as for [`Units`].
    chan: &'a Chan<S>,
}

impl<'a, S: Storage> Unit<'a, S> {
    /// One unit the caller holds.
    ///
    /// # Safety
    ///
    /// As for [`Units::new`] with `n == 1`.
    #[inline]
    pub(crate) unsafe fn new(chan: &'a Chan<S>) -> Self {
        Self { chan }
    }

    /// The channel the unit belongs to.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.chan
    }

    /// Sends `value` through the unit, which is consumed either way.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the channel is closed; the unit goes back to
    /// the pool.
    #[inline]
    pub fn send(self, value: S::Item) -> Result<(), SendError<S::Item>> {
        let chan = self.chan;
        // The push below uses the unit up: it must not be given back again.
        std::mem::forget(self);
        // SAFETY: the unit of the value just forgotten is held (field
        // `chan`), and so is the contract for pushes through units.
        unsafe { chan.push_reserved(value) }
    }
}

impl<S: Storage> Drop for Unit<'_, S> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the unit is held (field `chan`) and given up here.
        unsafe { self.chan.return_units(1) };
    }
}

impl<S: Storage> fmt::Debug for Unit<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unit").finish_non_exhaustive()
    }
}

/// Waits in line for one unit; resolves to the [`Unit`] once it is held.
/// Made by [`ProducerRef::reserve_one`](crate::endpoint::ProducerRef::reserve_one).
///
/// # Cancel safety
///
/// Dropping it before it completes gives back the unit if it was granted,
/// passing it to the next waiting sender.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 2, Many, One>>();
/// let tx = tx.into_shared();
/// let unit = futures::executor::block_on(tx.by_ref().reserve_one()).unwrap();
/// unit.send(3).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(3));
/// ```
pub struct ReserveUnit<'a, S: Storage> {
    inner: Reserve<S, &'a Chan<S>>,
}

impl<'a, S: Storage> ReserveUnit<'a, S> {
    /// A future that reserves one unit of `chan`.
    ///
    /// # Safety
    ///
    /// As for [`Reserve::new`], and for the [`Unit`] it resolves to.
    #[inline]
    pub(crate) unsafe fn new(chan: &'a Chan<S>) -> Self {
        Self {
            // SAFETY: forwarded from the caller; one unit is in range.
            inner: unsafe { Reserve::new(chan, 1) },
        }
    }
}

impl<'a, S: Storage> Future for ReserveUnit<'a, S> {
    type Output = Result<Unit<'a, S>, SendError<()>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out.
        let mut inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        std::task::ready!(inner.as_mut().poll(cx))?;
        let (chan, _) = inner.parts();
        // SAFETY: the reservation of one unit just completed: it is held,
        // under the contract `new` was made with.
        Poll::Ready(Ok(unsafe { Unit::new(chan) }))
    }
}

impl<S: Storage> fmt::Debug for ReserveUnit<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReserveUnit")
            .field("inner", &self.inner)
            .finish()
    }
}

/// Waits in line for `n` units; resolves to the [`Units`] once they are
/// held. Made by [`ProducerRef::reserve`](crate::endpoint::ProducerRef::reserve).
///
/// # Cancel safety
///
/// Dropping it before it completes gives back every unit it was granted,
/// passing them to the next waiting sender.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, _rx) = endpoint::channel::<Ring<u8, 2, Many, One>>();
/// let tx = tx.into_shared();
/// let units = futures::executor::block_on(tx.by_ref().reserve(2)).unwrap();
/// assert_eq!(units.len(), 2);
/// ```
pub struct ReserveUnits<S: Storage, H: Deref<Target = Chan<S>> + Clone> {
    inner: Reserve<S, H>,
}

impl<S: Storage, H: Deref<Target = Chan<S>> + Clone> ReserveUnits<S, H> {
    /// A future that reserves `n` units (`1 <= n <= CAP`) of `chan`.
    ///
    /// # Safety
    ///
    /// As for [`Reserve::new`], and for the [`Units`] it resolves to.
    #[inline]
    pub(crate) unsafe fn new(chan: H, n: usize) -> Self {
        Self {
            // SAFETY: forwarded from the caller.
            inner: unsafe { Reserve::new(chan, n) },
        }
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>> + Clone> Future for ReserveUnits<S, H> {
    type Output = Result<Units<S, H>, SendError<()>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out.
        let mut inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        std::task::ready!(inner.as_mut().poll(cx))?;
        let (chan, n) = inner.parts();
        // SAFETY: the reservation just completed: its `n` units are held,
        // under the contract `new` was made with.
        Poll::Ready(Ok(unsafe { Units::new(chan.clone(), n) }))
    }
}

impl<S: Storage, H: Deref<Target = Chan<S>> + Clone> fmt::Debug for ReserveUnits<S, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReserveUnits")
            .field("inner", &self.inner)
            .finish()
    }
}
