//! `sonde stress --ramp LO..HI`: the most a device moves against how many connections share
//! it. The counts are every one from LO to HI; each step is a whole stress run (`--repeat N`:
//! N runs), summed up here as one row per run and, per count, their mean and maximum
//! ([`RampRow`]). Pure: summaries in, rows out.
//!
//! With `-u` the counts are UDP flows and the offered rate stays the same over all of them, so
//! the rows show what the number of flows (source ports) alone changes; a UDP row has no
//! close count but its datagrams and loss ([`RampUdp`]).

use super::model::{StressMode, StressSummary};
use serde::{Deserialize, Serialize};

/// The connection counts of a ramp: every count from LO to HI (LO <= HI, both >= 1).
pub fn counts(lo: u32, hi: u32) -> Vec<u32> {
    let lo = lo.max(1);
    (lo..=hi.max(lo)).collect()
}

/// One step of the ramp.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampStep {
    /// Connections asked for.
    pub connections: u32,
    /// Connections that opened.
    #[serde(default)]
    pub opened: u32,
    /// Total rate to the device and from it (bits/s of TCP payload).
    pub sent_bps: f64,
    pub received_bps: f64,
    pub fairness_sent: Option<f64>,
    pub fairness_received: Option<f64>,
    /// Connections that closed cleanly at the end (TCP; UDP flows have no close).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_clean: Option<u32>,
    /// A UDP step's datagrams and loss (absent for TCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<RampUdp>,
    /// The run's worst zero samples: the largest share of intervals in which a connection
    /// moved nothing ([`super::steady`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zero_share_worst: Option<f64>,
}

/// One UDP step's datagrams each way and what was lost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampUdp {
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub replies: u64,
    /// Requests that got no reply, percent: echo counts distinct answered requests, chargen
    /// replies against requests; `None` for discard, which answers nothing.
    pub loss_percent: Option<f64>,
    #[serde(default)]
    pub send_errors: u64,
}

impl RampStep {
    pub fn of(connections: u32, s: &StressSummary, mode: StressMode) -> Self {
        let udp = s.udp.as_deref().map(|u| {
            let loss = |answered: u64, asked: u64| {
                (asked > 0).then(|| 100.0 * asked.saturating_sub(answered) as f64 / asked as f64)
            };
            RampUdp {
                requests: u.datagrams_sent,
                replies: u.datagrams_received,
                loss_percent: match (mode, &u.echo) {
                    (StressMode::Echo, Some(e)) => loss(e.received, e.sent),
                    (StressMode::Chargen, _) => loss(u.datagrams_received, u.datagrams_sent),
                    _ => None,
                },
                send_errors: u.send_errors,
            }
        });
        Self {
            connections,
            opened: s.connect.connected,
            sent_bps: s.sum.sent_bps,
            received_bps: s.sum.received_bps,
            fairness_sent: s.sum.fairness_sent,
            fairness_received: s.sum.fairness_received,
            closed_clean: udp.is_none().then_some(s.closed_clean),
            udp,
            zero_share_worst: s.zero_share_worst,
        }
    }
}

/// One count of the ramp: every run at it (`--repeat`), their mean and their maximum.
///
/// The mean row's rates, fairness and loss are the runs' averages (a figure a run lacks is
/// left out of its average) and its counts (opened, clean closes, datagrams) the mean rounded
/// down, so one short run shows; the maximum row holds each figure's largest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RampRow {
    pub mean: RampStep,
    pub max: RampStep,
    pub runs: Vec<RampStep>,
}

impl RampRow {
    /// The row of `runs` (all at one count), `None` for no run.
    pub fn of(runs: Vec<RampStep>) -> Option<Self> {
        let first = *runs.first()?;
        let mean = fold(&runs, first, Fold::Mean);
        let max = fold(&runs, first, Fold::Max);
        Some(Self { mean, max, runs })
    }
}

#[derive(Clone, Copy)]
enum Fold {
    Mean,
    Max,
}

impl Fold {
    fn f(self, v: impl Iterator<Item = f64>) -> Option<f64> {
        let v: Vec<f64> = v.collect();
        if v.is_empty() {
            return None;
        }
        Some(match self {
            Self::Mean => v.iter().sum::<f64>() / v.len() as f64,
            Self::Max => v.iter().copied().fold(f64::MIN, f64::max),
        })
    }

