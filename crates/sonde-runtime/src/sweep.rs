//! `sonde sweep`: runs the rate sweep's steps, each an ordinary short sonde test (the same
//! client, server, pacing and figures as `sonde client`), and feeds their outcomes to the pure
//! search of `sonde_stats::sweep`. This module only schedules steps and reads each summary.

use crate::client;
use crate::connect::ClientConfig;
use crate::error::RunError;
use sonde_proto::message::TestParams;
use sonde_stats::model::{Direction, Protocol, TestSummary};
use sonde_stats::sink::{deliver, Discard, Sink};
use sonde_stats::sweep::{
    judge_listed_step, Bisection, Probe, SearchConfig, StepKind, StepOutcome, SENDER_SHORT_RERUNS,
};
use sonde_stats::sweep_record::{SearchResult, StepRole, SweepDirection, SweepStep};
use sonde_stats::units::format_bitrate;
use std::sync::atomic::AtomicBool;
use std::time::Instant;
use thiserror::Error;

/// What a sweep does.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    /// Host, port, timeouts and local sockets; its params give protocol and socket options
    /// (rate, length, direction and duration are set per step).
    pub client: ClientConfig,
    /// Seconds each step transmits.
    pub step_secs: f64,
    pub directions: Vec<SweepDirection>,
    pub mode: SweepMode,
}

/// The two kinds of sweep.
#[derive(Debug, Clone)]
pub enum SweepMode {
    /// Per length and direction, the highest rate within the loss limit (UDP).
    Search {
        lengths: Vec<u32>,
        search: SearchConfig,
    },
    /// One step per rate at one length: achieved against asked. A step the host fell short
    /// in runs again (`sonde_stats::sweep::judge_listed_step`; `tolerance` a fraction).
    Rates {
        rates: Vec<u64>,
        length: u32,
        tolerance: f64,
    },
}

/// Where a sweep is, for progress lines.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Searches (or listed rates) finished and in all.
    pub done: usize,
    pub total: usize,
    /// Estimated seconds left, from the steps so far.
    pub eta_secs: f64,
}

/// A step as it ends, with where the sweep then stands: the event a sweep hands its sink.
#[derive(Debug, Clone, Copy)]
pub struct StepDone<'a> {
    pub step: &'a SweepStep,
    pub progress: Progress,
}

/// A step that failed, named so the user knows where the sweep stopped.
#[derive(Debug, Error)]
#[error("step {index} ({length} B, {direction}, {rate}): {source}")]
pub struct StepError {
    pub index: u32,
    pub length: u32,
    pub direction: &'static str,
    pub rate: String,
    #[source]
    pub source: RunError,
}

/// Everything a sweep measured, complete or not.
#[derive(Debug, Clone, Default)]
pub struct SweepRecord {
    pub steps: Vec<SweepStep>,
    pub searches: Vec<SearchResult>,
}

/// Steps a search is expected to take, for the first estimate of time left.
const EXPECTED_SEARCH_STEPS: f64 = 6.0;

/// Runs the sweep, handing each step to `on_step` as it ends ([`StepDone`]). A failing step ends the sweep
/// with its error; what ran before it is kept.
///
/// # Errors
/// The failing step's [`StepError`] (Ctrl-C is [`RunError::Interrupted`] in it).
pub fn run(
    cfg: &SweepConfig,
    interrupt: &AtomicBool,
    on_step: &mut dyn for<'a> Sink<StepDone<'a>>,
) -> (SweepRecord, Option<StepError>) {
    let mut rec = SweepRecord::default();
    let started = Instant::now();
    let error = match &cfg.mode {
        SweepMode::Search { lengths, search } => run_searches(
            cfg,
            interrupt,
            (&mut rec, started),
            (lengths, search),
            on_step,
        ),
        SweepMode::Rates {
            rates,
            length,
            tolerance,
        } => run_rates(
            cfg,
            interrupt,
            (&mut rec, started),
            (rates, *length, *tolerance),
            on_step,
        ),
    };
    (rec, error)
}

