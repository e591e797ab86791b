//! `sonde compare-ip`: the same probes, uploads and, when asked, the scenario modes over each
//! family, judged with the tests of `sonde_stats::latency::compare`, and the verdict.
//!
//! Each latency figure and percentage comes from one place, the measure of the verdict, so a
//! difference is told once: the `latency` and `throughput` comparisons of the document are
//! the verdict's measures in short. The probes and the uploads alternate the families in rounds
//! (`probe_rounds`, [`uploads`]). `progress` hears of each phase as it starts
//! (a [`ComparePhase`], data: the command words it for its progress lines on stderr).

mod probe_rounds;
pub mod uploads;

use crate::dual_stack::{run_btc, run_capacity, run_sizes, BtcPlan, SizesPlan};
use crate::latency::unanswered::unanswered;
use crate::latency::LatencyConfig;
use crate::rrul::keyed;
use probe_rounds::{round_count, run_probe_rounds};
use sonde_platform::host::software;
use sonde_platform::resolve::{resolve, Family};
use sonde_stats::dual_stack::{self, BtcFamily, CapacityFamily, SizeRow};
use sonde_stats::latency::compare::Comparison;
use sonde_stats::latency::histogram::DelayAccumulator;
use sonde_stats::latency::model::{CompareIpResult, DelayStats, FamilyResult, LossStats};
use sonde_stats::latency::timeline::{bins, LatencyBin, ProbePoint};
use sonde_stats::sink::{deliver, Sink};
use sonde_stats::verdict::{Measure, MeasureVerdict, Verdict};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use uploads::{run_uploads, UploadRounds, UploadTarget};

/// A phase of `sonde compare-ip` as it starts, what [`run_compare`]'s `progress` hears; its
/// [`fmt::Display`] is the progress line's words ("latency: round 1 of 4, ...").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparePhase {
    /// Round `round` (from 1) of `of` of the latency probes: `each` probes a family, one
    /// every `every`.
    ProbeRound {
        round: u64,
        of: u64,
        each: u64,
        every: Duration,
    },
    /// The latency size cycle: `sizes` sizes, `count` probes of each a family, one every
    /// `every`.
    SizeCycle {
        sizes: usize,
        count: u64,
        every: Duration,
    },
    /// Round `round` (from 1) of `of` of the TCP uploads, `each` a family.
    UploadRound { round: u64, of: u64, each: Duration },
    /// The BTC sessions: `sessions` a family, the families alternating, one every `every`.
    Btc { sessions: usize, every: Duration },
    /// The path capacity of one family (`v6`: IPv6's).
    Capacity { v6: bool },
}

impl fmt::Display for ComparePhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ProbeRound {
                round,
                of,
                each,
                every,
            } => write!(
                f,
                "latency: round {round} of {of}, {each} probes a family, one every {every:?}"
            ),
            Self::SizeCycle {
                sizes,
                count,
                every,
            } => write!(
                f,
                "latency per size: {sizes} sizes, {count} probes each a family, one every {every:?}"
            ),
            Self::UploadRound { round, of, each } => write!(
                f,
                "TCP uploads: round {round} of {of}, {:.1} s a family",
                each.as_secs_f64()
            ),
            Self::Btc { sessions, every } => write!(
                f,
                "BTC: {sessions} sessions a family, alternating, one every {every:?}"
            ),
            Self::Capacity { v6 } => write!(f, "path capacity: {}", family_name(v6)),
        }
    }
}

/// Settings of `sonde compare-ip`.
#[derive(Debug, Clone)]
pub struct CompareConfig {
    /// Probe settings; `family` is overridden per run.
    pub probe: LatencyConfig,
    /// Use this IPv4 / IPv6 address instead of resolving the host.
    pub ipv4: Option<IpAddr>,
    pub ipv6: Option<IpAddr>,
    /// Seconds of TCP upload per family (0 skips it).
    pub throughput_secs: f64,
    pub connect_timeout: Duration,
    /// Latency over a cycle of probe sizes instead of the single-size probe run.
    pub sizes: Option<SizesPlan>,
    /// BTC sessions per family.
    pub btc: Option<BtcPlan>,
    /// Path capacity per family.
    pub capacity: bool,
}

