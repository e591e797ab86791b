//! Running a child process under a deadline and the run's interrupt flag.
//!
//! Every child gets its own process group, for two reasons: a Ctrl-C typed at the terminal
//! reaches only `sonde lab` (which then stops the child itself, so a half-run test is never
//! recorded as a real failure), and a timeout kills the whole group, including anything an
//! external command forked. Output is collected by reader threads so a chatty child never
//! blocks on a full pipe while the runner waits for it.

use sonde_platform::process::{self, Signal};
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the runner looks at the child, the clock and the interrupt flag.
const POLL: Duration = Duration::from_millis(20);

/// How a child ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status; `None` when it was killed by the runner.
    pub status: Option<ExitStatus>,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
    /// Killed at the deadline.
    pub timed_out: bool,
    /// Killed because the run was interrupted.
    pub interrupted: bool,
}

fn reader(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut buf);
        }
        buf
    })
}

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

/// Runs `cmd` to its end, or kills its process group at `timeout` or when `interrupt` is set.
///
/// # Errors
/// The spawn error (program missing, not executable).
pub fn run(mut cmd: Command, timeout: Duration, interrupt: &AtomicBool) -> io::Result<Finished> {
    isolate(&mut cmd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let out = reader(child.stdout.take());
    let err = reader(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let (mut timed_out, mut interrupted) = (false, false);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if interrupt.load(Ordering::Relaxed) {
            interrupted = true;
        } else if Instant::now() >= deadline {
            timed_out = true;
        }
        if timed_out || interrupted {
            signal_group(&child, Signal::KILL);
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(POLL);
    };
    // The group may hold grandchildren that keep the pipes open; they are killed with it.
    if status.is_some() {
        signal_group(&child, Signal::KILL);
    }
    Ok(Finished {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
        interrupted,
    })
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