/// The searches of a [`SweepMode::Search`] sweep, one per length and direction, into `rec`;
/// the error of the step that ended them.
fn run_searches(
    cfg: &SweepConfig,
    interrupt: &AtomicBool,
    (rec, started): (&mut SweepRecord, Instant),
    (lengths, search): (&[u32], &SearchConfig),
    on_step: &mut dyn for<'a> Sink<StepDone<'a>>,
) -> Option<StepError> {
    let total = lengths.len() * cfg.directions.len();
    let mut err = None;
    'all: for &length in lengths {
        for &dir in &cfg.directions {
            let t0 = Instant::now();
            let mut b = Bisection::new(*search);
            while let Some(probe) = b.next() {
                let done = rec.searches.len();
                let (step, error) = run_step(cfg, interrupt, rec, length, dir, probe);
                let Some(step) = step else {
                    err = error;
                    break 'all;
                };
                let o = StepOutcome {
                    achieved_bps: step.achieved_bps,
                    loss_percent: step.loss_percent.unwrap_or(f64::INFINITY),
                    sent_bps: step.sent_bps,
                };
                let mut step = step;
                step.passed = Some(b.passes(probe.rate_bps, &o));
                step.rerun = b.runs_again(probe.rate_bps, &o);
                b.record(o);
                let eta = eta(rec, started, done, total, b.steps());
                deliver(
                    on_step,
                    &StepDone {
                        step: &step,
                        progress: eta,
                    },
                );
                rec.steps.push(step);
            }
            let Some(verdict) = b.verdict() else {
                continue;
            };
            let first = rec.steps.len().saturating_sub(b.steps() as usize);
            let mut result = SearchResult {
                length,
                direction: dir,
                verdict,
                loss_percent: None,
                steps: b.steps(),
                seconds: t0.elapsed().as_secs_f64(),
            };
            result.loss_percent = worst_loss_at(&rec.steps[first..], result.rate_bps());
            rec.searches.push(result);
        }
    }
    err
}

/// The steps of a [`SweepMode::Rates`] sweep, one per rate and direction (with its reruns),
/// into `rec`; the error of the step that ended them.
fn run_rates(
    cfg: &SweepConfig,
    interrupt: &AtomicBool,
    (rec, started): (&mut SweepRecord, Instant),
    (rates, length, tolerance): (&[u64], u32, f64),
    on_step: &mut dyn for<'a> Sink<StepDone<'a>>,
) -> Option<StepError> {
    let total = rates.len() * cfg.directions.len();
    let udp = cfg.client.params.protocol == Protocol::Udp;
    let mut err = None;
    let mut done = 0;
    'rates: for &dir in &cfg.directions {
        for &rate in rates {
            let probe = Probe {
                rate_bps: rate,
                kind: StepKind::Search,
            };
            for attempt in 0..=SENDER_SHORT_RERUNS {
                let (step, error) = run_step(cfg, interrupt, rec, length, dir, probe);
                let Some(mut step) = step else {
                    err = error;
                    break 'rates;
                };
                step.kind = StepRole::Listed;
                let judged = judge_listed_step(
                    udp,
                    rate,
                    step.sent_bps,
                    step.achieved_bps,
                    tolerance,
                    attempt,
                );
                (step.rerun, step.sender_short) = (judged.rerun, judged.sender_short);
                let rerun = step.rerun;
                if !rerun {
                    done += 1;
                }
                let per = started.elapsed().as_secs_f64() / (rec.steps.len() + 1) as f64;
                let progress = Progress {
                    done,
                    total,
                    eta_secs: per * total.saturating_sub(done) as f64,
                };
                deliver(
                    on_step,
                    &StepDone {
                        step: &step,
                        progress,
                    },
                );
                rec.steps.push(step);
                if !rerun {
                    break;
                }
            }
        }
    }
    err
}

/// The worst loss of the steps run at `rate` (the search step that found it and its
/// confirmations).
fn worst_loss_at(steps: &[SweepStep], rate: Option<u64>) -> Option<f64> {
    let rate = rate?;
    steps
        .iter()
        .filter(|s| s.offered_bps == rate)
        .filter_map(|s| s.loss_percent)
        .reduce(f64::max)
}

/// Time left: the mean step time so far times the steps expected to remain.
fn eta(rec: &SweepRecord, started: Instant, done: usize, total: usize, in_search: u32) -> Progress {
    let steps = rec.steps.len() + 1;
    let per_step = started.elapsed().as_secs_f64() / steps as f64;
    let per_search = if done == 0 {
        EXPECTED_SEARCH_STEPS.max(f64::from(in_search) + 1.0)
    } else {
        (steps - in_search as usize) as f64 / done as f64
    };
    let left_here = (per_search - f64::from(in_search)).max(1.0);
    let left = left_here + per_search * total.saturating_sub(done + 1) as f64;
    Progress {
        done,
        total,
        eta_secs: left * per_step,
    }
}

