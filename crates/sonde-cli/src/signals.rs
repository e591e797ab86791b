//! What Ctrl-C (SIGINT), SIGTERM and SIGHUP do, for every command.
//!
//! The rule (docs/output.md, "Stopping a run"):
//! - The first SIGINT or SIGTERM raises the stop flag that every command polls: the test in
//!   progress ends, and what it measured is printed and saved, marked partial (exit 1).
//! - A second one only says again that sonde is stopping: a second signal arrives easily
//!   by accident (`timeout` signals the process and its group, a finger rests on Ctrl-C),
//!   and must not throw the result away.
//! - A third within [`ABANDON_WINDOW`] of the first abandons the finish: sonde exits (1) once
//!   the result is written, or after [`ABANDON_GRACE`] if the command is stuck before it. A
//!   result that is being written ([`writing`]; a reporter holds it from its summary until
//!   its document is written, see `output::document` for the others) is always written
//!   whole first, for at most [`WRITE_BOUND`] (a reader that stopped reading cannot hold
//!   sonde forever).
//! - While a lab is built no signal exits: its namespaces must be removed first (it says so).
//! - SIGHUP stops a command like SIGTERM (the terminal went away), except the agent's, which
//!   reads its configuration again (`systemctl reload`).
//!
//! The signals are taken on a thread of their own (`signal-hook`'s iterator), so what they
//! do is ordinary code, not a signal handler's restricted subset.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::ThreadId;
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

/// Results being written right now (by the thread that writes each), and whether the process
/// is on its way out.
#[derive(Default)]
struct Writes {
    holders: Vec<ThreadId>,
    exiting: bool,
}

impl Writes {
    /// Whether `me` may open a write now: always before the exit began, and after it only on
    /// a thread that already holds one (its document is being written: waiting for the exit
    /// there would cut the document the exit waits for).
    fn may_open(&self, me: ThreadId) -> bool {
        !self.exiting || self.holders.contains(&me)
    }

    /// Whether the exit may leave: no part of any result is being written.
    fn may_leave(&self) -> bool {
        self.holders.is_empty()
    }

    fn open(&mut self, me: ThreadId) {
        self.holders.push(me);
    }

    fn close(&mut self, me: ThreadId) {
        if let Some(i) = self.holders.iter().position(|t| *t == me) {
            self.holders.swap_remove(i);
        }
    }
}

fn writes() -> &'static (Mutex<Writes>, Condvar) {
    static W: OnceLock<(Mutex<Writes>, Condvar)> = OnceLock::new();
    W.get_or_init(Default::default)
}

fn lock(m: &Mutex<Writes>) -> MutexGuard<'_, Writes> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Held while a command finishes and writes its result: an exit asked for by signals waits
/// until every one is dropped (at most [`WRITE_BOUND`]). Guards nest: a thread holding one
/// may take more, even once the exit began.
pub struct Writing(ThreadId);

/// Marks the result as being written until the guard is dropped. Once an exit has begun, a
/// thread that holds no guard waits for the exit (its result would be cut anyway); that wait
/// ends too, after [`WRITE_BOUND`] and a second, should the exit not happen.
pub fn writing() -> Writing {
    let me = std::thread::current().id();
    let mut w = wait_until(WRITE_BOUND + Duration::from_secs(1), |w| w.may_open(me));
    w.open(me);
    Writing(me)
}

/// Waits until `ready` holds of the writes, or `bound` has passed; returns them locked.
fn wait_until(bound: Duration, ready: impl Fn(&Writes) -> bool) -> MutexGuard<'static, Writes> {
    let (m, cv) = writes();
    let mut w = lock(m);
    let deadline = Instant::now() + bound;
    while !ready(&w) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        w = cv
            .wait_timeout(w, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
    w
}

/// True while this thread holds a [`Writing`] guard.
#[cfg(test)]
pub fn held_here() -> bool {
    lock(&writes().0)
        .holders
        .contains(&std::thread::current().id())
}

impl Drop for Writing {
    fn drop(&mut self) {
        let (m, cv) = writes();
        lock(m).close(self.0);
        cv.notify_all();
    }
}

/// Leaves the process once no result is being written (waiting at most [`WRITE_BOUND`]).
fn exit_after_writes() -> ! {
    // From here a thread that holds no guard waits for the exit rather than start a result.
    lock(&writes().0).exiting = true;
    let _w = wait_until(WRITE_BOUND, Writes::may_leave);
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
    fn the_exit_waits_while_any_part_of_a_result_is_written_and_nested_guards_do_not_block() {
        let me = std::thread::current().id();
        let other = std::thread::spawn(|| std::thread::current().id())
            .join()
            .unwrap_or(me);
        let mut w = Writes::default();
        // End's guard, then finish's nested in it, then End's dropped: finish still writes.
        w.open(me);
        w.open(me);
        w.exiting = true;
        assert!(
            w.may_open(me),
            "a thread writing its document may go on writing it"
        );
        assert!(!w.may_open(other), "a new write waits for the exit");
        w.close(me);
        assert!(
            !w.may_leave(),
            "the exit waits while the document is still written"
        );
        w.close(me);
        assert!(w.may_leave());
        assert!(
            !w.may_open(me),
            "once it wrote all, the thread waits like any other"
        );
    }

    #[test]
    fn a_guard_is_held_by_its_thread_until_dropped() {
        let g = writing();
        let inner = writing();
        assert!(held_here());
        drop(g);
        assert!(held_here(), "the nested guard still holds");
        drop(inner);
        assert!(!held_here());
    }

    #[test]
    fn sigterm_is_named_sigterm() {
        assert_eq!(name(SIGTERM), "SIGTERM");
        assert!(name(SIGINT).contains("Ctrl-C"));
    }
}
