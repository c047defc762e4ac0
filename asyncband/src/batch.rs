//! Moving several values in one call.

use asyncband_core::chan::Chan;
use asyncband_core::storage::Storage;

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