/// Runs one step; its record, or the error that ended it.
fn run_step(
    cfg: &SweepConfig,
    interrupt: &AtomicBool,
    rec: &mut SweepRecord,
    length: u32,
    dir: SweepDirection,
    probe: Probe,
) -> (Option<SweepStep>, Option<StepError>) {
    let index = rec.steps.len() as u32 + 1;
    let step_cfg = ClientConfig {
        params: TestParams {
            direction: match dir {
                SweepDirection::Up => Direction::Upload,
                SweepDirection::Down => Direction::Reverse,
                SweepDirection::Bidir => Direction::Bidir,
            },
            duration_secs: cfg.step_secs,
            bytes: sonde_stats::units::Size::ZERO,
            blocks: 0,
            length: sonde_stats::units::Size::from_bytes(length.into()),
            rate: sonde_stats::units::Rate::from_bits_per_sec(probe.rate_bps),
            interval_secs: 0.0,
            omit_secs: 0.0,
            ..cfg.client.params.clone()
        },
        ..cfg.client.clone()
    };
    let t0 = Instant::now();
    let outcome = client::run(&step_cfg, interrupt, &mut Discard);
    let fail = |source| StepError {
        index,
        length,
        direction: dir.name(),
        rate: format_bitrate(probe.rate_bps as f64),
        source,
    };
    if let Some(e) = outcome.error {
        return (None, Some(fail(e)));
    }
    let Some(summary) = outcome.summary else {
        return (
            None,
            Some(fail(RunError::Setup(
                "the step ended without figures".into(),
            ))),
        );
    };
    let step = step_figures(&summary).map(|(achieved, sent, loss, packets, lost)| SweepStep {
        index,
        length,
        direction: dir,
        kind: probe.kind.into(),
        offered_bps: probe.rate_bps,
        achieved_bps: achieved,
        sent_bps: sent,
        loss_percent: loss,
        packets,
        lost,
        passed: None,
        rerun: false,
        sender_short: false,
        seconds: t0.elapsed().as_secs_f64(),
    });
    match step {
        Some(s) => (Some(s), None),
        None => (
            None,
            Some(fail(RunError::Setup(
                "the step's summary has no receiver figures".into(),
            ))),
        ),
    }
}

type Figures = (f64, Option<f64>, Option<f64>, Option<u64>, Option<u64>);

/// Achieved rate (the lowest over directions), the sender's rate (the lowest, when every
/// direction has one), loss (the worst), datagrams and lost (summed).
///
/// Loss is the larger of the receiver's (gaps in the sequence) and the sender's view (sent but
/// never received, which also counts a lost tail): a step where nothing arrived has lost all.
fn step_figures(s: &TestSummary) -> Option<Figures> {
    let mut achieved = f64::INFINITY;
    let mut sent_bps = Some(f64::INFINITY);
    let mut worst: Option<f64> = None;
    let (mut packets, mut lost) = (0u64, 0u64);
    for d in &s.directions {
        let r = d.received.as_ref()?;
        achieved = achieved.min(r.bits_per_second);
        sent_bps = match (sent_bps, d.sent.as_ref()) {
            (Some(lowest), Some(v)) => Some(lowest.min(v.bits_per_second)),
            _ => None,
        };
        if let Some(u) = &r.udp_received {
            let arrived = u.packets.saturating_sub(u.lost);
            let sent = d.sent.as_ref().and_then(|v| v.udp_sent_packets);
            let missing = sent.map_or(u.lost, |n| n.saturating_sub(arrived).max(u.lost));
            let expected = sent.map_or(u.packets, |n| n.max(u.packets));
            let pct = if expected == 0 {
                100.0
            } else {
                100.0 * missing as f64 / expected as f64
            };
            worst = Some(worst.map_or(pct, |w| w.max(pct)));
            packets += expected;
            lost += missing;
        }
    }
    if !achieved.is_finite() {
        return None;
    }
    let udp = s.protocol == Protocol::Udp;
    Some((
        achieved,
        sent_bps.filter(|s| s.is_finite()),
        worst.filter(|_| udp),
        udp.then_some(packets),
        udp.then_some(lost),
    ))
}
