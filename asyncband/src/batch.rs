//! Moving several values in one call.

use asyncband_core::endpoint::ProducerRef;
use asyncband_core::storage::Storage;

use crate::error::{SendError, TrySendError};

/// How many units a batch asks for at most in one step.
const BATCH: usize = 64;

/// Sends values from `values` while capacity allows, reserving up to
/// [`BATCH`] slots in one step and pulling a value only once its slot is
/// reserved. Returns how many were sent and whether the iterator ran dry
/// (`next` gave `None`, or `size_hint` an upper bound of 0); an error holds
/// the value in hand. If the iterator panics, the unfilled
/// [`Units`](asyncband_core::endpoint::Units) go back as the unwind drops them.
pub(crate) fn send_from<S: Storage>(
    mut tx: ProducerRef<'_, S>,
    values: &mut impl Iterator<Item = S::Item>,
) -> Result<(usize, bool), SendError<S::Item>> {
    let Some(cap) = S::CAPACITY else {
        return send_each(tx, values);
    };
    let mut sent = 0;
    loop {
        // An iterator that says it has nothing left is done without a
        // reservation, so a batch that exactly fills the free capacity
        // does not wait for room it will not use.
        let (at_least, at_most) = values.size_hint();
        if at_most == Some(0) {
            return Ok((sent, true));
        }
        let mut want = at_least.clamp(1, BATCH.min(cap));
        let mut units = loop {
            match tx.reborrow().try_reserve(want) {
                Ok(units) => break units,
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
        while !units.is_empty() {
            let Some(value) = values.next() else {
                return Ok((sent, true));
            };
            units.send(value)?;
            sent += 1;
        }
    }
}

/// [`send_from`] for unbounded storage, which refuses a push only once it
/// is closed: each value is pushed as soon as it is pulled, so nothing is
/// reserved ahead and a panicking iterator leaves nothing held. (Units
/// would cost a turn on the single producer's latch per value.)
fn send_each<S: Storage>(
    mut tx: ProducerRef<'_, S>,
    values: &mut impl Iterator<Item = S::Item>,
) -> Result<(usize, bool), SendError<S::Item>> {
    let mut sent = 0;
    for value in values {
        match tx.reborrow().try_send(value) {
            Ok(()) => sent += 1,
            Err(TrySendError::Disconnected(value)) => return Err(SendError(value)),
            Err(TrySendError::Full(_)) => {
                unreachable!("unbounded storage is never full (`Storage::try_push`)")
            }
        }
    }
    Ok((sent, true))
}

/// Sends every value of `values`: batches through [`send_from`] while there
/// is room, and, when full, waits in line for one slot, fills it and carries
/// on. The future of both endpoints' `send_many`.
pub(crate) async fn send_all<S: Storage>(
    mut tx: ProducerRef<'_, S>,
    values: &mut impl Iterator<Item = S::Item>,
) -> Result<usize, SendError<S::Item>> {
    let mut sent = 0;
    loop {
        let (batch, done) = send_from(tx.reborrow(), values)?;
        sent += batch;
        if done {
            return Ok(sent);
        }
        let Ok(mut unit) = tx.reborrow().reserve(1).await else {
            return match values.next() {
                Some(value) => Err(SendError(value)),
                None => Ok(sent),
            };
        };
        let Some(value) = values.next() else {
            return Ok(sent);
        };
        unit.send(value)?;
        sent += 1;
    }
}
