//! Whether a test that needs network namespaces can run here: the lab's own privilege check
//! (passed in: the kit links no sonde crate) and a working `ip netns`; and a network namespace
//! of a test thread's own.
//!
//! Each says why a test skips when it cannot run, and fails it instead under
//! `SONDE_REQUIRE_ALL=1` ([`crate::skip`]).

use std::fmt::Display;
use std::process::{Command, Stdio};

use crate::{installed, skip};

/// Why the lab cannot run here, or `None` when it can: `privileges` is the lab's own check
/// (`sonde_lab::check_privileges()`: root with the capabilities it uses, which a container's
/// root may lack), and `ip netns list` must succeed.
pub fn why_not<E: Display>(privileges: Result<(), E>) -> Option<String> {
    if let Err(e) = privileges {
        return Some(e.to_string());
    }
    match Command::new("ip")
        .args(["netns", "list"])
        .stdin(Stdio::null())
        .output()
    {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "`ip netns list` failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Some(format!(
            "`ip netns` does not run ({e}): the lab needs iproute2"
        )),
    }
}

/// True when the lab can run here ([`why_not`]); otherwise says why, and fails instead under
/// `SONDE_REQUIRE_ALL=1`.
#[track_caller]
pub fn available<E: Display>(privileges: Result<(), E>) -> bool {
    match why_not(privileges) {
        None => true,
        Some(why) => {
            skip(&why);
            false
        }
    }
}

/// [`available`], and every program of `programs` installed (else says that `what` skips for
/// want of it; fails under `SONDE_REQUIRE_ALL=1`).
#[track_caller]
pub fn available_with<E: Display>(
    privileges: Result<(), E>,
    what: &str,
    programs: &[&str],
) -> bool {
    available(privileges) && installed(what, programs)
}

/// Runs `f` on a thread in a fresh network namespace with loopback up; `None` (after saying
/// why) when that cannot be made.
pub fn in_own_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("a network namespace of its own needs root");
        return None;
    }
    std::thread::spawn(move || {
        // SAFETY: unshare changes only this thread's network namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            skip(&format!("unshare: {}", std::io::Error::last_os_error()));
            return None;
        }
        let up = Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
        assert!(up.is_ok_and(|s| s.success()), "cannot bring lo up");
        Some(f())
    })
    .join()
    .unwrap()
}
