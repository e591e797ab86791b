//! Process and thread CPU times from `getrusage`.
//!
//! A server runs many tests at once, so a test's CPU cost is the sum of its own threads'
//! times (`RUSAGE_THREAD`), not the whole process's. Every figure is CPU time over the wall
//! time of the same span, held to the machine's cores × 100 %.

use sonde_stats::cpu::{cpu_usage, CpuTimes};
use sonde_stats::model::CpuUsage;
use std::time::Instant;

/// The start of a span the process's CPU is measured over: the clock and the counters read
/// together, so that the CPU time and the wall time cover the same span (the client once read
/// the counters before starting its stream threads and the clock after, and a slow start of
/// 128 threads showed as 2000 % on 2 cores).
#[derive(Clone, Copy, Debug)]
pub struct ProcessSpan {
    at: Instant,
    times: CpuTimes,
}

impl ProcessSpan {
    /// Starts the span now.
    pub fn start() -> Self {
        Self {
            times: process_times(),
            at: Instant::now(),
        }
    }

    /// The process's CPU usage from the start to now.
    pub fn usage(&self) -> CpuUsage {
        usage(self.times, process_times(), self.at.elapsed().as_secs_f64())
    }
}

/// CPU usage between two readings over `wall_secs`, held to the machine's cores × 100 %.
pub fn usage(start: CpuTimes, end: CpuTimes, wall_secs: f64) -> CpuUsage {
    cpu_usage(start, end, wall_secs).at_most_cores(cores())
}

/// The machine's online cores (not this thread's affinity: a pinned test's other threads may
/// run anywhere).
pub fn cores() -> u32 {
    // SAFETY: sysconf only reads a system value.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(n).ok().filter(|&n| n > 0).unwrap_or(1)
}

fn rusage(who: libc::c_int) -> CpuTimes {
    // SAFETY: getrusage writes into the zeroed struct we own; a failure leaves it zeroed.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(who, &mut ru) };
    if rc != 0 {
        return CpuTimes::default();
    }
    let us = |tv: libc::timeval| (tv.tv_sec.max(0) as u64) * 1_000_000 + tv.tv_usec.max(0) as u64;
    CpuTimes {
        user_us: us(ru.ru_utime),
        system_us: us(ru.ru_stime),
    }
}

/// CPU time used so far by the whole process.
pub fn process_times() -> CpuTimes {
    rusage(libc::RUSAGE_SELF)
}

/// CPU time used so far by the calling thread.
#[cfg(target_os = "linux")]
pub fn thread_times() -> CpuTimes {
    rusage(libc::RUSAGE_THREAD)
}

/// CPU time used so far by the calling thread (process-wide where threads are not separable).
#[cfg(not(target_os = "linux"))]
pub fn thread_times() -> CpuTimes {
    rusage(libc::RUSAGE_SELF)
}
