//! Blocking operations: a thread waits on a channel by trying, backing off
//! (spin, yield: [`crate::park::Backoff`]), and then driving the channel's
//! own cancel-safe future to completion with a parking waker
//! ([`crate::park::block_on`]). Threads and tasks therefore share one wait
//! protocol; a timeout is the future's drop.
//!
//! The ready path of each operation is inlined into the caller's loop; the
//! waiting is out of line.

use std::pin::pin;
use std::time::Instant;

use crate::arity::Arity;
use crate::chan::Chan;
use crate::error::{
    RecvError, RecvTimeoutError, SendError, SendTimeoutError, TryRecvError, TrySendError,
};
use crate::future::{Recv, Reserve, Send as SendFuture};
use crate::park::{Backoff, block_on};
use crate::slot::is_large;
use crate::storage::Storage;

impl<S: Storage> Chan<S> {
    /// How a blocked sender waits before it parks: without the yield phase
    /// when many receivers share the channel, without the spin phase when
    /// many senders share one receiver, both phases with one sender (see
    /// [`crate::park`]).
    fn sender_backoff() -> Backoff {
        if <S::Receivers as Arity>::MANY {
            Backoff::without_yields()
        } else if <S::Senders as Arity>::MANY {
            Backoff::yields_only()
        } else {
            Backoff::new()
        }
    }

