//! Running a child under a deadline and a stop flag (the run's Ctrl-C), with its output.
//!
//! The lab runner's tests and the stress suite's load probe both start a command that must
//! end by a deadline, or at once when the run is interrupted, and must leave nothing behind:
//! the child leads its own process group (a Ctrl-C at the terminal reaches only sonde, which
//! then stops the child itself), and the whole group is killed when the child ends, times out
//! or is stopped, so whatever it forked goes with it. Output is read by threads so a chatty
//! child never blocks on a full pipe. What differs between callers is a [`Limits`] field: how
//! much output is kept, and how long output is still read once the child has ended (a
//! background child of a probe's shell may still be printing).

use crate::process::{signal_group, Signal};
use std::io::{self, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often the child, the clock and the stop flag are looked at.
const POLL: Duration = Duration::from_millis(20);

/// How long output is still read once the group is killed: what was in the pipes. A process
/// that left the group and holds them open does not hold the caller past this.
const LAST_READ: Duration = Duration::from_secs(2);

/// What a run may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Past it the group is killed.
    pub timeout: Duration,
    /// Per stream, the last this many bytes are kept (`usize::MAX`: all).
    pub keep_bytes: usize,
    /// How long output is still read after the child ended, before its group is killed.
    pub linger: Duration,
}

/// How a child ended.
#[derive(Debug)]
pub struct Finished {
    /// Its exit status; `None` when it was killed at the deadline or a stop.
    pub status: Option<ExitStatus>,
    /// What it wrote to stdout (the tail, per [`Limits::keep_bytes`]).
    pub stdout: Vec<u8>,
    /// What it wrote to stderr (likewise).
    pub stderr: Vec<u8>,
    /// Killed at the deadline.
    pub timed_out: bool,
    /// Killed because the stop flag was raised.
    pub interrupted: bool,
}

/// Why a run gave no [`Finished`].
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The command could not be started (program missing, not executable).
    #[error("could not start: {0}")]
    Spawn(#[source] io::Error),
    /// The child could not be waited for; its group was killed.
    #[error("could not be waited for: {0}")]
    Wait(#[source] io::Error),
}

/// What came out of one stream.
enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
}

/// Output kept so far.
struct Kept {
    out: Vec<u8>,
    err: Vec<u8>,
    keep: usize,
}

impl Kept {
    fn take(&mut self, chunk: Chunk) {
        let (buf, more) = match chunk {
            Chunk::Out(b) => (&mut self.out, b),
            Chunk::Err(b) => (&mut self.err, b),
        };
        buf.extend_from_slice(&more);
        if buf.len() > self.keep {
            buf.drain(..buf.len() - self.keep);
        }
    }

    /// Reads until `until` or both streams close; true when they closed.
    fn read_until(&mut self, rx: &Receiver<Chunk>, until: Instant) -> bool {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            match rx.recv_timeout(left.min(POLL)) {
                Ok(c) => self.take(c),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return true,
            }
        }
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    r: Option<R>,
    tx: mpsc::Sender<Chunk>,
    wrap: fn(Vec<u8>) -> Chunk,
) {
    let Some(mut r) = r else { return };
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 || tx.send(wrap(buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
}

/// Kills the child's group and reaps the child; a group already gone has nothing to kill.
fn kill(child: &mut Child) {
    let _ = signal_group(child.id(), Signal::KILL);
    let _ = child.wait();
}

/// Runs `cmd` (stdin closed, in a group of its own) to its end, the deadline or a stop.
///
/// # Errors
/// [`RunError`]: the spawn failed, or the child could not be waited for.
pub fn run(cmd: &mut Command, limits: &Limits, stop: &AtomicBool) -> Result<Finished, RunError> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(RunError::Spawn)?;
    let (tx, rx) = mpsc::channel();
    spawn_reader(child.stdout.take(), tx.clone(), Chunk::Out);
    spawn_reader(child.stderr.take(), tx, Chunk::Err);
    let deadline = Instant::now() + limits.timeout;
    let mut kept = Kept {
        out: Vec::new(),
        err: Vec::new(),
        keep: limits.keep_bytes,
    };
    let (mut timed_out, mut interrupted) = (false, false);
    let mut closed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(e) => {
                kill(&mut child);
                return Err(RunError::Wait(e));
            }
        }
        if stop.load(Ordering::SeqCst) {
            interrupted = true;
        } else if Instant::now() >= deadline {
            timed_out = true;
        }
        if timed_out || interrupted {
            break None;
        }
        if closed {
            std::thread::sleep(POLL);
        } else {
            closed = kept.read_until(&rx, Instant::now() + POLL);
        }
    };
    if status.is_some() && !closed && !stop.load(Ordering::SeqCst) {
        closed = kept.read_until(&rx, (Instant::now() + limits.linger).min(deadline));
    }
    // Nothing the child started outlives the run; what is still in the pipes is read.
    kill(&mut child);
    if !closed {
        kept.read_until(&rx, Instant::now() + LAST_READ);
    }
    Ok(Finished {
        status,
        stdout: kept.out,
        stderr: kept.err,
        timed_out,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(timeout_ms: u64) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            keep_bytes: usize::MAX,
            linger: Duration::ZERO,
        }
    }

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn a_child_that_ends_gives_its_status_and_output() {
        let never = AtomicBool::new(false);
        let f = run(
            &mut sh("echo out; echo err >&2; exit 3"),
            &limits(10_000),
            &never,
        )
        .unwrap();
        assert_eq!(f.status.and_then(|s| s.code()), Some(3));
        assert_eq!((f.stdout, f.stderr), (b"out\n".to_vec(), b"err\n".to_vec()));
        assert!(!f.timed_out && !f.interrupted);
    }

    #[test]
    fn a_child_past_its_deadline_is_killed_with_its_group() {
        let never = AtomicBool::new(false);
        let t0 = Instant::now();
        let f = run(&mut sh("sleep 30 & sleep 30"), &limits(200), &never).unwrap();
        assert!(f.timed_out && f.status.is_none());
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }

    #[test]
    fn a_stop_kills_at_once() {
        let stop = AtomicBool::new(true);
        let t0 = Instant::now();
        let f = run(&mut sh("sleep 30"), &limits(60_000), &stop).unwrap();
        assert!(f.interrupted && !f.timed_out && f.status.is_none());
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    }

    #[test]
    fn output_a_background_child_holds_open_counts_until_the_linger() {
        let never = AtomicBool::new(false);
        let lim = Limits {
            linger: Duration::from_millis(500),
            ..limits(10_000)
        };
        let t0 = Instant::now();
        let f = run(
            &mut sh("echo 1; (sleep 0.1; echo 2) & (sleep 30; echo 3) &"),
            &lim,
            &never,
        )
        .unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
        assert_eq!(f.status.and_then(|s| s.code()), Some(0));
        assert_eq!(String::from_utf8_lossy(&f.stdout), "1\n2\n");
    }

    #[test]
    fn only_the_tail_is_kept_and_a_missing_program_is_a_spawn_error() {
        let never = AtomicBool::new(false);
        let lim = Limits {
            keep_bytes: 3,
            ..limits(10_000)
        };
        let f = run(&mut sh("printf 'abcdef'"), &lim, &never).unwrap();
        assert_eq!(f.stdout, b"def");
        let e = run(&mut Command::new("/nonexistent/program"), &lim, &never).unwrap_err();
        assert!(matches!(e, RunError::Spawn(_)), "{e}");
    }
}