    fn n(self, v: impl Iterator<Item = u64>) -> u64 {
        let v: Vec<u64> = v.collect();
        match self {
            Self::Mean if v.is_empty() => 0,
            Self::Mean => v.iter().sum::<u64>() / v.len() as u64,
            Self::Max => v.iter().copied().max().unwrap_or(0),
        }
    }
}

/// One figure-by-figure summary of `runs` (their count, transport and UDP shape from `first`).
fn fold(runs: &[RampStep], first: RampStep, how: Fold) -> RampStep {
    let f = |pick: fn(&RampStep) -> Option<f64>| how.f(runs.iter().filter_map(pick));
    let n = |pick: fn(&RampStep) -> Option<u64>| how.n(runs.iter().filter_map(pick));
    let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    let udp =
        |pick: fn(&RampUdp) -> u64| how.n(runs.iter().filter_map(|s| s.udp.map(|u| pick(&u))));
    RampStep {
        connections: first.connections,
        opened: small(n(|s| Some(u64::from(s.opened)))),
        sent_bps: f(|s| Some(s.sent_bps)).unwrap_or(0.0),
        received_bps: f(|s| Some(s.received_bps)).unwrap_or(0.0),
        fairness_sent: f(|s| s.fairness_sent),
        fairness_received: f(|s| s.fairness_received),
        zero_share_worst: f(|s| s.zero_share_worst),
        closed_clean: first
            .closed_clean
            .map(|_| small(n(|s| s.closed_clean.map(u64::from)))),
        udp: first.udp.map(|u| RampUdp {
            requests: udp(|u| u.requests),
            replies: udp(|u| u.replies),
            loss_percent: u
                .loss_percent
                .and(f(|s| s.udp.and_then(|u| u.loss_percent))),
            send_errors: udp(|u| u.send_errors),
        }),
    }
}

