//! Capacity held ahead of a send ([`Capacity`](crate::storage::Capacity)):
//! [`Units`], generic over their [`Holder`] (a [`Pusher`] borrowed from a
//! producer's right, or an owned [`Producer`]), and [`Reserve`], the future
//! that waits in line for them. Only this module makes `Units`, from
//! capacity just reserved, and nothing else returns capacity.

use std::fmt;
use std::future::Future;
use std::marker::PhantomPinned;
use std::mem::ManuallyDrop;
use std::pin::Pin;
use std::task::{Context, Poll};

use super::{Producer, conjured, sealed};
use crate::arity::Many;
use crate::chan::{Chan, TxNode};
use crate::error::{SendError, TrySendError};
use crate::storage::{Storage, Turns};

/// What held [`Units`] push through: a [`Pusher`] (borrowed from a
/// producer's right) or a [`Producer`] of many that the units own. Sealed.
pub trait Holder: sealed::Sealed + Sized {
    /// The channel's storage.
    type Storage: Storage;

    /// The channel.
    fn chan(&self) -> &Chan<Self::Storage>;

    /// Pushes `value` through one held unit.
    ///
    /// # Safety
    ///
    /// The caller holds a unit of this channel and gives it up here.
    #[doc(hidden)]
    unsafe fn push(
        &self,
        value: <Self::Storage as Storage>::Item,
    ) -> Result<(), SendError<<Self::Storage as Storage>::Item>>;

    /// The holder for units granted to a reservation holding it in `slot`.
    #[doc(hidden)]
    fn for_units(slot: &mut Option<Self>) -> Self;
}

/// How held units reach their channel and its producer's cursor: a copy per
/// value that holds units, all from one producer's right that they took.
pub struct Pusher<'a, S: Storage> {
    chan: &'a Chan<S>,
    /// # Safety
    ///
    /// `Some` exactly with a single producer, whose right the units took:
    /// only pushes through them, taking turns, use the cursor for `'a`.
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
    /// `turns` as for the field.
    pub(super) unsafe fn new(
        chan: &'a Chan<S>,
        turns: Option<&'a Turns<S::ProducerCursor>>,
    ) -> Self {
        Self { chan, turns }
    }
}

opaque_debug!(impl[S: Storage] Pusher<'_, S>);

impl<S: Storage> sealed::Sealed for Pusher<'_, S> {}

impl<S: Storage> Holder for Pusher<'_, S> {
    type Storage = S;

    fn chan(&self) -> &Chan<S> {
        self.chan
    }

    #[inline]
    unsafe fn push(&self, value: S::Item) -> Result<(), SendError<S::Item>> {
        // SAFETY: the caller's unit; a turn at a single producer's cursor
        // (field `turns`), or many producers' empty one.
        let pushed = unsafe {
            if <S::Senders as crate::arity::Arity>::MANY {
                self.chan.push_unit(conjured(), value)
            } else {
                self.turns
                    .unwrap_unchecked()
                    .with_turn(|cursor| self.chan.push_unit(cursor, value))
            }
        };
        // After the turn: a waker may take its time.
        if pushed.is_ok() {
            self.chan.pushed_unit();
        }
        pushed
    }

    fn for_units(slot: &mut Option<Self>) -> Self {
        slot.expect("a reservation keeps its pusher")
    }
}

impl<S: Storage<Senders = Many>> Holder for Producer<S> {
    type Storage = S;

    fn chan(&self) -> &Chan<S> {
        &self.chan
    }

    #[inline]
    unsafe fn push(&self, value: S::Item) -> Result<(), SendError<S::Item>> {
        // SAFETY: the caller's unit; many producers have no cursor to lend.
        unsafe { Pusher::new(&self.chan, None).push(value) }
    }

    fn for_units(slot: &mut Option<Self>) -> Self {
        slot.take()
            .expect("a reservation that owns its producer completes once")
    }
}

