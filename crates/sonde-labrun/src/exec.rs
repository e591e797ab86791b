//! Running a child process under a deadline and the run's interrupt flag.
//!
//! Every child gets its own process group, for two reasons: a Ctrl-C typed at the terminal
//! reaches only `sonde lab` (which then stops the child itself, so a half-run test is never
//! recorded as a real failure), and a timeout kills the whole group, including anything an
//! external command forked. Output is collected by reader threads so a chatty child never
//! blocks on a full pipe while the runner waits for it. The running itself is
//! `sonde_platform::supervise`, shared with the stress suite's load probe; this module adds
//! the parent-death signal and the lab's policy (all output kept, the group killed as soon as
//! the child ends).

use sonde_platform::process::{self, Signal};
use sonde_platform::supervise::{self, Limits, RunError};
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// How a child ended: its status, output, and whether it was killed at the deadline or the
/// run's interrupt.
pub use sonde_platform::supervise::Finished;

/// Sends `signal` to the child's process group (it leads its own group); a group already
/// gone has nothing left to signal.
pub fn signal_group(child: &Child, signal: Signal) {
    let _ = process::signal_group(child.id(), signal);
}

/// Puts `cmd` in a new process group, with stdin closed, and has the kernel kill it if the
/// runner dies (`kill -9`): a server or test left running would keep its namespace's
/// interfaces alive after `sonde lab clean` deleted the namespace.
pub fn isolate(cmd: &mut Command) -> &mut Command {
    // SAFETY: die_with_parent makes one system call and allocates nothing, as code between
    // fork and exec must. Where the kernel refuses, the child runs all the same (`sonde lab
    // clean` still finds it by its namespace).
    unsafe {
        cmd.pre_exec(|| {
            let _ = process::die_with_parent(Signal::KILL);
            Ok(())
        });
    }
    cmd.stdin(Stdio::null()).process_group(0)
}

/// Runs `cmd` to its end, or kills its process group at `timeout` or when `interrupt` is set;
/// everything it printed is kept, and the group is killed as soon as the child ends (what it
/// left in the pipes is still read).
///
/// # Errors
/// The spawn error (program missing, not executable).
pub fn run(mut cmd: Command, timeout: Duration, interrupt: &AtomicBool) -> io::Result<Finished> {
    let limits = Limits {
        timeout,
        keep_bytes: usize::MAX,
        linger: Duration::ZERO,
    };
    match supervise::run(isolate(&mut cmd), &limits, interrupt) {
        Ok(f) => Ok(f),
        Err(RunError::Spawn(e)) => Err(e),
        // Its group is killed; a child that cannot be waited for counts as one killed.
        Err(RunError::Wait(_)) => Ok(Finished {
            status: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
            timed_out: false,
            interrupted: false,
        }),
    }
}

/// The last `lines` lines of `text`, at most `max_chars` characters, trimmed: the part of a
/// failing tool's stderr that usually says why.
pub fn tail(text: &str, lines: usize, max_chars: usize) -> String {
    let all: Vec<&str> = text
        .trim()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = all.len().saturating_sub(lines);
    let joined = all[start..].join(" | ");
    let count = joined.chars().count();
    if count > max_chars {
        let skip = count - max_chars;
        format!("...{}", joined.chars().skip(skip).collect::<String>())
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn tails() {
        assert_eq!(tail("a\n\nb\nc\n", 2, 100), "b | c");
        assert_eq!(tail("abcdef", 1, 3), "...def");
        assert_eq!(tail("", 3, 10), "");
    }

    #[test]
    fn runs_collects_and_times_out() {
        let never = AtomicBool::new(false);
        let mut c = Command::new("sh");
        c.args(["-c", "echo out; echo err >&2; exit 3"]);
        let f = run(c, Duration::from_secs(10), &never).expect("sh runs");
        assert_eq!(f.status.and_then(|s| s.code()), Some(3));
        assert_eq!(String::from_utf8_lossy(&f.stdout), "out\n");
        assert_eq!(String::from_utf8_lossy(&f.stderr), "err\n");
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30 & sleep 30"]);
        let t0 = Instant::now();
        let f = run(c, Duration::from_millis(200), &never).expect("sh runs");
        assert!(f.timed_out && f.status.is_none());
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the group was killed"
        );
        let stop = AtomicBool::new(true);
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let f = run(sleep, Duration::from_secs(60), &stop);
        assert!(f.map(|f| f.interrupted).unwrap_or(false));
    }
}
