//! Timer precision of the calling thread.

/// Sets the calling thread's timer slack: how much later than asked the kernel may end its
/// sleeps so that it can group wake-ups (50 µs by default). Paced senders set it to a
/// nanosecond. Best effort: where it cannot be set, sleeps are only less exact.
#[cfg(target_os = "linux")]
pub fn set_thread_timer_slack_ns(ns: u64) {
    // SAFETY: PR_SET_TIMERSLACK takes an unsigned long by value and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(not(target_os = "linux"))]
pub fn set_thread_timer_slack_ns(_ns: u64) {}
