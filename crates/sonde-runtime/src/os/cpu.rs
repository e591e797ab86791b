//! Process and thread CPU times from `getrusage`.
//!
//! A server runs many tests at once, so a test's CPU cost is the sum of its own threads'
//! times (`RUSAGE_THREAD`), not the whole process's.

use sonde_stats::cpu::CpuTimes;

fn usage(who: libc::c_int) -> CpuTimes {
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
    usage(libc::RUSAGE_SELF)
}

/// CPU time used so far by the calling thread.
#[cfg(target_os = "linux")]
pub fn thread_times() -> CpuTimes {
    usage(libc::RUSAGE_THREAD)
}

/// CPU time used so far by the calling thread (process-wide where threads are not separable).
#[cfg(not(target_os = "linux"))]
pub fn thread_times() -> CpuTimes {
    usage(libc::RUSAGE_SELF)
}
