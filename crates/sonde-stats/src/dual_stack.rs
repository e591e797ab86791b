//! The figures `sonde compare-ip` puts side by side for IPv4 and IPv6 beyond its basic probe
//! run (latency per probe size, BTC sessions, path capacity), and how each becomes a
//! [`MeasureVerdict`] for the [`crate::verdict`].
//!
//! Probe sizes are UDP payload bytes, as everywhere in sonde; the IP packet is 28 bytes
//! larger over IPv4 (20 IP + 8 UDP) and 48 over IPv6 (40 + 8), so the same size is a slightly
//! larger packet over IPv6. A packet above the path MTU is fragmented by the sending host in
//! both families (IPv6 adds an 8-byte fragment header); each row names its IP size so a
//! reader can see which rows crossed the MTU.
//!
//! The rows themselves ([`SizeRow`], [`BtcFamily`], [`CapacityFamily`]) are part of the result
//! model, beside the [`CompareIpResult`](crate::latency::model::CompareIpResult) that holds
//! them in [`crate::latency::model`], and are re-exported here; this module only weighs them.

use crate::capacity::Verdict as CapacityVerdict;
use crate::latency::compare::{mann_whitney_p, paired_ratio_p, positive_pairs, welch_p};
pub use crate::latency::model::{BtcFamily, CapacityFamily, SizeRow};
use crate::verdict::{Measure, MeasureVerdict};

/// Bytes the IP and UDP headers add to a UDP payload: 28 over IPv4, 48 over IPv6.
pub fn udp_ip_overhead(v6: bool) -> u32 {
    if v6 {
        48
    } else {
        28
    }
}

/// Median latency, Mann-Whitney U over the RTT samples `v4` and `v6` (with sizes: over all
/// sizes; both families probed the same sizes the same number of times, so the pooled samples
/// compare like with like). `medians`: each family's median of all its probes, when known (the
/// samples are a bounded sample of them), so that the verdict shows the figures the family
/// lines show.
pub fn latency_measure(v4: &[f64], v6: &[f64], medians: Option<(f64, f64)>) -> MeasureVerdict {
    let median = |s: &[f64]| {
        let mut v = s.to_vec();
        v.sort_by(f64::total_cmp);
        crate::capacity::histogram::quantile(&v, 0.5)
    };
    let (m4, m6) = medians.map_or_else(|| (median(v4), median(v6)), |(a, b)| (Some(a), Some(b)));
    match (m4, m6) {
        (Some(a), Some(b)) => {
            let mut m = MeasureVerdict::from_test(
                Measure::LatencyMedian,
                a,
                b,
                mann_whitney_p(v4, v6),
                (v4.len() as u64, v6.len() as u64),
            );
            // Within timestamping noise, whatever the test says.
            if (a - b).abs() < crate::latency::compare::MIN_LATENCY_DIFF_MS {
                m.significant = false;
                m.better = crate::verdict::FamilyChoice::Neither;
                m.note = Some("the medians are within 0.02 ms".into());
            }
            m
        }
        (a, b) => MeasureVerdict::unjudged(Measure::LatencyMedian, a, b, missing(a, b)),
    }
}

/// Goodput of the short uploads, from `rounds4[i]` and `rounds6[i]`: the goodput of each
/// family's upload in round `i` of an interleaved run, paired ([`paired_ratio_p`]; needs two
/// rounds). The figures, the direction, the margin and the counts all come from the pairs the
/// test uses ([`positive_pairs`]): each family's geometric mean over them, whose ratio is the
/// geometric mean of the pairs' ratios, the quantity the test weighs. An arithmetic mean over
/// all rounds could point the other way (an unpaired extra round, one huge round). Unjudged,
/// saying which, when a family has no round or no round measured both.
pub fn throughput_measure(rounds4: &[f64], rounds6: &[f64]) -> MeasureVerdict {
    let pairs = positive_pairs(rounds4, rounds6);
    if pairs.is_empty() {
        let mean = |s: &[f64]| (!s.is_empty()).then(|| s.iter().sum::<f64>() / s.len() as f64);
        let (a, b) = (mean(rounds4), mean(rounds6));
        let note = match (a, b) {
            (Some(_), Some(_)) => "no round measured both families",
            _ => missing(a, b),
        };
        return MeasureVerdict::unjudged(Measure::Throughput, a, b, note);
    }
    let n = pairs.len();
    let geo = |side: fn(&(f64, f64)) -> f64| {
        (pairs.iter().map(|p| side(p).ln()).sum::<f64>() / n as f64).exp()
    };
    MeasureVerdict::from_test(
        Measure::Throughput,
        geo(|p| p.0),
        geo(|p| p.1),
        paired_ratio_p(rounds4, rounds6),
        (n as u64, n as u64),
    )
}

