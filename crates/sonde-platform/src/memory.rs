//! Heap memory the allocator keeps after it is freed, handed back to the OS.
//!
//! Long-running processes (`sonde services`, `sonde agent`) run bursts of work that allocate
//! megabytes and free them. glibc's malloc keeps much of that for reuse, so a process that is
//! idle again stays at its busiest size, and that size steps up with each new high-water
//! mark. On a small board, and to an operator watching the process's memory, that looks like
//! a leak.
//!
//! glibc also gives a thread that finds the other arenas busy an arena of its own (up to
//! eight per core), and an arena, once made, keeps memory resident for the life of the
//! process (up to 240 KiB each, measured). A process whose threads come and go keeps meeting
//! new coincidences of busy threads, so its memory steps up by an arena every so often (two
//! agents on loopback: 14 arenas holding 1.25-1.29 MB each agent after 75 minutes,
//! bench/RESULTS.md). Capping the arenas bounds that.

/// Hands heap memory the allocator keeps but no longer uses back to the OS (glibc's
/// `malloc_trim`). After a burst of a thousand echo connections (16 KiB of buffer each)
/// `sonde services` otherwise stays at the burst's high-water mark (measured: 5 MiB idle,
/// 13 MiB after every later burst of 1000) although nothing is in use. Nothing where the C
/// library has no such call.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_free_memory() {
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Nothing to do where the C library has no `malloc_trim`.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() {}

/// Most malloc arenas a long-running process keeps (see the module docs): the main one and
/// one shared by every other thread. A long-running agent's threads allocate little while
/// they measure, so they contend little for it.
pub const LONG_RUNNING_ARENAS: u16 = 2;

/// Caps glibc's malloc arenas at `max` (`mallopt(M_ARENA_MAX)`) for threads that ask for one
/// from now on; arenas made before stay. Returns whether the C library took it (false where
/// there is no such setting).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn limit_allocator_arenas(max: u16) -> bool {
    // SAFETY: mallopt only sets a parameter of the allocator; any positive value is valid.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, libc::c_int::from(max.max(1))) == 1 }
}

/// Not available where the C library is not glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn limit_allocator_arenas(_max: u16) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_the_arena_cap() {
        assert!(limit_allocator_arenas(LONG_RUNNING_ARENAS));
    }
}