fn family_addr(cfg: &CompareConfig, v6: bool, interrupt: &AtomicBool) -> Result<IpAddr, String> {
    let given = if v6 { cfg.ipv6 } else { cfg.ipv4 };
    if let Some(a) = given {
        return Ok(a);
    }
    let fam = if v6 { Family::V6 } else { Family::V4 };
    resolve(&cfg.probe.host, cfg.probe.port, fam, interrupt)
        .map_err(|e| e.to_string())
        .and_then(|v| {
            v.first()
                .map(SocketAddr::ip)
                .ok_or_else(|| "no address".into())
        })
}

/// A family's result with its address (or why it has none); the figures come later.
fn family_result(cfg: &CompareConfig, v6: bool, interrupt: &AtomicBool) -> FamilyResult {
    let mut r = FamilyResult {
        family: family_name(v6).into(),
        address: None,
        rtt: None,
        loss_percent: None,
        throughput_bps: None,
        error: None,
    };
    match family_addr(cfg, v6, interrupt) {
        Ok(a) => r.address = Some(a.to_string()),
        Err(e) => r.error = Some(e),
    }
    r
}

/// Each family's RTT samples and its probes along the run, IPv4's first.
type Probed = ([Vec<f64>; 2], [Vec<ProbePoint>; 2]);

/// The families' latency from the probe rounds (see `probe_rounds`); each family's
/// RTT samples and probes.
fn probe_families(
    cfg: &CompareConfig,
    fams: [&mut FamilyResult; 2],
    interrupt: &AtomicBool,
    progress: &mut dyn Sink<ComparePhase>,
) -> Probed {
    let mut probe = cfg.probe.clone();
    probe.family = Family::Any;
    probe.report_interval = None;
    let addrs = fams
        .each_ref()
        .map(|f| f.address.as_deref().and_then(|a| a.parse().ok()));
    let n = probe.count.unwrap_or(0);
    let every = probe.interval;
    let mut said = |round: u64, of: u64| {
        deliver(
            progress,
            &ComparePhase::ProbeRound {
                round,
                of,
                each: round_count(n, of, round - 1),
                every,
            },
        );
    };
    let got = run_probe_rounds(&probe, addrs, interrupt, &mut said);
    let mut samples = [Vec::new(), Vec::new()];
    let mut points = [Vec::new(), Vec::new()];
    for ((f, p), (s, pts)) in fams
        .into_iter()
        .zip(got)
        .zip(samples.iter_mut().zip(points.iter_mut()))
    {
        *pts = p.points;
        if f.address.is_none() {
            continue;
        }
        if p.sent > 0 {
            f.loss_percent = Some((p.sent - p.received.min(p.sent)) as f64 * 100.0 / p.sent as f64);
        }
        f.rtt = rtt_of(&p.samples_ms);
        let silent = p.last.as_ref().filter(|_| p.received == 0);
        let why = silent.and_then(|s| family_unanswered(&probe, f, &s.loss));
        let not_sent = (p.rounds_not_sent > 0).then(|| {
            format!(
                "the other {} probe rounds were not sent once a whole round went unanswered",
                p.rounds_not_sent
            )
        });
        f.error = p
            .error
            .into_iter()
            .chain(why)
            .chain(not_sent)
            .reduce(|a, b| format!("{a}; {b}"));
        *s = p.samples_ms;
    }
    (samples, points)
}

