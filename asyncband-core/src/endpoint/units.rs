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
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::arity::Arity;
use crate::chan::Chan;
use crate::error::SendError;
use crate::future::Reserve;
use crate::storage::{Storage, conjured_cursor};
use crate::sync::Turns;

/// How held units reach their channel and its producer's cursor: a copy
/// per value that holds units, all from one
/// [`ProducerRef`](super::ProducerRef) that the units consumed.
pub(crate) struct Pusher<'a, S: Storage> {
    chan: &'a Chan<S>,
    /// # Safety
    ///
    /// As in [`ProducerRef`](super::ProducerRef): `Some` exactly with a
    /// single producer, whose right the units took, so that no one else
    /// uses the cursor while they live; pushes through them take turns at
    /// it.
    turns: Option<&'a Turns<S::ProducerCursor>>,
}

impl<S: Storage> Clone for Pusher<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S: Storage> Copy for Pusher<'_, S> {}

impl<'a, S: Storage> Pusher<'a, S> {
    /// # Safety
    ///
    /// `turns` as for the field: `Some` with a single producer and `None`
    /// with many; no one but pushers made from these parts uses the cursor
    /// for `'a`.
    pub(crate) unsafe fn new(
        chan: &'a Chan<S>,
        turns: Option<&'a Turns<S::ProducerCursor>>,
    ) -> Self {
        Self { chan, turns }
    }

    /// The channel.
    pub(crate) fn chan(self) -> &'a Chan<S> {
        self.chan
    }

    /// The producer's cursor, for a caller that has it to itself.
    ///
    /// # Safety
    ///
    /// Nothing else uses the cursor while the reference lives: no other
    /// copy of this pusher acts, by `lend` or [`Pusher::with_turn`].
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "a reference conversion on every send's ready path"
    )]
    pub(crate) unsafe fn lend(self) -> &'a mut S::ProducerCursor {
        if <S::Senders as Arity>::MANY {
            // SAFETY: many producers: the cursor holds nothing.
            unsafe { conjured_cursor() }
        } else {
            // SAFETY: a single producer's pusher has its turns (field
            // `turns`), and the caller has the cursor to itself.
            unsafe { self.turns.unwrap_unchecked().lend() }
        }
    }

    /// Runs `f` with the producer's cursor, taking a turn at it.
    #[inline]
    pub(crate) fn with_turn<R>(self, f: impl FnOnce(&mut S::ProducerCursor) -> R) -> R {
        if <S::Senders as Arity>::MANY {
            // SAFETY: many producers: the cursor holds nothing.
            f(unsafe { conjured_cursor() })
        } else {
            // SAFETY: a single producer's pusher has its turns (field
            // `turns`).
            let turns = unsafe { self.turns.unwrap_unchecked() };
            f(&mut turns.take_turn())
        }
    }

    /// Pushes `value` through one held unit.
    ///
    /// # Safety
    ///
    /// The caller holds a unit and gives it up here.
    #[inline]
    unsafe fn push(self, value: S::Item) -> Result<(), SendError<S::Item>> {
        // SAFETY: the caller's unit, and the producer's cursor: a turn at a
        // single producer's, which only pushers use while they live; many
        // producers' holds nothing.
        let pushed = self.with_turn(|cursor| unsafe { self.chan.push_unit(cursor, value) });
        // After the turn: a waker may take its time.
        if pushed.is_ok() {
            self.chan.notify_receivers();
        }
        pushed
    }
}

/// `n` units of capacity of one channel, held by the caller until each is
/// sent through or the rest are dropped.
///
/// They took the right of the producer that reserved them for `'a`: no
/// other producer-side operation runs while they live, except pushes
/// through units, which may run on several threads at once (units are
/// `Send`) and take turns at a single producer's cursor.
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
pub struct Units<'a, S: Storage> {
    pusher: Pusher<'a, S>,
    /// # Safety
    ///
    /// The holder of this value holds exactly `n` units of the channel.
    n: usize,
}

impl<'a, S: Storage> Units<'a, S> {
    /// `n` units the caller holds.
    ///
    /// # Safety
    ///
    /// The caller holds `n` units of the pusher's channel and gives them to
    /// the value.
    #[inline]
    pub(crate) unsafe fn new(pusher: Pusher<'a, S>, n: usize) -> Self {
        Self { pusher, n }
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
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.pusher.chan
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
        // SAFETY: the unit counted off just above is held (field `n`).
        unsafe { self.pusher.push(value) }
    }

    /// Splits off `n` of the held units into a value of their own.
    ///
    /// # Panics
    ///
    /// If fewer than `n` are held.
    #[must_use = "dropping the split-off units gives them back at once"]
    pub fn split(&mut self, n: usize) -> Self {
        assert!(n <= self.n, "split {n} units off {} held", self.n);
        self.n -= n;
        // SAFETY: the `n` units move from `self` to the new value, with the
        // same pusher.
        unsafe { Self::new(self.pusher, n) }
    }

    /// Takes one of the held units out as a [`Unit`] of its own, or `None`
    /// when none is left.
    #[inline]
    pub fn take_one(&mut self) -> Option<Unit<'a, S>> {
        if self.n == 0 {
            return None;
        }
        self.n -= 1;
        // SAFETY: the unit counted off just above moves to the new value,
        // with the same pusher.
        Some(unsafe { Unit::new(self.pusher) })
    }
}

impl<S: Storage> Drop for Units<'_, S> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the `n` units left are held (field `n`) and given up here.
        unsafe { self.pusher.chan.return_units(self.n) };
    }
}

impl<S: Storage> fmt::Debug for Units<'_, S> {
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
    /// The holder of this value holds one unit of the pusher's channel.
    pusher: Pusher<'a, S>,
}

