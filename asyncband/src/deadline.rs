//! Timeouts as deadlines.

use std::time::{Duration, Instant};

/// The deadline `timeout` from now; `None` (wait as long as it takes) when
/// the instant would overflow, as for `Duration::MAX`.
pub(crate) fn after(timeout: Duration) -> Option<Instant> {
    Instant::now().checked_add(timeout)
}