/// Why family `f`'s probes (`probe`, sent to the family's address) with counts `loss`
/// measured nothing; None when one was answered (see [`unanswered`]).
fn family_unanswered(probe: &LatencyConfig, f: &FamilyResult, loss: &LossStats) -> Option<String> {
    let probe = LatencyConfig {
        host: f.address.clone().unwrap_or_default(),
        ..probe.clone()
    };
    unanswered(&probe, loss)
}

/// The RTT distribution of `samples_ms`; None when there are none.
fn rtt_of(samples_ms: &[f64]) -> Option<DelayStats> {
    let mut acc = DelayAccumulator::absolute();
    for ms in samples_ms {
        acc.record((ms * 1e6) as i64);
    }
    acc.stats(0, false)
}

/// Measures both families and compares them: the probe rounds (or the size cycle), the
/// uploads in rounds, each alternating the families, then BTC and capacity when asked; the
/// verdict weighs them all. `progress` hears each phase as it starts.
pub fn run_compare(
    cfg: &CompareConfig,
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn Sink<ComparePhase>,
) -> CompareIpResult {
    let (mut v4, mut v6) = (
        family_result(cfg, false, interrupt),
        family_result(cfg, true, interrupt),
    );
    // With sizes, the latency comes from the size cycle instead of the probe rounds.
    let (sizes, (rtts, points)) = match &cfg.sizes {
        None => (
            Vec::new(),
            probe_families(cfg, [&mut v4, &mut v6], interrupt, progress),
        ),
        Some(plan) => size_cycle(cfg, plan, [&mut v4, &mut v6], interrupt, progress),
    };
    let rounds = uploads(cfg, [&mut v4, &mut v6], interrupt, progress);
    let port = cfg.probe.port;
    let local = keyed(&cfg.probe);
    let btc = cfg.btc.as_ref().map(|plan| {
        deliver(
            progress,
            &ComparePhase::Btc {
                sessions: plan.sizes.len(),
                every: plan.every,
            },
        );
        let addrs = [addr(&v4), addr(&v6)];
        run_btc(plan, addrs, port, cfg.connect_timeout, &local, interrupt)
    });
    let capacity = cfg.capacity.then(|| {
        [false, true].map(|v6f| {
            deliver(progress, &ComparePhase::Capacity { v6: v6f });
            let a = addr(if v6f { &v6 } else { &v4 });
            run_capacity(v6f, a, port, cfg.connect_timeout, &local, interrupt)
        })
    });
    let measured = Measured {
        rtts: &rtts,
        rounds: rounds.as_ref(),
        btc: btc.as_ref(),
        capacity: capacity.as_ref(),
    };
    let measures = measured.measures(&v4, &v6);
    let short = |m: Measure| {
        measures
            .iter()
            .find(|v| v.measure == m)
            .and_then(Comparison::of)
    };
    let (latency, throughput) = (short(Measure::LatencyMedian), short(Measure::Throughput));
    let verdict = verdict(&v4, &v6, measures);
    CompareIpResult {
        version: software(),
        target: cfg.probe.host.clone(),
        ipv4: v4,
        ipv6: v6,
        latency,
        throughput,
        every_secs: cfg.sizes.as_ref().map(|p| p.every.as_secs_f64()),
        sizes,
        latency_over_time: over_time(points),
        btc,
        capacity,
        verdict,
        partial: interrupt.load(Ordering::Relaxed),
    }
}

/// What the phases of a run measured of both families (IPv4's, IPv6's), for the verdict.
struct Measured<'a> {
    /// Each family's RTT samples, ms.
    rtts: &'a [Vec<f64>; 2],
    /// Each family's goodput a round, when uploads were asked.
    rounds: Option<&'a [Vec<f64>; 2]>,
    btc: Option<&'a [BtcFamily; 2]>,
    capacity: Option<&'a [CapacityFamily; 2]>,
}

