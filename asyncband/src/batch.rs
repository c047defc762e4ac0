//! Moving several values in one call.

use asyncband_core::chan::Chan;
use asyncband_core::future::Reserve;
use asyncband_core::storage::Storage;

use crate::error::{SendError, TrySendError};

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

/// How many units a batch asks for at most in one step.
const BATCH: usize = 64;

/// Sends values from `values` while capacity allows, reserving the
/// capacity for up to [`BATCH`] of them in one step and pulling a value from
/// the iterator only once its slot is reserved, so none is lost. Returns how
/// many were sent and whether the iterator ran dry; an error holds the value
/// in hand when the channel turned out to be closed.
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
        let mut used = 0;
        while used < units {
            let Some(value) = values.next() else {
                chan.return_units(units - used);
                return Ok((sent + used, true));
            };
            used += 1;
            // SAFETY: one of the reserved units is ours; the producer-side
            // contract is forwarded from the caller (and pushes through
            // units may race with each other).
            if let Err(SendError(value)) = unsafe { chan.push_reserved(value) } {
                chan.return_units(units - used);
                return Err(SendError(value));
            }
        }
        sent += used;
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
        let Some(value) = values.next() else {
            chan.return_units(1);
            return Ok(sent);
        };
        // SAFETY: the reservation above holds one unit; as above.
        unsafe { chan.push_reserved(value) }?;
        sent += 1;
    }
}
