//! `sonde lab clean`: what a killed lab left behind.
//!
//! [`sonde_lab::clean_leftovers`] deletes the namespaces and interfaces; processes still
//! running inside a namespace (a `sonde server` whose runner got `kill -9`) are killed first,
//! since a process holding a deleted namespace keeps its interfaces and addresses alive.

use std::process::Command;

use sonde_lab::topology::PREFIX_ROOT;
use sonde_lab::Cleaned;
use sonde_platform::process::{signal, Signal};

use crate::error::RunError;

/// What [`clean`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CleanReport {
    /// Processes killed (pid, namespace).
    pub killed: Vec<(u32, String)>,
    /// Namespaces and interfaces deleted.
    pub cleaned: Cleaned,
}

/// Kills the processes in every `sonde-` namespace, then deletes the namespaces and any
/// `sonde-` interface left in the caller's namespace.
///
/// # Errors
/// [`RunError::Lab`] without root or when a deletion fails.
pub fn clean() -> Result<CleanReport, RunError> {
    sonde_lab::check_privileges()?;
    let mut killed = Vec::new();
    for ns in sonde_lab::netns::list()?
        .into_iter()
        .filter(|n| n.starts_with(PREFIX_ROOT))
    {
        let out = Command::new("ip").args(["netns", "pids", &ns]).output();
        let pids = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            // A pid `ip netns pids` reported inside a sonde namespace.
            if signal(pid, Signal::KILL).is_ok() {
                killed.push((pid, ns.clone()));
            }
        }
    }
    if !killed.is_empty() {
        // Give the kernel a moment to reap them before their namespaces go.
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let cleaned = sonde_lab::clean_leftovers(PREFIX_ROOT)?;
    Ok(CleanReport { killed, cleaned })
}