impl Measured<'_> {
    /// The measures the verdict weighs: latency always, the others when they ran; each noted
    /// when a family did not resolve.
    fn measures(&self, v4: &FamilyResult, v6: &FamilyResult) -> Vec<MeasureVerdict> {
        let mut measures = vec![latency_measure(v4, v6, self.rtts)];
        if let Some([r4, r6]) = self.rounds.filter(|[a, b]| !a.is_empty() || !b.is_empty()) {
            measures.push(dual_stack::throughput_measure(r4, r6));
        }
        measures.extend(self.btc.map(|[a, b]| dual_stack::btc_measure(a, b)));
        measures.extend(
            self.capacity
                .map(|[a, b]| dual_stack::capacity_measure(a, b)),
        );
        for f in [v4, v6] {
            if f.address.is_none() {
                not_resolved(&mut measures, &f.family);
            }
        }
        measures
    }
}

/// A family's address, or why it has none.
fn addr(f: &FamilyResult) -> Result<IpAddr, String> {
    f.address
        .as_deref()
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| f.error.clone().unwrap_or_else(|| "no address".into()))
}

/// The latency of the size cycle (see `crate::dual_stack::run_sizes`): its rows, each
/// family's pooled figures into its result, and each family's RTT samples and probes.
fn size_cycle(
    cfg: &CompareConfig,
    plan: &SizesPlan,
    fams: [&mut FamilyResult; 2],
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn Sink<ComparePhase>,
) -> (Vec<SizeRow>, Probed) {
    deliver(
        progress,
        &ComparePhase::SizeCycle {
            sizes: plan.sizes.len(),
            count: plan.count,
            every: plan.every,
        },
    );
    let addrs = fams.each_ref().map(|f| addr(f).ok());
    let cycle = run_sizes(plan, &cfg.probe, addrs, interrupt);
    for (f, s) in fams.into_iter().zip(&cycle.samples) {
        pool_sizes(f, &cycle.rows, s, &cfg.probe);
    }
    (cycle.rows, (cycle.samples, cycle.points))
}

/// Each family's probes in spans of time, IPv4's first (see `sonde_stats::latency::timeline`).
fn over_time(points: [Vec<ProbePoint>; 2]) -> Vec<LatencyBin> {
    let mut out = Vec::new();
    for (v6, mut p) in [false, true].into_iter().zip(points) {
        out.extend(bins(family_name(v6), &mut p));
    }
    out
}

/// The median latency measure: the families' own medians, Mann-Whitney over the samples.
fn latency_measure(v4: &FamilyResult, v6: &FamilyResult, rtts: &[Vec<f64>; 2]) -> MeasureVerdict {
    let medians = v4.rtt.zip(v6.rtt).map(|(a, b)| (a.median_ms, b.median_ms));
    dual_stack::latency_measure(&rtts[0], &rtts[1], medians)
}

fn family_name(v6: bool) -> &'static str {
    if v6 {
        "IPv6"
    } else {
        "IPv4"
    }
}

/// The uploads of the families whose latency run went well, in rounds; each family's mean
/// goodput and error go into its result. The goodput of each round a family, when uploads
/// were asked.
fn uploads(
    cfg: &CompareConfig,
    fams: [&mut FamilyResult; 2],
    interrupt: &Arc<AtomicBool>,
    progress: &mut dyn Sink<ComparePhase>,
) -> Option<[Vec<f64>; 2]> {
    if cfg.throughput_secs <= 0.0 || interrupt.load(Ordering::Relaxed) {
        return None;
    }
    let plan = UploadRounds::of(cfg.throughput_secs);
    let addrs = fams.each_ref().map(|f| {
        f.error
            .is_none()
            .then(|| f.address.as_deref().and_then(|a| a.parse().ok()))
            .flatten()
    });
    if addrs.iter().all(Option::is_none) {
        return None;
    }
    let local = keyed(&cfg.probe);
    let to = UploadTarget {
        port: cfg.probe.port,
        connect_timeout: cfg.connect_timeout,
        local: &local,
    };
    let each = plan.each;
    let mut said =
        |round: u64, of: u64| deliver(progress, &ComparePhase::UploadRound { round, of, each });
    let got = run_uploads(plan, addrs, &to, interrupt, &mut said);
    let mut rounds = [Vec::new(), Vec::new()];
    for ((f, up), r) in fams.into_iter().zip(got).zip(rounds.iter_mut()) {
        f.throughput_bps = up.mean_bps();
        if let Some(e) = &up.error {
            f.error = Some(
                f.error
                    .take()
                    .map_or(e.clone(), |old| format!("{old}; {e}")),
            );
        }
        *r = up.rounds_bps;
    }
    Some(rounds)
}

