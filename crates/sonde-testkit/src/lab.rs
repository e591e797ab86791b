//! Whether a test that needs network namespaces can run here: root (the capabilities the lab
//! uses) and a working `ip netns`; and a network namespace of a test thread's own.
//!
//! Each says why a test skips when it cannot run, and fails it instead under
//! `SONDE_REQUIRE_ALL=1` ([`crate::skip`]).

use std::process::{Command, Stdio};

use crate::{installed, skip};

/// CAP_NET_ADMIN (links, addresses, qdiscs) and CAP_SYS_ADMIN (`setns`, mounting the
/// namespaces' files): what root has and a lab needs.
const CAPABILITIES: [(u32, &str); 2] = [(12, "CAP_NET_ADMIN"), (21, "CAP_SYS_ADMIN")];

/// Why the lab cannot run here, or `None` when it can: root with the capabilities it uses
/// (a container's root may lack them), and `ip netns list` succeeding.
pub fn why_not() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("the lab needs root (network namespaces)".into());
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    let missing: Vec<&str> = CAPABILITIES
        .iter()
        .filter(|(bit, _)| effective & (1 << bit) == 0)
        .map(|(_, name)| *name)
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "the lab needs {} (root here lacks it)",
            missing.join(" and ")
        ));
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

/// True when the lab (network namespaces, root) can run here; otherwise says why, and fails
/// instead under `SONDE_REQUIRE_ALL=1`.
#[track_caller]
pub fn available() -> bool {
    match why_not() {
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
pub fn available_with(what: &str, programs: &[&str]) -> bool {
    available() && installed(what, programs)
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
