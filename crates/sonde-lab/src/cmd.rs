//! Running `ip`, `tc`, `ethtool` and `sysctl`, with errors that say which command failed and why.
//!
//! The lab configures namespaces through iproute2's command-line tools rather than a netlink
//! library. Setting up a lab is a few dozen operations done once per run, where a process spawn
//! (about a millisecond) does not matter; in exchange every step is a command an engineer can
//! read in an error message and paste into a shell to reproduce, iproute2 already knows every
//! qdisc's netlink encoding (tbf's rate tables, netem's distribution tables), and no async
//! runtime or netlink crate enters the dependency tree. The packet path, where speed matters,
//! does not use this module (see [`crate::forward`]).

use std::ffi::OsStr;
use std::process::{Command, Output, Stdio};

use crate::error::LabError;

/// The Debian package that provides `program`, for the "is it installed?" hint.
fn package_of(program: &str) -> &'static str {
    match program {
        "ip" | "tc" => "iproute2",
        "ethtool" => "ethtool",
        "sysctl" => "procps",
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