/// Marks the measures of a run where `family` did not resolve: "IPv6 not resolved", not
/// "n = 0/0".
fn not_resolved(measures: &mut [MeasureVerdict], family: &str) {
    for m in measures.iter_mut() {
        m.note = Some(format!("{family} not resolved"));
    }
}

/// A family's latency over all sizes (RTT distribution and loss), from its size rows and
/// samples; an error when nothing was answered, said as for the probe rounds: the refusal of
/// a closed port (the rows' refusals summed), else the silent peer's hint.
fn pool_sizes(f: &mut FamilyResult, rows: &[SizeRow], samples: &[f64], probe: &LatencyConfig) {
    let mine: Vec<&SizeRow> = rows.iter().filter(|r| r.family == f.family).collect();
    let loss = mine.iter().fold(LossStats::default(), |l, r| LossStats {
        sent: l.sent + r.sent,
        received: l.received + r.received,
        lost: l.lost + r.lost,
        refused: l.refused + r.refused,
        ..l
    });
    if loss.sent > 0 {
        f.loss_percent = Some(loss.lost as f64 * 100.0 / loss.sent as f64);
    }
    f.rtt = rtt_of(samples);
    if f.rtt.is_some() || f.error.is_some() || f.address.is_none() {
        return;
    }
    let Some(why) = family_unanswered(probe, f, &loss) else {
        return;
    };
    let errors = mine.iter().filter_map(|r| {
        r.error
            .as_ref()
            .map(|e| format!("{} B: {e}", r.payload_bytes))
    });
    f.error = Some(
        std::iter::once(why)
            .chain(errors)
            .collect::<Vec<_>>()
            .join("; "),
    );
}

/// The verdict of the measures, unless a family failed outright.
fn verdict(v4: &FamilyResult, v6: &FamilyResult, measures: Vec<MeasureVerdict>) -> Verdict {
    match (&v4.error, &v6.error) {
        (Some(e), None) => {
            Verdict::undecided(format!("IPv4 failed ({e}); only IPv6 works"), measures)
        }
        (None, Some(e)) => {
            Verdict::undecided(format!("IPv6 failed ({e}); only IPv4 works"), measures)
        }
        (Some(_), Some(_)) => Verdict::undecided("both IPv4 and IPv6 failed".into(), measures),
        (None, None) => Verdict::decide(measures),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_phase_says_what_it_measures() {
        let every = Duration::from_millis(20);
        let said = [
            ComparePhase::ProbeRound {
                round: 2,
                of: 4,
                each: 25,
                every,
            },
            ComparePhase::SizeCycle {
                sizes: 3,
                count: 10,
                every,
            },
            ComparePhase::UploadRound {
                round: 1,
                of: 6,
                each: Duration::from_millis(500),
            },
            ComparePhase::Btc { sessions: 4, every },
            ComparePhase::Capacity { v6: true },
        ]
        .map(|p| p.to_string());
        assert_eq!(
            said,
            [
                "latency: round 2 of 4, 25 probes a family, one every 20ms",
                "latency per size: 3 sizes, 10 probes each a family, one every 20ms",
                "TCP uploads: round 1 of 6, 0.5 s a family",
                "BTC: 4 sessions a family, alternating, one every 20ms",
                "path capacity: IPv6",
            ]
        );
    }
}
