//! `sonde stress --steps --load-probe CMD`: the device's own load, read by a command.
//!
//! A device that runs only echo, discard and chargen cannot send its CPU the way a sonde
//! server does; its team reads a figure from it some other way (a background loop's counter
//! over a serial console, an SNMP get, a debug port). The command runs through `sh -c` at
//! each step's end with nothing on stdin; the last number it prints on stdout is the reading
//! ([`sonde_stats::stress::steps::last_number`]). It must end within the timeout: past it,
//! its whole process group is killed (and so is whatever it left running in the background
//! once it ends). A command that cannot start, exits non-zero, is killed
//! or prints no number gives no value and a note saying which, never a made-up figure.

use sonde_platform::supervise::{self, Finished, Limits, RunError};
use sonde_stats::stress::steps::{last_number, DeviceLoad};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The command's output kept, per stream: the tail (the last number is what counts).
const KEEP_BYTES: usize = 16 * 1024;

/// How long the command's output may stay open once the command itself has ended (a
/// background child of its own may hold it).
const DRAIN: Duration = Duration::from_millis(500);

/// The probe: a shell command and how long it may take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProbe {
    pub command: String,
    pub timeout: Duration,
}

impl LoadProbe {
    /// Runs the command once and reads its figure; `stop` (the run's Ctrl-C) ends the wait at
    /// once, killing the command, so an interrupted run does not wait out the timeout.
    pub fn read(&self, stop: &AtomicBool) -> DeviceLoad {
        let failed = |error: String| DeviceLoad {
            value: None,
            exit_status: None,
            error: Some(error),
        };
        let limits = Limits {
            timeout: self.timeout,
            keep_bytes: KEEP_BYTES,
            linger: DRAIN,
        };
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&self.command);
        match supervise::run(&mut cmd, &limits, stop) {
            Err(RunError::Spawn(e)) => failed(format!("load probe could not start sh: {e}")),
            Err(e @ RunError::Wait(_)) => failed(format!("load probe {e}")),
            Ok(f) if f.interrupted => {
                failed("load probe stopped: the run was interrupted (killed)".into())
            }
            Ok(Finished {
                status: Some(status),
                stdout,
                stderr,
                ..
            }) => judge(status, &stdout, &stderr),
            Ok(_) => failed(format!(
                "load probe timed out after {} s (killed)",
                self.timeout.as_secs_f64()
            )),
        }
    }
}

/// The reading from how the command ended and what it printed.
fn judge(status: ExitStatus, out: &[u8], err: &[u8]) -> DeviceLoad {
    let exit_status = status.code();
    let said = last_line(err).map(|l| format!(": {l}")).unwrap_or_default();
    let error = match (exit_status, status.signal()) {
        (Some(0), _) => None,
        (Some(c), _) => Some(format!("load probe exited with status {c}{said}")),
        (None, Some(sig)) => Some(format!("load probe was killed by signal {sig}{said}")),
        (None, None) => Some(format!("load probe ended abnormally{said}")),
    };
    if error.is_some() {
        return DeviceLoad {
            value: None,
            exit_status,
            error,
        };
    }
    let value = last_number(&String::from_utf8_lossy(out));
    DeviceLoad {
        value,
        exit_status,
        error: value
            .is_none()
            .then(|| format!("load probe printed no number on stdout{said}")),
    }
}

/// The last non-blank line of `b`, at most 200 characters.
fn last_line(b: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(b);
    let line = text.lines().rev().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(200).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn probe(command: &str, timeout_ms: u64) -> DeviceLoad {
        LoadProbe {
            command: command.into(),
            timeout: Duration::from_millis(timeout_ms),
        }
        .read(&AtomicBool::new(false))
    }

    #[test]
    fn a_stop_ends_the_wait_at_once_and_kills_the_command() {
        let stop = AtomicBool::new(true);
        let started = Instant::now();
        let d = LoadProbe {
            command: "sleep 30; echo 1".into(),
            timeout: Duration::from_secs(30),
        }
        .read(&stop);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(d.value, None);
        assert_eq!(
            d.error.as_deref(),
            Some("load probe stopped: the run was interrupted (killed)")
        );
    }

    #[test]
    fn the_last_number_on_stdout_is_the_value() {
        let d = probe(
            "echo 'loops: 10'; echo 'loops: 4711' ; echo noise >&2",
            5000,
        );
        assert_eq!(d.value, Some(4711.0), "{d:?}");
        assert_eq!((d.exit_status, d.error), (Some(0), None));
    }

    #[test]
    fn a_failing_command_gives_no_value_and_says_why() {
        let d = probe("echo 12; echo 'device unreachable' >&2; exit 3", 5000);
        assert_eq!(d.value, None, "a failed reading is not a number: {d:?}");
        assert_eq!(d.exit_status, Some(3));
        assert_eq!(
            d.error.as_deref(),
            Some("load probe exited with status 3: device unreachable")
        );
    }

    #[test]
    fn a_command_printing_no_number_gets_a_note() {
        let d = probe("echo busy", 5000);
        assert_eq!((d.value, d.exit_status), (None, Some(0)));
        assert_eq!(
            d.error.as_deref(),
            Some("load probe printed no number on stdout")
        );
    }

    /// A command past its timeout is killed with everything it started (the `sleep` holds
    /// its stdout open): the reading ends near the timeout, not when the sleep would.
    #[test]
    fn a_command_past_its_timeout_is_killed() {
        let t0 = Instant::now();
        let d = probe("echo 5; sleep 30; echo 6", 300);
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
        assert_eq!((d.value, d.exit_status), (None, None), "{d:?}");
        assert_eq!(
            d.error.as_deref(),
            Some("load probe timed out after 0.3 s (killed)")
        );
    }

    /// A command that ends while a background child of its own keeps stdout open: what it
    /// printed still counts, without waiting for the child.
    #[test]
    fn output_left_open_by_a_background_child_does_not_hold_the_reading() {
        let t0 = Instant::now();
        let d = probe("echo 21; sleep 30 &", 10_000);
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!((d.value, d.error.as_deref()), (Some(21.0), None), "{d:?}");
    }

    /// Only the tail is kept ([`KEEP_BYTES`]), and it holds the last number.
    #[test]
    fn a_long_output_keeps_its_tail() {
        let d = probe(
            &format!("echo 12; head -c {KEEP_BYTES} /dev/zero | tr '\\0' x; echo ' 99'"),
            5000,
        );
        assert_eq!((d.value, d.error.as_deref()), (Some(99.0), None), "{d:?}");
    }
}