    /// Sends `value`, parking the thread while the channel is full, until
    /// `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// Hands `value` back in [`SendTimeoutError::Timeout`] when `deadline`
    /// passes before capacity is free, and in
    /// [`SendTimeoutError::Disconnected`] when the channel is closed.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::try_send_unchecked`: a ready path, a call per message out of line"
    )]
    pub unsafe fn send_blocking(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        // The ready path, inline in the caller's loop; waiting is out of line.
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_send_unchecked(cursor, value) } {
            Ok(()) => Ok(()),
            Err(TrySendError::Disconnected(value)) => Err(SendTimeoutError::Disconnected(value)),
            // SAFETY: forwarded from the caller.
            Err(TrySendError::Full(value)) if is_large::<S::Item>() => unsafe {
                self.send_blocking_reserving(cursor, value, deadline)
            },
            // SAFETY: forwarded from the caller.
            Err(TrySendError::Full(value)) => unsafe {
                self.send_blocking_waiting(cursor, value, deadline)
            },
        }
    }

    /// [`Chan::send_blocking`] of a large value once the channel was full:
    /// waits as a reservation, then moves the value once into its slot.
    /// Waiting as a send future would carry the value through every frame
    /// of the wait, and a debug build keeps a copy of it per step: enough,
    /// for a value of tens of KiB, to overflow a thread's default stack. The
    /// reservation waits in the same line, spinning and parking the same
    /// way.
    ///
    /// # Safety
    ///
    /// As for [`Chan::send_blocking`].
    #[inline(never)]
    unsafe fn send_blocking_reserving(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        // SAFETY: forwarded from the caller.
        match unsafe { self.reserve_blocking(cursor, 1, deadline) } {
            // SAFETY: the unit just reserved; the producer contract is the
            // caller's.
            Ok(()) => unsafe { self.push_reserved(cursor, value) }
                .map_err(|SendError(value)| SendTimeoutError::Disconnected(value)),
            Err(SendTimeoutError::Timeout(())) => Err(SendTimeoutError::Timeout(value)),
            Err(SendTimeoutError::Disconnected(())) => Err(SendTimeoutError::Disconnected(value)),
        }
    }

    /// [`Chan::send_blocking`] once the channel was full: spins, yields,
    /// then waits as a future parked on.
    ///
    /// # Safety
    ///
    /// As for [`Chan::send_blocking`].
    #[inline(never)]
    unsafe fn send_blocking_waiting(
        &self,
        cursor: &mut S::ProducerCursor,
        value: S::Item,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<S::Item>> {
        let mut value = value;
        let mut backoff = Self::sender_backoff();
        // The caller has just tried: wait a little before each attempt, so
        // the attempts are those of one loop (and loom's models no longer).
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(SendTimeoutError::Timeout(value));
            }
            if !backoff.snooze() {
                break;
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_send_unchecked(cursor, value) } {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(v)) => {
                    return Err(SendTimeoutError::Disconnected(v));
                }
                Err(TrySendError::Full(v)) => value = v,
            }
        }
        drop(backoff);
        // SAFETY: forwarded from the caller; the future borrows `self` and
        // is driven to completion (or dropped) before we return.
        let mut future = pin!(unsafe { SendFuture::new(self, cursor, value) });
        match block_on(future.as_mut(), deadline, Self::sender_backoff) {
            Some(Ok(())) => Ok(()),
            Some(Err(SendError(value))) => Err(SendTimeoutError::Disconnected(value)),
            None => match future.take_value() {
                Some(value) => Err(SendTimeoutError::Timeout(value)),
                // Completed on its last poll after all: nothing to hand back.
                None => Ok(()),
            },
        }
    }

    /// Receives a value, parking the thread while the channel is empty,
    /// until `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// [`RecvTimeoutError::Timeout`] when `deadline` passes before a value
    /// arrives, and [`RecvTimeoutError::Disconnected`] when the channel is
    /// closed and every value sent before the close was received.
    ///
    /// # Safety
    ///
    /// Consumer contract of [`Chan`] for `cursor`.
    #[inline(always)]
    #[allow(
        clippy::inline_always,
        reason = "as `Chan::try_send_unchecked`: a ready path, a call per message out of line"
    )]
    pub unsafe fn recv_blocking(
        &self,
        cursor: &mut S::Cursor,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        // The ready path, inline in the caller's loop; waiting is out of line.
        // SAFETY: forwarded from the caller.
        match unsafe { self.try_recv(cursor) } {
            Ok(value) => Ok(value),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            // SAFETY: forwarded from the caller.
            Err(TryRecvError::Empty) => unsafe { self.recv_blocking_waiting(cursor, deadline) },
        }
    }

    /// [`Chan::recv_blocking`] once the channel was empty: spins (longer
    /// after short waits, or with yields on an oversubscribed machine:
    /// `ReceiveWaits::schedule`), then waits as a future parked on. Records
    /// how long the wait lasted for the next one.
    ///
    /// # Safety
    ///
    /// As for [`Chan::recv_blocking`].
    #[inline(never)]
    unsafe fn recv_blocking_waiting(
        &self,
        cursor: &mut S::Cursor,
        deadline: Option<Instant>,
    ) -> Result<S::Item, RecvTimeoutError> {
        let waits = self.receive_waits();
        let (schedule, spin_nanos) = waits.schedule(|| self.storage().head_position());
        // Timed, so that the next wait knows how long this one lasted.
        let mut backoff = schedule().lengthened(spin_nanos);
        // As in `send_blocking_waiting`: the caller has just tried.
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(RecvTimeoutError::Timeout);
            }
            if !backoff.snooze() {
                break;
            }
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_recv(cursor) } {
                Ok(value) => {
                    waits.record(backoff.began());
                    return Ok(value);
                }
                Err(TryRecvError::Disconnected) => return Err(RecvTimeoutError::Disconnected),
                Err(TryRecvError::Empty) => {}
            }
        }
        let began = backoff.began();
        drop(backoff);
        // SAFETY: forwarded from the caller.
        let future = pin!(unsafe { Recv::parked(self, cursor) });
        match block_on(future, deadline, schedule) {
            Some(Ok(value)) => {
                waits.record(began);
                Ok(value)
            }
            Some(Err(RecvError)) => Err(RecvTimeoutError::Disconnected),
            None => Err(RecvTimeoutError::Timeout),
        }
    }

    /// Reserves `n` units (`1 <= n <= CAP`), parking the thread while the
    /// channel is full, until `deadline` if there is one.
    ///
    /// # Errors
    ///
    /// [`SendTimeoutError::Timeout`] when `deadline` passes before `n` units
    /// are granted, and [`SendTimeoutError::Disconnected`] when the channel
    /// is closed.
    ///
    /// # Safety
    ///
    /// The producer contract of [`Chan`] for `cursor`.
    pub unsafe fn reserve_blocking(
        &self,
        cursor: &mut S::ProducerCursor,
        n: usize,
        deadline: Option<Instant>,
    ) -> Result<(), SendTimeoutError<()>> {
        let mut backoff = Self::sender_backoff();
        loop {
            // SAFETY: forwarded from the caller.
            match unsafe { self.try_reserve(cursor, n) } {
                Ok(()) => return Ok(()),
                Err(TrySendError::Disconnected(())) => {
                    return Err(SendTimeoutError::Disconnected(()));
                }
                Err(TrySendError::Full(())) => {}
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(SendTimeoutError::Timeout(()));
            }
            if !backoff.snooze() {
                break;
            }
        }
        drop(backoff);
        let mut reserve = pin!(Reserve::new(self, n));
        // SAFETY: the producer contract for `cursor`, forwarded from the
        // caller.
        let future = pin!(std::future::poll_fn(|cx| unsafe {
            reserve.as_mut().poll_with(cursor, cx)
        }));
        match block_on(future, deadline, Self::sender_backoff) {
            Some(Ok(())) => Ok(()),
            Some(Err(SendError(()))) => Err(SendTimeoutError::Disconnected(())),
            None => Err(SendTimeoutError::Timeout(())),
        }
    }
}
