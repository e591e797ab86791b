//! What Ctrl-C (SIGINT), SIGTERM and SIGHUP do, for every command.
//!
//! The rule (README "Stopping a run"):
//! - The first SIGINT or SIGTERM raises the stop flag that every command polls: the test in
//!   progress ends, and what it measured is printed and saved, marked partial (exit 1).
//! - A second one only says again that sonde is stopping: a second signal arrives easily
//!   by accident (`timeout` signals the process and its group, a finger rests on Ctrl-C),
//!   and must not throw the result away.
//! - A third within [`ABANDON_WINDOW`] of the first abandons the finish: sonde exits (1) once
//!   the result is written, or after [`ABANDON_GRACE`] if the command is stuck before it. A
//!   result that is being written ([`writing`]) is always written whole first, for at most
//!   [`WRITE_BOUND`] (a reader that stopped reading cannot hold sonde forever).
//! - While a lab is built no signal exits: its namespaces must be removed first (it says so).
//! - SIGHUP stops a command like SIGTERM (the terminal went away), except the agent's, which
//!   reads its configuration again (`systemctl reload`).
//!
//! The signals are taken on a thread of their own (`signal-hook`'s iterator), so what they
//! do is ordinary code, not a signal handler's restricted subset.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Three signals within this span of the first abandon the finish.
pub const ABANDON_WINDOW: Duration = Duration::from_secs(2);
/// How long an abandoned finish still waits for the command to write its result.
pub const ABANDON_GRACE: Duration = Duration::from_secs(2);
/// How long an exit waits for a result being written to be written whole.
pub const WRITE_BOUND: Duration = Duration::from_secs(5);

/// What the signals act on.
#[derive(Clone)]
pub struct Targets {
    /// Raised by the first SIGINT or SIGTERM (and SIGHUP, without `reload`).
    pub stop: Arc<AtomicBool>,
    /// A lab is being built: further signals only say it is being removed.
    pub builds_lab: bool,
    /// Raised by SIGHUP instead of stopping (the agent).
    pub reload: Option<Arc<AtomicBool>>,
}

/// The name of the signal that stopped the run, once one did (for messages).
static STOPPED_BY: OnceLock<&'static str> = OnceLock::new();

/// How a signal names itself in messages: SIGTERM is not "Ctrl-C".
fn name(sig: i32) -> &'static str {
    match sig {
        SIGINT => "Ctrl-C (SIGINT)",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The signal that stopped the run ("SIGTERM", "Ctrl-C (SIGINT)", ...), if one did.
pub fn stopped_by() -> Option<&'static str> {
    STOPPED_BY.get().copied()
}

/// Results being written right now, and whether the process is on its way out.
#[derive(Default)]
struct Writes {
    open: usize,
    exiting: bool,
}

fn writes() -> &'static (Mutex<Writes>, Condvar) {
    static W: OnceLock<(Mutex<Writes>, Condvar)> = OnceLock::new();
    W.get_or_init(Default::default)
}

/// Held while a command finishes and writes its result: an exit asked for by signals waits
/// until it is dropped (at most [`WRITE_BOUND`]).
pub struct Writing(());

/// Marks the result as being written until the guard is dropped. Once an exit has begun,
/// this waits for the exit (the result would be cut anyway).
pub fn writing() -> Writing {
    let (m, cv) = writes();
    let mut w = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    while w.exiting {
        w = cv
            .wait(w)
            .unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    w.open += 1;
    Writing(())
}

impl Drop for Writing {
    fn drop(&mut self) {
        let (m, cv) = writes();
        let mut w = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        w.open = w.open.saturating_sub(1);
        cv.notify_all();
    }
}

/// Leaves the process once no result is being written (waiting at most [`WRITE_BOUND`]).
fn exit_after_writes() -> ! {
    let (m, cv) = writes();
    let mut w = m.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    w.exiting = true;
    let deadline = Instant::now() + WRITE_BOUND;
    while w.open > 0 {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        w = cv
            .wait_timeout(w, left)
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .0;
    }
    std::process::exit(crate::commands::exit::FAILED);
}

/// What the signal thread remembers between signals.
struct Count {
    first: Option<Instant>,
    seen: u32,
}

impl Count {
    /// Counts `sig` arriving `now`: the signals so far within [`ABANDON_WINDOW`] of the first.
    fn add(&mut self, now: Instant) -> u32 {
        match self.first {
            Some(f) if now.duration_since(f) <= ABANDON_WINDOW => self.seen += 1,
            // The first, or a late one: sonde stops anyway, the count starts again.
            _ => {
                self.first = Some(now);
                self.seen = if self.seen == 0 { 1 } else { 2 };
            }
        }
        self.seen
    }
}

/// Takes SIGINT, SIGTERM and SIGHUP for `t` from now on.
pub fn arm(t: Targets) {
    let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: warning - cannot take Ctrl-C and SIGTERM: {e}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("sonde-signals".into())
        .spawn(move || {
            let mut count = Count {
                first: None,
                seen: 0,
            };
            for sig in signals.forever() {
                if sig == SIGHUP {
                    if let Some(r) = &t.reload {
                        r.store(true, Ordering::SeqCst);
                        continue;
                    }
                }
                if !t.stop.swap(true, Ordering::SeqCst) {
                    let _ = STOPPED_BY.set(name(sig));
                }
                again(&t, sig, count.add(Instant::now()));
            }
        });
    if let Err(e) = spawned {
        eprintln!("sonde: warning - cannot take Ctrl-C and SIGTERM: {e}");
    }
}

/// What the `n`th signal in a row does (the first only raised the stop flag).
fn again(t: &Targets, sig: i32, n: u32) {
    let what = name(sig);
    if n < 2 {
        return;
    }
    if t.builds_lab {
        eprintln!("sonde: stopping; removing the lab's namespaces first");
    } else if n == 2 {
        eprintln!(
            "sonde: {what} again: already stopping, the result so far is being written (a third within {} s abandons it)",
            ABANDON_WINDOW.as_secs()
        );
    } else {
        eprintln!(
            "sonde: {what} a third time: leaving within {} s, with the result if it is written by then",
            ABANDON_GRACE.as_secs()
        );
        std::thread::sleep(ABANDON_GRACE);
        exit_after_writes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_signals_within_the_window_count_three_and_a_late_one_counts_as_a_second() {
        let t0 = Instant::now();
        let mut c = Count {
            first: None,
            seen: 0,
        };
        assert_eq!(c.add(t0), 1);
        assert_eq!(c.add(t0 + Duration::from_millis(5)), 2);
        assert_eq!(c.add(t0 + Duration::from_millis(10)), 3);
        let late = t0 + ABANDON_WINDOW + Duration::from_secs(1);
        assert_eq!(c.add(late), 2, "a late signal repeats, it does not abandon");
        assert_eq!(c.add(late + Duration::from_millis(1)), 3);
    }

    #[test]
    fn sigterm_is_named_sigterm() {
        assert_eq!(name(SIGTERM), "SIGTERM");
        assert!(name(SIGINT).contains("Ctrl-C"));
    }
}
