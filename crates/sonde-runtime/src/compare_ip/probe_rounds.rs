//! The latency probes of `sonde compare-ip`, in interleaved rounds.
//!
//! All of IPv4's probes and then all of IPv6's would put any change of the hosts' or the
//! path's load on one family only: probes of one run share its conditions, so a busy moment
//! made a family's median "significantly" worse. The probes go out in [`ROUNDS`] rounds
//! instead, IPv4 first in even rounds and IPv6 first in odd ones (ABBA), and each family's
//! rounds are pooled: both families are sampled over the same span of time.
//!
//! A family none of whose probes was answered in a whole round is not probed again: its
//! server or its path is not there (a closed port refuses at once; a keyed server drops
//! untagged probes without a word), and each further round would only wait out the probes'
//! timeout once more, seconds a round, to say the same. Its rounds not sent are counted and
//! said with its error.

use crate::latency::{run as run_latency, LatencyConfig, LatencyOutcome};
use sonde_stats::latency::model::LatencySummary;
use sonde_stats::latency::timeline::{ProbePoint, ProbeTimeline};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};

/// Rounds the probes are split into (fewer when there are fewer probes).
pub const ROUNDS: u64 = 4;

/// One family's probes over the rounds.
#[derive(Debug, Default)]
pub struct FamilyProbes {
    /// The RTT samples of every round, ms (each round's bounded uniform sample).
    pub samples_ms: Vec<f64>,
    /// Every probe of every round, when it left and its round trip.
    pub points: Vec<ProbePoint>,
    pub sent: u64,
    pub received: u64,
    /// The last round's summary (for why nothing was answered).
    pub last: Option<LatencySummary>,
    /// What ended the family's rounds.
    pub error: Option<String>,
    /// Rounds not sent because every probe so far went unanswered (see the module's docs).
    pub rounds_not_sent: u64,
}

impl FamilyProbes {
    /// Whether probes went out and none came back.
    fn all_unanswered(&self) -> bool {
        self.sent > 0 && self.received == 0
    }
}

/// The probes of round `round` of `rounds` when `count` are split as evenly as can be.
pub fn round_count(count: u64, rounds: u64, round: u64) -> u64 {
    count / rounds + u64::from(round < count % rounds)
}

/// Probes `addrs` (IPv4's, IPv6's; None: not measured) with `probe`'s settings, its count
/// split into rounds; `progress` hears each round as it starts. An error ends that family's
/// rounds, as does a round in which nothing it ever sent was answered; Ctrl-C ends all.
pub fn run_probe_rounds(
    probe: &LatencyConfig,
    addrs: [Option<IpAddr>; 2],
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
) -> [FamilyProbes; 2] {
    let count = probe.count.unwrap_or(0);
    let rounds = ROUNDS.min(count).max(1);
    let mut fams: [FamilyProbes; 2] = Default::default();
    let active = |fams: &[FamilyProbes; 2], fi: usize| {
        addrs[fi].is_some() && !fams[fi].all_unanswered() && fams[fi].error.is_none()
    };
    in_turns(
        rounds,
        interrupt,
        progress,
        &mut fams,
        active,
        |fams, round, fi| {
            let (Some(addr), Some(fam)) = (addrs[fi], fams.get_mut(fi)) else {
                return;
            };
            if fam.all_unanswered() {
                fam.rounds_not_sent += 1;
            } else if fam.error.is_none() {
                let mut p = probe.clone();
                p.host = addr.to_string();
                p.count = Some(round_count(count, rounds, round));
                let mut timeline = ProbeTimeline::default();
                let out = run_latency(&p, interrupt, &mut timeline);
                add_round(fam, out, timeline.into_points());
            }
        },
    );
    fams
}

/// Runs `rounds` rounds of `visit(state, round, family)` over both families (0 IPv4, 1 IPv6),
/// IPv4 first in even rounds and IPv6 first in odd ones. `progress` hears a round (1-based) as
/// it starts, but only one in which some family is still `active`: a round where every family
/// has stopped is still visited (so it can count what was not sent) but not announced, so the
/// progress line never says a round runs when nothing does. Ctrl-C ends them.
pub(super) fn in_turns<S>(
    rounds: u64,
    interrupt: &AtomicBool,
    progress: &mut dyn FnMut(u64, u64),
    state: &mut S,
    active: impl Fn(&S, usize) -> bool,
    mut visit: impl FnMut(&mut S, u64, usize),
) {
    for round in 0..rounds {
        if (0..2).any(|fi| active(state, fi)) {
            progress(round + 1, rounds);
        }
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for fi in order {
            if interrupt.load(Ordering::Relaxed) {
                return;
            }
            visit(state, round, fi);
        }
    }
}

fn add_round(fam: &mut FamilyProbes, out: LatencyOutcome, points: Vec<ProbePoint>) {
    fam.samples_ms.extend(out.rtt_sample_ms);
    fam.points.extend(points);
    if let Some(s) = &out.summary {
        fam.sent += s.loss.sent;
        fam.received += s.loss.received;
    }
    fam.error = out
        .error
        .map(|e| e.to_string())
        .or_else(|| out.summary.as_ref().and_then(|s| s.error.clone()));
    fam.last = out.summary;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_split_evenly_over_the_rounds() {
        let split = |count| {
            (0..ROUNDS)
                .map(|r| round_count(count, ROUNDS, r))
                .collect::<Vec<_>>()
        };
        assert_eq!(split(100), [25, 25, 25, 25]);
        assert_eq!(split(10), [3, 3, 2, 2]);
        assert_eq!((0..3).map(|r| round_count(3, 3, r)).sum::<u64>(), 3);
    }

    #[test]
    fn a_round_where_every_family_has_stopped_is_visited_but_not_announced() {
        // IPv4 stops after its first round, IPv6 after its second.
        let mut rounds_run = [0u64; 2];
        let mut announced = Vec::new();
        let stop_after = [1, 2];
        in_turns(
            4,
            &AtomicBool::new(false),
            &mut |r, of| announced.push((r, of)),
            &mut rounds_run,
            |run, fi| run[fi] < stop_after[fi],
            |run, _, fi| {
                if run[fi] < stop_after[fi] {
                    run[fi] += 1;
                }
            },
        );
        assert_eq!(announced, [(1, 4), (2, 4)]);
        assert_eq!(rounds_run, [1, 2]);
    }

    #[test]
    fn ctrl_c_ends_the_rounds_before_the_next_visit() {
        let stop = AtomicBool::new(true);
        let mut visits = 0;
        in_turns(
            4,
            &stop,
            &mut |_, _| {},
            &mut visits,
            |_, _| true,
            |v, _, _| *v += 1,
        );
        assert_eq!(visits, 0);
    }
}