impl<'a, S: Storage> Unit<'a, S> {
    /// One unit the caller holds.
    ///
    /// # Safety
    ///
    /// As for [`Units::new`] with `n == 1`.
    #[inline]
    pub(crate) unsafe fn new(pusher: Pusher<'a, S>) -> Self {
        Self { pusher }
    }

    /// The channel the unit belongs to.
    #[must_use]
    pub fn chan(&self) -> &'a Chan<S> {
        self.pusher.chan
    }

    /// Sends `value` through the unit, which is consumed either way.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the channel is closed; the unit goes back to
    /// the pool.
    #[inline]
    pub fn send(self, value: S::Item) -> Result<(), SendError<S::Item>> {
        let pusher = self.pusher;
        // The push below uses the unit up: it must not be given back again.
        std::mem::forget(self);
        // SAFETY: the unit of the value just forgotten is held (field
        // `pusher`).
        unsafe { pusher.push(value) }
    }
}

impl<S: Storage> Drop for Unit<'_, S> {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: the unit is held (field `pusher`) and given up here.
        unsafe { self.pusher.chan.return_units(1) };
    }
}

impl<S: Storage> fmt::Debug for Unit<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unit").finish_non_exhaustive()
    }
}

/// A reservation and the producer's right it polls with, as a pusher.
/// Polled again after it completed, it reserves again, for units of their
/// own.
struct Reserving<'a, S: Storage> {
    inner: Reserve<S, &'a Chan<S>>,
    /// # Safety
    ///
    /// Made from a producer's right that the reservation took for `'a`: it
    /// has the cursor to itself until it makes units (`lent`).
    pusher: Pusher<'a, S>,
    /// Units were made: pushes through them may run on other threads now,
    /// so the reservation takes turns at the cursor with them.
    lent: bool,
}

impl<'a, S: Storage> Reserving<'a, S> {
    /// # Safety
    ///
    /// `pusher` was made from a producer's right that the reservation takes
    /// for `'a` (field `pusher`).
    unsafe fn new(pusher: Pusher<'a, S>, n: usize) -> Self {
        Self {
            inner: Reserve::new(pusher.chan(), n),
            pusher,
            lent: false,
        }
    }

    /// Polls the reservation; once it is granted, the pusher its units use.
    fn poll(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Pusher<'a, S>, SendError<()>>> {
        // SAFETY: `inner` is structurally pinned: never moved out of `self`;
        // the other fields are not pinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: pinned as above.
        let inner = unsafe { Pin::new_unchecked(&mut this.inner) };
        let poll = |cursor: &mut S::ProducerCursor| {
            // SAFETY: the producer's cursor, for this poll: the right's own
            // until it lent units, a turn at it since.
            unsafe { inner.poll_with(cursor, cx) }
        };
        let result = std::task::ready!(if this.lent {
            this.pusher.with_turn(poll)
        } else {
            // SAFETY: no units were made yet, so the reservation has the
            // cursor to itself (field `pusher`).
            poll(unsafe { this.pusher.lend() })
        });
        if result.is_err() {
            return Poll::Ready(Err(SendError(())));
        }
        // The units made here push through turns, as this reservation does
        // from now on.
        this.lent = true;
        Poll::Ready(Ok(this.pusher))
    }
}

impl<S: Storage> fmt::Debug for Reserving<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
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
/// Polled again after it completed, it reserves another unit.
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
    inner: Reserving<'a, S>,
}

impl<'a, S: Storage> ReserveUnit<'a, S> {
    /// A future that reserves one unit with `pusher`.
    ///
    /// # Safety
    ///
    /// `pusher` was made from a producer's right that the future takes for
    /// `'a`.
    #[inline]
    pub(crate) unsafe fn new(pusher: Pusher<'a, S>) -> Self {
        Self {
            // SAFETY: the caller's contract.
            inner: unsafe { Reserving::new(pusher, 1) },
        }
    }
}

impl<'a, S: Storage> Future for ReserveUnit<'a, S> {
    type Output = Result<Unit<'a, S>, SendError<()>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out.
        let inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        let pusher = std::task::ready!(inner.poll(cx))?;
        // SAFETY: the reservation of one unit just completed: it is held.
        Poll::Ready(Ok(unsafe { Unit::new(pusher) }))
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
/// Polled again after it completed, it reserves `n` more units.
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
pub struct ReserveUnits<'a, S: Storage> {
    inner: Reserving<'a, S>,
}

impl<'a, S: Storage> ReserveUnits<'a, S> {
    /// A future that reserves `n` units (`1 <= n <= CAP`) with `pusher`.
    ///
    /// # Safety
    ///
    /// As for [`ReserveUnit::new`].
    #[inline]
    pub(crate) unsafe fn new(pusher: Pusher<'a, S>, n: usize) -> Self {
        Self {
            // SAFETY: the caller's contract.
            inner: unsafe { Reserving::new(pusher, n) },
        }
    }
}

impl<'a, S: Storage> Future for ReserveUnits<'a, S> {
    type Output = Result<Units<'a, S>, SendError<()>>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `inner` is structurally pinned: it is never moved out.
        let inner = unsafe { self.map_unchecked_mut(|this| &mut this.inner) };
        let n = inner.inner.units();
        let pusher = std::task::ready!(inner.poll(cx))?;
        // SAFETY: the reservation just completed: its `n` units are held.
        Poll::Ready(Ok(unsafe { Units::new(pusher, n) }))
    }
}

impl<S: Storage> fmt::Debug for ReserveUnits<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReserveUnits")
            .field("inner", &self.inner)
            .finish()
    }
}