/// Which family measured nothing, for the note of an unjudged measure.
fn missing(v4: Option<f64>, v6: Option<f64>) -> &'static str {
    match (v4.is_none(), v6.is_none()) {
        (true, true) => "neither family measured",
        (true, false) => "IPv4 measured nothing",
        _ => "IPv6 measured nothing",
    }
}

/// Mean BTC goodput, Welch's t over the sessions (needs two sessions a family).
pub fn btc_measure(v4: &BtcFamily, v6: &BtcFamily) -> MeasureVerdict {
    let goodputs = |f: &BtcFamily| f.sessions.iter().map(|s| s.goodput_bps).collect::<Vec<_>>();
    let (g4, g6) = (goodputs(v4), goodputs(v6));
    match (&v4.summary, &v6.summary) {
        (Some(a), Some(b)) => {
            let mut m = MeasureVerdict::from_test(
                Measure::BtcMean,
                a.mean_bps,
                b.mean_bps,
                welch_p(&g4, &g6),
                (g4.len() as u64, g6.len() as u64),
            );
            if m.p_value.is_none() {
                m.note = Some("one session a family gives no test: run two sizes or more".into());
            }
            m
        }
        (a, b) => MeasureVerdict::unjudged(
            Measure::BtcMean,
            a.as_ref().map(|s| s.mean_bps),
            b.as_ref().map(|s| s.mean_bps),
            "a family has no BTC session",
        ),
    }
}

