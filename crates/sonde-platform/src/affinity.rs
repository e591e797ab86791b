//! CPU affinity (`-A`, as iperf3's): pins the calling thread to one core. Threads it starts
//! afterwards inherit the mask, so pinning before the stream workers start pins them too,
//! and a server pins only the test that asked, not the other clients' tests.

use std::io;

/// Pins the calling thread to CPU `core`.
///
/// # Errors
/// `InvalidInput` for a core beyond what the OS can name, the OS error otherwise (a core
/// this machine does not have is `EINVAL`).
#[cfg(target_os = "linux")]
pub fn pin_current_thread(core: usize) -> io::Result<()> {
    if core >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "core {core} is beyond the {} the OS can name",
                libc::CPU_SETSIZE
            ),
        ));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET writes one bit inside it (bounds checked
    // above); sched_setaffinity reads `size_of` bytes of it for the calling thread (pid 0).
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
pub fn pin_current_thread(_core: usize) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "CPU affinity is Linux-only here",
    ))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_pinned_to_core_0_runs_only_there_and_a_missing_core_is_refused() {
        let allowed = std::thread::spawn(|| {
            pin_current_thread(0).map(|()| {
                let status =
                    std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .map(|v| v.trim().to_owned())
            })
        })
        .join();
        assert!(
            matches!(allowed, Ok(Ok(Some(ref l))) if l == "0"),
            "{allowed:?}"
        );
        let too_far =
            std::thread::spawn(|| pin_current_thread(libc::CPU_SETSIZE as usize + 1)).join();
        assert!(matches!(too_far, Ok(Err(_))));
        // A core the machine lacks (the OS names 1024, no test machine has them all).
        let missing = std::thread::spawn(|| pin_current_thread(1023)).join();
        assert!(matches!(missing, Ok(Err(_))));
    }
}
