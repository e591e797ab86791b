//! The runtime's monotonic clock in nanoseconds, the timebase of datagram send stamps.

use std::sync::OnceLock;
use std::time::Instant;

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the first call in this process (monotonic).
pub fn now_ns() -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// Sleeps until `deadline`: the OS sleep for all but the last ~200 µs, then a spin, so that
/// pacing at sub-millisecond periods keeps its schedule.
pub fn sleep_until(deadline: Instant) {
    const SPIN: std::time::Duration = std::time::Duration::from_micros(200);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Sleeps until `deadline` with the OS sleep only (may overshoot by tens of microseconds).
/// For throughput pacing, where a cumulative schedule absorbs the overshoot and CPU matters.
pub fn sleep_coarse(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}