/// The steps with the highest rate each way (to the device, from it).
pub fn best(steps: &[RampStep]) -> (Option<&RampStep>, Option<&RampStep>) {
    let top = |f: fn(&RampStep) -> f64| {
        steps
            .iter()
            .filter(|s| f(s) > 0.0)
            .max_by(|a, b| f(a).total_cmp(&f(b)))
    };
    (top(|s| s.sent_bps), top(|s| s.received_bps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_every_one_from_lo_to_hi() {
        assert_eq!(counts(1, 8), vec![1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(counts(1, 10), (1..=10).collect::<Vec<_>>());
        assert_eq!(counts(3, 3), vec![3]);
        assert_eq!(counts(0, 0), vec![1]);
        assert_eq!(counts(5, 2), vec![5]);
    }

    #[test]
    fn a_row_is_the_mean_and_the_max_of_its_runs() {
        let run = |opened, s, clean, fair| RampStep {
            connections: 3,
            opened,
            sent_bps: s,
            received_bps: 0.0,
            fairness_sent: fair,
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: Some(clean),
            udp: None,
        };
        let runs = vec![
            run(3, 10.0, 3, Some(1.0)),
            run(2, 30.0, 2, Some(0.5)),
            run(3, 20.0, 3, None),
        ];
        let row = RampRow::of(runs.clone()).unwrap();
        assert_eq!(row.runs, runs);
        assert_eq!((row.mean.connections, row.max.connections), (3, 3));
        assert_eq!((row.mean.sent_bps, row.max.sent_bps), (20.0, 30.0));
        // 8/3 rounded down: one short run shows in the mean.
        assert_eq!((row.mean.opened, row.max.opened), (2, 3));
        assert_eq!(
            (row.mean.closed_clean, row.max.closed_clean),
            (Some(2), Some(3))
        );
        // The run without a fairness is left out of its average.
        assert_eq!(row.mean.fairness_sent, Some(0.75));
        assert_eq!(row.max.fairness_sent, Some(1.0));
        assert_eq!(row.mean.fairness_received, None);
        assert!(RampRow::of(Vec::new()).is_none());
        let one = RampRow::of(vec![runs[1]]).unwrap();
        assert_eq!((one.mean, one.max), (runs[1], runs[1]));
    }

    #[test]
    fn a_row_carries_the_runs_worst_zero_samples() {
        let run = |z| RampStep {
            connections: 2,
            opened: 2,
            sent_bps: 1.0,
            received_bps: 0.0,
            fairness_sent: None,
            fairness_received: None,
            closed_clean: Some(2),
            udp: None,
            zero_share_worst: z,
        };
        let row = RampRow::of(vec![run(Some(0.5)), run(Some(0.0)), run(None)]).unwrap();
        assert_eq!(row.mean.zero_share_worst, Some(0.25));
        assert_eq!(row.max.zero_share_worst, Some(0.5));
        let json = serde_json::to_value(row.mean).unwrap();
        assert_eq!(json["zero_share_worst"], 0.25);
        assert!(serde_json::to_value(run(None))
            .unwrap()
            .get("zero_share_worst")
            .is_none());
    }

    #[test]
    fn a_udp_row_averages_its_loss() {
        let run = |req, loss| RampStep {
            connections: 2,
            opened: 2,
            sent_bps: 1.0,
            received_bps: 1.0,
            fairness_sent: None,
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: None,
            udp: Some(RampUdp {
                requests: req,
                replies: req / 2,
                loss_percent: loss,
                send_errors: 0,
            }),
        };
        let row = RampRow::of(vec![run(100, Some(10.0)), run(201, Some(30.0))]).unwrap();
        let (mean, max) = (row.mean.udp.unwrap(), row.max.udp.unwrap());
        assert_eq!((mean.requests, max.requests), (150, 201));
        assert_eq!((mean.replies, max.replies), (75, 100));
        assert_eq!(
            (mean.loss_percent, max.loss_percent),
            (Some(20.0), Some(30.0))
        );
        assert_eq!(row.mean.closed_clean, None);
        let discard = RampRow::of(vec![run(10, None)]).unwrap();
        assert_eq!(discard.mean.udp.unwrap().loss_percent, None);
    }

    #[test]
    fn the_best_step_each_way() {
        let step = |n, s, r| RampStep {
            connections: n,
            opened: n,
            sent_bps: s,
            received_bps: r,
            fairness_sent: None,
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: Some(n),
            udp: None,
        };
        let steps = [step(1, 10.0, 0.0), step(2, 30.0, 0.0), step(4, 20.0, 0.0)];
        let (up, down) = best(&steps);
        assert_eq!(up.map(|s| s.connections), Some(2));
        assert!(down.is_none());
    }

    #[test]
    fn a_udp_step_has_loss_and_no_close_count() {
        use crate::stress::model::{ConnectReport, Sum};
        use crate::stress::udp::{EchoFigures, UdpSummary};
        let mut s = StressSummary {
            seconds: 1.0,
            connect: ConnectReport {
                asked: 4,
                connected: 4,
                ..ConnectReport::default()
            },
            connections: Vec::new(),
            sum: Sum::default(),
            closed_clean: 0,
            echo_unreturned_bytes: 0,
            closed_reset: 0,
            closed_timeout: 0,
            failed_during_run: 0,
            echo_mismatched_bytes: 0,
            partial: false,
            warmup_secs: 0.0,
            zero_share_worst: None,
            udp: Some(Box::new(UdpSummary {
                datagrams_sent: 200,
                datagrams_received: 150,
                echo: Some(EchoFigures {
                    sent: 200,
                    received: 140,
                    ..EchoFigures::default()
                }),
                ..UdpSummary::default()
            })),
        };
        // Echo: distinct requests answered (duplicates do not hide loss).
        let step = RampStep::of(4, &s, StressMode::Echo);
        assert_eq!(step.closed_clean, None);
        let u = step.udp.unwrap();
        assert_eq!((u.requests, u.replies), (200, 150));
        assert_eq!(u.loss_percent, Some(30.0));
        // Chargen: replies against requests; discard: no loss to see.
        let chargen = RampStep::of(4, &s, StressMode::Chargen).udp.unwrap();
        assert_eq!(chargen.loss_percent, Some(25.0));
        assert_eq!(
            RampStep::of(4, &s, StressMode::Discard)
                .udp
                .unwrap()
                .loss_percent,
            None
        );
        let json = serde_json::to_value(step).unwrap();
        assert!(json.get("closed_clean").is_none(), "{json}");
        assert_eq!(json["udp"]["loss_percent"], 30.0);
        // TCP rows keep their shape.
        s.udp = None;
        s.closed_clean = 4;
        let tcp = serde_json::to_value(RampStep::of(4, &s, StressMode::Echo)).unwrap();
        assert_eq!(tcp["closed_clean"], 4);
        assert!(tcp.get("udp").is_none(), "{tcp}");
    }
}
