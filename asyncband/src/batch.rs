//! Moving several values in one call.

use asyncband_core::chan::Chan;
use asyncband_core::future::Reserve;
use asyncband_core::storage::Storage;

use std::task::Poll;

use crate::error::{RecvError, SendError, TrySendError};

/// Appends up to `limit` ready values to `buf`; returns how many.
///
/// # Safety
///
/// The consumer-side contract of [`Chan`]: on a single-consumer channel the
/// caller holds the receiver exclusively.
pub(crate) unsafe fn drain_into<S: Storage>(
    chan: &Chan<S>,
    buf: &mut Vec<S::Item>,
    limit: usize,
) -> usize {
    let mut taken = 0;
    while taken < limit {
        // SAFETY: forwarded from the caller.
        match unsafe { chan.try_recv() } {
            Ok(value) => {
                buf.push(value);
                taken += 1;
            }
            Err(_) => break,
        }
    }
    taken
}

/// The rest of a `poll_recv_many`: after `first` (a receive's poll), moves
/// its value to `buf` and appends what `drain` takes; `Ready(0)` when the
/// channel is closed and drained.
pub(crate) fn then_drain<T>(
    first: Poll<Result<T, RecvError>>,
    buf: &mut Vec<T>,
    drain: impl FnOnce(&mut Vec<T>) -> usize,
) -> Poll<usize> {
    match first {
        Poll::Pending => Poll::Pending,
        Poll::Ready(Err(RecvError)) => Poll::Ready(0),
        Poll::Ready(Ok(value)) => {
            buf.push(value);
            Poll::Ready(1 + drain(buf))
        }
    }
}

/// How many units a batch asks for at most in one step.
const BATCH: usize = 64;

/// Units of capacity a batch holds while it pulls values from the caller's
/// iterator: whatever is not used, also when `Iterator::next` unwinds, goes
/// back to the channel when the guard drops.
struct Held<'a, S: Storage> {
    chan: &'a Chan<S>,
    units: usize,
}

impl<S: Storage> Held<'_, S> {
    /// Pushes `value` through one of the held units.
    ///
    /// # Safety
    ///
    /// The producer-side contract of [`Chan`] (see [`send_from`]).
    unsafe fn push(&mut self, value: S::Item) -> Result<(), SendError<S::Item>> {
        debug_assert!(self.units > 0, "a push needs a held unit");
        self.units -= 1;
        // SAFETY: the unit taken from `units` just above is held (the guard
        // is made only with units its maker reserved); the producer-side
        // contract is the caller's.
        unsafe { self.chan.push_reserved(value) }
    }
}

impl<S: Storage> Drop for Held<'_, S> {
    fn drop(&mut self) {
        // SAFETY: `units` counts units reserved for this guard and not yet
        // consumed by `push`.
        unsafe { self.chan.return_units(self.units) };
    }
}

/// Sends values from `values` while capacity allows, reserving the
/// capacity for up to [`BATCH`] of them in one step and pulling a value from
/// the iterator only once its slot is reserved, so none is lost. Returns how
/// many were sent and whether the iterator ran dry; an error holds the value
/// in hand when the channel turned out to be closed. If the iterator
/// panics, the units reserved for the values it did not yield go back.
///
/// # Safety
///
/// The producer-side contract of [`Chan`]: on a single-producer channel the
/// caller holds the sender exclusively.
pub(crate) unsafe fn send_from<S: Storage>(
    chan: &Chan<S>,
    values: &mut impl Iterator<Item = S::Item>,
) -> Result<(usize, bool), SendError<S::Item>> {
    let cap = S::CAPACITY.unwrap_or(usize::MAX);
    let mut sent = 0;
    loop {
        let mut want = values.size_hint().0.clamp(1, BATCH.min(cap));
        let units = loop {
            // SAFETY: forwarded from the caller.
            match unsafe { chan.try_reserve(want) } {
                Ok(()) => break want,
                Err(TrySendError::Full(())) if want > 1 => want /= 2,
                Err(TrySendError::Full(())) => return Ok((sent, false)),
                Err(TrySendError::Disconnected(())) => {
                    return match values.next() {
                        Some(value) => Err(SendError(value)),
                        None => Ok((sent, true)),
                    };
                }
            }
        };
        let mut held = Held { chan, units };
        while held.units > 0 {
            let Some(value) = values.next() else {
                return Ok((sent, true));
            };
            // SAFETY: forwarded from the caller (pushes through units may
            // race with each other).
            unsafe { held.push(value) }?;
            sent += 1;
        }
    }
}

/// Sends every value of `values`: batches through [`send_from`] while there
/// is room, and, when full, waits in line for one slot, fills it and carries
/// on. The future of both endpoints' `send_many`.
///
/// # Safety
///
/// As for [`send_from`], for as long as the future lives.
pub(crate) async unsafe fn send_all<S: Storage>(
    chan: &Chan<S>,
    values: &mut impl Iterator<Item = S::Item>,
) -> Result<usize, SendError<S::Item>> {
    let mut sent = 0;
    loop {
        // SAFETY: the producer-side contract, from the caller.
        let (batch, done) = unsafe { send_from(chan, values) }?;
        sent += batch;
        if done {
            return Ok(sent);
        }
        // SAFETY: as above.
        let reserve = unsafe { Reserve::new(chan, 1) };
        if reserve.await.is_err() {
            return match values.next() {
                Some(value) => Err(SendError(value)),
                None => Ok(sent),
            };
        }
        // The reservation above granted one unit.
        let mut held = Held { chan, units: 1 };
        let Some(value) = values.next() else {
            return Ok(sent);
        };
        // SAFETY: as above.
        unsafe { held.push(value) }?;
        sent += 1;
    }
}
