//! Clocks for `%clock`, `%clock64` and `%globaltimer`, read from the host: the monotonic clock
//! in nanoseconds since the process first asked (so `%clock64` never wraps in practice) and
//! the real-time clock in nanoseconds since the Unix epoch.

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

static START: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the first call in this process (monotonic).
pub(crate) fn clock64() -> u64 {
    let start = *START.get_or_init(Instant::now);
    start.elapsed().as_nanos() as u64
}

/// Nanoseconds since the Unix epoch.
pub(crate) fn globaltimer() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
