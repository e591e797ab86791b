//! Virtual time: a nanosecond instant that only moves when the caller says so.
//!
//! The engine never reads a clock (STYLE point 3, after smoltcp's `Instant`): the forwarder passes
//! the monotonic clock's reading, tests pass a counter. Durations are `core::time::Duration`.

use core::ops::{Add, Sub};
use core::time::Duration;

/// A point in time, in nanoseconds since an arbitrary origin chosen by the driver.
///
/// Arithmetic saturates instead of overflowing: 2^64 ns is 584 years, so saturation only ever
/// happens on nonsense input, and it must not panic there either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The origin.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant.
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }

    /// An instant `micros` microseconds after the origin (saturating).
    pub const fn from_micros(micros: u64) -> Self {
        Instant(micros.saturating_mul(1_000))
    }

    /// An instant `millis` milliseconds after the origin (saturating).
    pub const fn from_millis(millis: u64) -> Self {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// An instant `secs` seconds after the origin (saturating).
    pub const fn from_secs(secs: u64) -> Self {
        Instant(secs.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Seconds since the origin, as a float (for reports and tests).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }

    /// The time elapsed from `earlier` to `self`, or zero when `earlier` is later.
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + nanos`, saturating.
    pub const fn add_nanos(self, nanos: u64) -> Instant {
        Instant(self.0.saturating_add(nanos))
    }
}

/// Converts a duration to whole nanoseconds, saturating at `u64::MAX`.
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        self.add_nanos(duration_nanos(rhs))
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_millis(10);
        assert_eq!((t + Duration::from_micros(5)).as_nanos(), 10_005_000);
        assert_eq!(Instant::ZERO - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_millis(10));
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(duration_nanos(Duration::MAX), u64::MAX);
    }
}
