//! The runtime's monotonic clock in nanoseconds, the timebase of datagram send stamps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

static EPOCH: OnceLock<Instant> = OnceLock::new();

/// Nanoseconds since the first call in this process (monotonic).
pub fn now_ns() -> u64 {
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The [`Instant`] of a [`now_ns`] reading (now, for a reading from the future).
pub fn instant_of(ns: u64) -> Instant {
    let now_ns = now_ns();
    let now = Instant::now();
    now.checked_sub(Duration::from_nanos(now_ns.saturating_sub(ns)))
        .unwrap_or(now)
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

/// Sleeps until `deadline` in slices of at most 50 ms, looking at `interrupt` between them;
/// true when the deadline passed with `interrupt` still clear, false once it is set.
pub fn sleep_unless_interrupted(deadline: Instant, interrupt: &AtomicBool) -> bool {
    while Instant::now() < deadline {
        if interrupt.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep((deadline - Instant::now()).min(Duration::from_millis(50)));
    }
    !interrupt.load(Ordering::Relaxed)
}

/// Sleeps until `deadline` with the OS sleep only (may overshoot by tens of microseconds).
/// For throughput pacing, where a cumulative schedule absorbs the overshoot and CPU matters.
pub fn sleep_coarse(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

/// Waits for departure times with microsecond precision: the OS sleep until a learned margin
/// before the deadline ([`crate::pacing::SpinMargin`]), then a spin. Creating one lowers the
/// calling thread's timer slack (Linux adds 50 µs to every sleep by default), so the sleeper
/// belongs to one thread.
#[derive(Debug)]
pub struct PreciseSleeper {
    margin: crate::pacing::SpinMargin,
}

impl PreciseSleeper {
    /// A sleeper for the calling thread.
    pub fn new() -> Self {
        sonde_platform::timer::set_thread_timer_slack_ns(1);
        Self {
            margin: crate::pacing::SpinMargin::new(),
        }
    }

    /// Waits until `deadline`, but at most `max_wait` (so the caller can check its stop flags
    /// during long gaps). True when `deadline` has been reached.
    pub fn wait_until(&mut self, deadline: Instant, max_wait: std::time::Duration) -> bool {
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        let margin = std::time::Duration::from_nanos(self.margin.ns());
        let left = deadline - now;
        if left > margin {
            let nap = (left - margin).min(max_wait);
            std::thread::sleep(nap);
            let woke = Instant::now();
            if nap < left - margin {
                return woke >= deadline;
            }
            let ns = |t: Instant| u64::try_from((t - now).as_nanos()).unwrap_or(u64::MAX);
            self.margin.on_wake(ns(now + nap), ns(woke));
        } else {
            self.margin.on_spin();
        }
        while Instant::now() < deadline {
            std::hint::spin_loop();
        }
        true
    }
}

impl Default for PreciseSleeper {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_ends_the_sleep_and_says_so() {
        let t0 = Instant::now();
        assert!(sleep_unless_interrupted(
            t0 + Duration::from_millis(30),
            &AtomicBool::new(false)
        ));
        assert!(t0.elapsed() >= Duration::from_millis(30));
        let t1 = Instant::now();
        assert!(!sleep_unless_interrupted(
            t1 + Duration::from_secs(10),
            &AtomicBool::new(true)
        ));
        assert!(t1.elapsed() < Duration::from_secs(1));
    }
}
