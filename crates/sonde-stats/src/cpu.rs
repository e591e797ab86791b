//! CPU utilisation of one end over the test, as iperf3 reports it.
//!
//! iperf3 reports process CPU time divided by wall-clock time, in percent of one core (so a
//! busy multi-threaded process can exceed 100, up to the machine's cores times 100). The
//! runtime reads the OS counters and the core count; this module only does the arithmetic,
//! with the times passed in.

use crate::model::CpuUsage;
use std::ops::Add;

/// Process (or thread) CPU time consumed so far, in microseconds.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct CpuTimes {
    pub user_us: u64,
    pub system_us: u64,
}

impl CpuTimes {
    /// Time used since `earlier` (a thread's or process's cost over a span), never negative.
    pub fn saturating_sub(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            system_us: self.system_us.saturating_sub(earlier.system_us),
        }
    }
}

impl Add for CpuTimes {
    type Output = CpuTimes;

    /// Sums the times of several threads (saturating).
    fn add(self, rhs: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_us: self.user_us.saturating_add(rhs.user_us),
            system_us: self.system_us.saturating_add(rhs.system_us),
        }
    }
}

/// CPU usage between two readings over `wall_secs` of wall-clock time, in percent of one core.
///
/// A counter that went backwards counts as zero; a non-positive wall time gives all zeros.
pub fn cpu_usage(start: CpuTimes, end: CpuTimes, wall_secs: f64) -> CpuUsage {
    if wall_secs.is_nan() || wall_secs <= 0.0 {
        return CpuUsage::default();
    }
    let percent = |us: u64| us as f64 / 1e6 / wall_secs * 100.0;
    let user = end.user_us.saturating_sub(start.user_us);
    let system = end.system_us.saturating_sub(start.system_us);
    CpuUsage {
        total: percent(user.saturating_add(system)),
        user: percent(user),
        system: percent(system),
    }
}

impl CpuUsage {
    /// This usage held to at most `cores` × 100 % (user and system scaled alike), the most a
    /// process on that many cores can use. The counters and the wall clock are read a moment
    /// apart, so a saturated machine's figure can come out a little above it.
    pub fn at_most_cores(self, cores: u32) -> CpuUsage {
        let cap = f64::from(cores.max(1)) * 100.0;
        if self.total <= cap || self.total.is_nan() {
            return self;
        }
        let k = cap / self.total;
        CpuUsage {
            total: cap,
            user: self.user * k,
            system: self.system * k,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(user_us: u64, system_us: u64) -> CpuTimes {
        CpuTimes { user_us, system_us }
    }

    #[test]
    fn percent_of_one_core() {
        let u = cpu_usage(t(1_000_000, 500_000), t(3_000_000, 1_500_000), 10.0);
        assert_eq!(u.user, 20.0);
        assert_eq!(u.system, 10.0);
        assert_eq!(u.total, 30.0);
    }

    #[test]
    fn can_exceed_one_core() {
        let u = cpu_usage(t(0, 0), t(3_000_000, 1_000_000), 2.0);
        assert_eq!(u.total, 200.0);
    }

    #[test]
    fn backwards_and_empty_spans() {
        let u = cpu_usage(t(5, 0), t(1, 2_000_000), 1.0);
        assert_eq!((u.user, u.system, u.total), (0.0, 200.0, 200.0));
        assert_eq!(cpu_usage(t(0, 0), t(9, 9), 0.0), CpuUsage::default());
        assert_eq!(cpu_usage(t(0, 0), t(9, 9), -1.0), CpuUsage::default());
        assert_eq!(cpu_usage(t(0, 0), t(9, 9), f64::NAN), CpuUsage::default());
    }

    #[test]
    fn usage_above_the_cores_is_held_to_them() {
        let u = cpu_usage(t(0, 0), t(1_000_000, 3_000_000), 1.0).at_most_cores(2);
        assert_eq!((u.total, u.user, u.system), (200.0, 50.0, 150.0));
        let under = cpu_usage(t(0, 0), t(500_000, 500_000), 1.0);
        assert_eq!(under.at_most_cores(2), under);
        assert_eq!(under.at_most_cores(0).total, 100.0);
    }

    #[test]
    fn threads_add_up() {
        assert_eq!(t(1, 2) + t(10, 20), t(11, 22));
        assert_eq!(t(u64::MAX, 0) + t(1, 0), t(u64::MAX, 0));
    }
}
