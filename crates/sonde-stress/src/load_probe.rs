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

use sonde_platform::process::{signal_group, Signal};
use sonde_stats::stress::steps::{last_number, DeviceLoad};
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

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

/// What came out of one stream of the command.
enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
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
        let mut child = match Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return failed(format!("load probe could not start sh: {e}")),
        };
        let deadline = Instant::now() + self.timeout;
        let output = collect(&mut child, deadline, stop);
        let status = match wait(&mut child, deadline, stop) {
            Ok(s) => s,
            Err(why) => {
                kill_group(&mut child);
                return failed(why.unwrap_or_else(|| {
                    if stop.load(Ordering::SeqCst) {
                        "load probe stopped: the run was interrupted (killed)".into()
                    } else {
                        format!(
                            "load probe timed out after {} s (killed)",
                            self.timeout.as_secs_f64()
                        )
                    }
                }));
            }
        };
        // Nothing it started outlives the reading.
        kill_group(&mut child);
        judge(status, &output.0, &output.1)
    }
}

/// The tails of the command's stdout and stderr, read until both close, the deadline, or
/// [`DRAIN`] after the command itself ended.
fn collect(child: &mut Child, deadline: Instant, stop: &AtomicBool) -> (Vec<u8>, Vec<u8>) {
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        spawn_reader(out, tx.clone(), Chunk::Out);
    }
    if let Some(err) = child.stderr.take() {
        spawn_reader(err, tx, Chunk::Err);
    }
    drain(&rx, child, deadline, stop)
}

fn drain(
    rx: &Receiver<Chunk>,
    child: &mut Child,
    deadline: Instant,
    stop: &AtomicBool,
) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut ended: Option<Instant> = None;
    loop {
        let now = Instant::now();
        if ended.is_none() && matches!(child.try_wait(), Ok(Some(_))) {
            ended = Some(now);
        }
        let until = ended.map_or(deadline, |t| (t + DRAIN).min(deadline));
        if now >= until || stop.load(Ordering::SeqCst) {
            return (out, err);
        }
        // Wake now and then to see whether the command ended with its output still open.
        match rx.recv_timeout((until - now).min(Duration::from_millis(50))) {
            Ok(Chunk::Out(b)) => keep_tail(&mut out, &b),
            Ok(Chunk::Err(b)) => keep_tail(&mut err, &b),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return (out, err),
        }
    }
}

fn spawn_reader<R: Read + Send + 'static>(
    mut r: R,
    tx: mpsc::Sender<Chunk>,
    wrap: fn(Vec<u8>) -> Chunk,
) {
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 || tx.send(wrap(buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
}

/// Appends `more`, keeping the last [`KEEP_BYTES`].
fn keep_tail(buf: &mut Vec<u8>, more: &[u8]) {
    buf.extend_from_slice(more);
    if buf.len() > KEEP_BYTES {
        buf.drain(..buf.len() - KEEP_BYTES);
    }
}

/// The command's exit by the deadline; `Err(None)` at the deadline or a stop,
/// `Err(Some(why))` when it could not be waited for.
fn wait(
    child: &mut Child,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<ExitStatus, Option<String>> {
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Ok(s),
            Ok(None) if Instant::now() >= deadline || stop.load(Ordering::SeqCst) => {
                return Err(None)
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(Some(format!("load probe could not be waited for: {e}"))),
        }
    }
}

/// Kills `child`'s whole process group (it was started as its leader) with SIGKILL, so what
/// it started goes with it, and reaps `child`. A group already gone has nothing to kill.
fn kill_group(child: &mut Child) {
    let _ = signal_group(child.id(), Signal::KILL);
    let _ = child.wait();
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

    #[test]
    fn a_long_output_keeps_its_tail() {
        let mut buf = Vec::new();
        keep_tail(&mut buf, &vec![b'x'; KEEP_BYTES]);
        keep_tail(&mut buf, b" 99");
        assert_eq!(buf.len(), KEEP_BYTES);
        assert!(buf.ends_with(b" 99"));
    }
}