/// `n` units of capacity of one channel, held until each is sent through
/// or the rest are dropped. They keep their [`Holder`]: the producer's
/// right they took (only pushes through units, taking turns, use it while
/// they live), or an owned producer, handed back by [`Units::into_holder`].
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 4, Many, One>>();
/// let mut units = tx.shared().try_reserve(3).unwrap();
/// units.send(1).unwrap();
/// drop(units); // the other two go back
/// assert_eq!(rx.by_ref().try_recv(), Ok(1));
/// assert_eq!(tx.shared().try_reserve(4).map(|units| units.len()), Ok(4));
///
/// // Units that own their producer, for another thread.
/// let mut owned = tx.try_reserve_owned().unwrap();
/// let tx = std::thread::spawn(move || {
///     owned.send(2).unwrap();
///     owned.into_holder()
/// })
/// .join()
/// .unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(2));
/// assert_eq!(tx.chan().sender_count(), 1);
/// ```
pub struct Units<H: Holder> {
    holder: H,
    /// # Safety
    ///
    /// The holder of this value holds exactly `n` units of the channel.
    n: usize,
}

impl<H: Holder> Units<H> {
    /// `n` units the caller holds.
    ///
    /// # Safety
    ///
    /// The caller holds `n` units of the holder's channel, given to the value.
    #[inline]
    pub(super) unsafe fn new(holder: H, n: usize) -> Self {
        Self { holder, n }
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
    pub fn chan(&self) -> &Chan<H::Storage> {
        self.holder.chan()
    }

    /// Sends `value` through one held unit, which is used up either way.
    ///
    /// # Errors
    ///
    /// Hands `value` back when the channel is closed (the unit goes back).
    ///
    /// # Panics
    ///
    /// If no unit is left.
    #[inline]
    pub fn send(
        &mut self,
        value: <H::Storage as Storage>::Item,
    ) -> Result<(), SendError<<H::Storage as Storage>::Item>> {
        assert!(self.n > 0, "a send through `Units` with none left");
        self.n -= 1;
        // SAFETY: the unit counted off just above is held (field `n`).
        unsafe { self.holder.push(value) }
    }

    /// Gives back the units left and hands the holder back.
    #[must_use = "the holder is handed back; drop the units instead if it is not needed"]
    pub fn into_holder(self) -> H {
        let mut this = ManuallyDrop::new(self);
        // Counted off first: a waker that unwinds out of the grant below
        // returns nothing twice (the holder is then leaked).
        let n = std::mem::take(&mut this.n);
        // SAFETY: the `n` units left are held (field `n`) and given up here.
        unsafe { this.holder.chan().return_units(n) };
        // SAFETY: `this` is never used or dropped again: the holder moves once.
        unsafe { std::ptr::read(&raw const this.holder) }
    }
}

impl<H: Holder + Copy> Units<H> {
    /// Splits off `n` of the held units into a value of their own.
    ///
    /// # Panics
    ///
    /// If fewer than `n` are held.
    #[must_use = "dropping the split-off units gives them back at once"]
    pub fn split(&mut self, n: usize) -> Self {
        assert!(n <= self.n, "split {n} units off {} held", self.n);
        self.n -= n;
        // SAFETY: the `n` units move to the new value, with a copy of the holder.
        unsafe { Self::new(self.holder, n) }
    }
}

impl<H: Holder> Drop for Units<H> {
    #[inline]
    fn drop(&mut self) {
        if self.n > 0 {
            // SAFETY: the `n` units left are held (field `n`), given up here.
            unsafe { self.holder.chan().return_units(self.n) };
        }
    }
}

impl<H: Holder> fmt::Debug for Units<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Units")
            .field("n", &self.n)
            .finish_non_exhaustive()
    }
}

