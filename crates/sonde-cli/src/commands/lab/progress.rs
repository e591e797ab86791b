//! The lab run's progress display: an indicatif bar with an ETA on stderr, and one line per
//! finished test on stdout (printed around the bar, so neither garbles the other). Where
//! stderr is no terminal (a log file, a pipe) the bar draws nothing, so a plain line there
//! says which test starts, how many are done and the ETA.
//!
//! The ETA is the sum of the remaining tests' estimated durations (their `-t` plus a second),
//! scaled by how the finished tests compared with their estimates: tests over lossy links take
//! longer to set up and end than their `-t` says, and the scale learns that after a few tests.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::Value;
use sonde_emu::backend::{Backend, BackendPlan};
use sonde_lab::LabReport;
use sonde_labrun::Observer;
use sonde_scenario::Run;
use sonde_stats::units::format_bitrate;
use sonde_store::{TestRecord, TestStatus};
use std::time::{Duration, Instant};

/// Draws progress for one `sonde lab run`.
pub struct Progress {
    bar: ProgressBar,
    remaining: Duration,
    estimated_done: Duration,
    started: Option<(Instant, Duration)>,
    actual_done: Duration,
    /// Plain progress lines on stderr instead of the bar (stderr is no terminal).
    plain: bool,
}

impl Progress {
    /// A hidden bar until [`Observer::planned`] says how many tests there are.
    pub fn new() -> Progress {
        Progress {
            bar: ProgressBar::hidden(),
            remaining: Duration::ZERO,
            estimated_done: Duration::ZERO,
            started: None,
            actual_done: Duration::ZERO,
            plain: !std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    fn line(&self, text: String) {
        self.bar.suspend(|| crate::output::outln!("{text}"));
    }

    fn eta(&self) -> String {
        let scale = if self.estimated_done.is_zero() {
            1.0
        } else {
            self.actual_done.as_secs_f64() / self.estimated_done.as_secs_f64()
        };
        let secs = (self.remaining.as_secs_f64() * scale.clamp(0.5, 4.0)).round() as u64;
        format!("{}m {:02}s", secs / 60, secs % 60)
    }

    /// Removes the bar (before the summary is printed).
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A test's headline figure: receiver goodput (and loss for UDP), or the RTT for latency.
fn headline(rec: &TestRecord) -> String {
    let Some(doc) = rec
        .result_json
        .as_deref()
        .and_then(|t| serde_json::from_str::<Value>(t).ok())
    else {
        return String::new();
    };
    let end = &doc["end"];
    if let Some(rtt) = end["rtt"]["mean_ms"].as_f64() {
        let loss = end["loss"]["loss_percent"].as_f64().unwrap_or(0.0);
        return format!("rtt {rtt:.2} ms, loss {loss:.1} %");
    }
    let rx = &end["sum_received"];
    let bps = rx["bits_per_second"]
        .as_f64()
        .or_else(|| end["sum"]["bits_per_second"].as_f64());
    let loss = end["sum"]["lost_percent"]
        .as_f64()
        .or_else(|| rx["lost_percent"].as_f64());
    match (bps, loss) {
        (Some(b), Some(l)) => format!("{}, loss {l:.2} %", format_bitrate(b)),
        (Some(b), None) => format_bitrate(b),
        _ => String::new(),
    }
}

/// "wan a-to-b: userspace (rate, loss); ..." for the setting's line.
fn describe_plan(plan: &BackendPlan) -> String {
    if plan.directions.is_empty() {
        return "no impairments".into();
    }
    plan.directions
        .iter()
        .map(|d| {
            let backend = match d.backend {
                Backend::Userspace => "userspace engine".to_owned(),
                Backend::Kernel(q) => format!("kernel {q:?}").to_lowercase(),
            };
            let imps: Vec<String> = d
                .impairments
                .iter()
                .map(|i| format!("{i:?}").to_lowercase())
                .collect();
            format!(
                "{} {}: {backend} ({})",
                d.link,
                d.direction,
                imps.join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl Observer for Progress {
    fn planned(&mut self, total: usize, to_run: usize, estimate: Duration) {
        self.remaining = estimate;
        let skipped = total - to_run;
        let resumed = if skipped > 0 {
            format!(" ({skipped} already recorded, skipped)")
        } else {
            String::new()
        };
        self.line(format!(
            "{to_run} of {total} tests to run{resumed}, about {} s of testing",
            estimate.as_secs()
        ));
        self.bar = ProgressBar::with_draw_target(Some(to_run as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} tests, ETA {msg}",
        ) {
            self.bar.set_style(style);
        }
        self.bar.set_message(self.eta());
        self.bar.enable_steady_tick(Duration::from_millis(200));
    }

    fn setting_started(&mut self, name: &str, plan: Option<&BackendPlan>, error: Option<&str>) {
        let what = match (error, plan) {
            (Some(e), _) => format!("FAILED: {e}"),
            (None, Some(p)) => describe_plan(p),
            (None, None) => "no impairments".into(),
        };
        self.line(format!("== settings {name}: {what}"));
    }

    fn namespaces(&mut self, prefix: &str) {
        self.line(format!(
            "   namespaces {prefix}-HOST while it runs (ip netns exec {prefix}-HOST CMD)"
        ));
    }

    fn test_started(&mut self, run: &Run, estimate: Duration) {
        self.started = Some((Instant::now(), estimate));
        if self.plain {
            let (done, len) = (self.bar.position(), self.bar.length().unwrap_or(0));
            eprintln!(
                "sonde lab: test {} of {len} starts: {} (ETA {})",
                done + 1,
                run.id,
                self.eta()
            );
        }
        self.bar
            .set_message(format!("{} (running {})", self.eta(), run.id));
    }

    fn test_finished(&mut self, run: &Run, rec: &TestRecord) {
        if let Some((t0, est)) = self.started.take() {
            self.remaining = self.remaining.saturating_sub(est);
            self.estimated_done += est;
            self.actual_done += t0.elapsed();
        }
        self.bar.inc(1);
        self.bar.set_message(self.eta());
        let secs = (rec.ended_unix - rec.started_unix).max(0.0);
        let text = match rec.status {
            TestStatus::Ok => format!(
                "  ok      {:<32} {:>6.1} s  {}",
                run.id,
                secs,
                headline(rec)
            ),
            TestStatus::Failed => format!(
                "  FAILED  {:<32} {:>6.1} s  {}",
                run.id,
                secs,
                rec.failure_reason.as_deref().unwrap_or("")
            ),
        };
        self.line(text);
    }

    fn setting_finished(&mut self, name: &str, report: &LabReport) {
        for n in &report.notes {
            self.line(format!("  note ({name}): {n}"));
        }
        for e in &report.teardown_errors {
            self.line(format!("  warning: tearing down {name}: {e}"));
        }
    }
}
