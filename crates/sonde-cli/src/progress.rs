//! Where a long run is, on stderr: `compare-ip` and `profile run` can take minutes (the
//! documentation's `compare-ip --all -t 600` ten of them) and would otherwise say nothing until the
//! end. A spinner (indicatif) with the phase and the time so far when stderr is a terminal;
//! plain lines when it is not (a log, a pipe), at most one every [`MIN_GAP`], and one at
//! least every [`EVERY`] while a phase lasts. stdout, where the results go, is untouched.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Least time between two plain lines.
pub const MIN_GAP: Duration = Duration::from_secs(2);
/// Most time without a plain line while the run lasts.
pub const EVERY: Duration = Duration::from_secs(10);
/// How often the ticker looks.
const TICK: Duration = Duration::from_millis(200);

/// What the ticker and the caller share.
struct State {
    /// The phase the run is in.
    phase: String,
    /// The phase the last plain line named.
    said: String,
    last_line: Option<Instant>,
}

/// The progress of one run of `command` ("compare-ip"), shown until [`Progress::finish`].
pub struct Progress {
    command: &'static str,
    started: Instant,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts showing progress of `command` on stderr.
    pub fn start(command: &'static str) -> Progress {
        let state = Arc::new(Mutex::new(State {
            phase: String::new(),
            said: String::new(),
            last_line: None,
        }));
        let mut p = Progress {
            command,
            started: Instant::now(),
            state,
            stop: Arc::new(AtomicBool::new(false)),
            ticker: None,
            bar: None,
        };
        if std::io::stderr().is_terminal() {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{spinner} sonde {prefix}: {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_prefix(command);
            bar.enable_steady_tick(Duration::from_millis(250));
            p.bar = Some(bar);
        } else {
            p.ticker = Some(p.spawn_ticker());
        }
        p
    }

    /// The run entered `phase` ("IPv6 latency: 100 probes ...").
    pub fn phase(&self, phase: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(phase.to_string());
            return;
        }
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.phase = phase.to_string();
        say_due(&mut st, self.command, self.started);
    }

    /// Runs `f` (which prints to stdout) with the spinner out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) => bar.suspend(f),
            None => f(),
        }
    }

    /// Stops the spinner or the ticker (before the results are printed).
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }

    fn spawn_ticker(&self) -> JoinHandle<()> {
        let (state, stop) = (self.state.clone(), self.stop.clone());
        let (command, started) = (self.command, self.started);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(TICK);
                let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
                say_due(&mut st, command, started);
            }
        })
    }
}

/// Prints the phase line when one is due (see [`due_line`]).
fn say_due(st: &mut State, command: &str, started: Instant) {
    if let Some(line) = due_line(st, command, started, Instant::now()) {
        eprintln!("{line}");
    }
}

/// The phase line due at `now`, if any: a new phase and [`MIN_GAP`] since the last line, or
/// [`EVERY`] since it; the state then counts it as said.
fn due_line(st: &mut State, command: &str, started: Instant, now: Instant) -> Option<String> {
    if st.phase.is_empty() {
        return None;
    }
    let since = st.last_line.map(|t| now.saturating_duration_since(t));
    let due = match since {
        None => true,
        Some(s) => (st.phase != st.said && s >= MIN_GAP) || s >= EVERY,
    };
    if !due {
        return None;
    }
    st.said = st.phase.clone();
    st.last_line = Some(now);
    let secs = now.saturating_duration_since(started).as_secs();
    Some(format!("sonde {command}: {} ({secs} s so far)", st.phase))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_at_most_every_two_seconds_and_at_least_every_ten() {
        let t0 = Instant::now();
        let at = |s: f64| t0 + Duration::from_secs_f64(s);
        let mut st = State {
            phase: String::new(),
            said: String::new(),
            last_line: None,
        };
        assert_eq!(due_line(&mut st, "x", t0, at(0.0)), None);
        st.phase = "one".into();
        assert_eq!(
            due_line(&mut st, "x", t0, at(0.0)).as_deref(),
            Some("sonde x: one (0 s so far)")
        );
        st.phase = "two".into();
        assert_eq!(due_line(&mut st, "x", t0, at(1.0)), None);
        assert!(due_line(&mut st, "x", t0, at(2.0)).is_some_and(|l| l.contains("two")));
        assert_eq!(due_line(&mut st, "x", t0, at(11.0)), None);
        assert_eq!(
            due_line(&mut st, "x", t0, at(12.0)).as_deref(),
            Some("sonde x: two (12 s so far)")
        );
    }
}
