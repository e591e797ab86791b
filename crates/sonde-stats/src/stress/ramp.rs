//! `sonde stress --ramp LO..HI`: the most a device moves against how many connections share
//! it. The counts double from LO and end at HI; each step is a whole stress run, summed up
//! here as one row. Pure: summaries in, rows out.
//!
//! With `-u` the counts are UDP flows and the offered rate stays the same over all of them, so
//! the rows show what the number of flows (source ports) alone changes; a UDP row has no
//! close count but its datagrams and loss ([`RampUdp`]).

use super::model::{StressMode, StressSummary};
use serde::{Deserialize, Serialize};

/// The connection counts of a ramp: LO, 2·LO, 4·LO, ... and HI last (LO <= HI, both >= 1).
pub fn counts(lo: u32, hi: u32) -> Vec<u32> {
    let (lo, hi) = (lo.max(1), hi.max(lo.max(1)));
    let mut out = vec![lo];
    while let Some(next) = out
        .last()
        .and_then(|n| n.checked_mul(2))
        .filter(|&n| n < hi)
    {
        out.push(next);
    }
    if out.last() != Some(&hi) {
        out.push(hi);
    }
    out
}

/// One step of the ramp.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampStep {
    /// Connections asked for.
    pub connections: u32,
    /// Connections that opened.
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
}

/// One UDP step's datagrams each way and what was lost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RampUdp {
    pub requests: u64,
    pub replies: u64,
    /// Requests that got no reply, percent: echo counts distinct answered requests, chargen
    /// replies against requests; `None` for discard, which answers nothing.
    pub loss_percent: Option<f64>,
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
        }
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
    fn counts_double_and_end_at_the_top() {
        assert_eq!(counts(1, 8), vec![1, 2, 4, 8]);
        assert_eq!(counts(1, 10), vec![1, 2, 4, 8, 10]);
        assert_eq!(counts(3, 3), vec![3]);
        assert_eq!(counts(0, 0), vec![1]);
        assert_eq!(counts(5, 2), vec![5]);
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
