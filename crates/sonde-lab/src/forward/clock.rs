//! The forwarder's clock and its hybrid wait: sleep in `ppoll` until `spin` before the next
//! departure, then spin.
//!
//! A sleeping thread at normal priority wakes tens of microseconds late (the default 50 µs
//! timer slack, then the scheduler, more on a busy VM); the issue allows a p99 delay error of
//! 200 µs. So the forwarder asks for a 1 ns timer slack and real-time priority, sleeps until
//! `spin` before the deadline, and polls the sockets without sleeping until it passes. The
//! default window is zero (see `DEFAULT_SPIN` for the measurements); a machine with cores to
//! spare can buy a few µs of precision with a larger one.

use std::time::Duration;

use sonde_emu::Instant;

/// Nanoseconds of `CLOCK_MONOTONIC`: the forwarder's `now`, as an emu [`Instant`] it is the
/// same number, so a frame's `Meta::entered` compares with any other monotonic timestamp
/// (the benchmark's, a test's).
pub fn monotonic_ns() -> u64 {
    // SAFETY: timespec is plain data; clock_gettime only writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// `CLOCK_REALTIME - CLOCK_MONOTONIC` in ns, to turn the kernel's (realtime) receive
/// timestamps into the forwarder's monotonic time. Read each turn, so a clock step moves it
/// at once.
pub fn realtime_offset() -> i64 {
    // SAFETY: timespec is plain data; clock_gettime only writes it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let real = (ts.tv_sec as i64) * 1_000_000_000 + ts.tv_nsec as i64;
    real - monotonic_ns() as i64
}

/// The monotonic clock as an emu instant.
pub fn now() -> Instant {
    Instant::from_nanos(monotonic_ns())
}

/// Asks for a 1 ns timer slack on the calling thread (the default 50 µs would be added to
/// every sleep).
pub fn tighten_timer_slack() {
    // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Sleeps until one of `fds` is readable or `timeout` passes.
pub fn wait_readable(fds: &[libc::c_int], timeout: Duration) {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: valid pollfd array of the given length and a valid timespec; no signal mask.
    unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        );
    }
}

/// Gives the calling thread real-time priority (`SCHED_FIFO`, priority `prio`) so that busy
/// unrelated processes (a compiler on the other core) cannot hold a departure back by a
/// scheduler tick. The kernel's real-time throttling (by default 95 % of each second) still
/// bounds what the thread can take. Returns false when not allowed (no CAP_SYS_NICE, or a
/// cgroup without real-time budget); the forwarder then runs at normal priority.
pub fn try_realtime(prio: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: prio,
    };
    // SAFETY: a valid sched_param for this thread (pid 0 = the calling thread).
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}