/// Sustained capacity: a difference only when the long-train ranges are disjoint; a host-
/// limited or unmeasured family cannot be compared.
pub fn capacity_measure(v4: &CapacityFamily, v6: &CapacityFamily) -> MeasureVerdict {
    let comparable = |f: &CapacityFamily| {
        matches!(
            f.verdict,
            Some(CapacityVerdict::Link | CapacityVerdict::Shaped)
        )
    };
    let range = |f: &CapacityFamily| {
        let s = f.sustained_bps?;
        Some((
            s,
            f.sustained_min_bps.unwrap_or(s),
            f.sustained_max_bps.unwrap_or(s),
        ))
    };
    match (comparable(v4), comparable(v6), range(v4), range(v6)) {
        (true, true, Some(a), Some(b)) => MeasureVerdict::from_ranges(
            Measure::Capacity,
            a,
            b,
            (
                u64::from(v4.long_trains_used),
                u64::from(v6.long_trains_used),
            ),
        ),
        _ => {
            let why = |f: &CapacityFamily| match f.verdict {
                Some(CapacityVerdict::HostLimited) => {
                    format!("{}: the hosts, not the path, set the rate", f.family)
                }
                Some(CapacityVerdict::Unmeasured) => format!("{}: too few usable trains", f.family),
                None => format!(
                    "{}: {}",
                    f.family,
                    f.error.as_deref().unwrap_or("not measured")
                ),
                _ => String::new(),
            };
            let notes: Vec<String> = [why(v4), why(v6)]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect();
            // A host-limited figure is the host's speed, not the path's: not shown as one.
            let fig = |f: &CapacityFamily| f.sustained_bps.filter(|_| comparable(f));
            MeasureVerdict::unjudged(Measure::Capacity, fig(v4), fig(v6), &notes.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btc::{BtcSession, BtcStats};
    use crate::verdict::FamilyChoice;

    fn cap(family: &str, v: CapacityVerdict, s: f64) -> CapacityFamily {
        CapacityFamily {
            family: family.into(),
            address: None,
            verdict: Some(v),
            sustained_bps: Some(s),
            sustained_min_bps: Some(s * 0.99),
            sustained_max_bps: Some(s * 1.01),
            peak_low_bps: None,
            peak_high_bps: None,
            long_trains_used: 5,
            payload_bytes: 1472,
            seconds: 1.0,
            error: None,
        }
    }

    #[test]
    fn capacity_compares_paths_not_hosts() {
        let m = capacity_measure(
            &cap("IPv4", CapacityVerdict::Link, 100e6),
            &cap("IPv6", CapacityVerdict::Shaped, 50e6),
        );
        assert_eq!(m.better, FamilyChoice::Ipv4);
        let m = capacity_measure(
            &cap("IPv4", CapacityVerdict::HostLimited, 9e9),
            &cap("IPv6", CapacityVerdict::HostLimited, 5e9),
        );
        assert_eq!(m.better, FamilyChoice::Neither);
        assert!(m.note.unwrap().contains("the hosts, not the path"));
    }

    #[test]
    fn latency_pools_sizes() {
        let a: Vec<f64> = (0..20).map(|i| 1.0 + f64::from(i) * 0.01).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        assert_eq!(latency_measure(&a, &b, None).better, FamilyChoice::Ipv4);
        assert_eq!(latency_measure(&a, &a, None).better, FamilyChoice::Neither);
        let none = latency_measure(&a, &[], None);
        assert_eq!(none.better, FamilyChoice::Neither);
        assert_eq!(none.note.as_deref(), Some("IPv6 measured nothing"));
        // The families' own medians, when given, are the figures shown and judged.
        let m = latency_measure(&a, &b, Some((1.1, 2.2)));
        assert_eq!((m.ipv4, m.ipv6), (Some(1.1), Some(2.2)));
        assert!((m.margin_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn medians_within_timestamping_noise_are_no_difference() {
        // Half the latency and a certain test, but 2 µs apart: no difference worth telling.
        let a: Vec<f64> = (0..20).map(|i| 0.004 + f64::from(i) * 1e-5).collect();
        let b: Vec<f64> = a.iter().map(|x| x * 0.5).collect();
        let m = latency_measure(&a, &b, None);
        assert!(m.p_value.is_some_and(|p| p < 1e-3), "{m:?}");
        assert_eq!((m.better, m.significant), (FamilyChoice::Neither, false));
        assert_eq!(m.note.as_deref(), Some("the medians are within 0.02 ms"));
        let far: Vec<f64> = a.iter().map(|x| x * 100.0).collect();
        let m = latency_measure(&far, &a, None);
        assert_eq!(m.better, FamilyChoice::Ipv6, "{m:?}");
    }

    /// A deterministic normal deviate stream (xorshift64* and Box-Muller), for the noise.
    struct Noise(u64);

    impl Noise {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            ((self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn normal(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// Interleaved rounds as on a busy loopback: a load that changes from round to round
    /// (a factor of e^N(0, 0.8): 1 to 18 Gbit/s) and changes again between the two uploads
    /// of a round (e^N(0, 0.25)); IPv6 gets `v6_factor` of IPv4's rate.
    fn rounds(noise: &mut Noise, n: usize, v6_factor: f64) -> (Vec<f64>, Vec<f64>) {
        let mut r4 = Vec::new();
        let mut r6 = Vec::new();
        for _ in 0..n {
            let load = (0.8 * noise.normal()).exp() * 8e9;
            r4.push(load * (0.25 * noise.normal()).exp());
            r6.push(load * v6_factor * (0.25 * noise.normal()).exp());
        }
        (r4, r6)
    }

    #[test]
    fn noisy_rounds_with_no_real_difference_give_no_confident_verdict() {
        let mut noise = Noise(0x5eed);
        let trials = 400;
        let mut confident = 0;
        for _ in 0..trials {
            let (r4, r6) = rounds(&mut noise, 3, 1.0);
            let m = throughput_measure(&r4, &r6);
            if m.significant && m.p_value.is_some_and(|p| p < 0.01) {
                confident += 1;
            }
            assert_eq!((m.samples_ipv4, m.samples_ipv6), (3, 3));
        }
        // A 1 % test at most 1 % of the time (and some slack for the finite trials).
        assert!(
            confident <= trials / 50,
            "{confident} of {trials} confident verdicts"
        );
    }

    #[test]
    fn the_old_samples_of_noisy_runs_gave_confident_verdicts() {
        // What compare-ip did: each family's intervals of its own run taken as independent
        // samples (Welch's t). The same conditions as above; most runs "decide".
        let mut noise = Noise(0x5eed);
        let trials = 200;
        let confident = (0..trials)
            .filter(|_| {
                let run = |noise: &mut Noise| {
                    let level = (0.8 * noise.normal()).exp() * 8e9;
                    (0..5)
                        .map(|_| level * (0.05 * noise.normal()).exp())
                        .collect::<Vec<_>>()
                };
                let (a, b) = (run(&mut noise), run(&mut noise));
                crate::latency::compare::welch_p(&a, &b).is_some_and(|p| p < 0.01)
            })
            .count();
        assert!(confident > trials / 2, "{confident} of {trials}");
    }

    #[test]
    fn a_real_difference_through_the_noise_gets_a_confident_verdict() {
        let mut noise = Noise(0x5eed);
        let trials = 100;
        let decided = (0..trials)
            .filter(|_| {
                let (r4, r6) = rounds(&mut noise, 6, 0.5);
                let m = throughput_measure(&r4, &r6);
                m.better == FamilyChoice::Ipv4
            })
            .count();
        assert!(decided >= trials * 8 / 10, "{decided} of {trials} decided");
        // Too few rounds decide nothing: one pair has no spread to judge by.
        let m = throughput_measure(&[8e9], &[4e9]);
        assert_eq!((m.better, m.p_value), (FamilyChoice::Neither, None));
        let m = throughput_measure(&[8e9, 7e9], &[]);
        assert_eq!(m.note.as_deref(), Some("IPv6 measured nothing"));
    }

    /// Regression: the direction came from arithmetic means over all rounds (an unpaired
    /// extra round of one family included) while the p-value tested the paired ratios, so a
    /// verdict could name IPv4 "significantly" better when every pair had IPv6 ahead.
    #[test]
    fn the_throughput_direction_and_count_come_from_the_tested_pairs() {
        // Every pair has IPv6 twice as fast; IPv4's unpaired fourth round is huge.
        let m = throughput_measure(&[10e6, 10e6, 10e6, 1e9], &[20e6, 20e6, 20e6]);
        assert_eq!(m.better, FamilyChoice::Ipv6, "{m:?}");
        let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v / want - 1.0).abs() < 1e-9);
        assert!(near(m.ipv4, 10e6) && near(m.ipv6, 20e6), "{m:?}");
        assert_eq!((m.samples_ipv4, m.samples_ipv6), (3, 3));
        // One huge pair lifts IPv4's arithmetic mean, yet two of three pairs (and the mean
        // log ratio) favour IPv6: the figures say what the test weighs.
        let m = throughput_measure(&[100e6, 1e6, 1e6], &[50e6, 2e6, 2e6]);
        let (a, b) = (m.ipv4.unwrap(), m.ipv6.unwrap());
        assert!(a < b, "{m:?}");
        // A round that measured nothing is in no pair and not counted.
        let m = throughput_measure(&[10e6, 0.0, 10e6, 10e6], &[20e6, 20e6, 20e6, 20e6]);
        assert_eq!((m.samples_ipv4, m.samples_ipv6), (3, 3));
        let m = throughput_measure(&[0.0, 0.0], &[20e6, 20e6]);
        assert_eq!(m.note.as_deref(), Some("no round measured both families"));
    }

    #[test]
    fn btc_needs_two_sessions() {
        let fam = |name: &str, g: &[f64]| {
            let sessions: Vec<BtcSession> = g
                .iter()
                .enumerate()
                .map(|(i, &bps)| BtcSession {
                    index: i as u32 + 1,
                    family: name.into(),
                    size: 1,
                    bytes: 1,
                    seconds: 1.0,
                    goodput_bps: bps,
                    retransmits: 0,
                    max_cwnd: None,
                    mean_rtt_us: None,
                    congestion: None,
                    start_unix_s: 0.0,
                })
                .collect();
            BtcFamily {
                family: name.into(),
                address: None,
                summary: BtcStats::of(&sessions),
                sessions,
                error: None,
            }
        };
        let m = btc_measure(
            &fam("IPv4", &[90e6, 91e6, 89e6]),
            &fam("IPv6", &[60e6, 61e6, 59e6]),
        );
        assert_eq!(m.better, FamilyChoice::Ipv4);
        let m = btc_measure(&fam("IPv4", &[90e6]), &fam("IPv6", &[60e6]));
        assert_eq!(m.better, FamilyChoice::Neither);
        assert!(m.note.is_some());
    }
}
