//! Running `ip` and `tc` (and `nft` where installed), with errors that say which command failed
//! and why.
//!
//! The lab configures namespaces through iproute2's command-line tools rather than a netlink
//! library. Setting up a lab is a few dozen operations done once per run, where a process spawn
//! (about a millisecond) does not matter; in exchange every step is a command an engineer can
//! read in an error message and paste into a shell to reproduce, iproute2 already knows every
//! qdisc's netlink encoding (tbf's rate tables, netem's distribution tables), and no async
//! runtime or netlink crate enters the dependency tree. The packet path, where speed matters,
//! does not use this module (see [`crate::forward`]).
//!
//! Each command runs in a process group of its own. A Ctrl-C typed at the terminal is sent to
//! the whole foreground group: without this it would kill the `ip` command running at that
//! moment, so a lab being built or torn down would stop half-way (a namespace made but not
//! configured, or not deleted). The caller sees the Ctrl-C through its own handler and
//! finishes the step, then tears the lab down.
//!
//! iproute2 is the only program a lab requires. Sysctls are written through `/proc/sys`
//! ([`crate::netns`]) and offloads switched with the ethtool ioctl ([`crate::offload`]);
//! `nft` is used when [`on_path`] finds it, as an extra (see [`crate::lab`]).

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use crate::error::LabError;

/// The Debian package that provides `program`, for the "is it installed?" hint.
fn package_of(program: &str) -> &'static str {
    match program {
        "ip" | "tc" => "iproute2",
        "nft" => "nftables",
        _ => "the program",
    }
}

/// `program args...` as one line, for messages.
pub(crate) fn display(program: &str, args: &[&str]) -> String {
    let mut line = program.to_owned();
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    line
}

/// Runs `program args...` and returns its stdout.
///
/// # Errors
/// [`LabError::Spawn`] when it cannot start, [`LabError::Command`] when it exits non-zero.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<String, LabError> {
    let command = display(program, args);
    let out: Output = Command::new(program)
        .args(args.iter().map(OsStr::new))
        .stdin(Stdio::null())
        .process_group(0)
        .output()
        .map_err(|source| LabError::Spawn {
            command: command.clone(),
            package: package_of(program),
            source,
        })?;
    if !out.status.success() {
        return Err(LabError::Command {
            command,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// True when `program` is an executable file in a directory of `PATH` (where `ip netns exec`,
/// which runs it, looks for it).
pub(crate) fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        std::fs::metadata(dir.join(program))
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// `ip args...`.
pub(crate) fn ip(args: &[&str]) -> Result<String, LabError> {
    run("ip", args)
}

/// `ip -n NETNS args...`: an `ip` command acting inside a namespace.
pub(crate) fn ip_in(netns: &str, args: &[&str]) -> Result<String, LabError> {
    let mut full = vec!["-n", netns];
    full.extend_from_slice(args);
    run("ip", &full)
}

/// `ip netns exec NETNS program args...`.
pub(crate) fn exec_in(netns: &str, program: &str, args: &[&str]) -> Result<String, LabError> {
    let mut full = vec!["netns", "exec", netns, program];
    full.extend_from_slice(args);
    run("ip", &full)
}

/// `tc -n NETNS args...`.
pub(crate) fn tc_in(netns: &str, args: &[&str]) -> Result<String, LabError> {
    let mut full = vec!["-n", netns];
    full.extend_from_slice(args);
    run("tc", &full)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process group `sh` runs in, as `ps` sees it, against this process's own: a
    /// terminal's Ctrl-C, sent to the foreground group, must not reach a lab command.
    #[test]
    fn commands_run_in_their_own_process_group() {
        let out = run("sh", &["-c", "cut -d' ' -f5 /proc/$$/stat"]);
        let child_group: i32 = out
            .ok()
            .and_then(|o| o.trim().parse().ok())
            .unwrap_or_default();
        // SAFETY: getpgrp(2) has no preconditions.
        let own = unsafe { libc::getpgrp() };
        assert!(child_group > 0, "no process group read");
        assert_ne!(child_group, own, "the command shares sonde's process group");
    }
}