impl<S: Storage<Senders = Many>> Producer<S> {
    /// One unit of capacity now, held by units that own this producer.
    ///
    /// # Errors
    ///
    /// Hands the producer back in [`TrySendError::Full`] (no unit free, or
    /// senders queued ahead) or [`TrySendError::Disconnected`] (closed).
    pub fn try_reserve_owned(self) -> Result<Units<Self>, TrySendError<Self>> {
        // SAFETY: this producer acts as one; the unit goes to the value.
        match unsafe { self.chan.try_reserve(1) } {
            // SAFETY: the unit just reserved goes to the value.
            Ok(()) => Ok(unsafe { Units::new(self, 1) }),
            Err(TrySendError::Full(())) => Err(TrySendError::Full(self)),
            Err(TrySendError::Disconnected(())) => Err(TrySendError::Disconnected(self)),
        }
    }

    /// Waits in line for one unit, held by units that own this producer.
    #[must_use = "futures do nothing unless polled"]
    pub fn reserve_owned(self) -> Reserve<Self> {
        Reserve::new(self, 1)
    }
}

/// Waits in line for `n` units; resolves to the [`Units`], with the
/// reservation's [`Holder`]. One with a borrowed right, polled again after
/// it completed, reserves `n` more; one that owns its producer hands it
/// back in the error when the channel is closed.
///
/// # Cancel safety
///
/// Dropping it before it completes gives back every unit it was granted,
/// in full or in part, to the next waiting sender.
///
/// # Examples
///
/// ```
/// use asyncband_core::arity::{Many, One};
/// use asyncband_core::endpoint;
/// use asyncband_core::ring::Ring;
///
/// let (tx, mut rx) = endpoint::channel::<Ring<u8, 2, Many, One>>();
/// let mut units = futures::executor::block_on(tx.shared().reserve(2)).unwrap();
/// assert_eq!(units.len(), 2);
/// units.send(3).unwrap();
/// assert_eq!(rx.by_ref().try_recv(), Ok(3));
/// ```
pub struct Reserve<H: Holder> {
    /// `None` once an owned holder went to its units.
    holder: Option<H>,
    n: usize,
    node: TxNode<H::Storage>,
    registered: bool,
    _pinned: PhantomPinned,
}

impl<H: Holder> Reserve<H> {
    /// A reservation of `n` units for `holder`; panics unless `1 <= n <= CAP`.
    pub(super) fn new(holder: H, n: usize) -> Self {
        crate::chan::assert_reservable::<H::Storage>(n);
        Self {
            holder: Some(holder),
            n,
            node: TxNode::<H::Storage>::default(),
            registered: false,
            _pinned: PhantomPinned,
        }
    }
}

impl<H: Holder> Future for Reserve<H> {
    type Output = Result<Units<H>, SendError<H>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` is never moved out of the pinned reservation; the
        // other fields are not structurally pinned.
        let this = unsafe { self.get_unchecked_mut() };
        let chan = this
            .holder
            .as_ref()
            .expect("a reservation that owns its producer completes once")
            .chan();
        // SAFETY: the node is pinned with us and only used with the holder's
        // chan, which never changes; the units go to the result.
        let result = std::task::ready!(unsafe {
            chan.poll_reserve(
                Pin::new_unchecked(&this.node),
                &mut this.registered,
                this.n,
                cx,
            )
        });
        let holder = H::for_units(&mut this.holder);
        Poll::Ready(match result {
            // SAFETY: the reservation just took its `n` units.
            Ok(()) => Ok(unsafe { Units::new(holder, this.n) }),
            Err(SendError(())) => Err(SendError(holder)),
        })
    }
}

impl<H: Holder> Drop for Reserve<H> {
    fn drop(&mut self) {
        // With no holder left it completed, so it is not registered.
        if let Some(holder) = &self.holder {
            // SAFETY: dropped in place, so still pinned; only used with this chan.
            unsafe {
                holder
                    .chan()
                    .cancel_send(Pin::new_unchecked(&self.node), &mut self.registered);
            }
        }
    }
}

impl<H: Holder> fmt::Debug for Reserve<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reserve")
            .field("units", &self.n)
            .field("waiting", &self.registered)
            .finish_non_exhaustive()
    }
}
