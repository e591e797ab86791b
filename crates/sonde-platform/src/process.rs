//! Signalling the processes sonde starts, and tying a child's life to its parent's.
//!
//! The lab runner, the mesh and the stress suite's load probe all start children that must
//! not outlive them: they stop a child (or the whole process group it leads, with whatever it
//! forked) by a signal, and ask the kernel to signal the child when the parent dies, even by
//! `kill -9`. The process ids come from [`std::process::Child::id`]; the ids that would make
//! `kill(2)` reach far more than one child (0: this process's own group; -1: every process)
//! are refused rather than passed on.

use std::fmt;
use std::io;

/// A signal sonde sends to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signal(libc::c_int);

impl Signal {
    /// Ends the process at once; it cannot be caught.
    pub const KILL: Signal = Signal(libc::SIGKILL);
    /// Asks the process to stop cleanly.
    pub const TERM: Signal = Signal(libc::SIGTERM);
    /// What Ctrl-C sends.
    pub const INT: Signal = Signal(libc::SIGINT);

    /// The signal's number.
    pub fn number(self) -> i32 {
        self.0
    }
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Signal::KILL => f.write_str("SIGKILL"),
            Signal::TERM => f.write_str("SIGTERM"),
            Signal::INT => f.write_str("SIGINT"),
            Signal(n) => write!(f, "signal {n}"),
        }
    }
}

/// `kill(2)` with `target` (a pid, or a negated process-group id).
fn kill(target: libc::pid_t, sig: Signal) -> io::Result<()> {
    // SAFETY: kill(2) only sends a signal; no memory is involved.
    if unsafe { libc::kill(target, sig.0) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `id` as a pid that names one process (or one group): positive, and not 1 for a group.
fn target(id: u32, least: libc::pid_t) -> io::Result<libc::pid_t> {
    libc::pid_t::try_from(id)
        .ok()
        .filter(|p| *p >= least)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{id} names no single process or process group to signal"),
            )
        })
}

/// Sends `sig` to process `pid`.
///
/// # Errors
/// `InvalidInput` for pid 0 or one beyond the OS's range; otherwise the kernel's (`ESRCH`:
/// no such process; `EPERM`: not ours to signal).
pub fn signal(pid: u32, sig: Signal) -> io::Result<()> {
    kill(target(pid, 1)?, sig)
}

/// Sends `sig` to every process in group `pgid` (a child started with
/// [`std::os::unix::process::CommandExt::process_group`]`(0)` leads a group whose id is its
/// pid), so what the child forked gets it too.
///
/// # Errors
/// `InvalidInput` for groups 0 and 1 (this process's own group, and every process); otherwise
/// the kernel's (`ESRCH` once the whole group has gone).
pub fn signal_group(pgid: u32, sig: Signal) -> io::Result<()> {
    kill(-target(pgid, 2)?, sig)
}

/// Has the kernel send `sig` to this process when its parent dies (`PR_SET_PDEATHSIG`), for
/// a [`std::os::unix::process::CommandExt::pre_exec`] hook: it only makes one system call
/// and allocates nothing, as code between fork and exec must.
///
/// # Errors
/// The kernel's; `Unsupported` where the OS has no such request.
#[cfg(target_os = "linux")]
pub fn die_with_parent(sig: Signal) -> io::Result<()> {
    // The argument is passed as the variadic's unsigned long, as prctl(2) reads it.
    let arg = libc::c_ulong::try_from(sig.0).unwrap_or(0);
    // SAFETY: prctl(2) with PR_SET_PDEATHSIG reads one integer argument; async-signal-safe.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, arg) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `Unsupported`: only Linux signals a child when its parent dies.
///
/// # Errors
/// Always.
#[cfg(not(target_os = "linux"))]
pub fn die_with_parent(_sig: Signal) -> io::Result<()> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::Command;

    #[test]
    fn a_signalled_child_dies_of_that_signal() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        signal(child.id(), Signal::TERM).unwrap();
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    }

    #[test]
    fn a_group_signal_reaches_what_the_leader_forked() {
        // The shell waits for its background sleep, which holds stdout open: both must die
        // for read_to_end to return.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 30 & wait"])
            .stdout(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        signal_group(child.id(), Signal::KILL).unwrap();
        let mut out = Vec::new();
        std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn ids_that_reach_more_than_one_process_are_refused() {
        for (got, what) in [
            (signal(0, Signal::TERM), "pid 0"),
            (signal(u32::MAX, Signal::TERM), "pid beyond range"),
            (signal_group(0, Signal::KILL), "group 0"),
            (signal_group(1, Signal::KILL), "group 1"),
        ] {
            let kind = got.map_err(|e| e.kind());
            assert_eq!(kind, Err(io::ErrorKind::InvalidInput), "{what}");
        }
    }

    #[test]
    fn a_gone_process_is_an_error() {
        let mut child = Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let e = signal_group(pid, Signal::KILL).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ESRCH));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_child_asked_to_die_with_its_parent_starts() {
        let mut cmd = Command::new("true");
        // SAFETY: die_with_parent makes one system call and allocates nothing.
        unsafe { cmd.pre_exec(|| die_with_parent(Signal::KILL)) };
        assert!(cmd.status().unwrap().success());
    }

    #[test]
    fn signals_are_named() {
        assert_eq!(Signal::KILL.to_string(), "SIGKILL");
        assert_eq!(Signal::TERM.number(), libc::SIGTERM);
    }
}
