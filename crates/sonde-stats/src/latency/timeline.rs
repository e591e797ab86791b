//! Latency along a run, for a chart of each family over time (`sonde compare-ip`): every
//! probe's send time and its first round trip (or none) gathered from a run's events, then
//! cut into at most [`MAX_BINS`] spans of whole seconds, each with its probes sent, answered
//! and their median round trip.
//!
//! Bins rather than every probe: a study runs for hours (a probe every 2 s per size and per
//! family), and a document holding every probe would carry tens of thousands of points where
//! a chart shows a few hundred; every probe's record stays what `sonde latency -J` writes.
//! A timeline holds at most [`MAX_PROBES`] probes (16 bytes each); those beyond are counted,
//! not kept.

use std::collections::HashMap;
use std::io;

use serde::{Deserialize, Serialize};

use super::model::LatencyEvent;
use crate::sink::Sink;

/// Probes one timeline keeps (about 16 MiB); later ones are only counted.
pub const MAX_PROBES: usize = 1 << 20;
/// Most bins [`bins`] makes of a timeline.
pub const MAX_BINS: u64 = 240;

/// One probe: when it left (Unix ns) and its first round trip, ms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbePoint {
    pub sent_unix_ns: u64,
    pub rtt_ms: Option<f64>,
}

/// One span of a timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyBin {
    /// "IPv4" or "IPv6" (or whatever the caller names the series).
    pub family: String,
    /// Start of the span, Unix seconds.
    pub start_unix: f64,
    /// Length of the span, s (every bin of one timeline is as long).
    pub secs: f64,
    /// Probes sent in the span.
    pub sent: u64,
    /// Of those, probes answered.
    pub answered: u64,
    /// Median round trip of the answered ones, ms; None when none was.
    pub median_ms: Option<f64>,
}

/// A sink gathering a latency run's probes (see the module docs).
#[derive(Debug, Default)]
pub struct ProbeTimeline {
    probes: Vec<ProbePoint>,
    by_seq: HashMap<u64, usize>,
    /// Probes beyond [`MAX_PROBES`], not kept.
    pub not_kept: u64,
}

impl ProbeTimeline {
    /// The probes gathered, in the order they were sent.
    pub fn into_points(self) -> Vec<ProbePoint> {
        self.probes
    }

    fn keep(&mut self, seq: u64, point: ProbePoint) {
        if self.probes.len() >= MAX_PROBES {
            self.not_kept += 1;
            return;
        }
        self.by_seq.insert(seq, self.probes.len());
        self.probes.push(point);
    }
}

impl Sink<LatencyEvent> for ProbeTimeline {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Sent(s) if !self.by_seq.contains_key(&s.seq) => {
                let point = ProbePoint {
                    sent_unix_ns: s.sent_unix_ns,
                    rtt_ms: None,
                };
                self.keep(s.seq, point);
            }
            LatencyEvent::RoundTrip(r) => match self.by_seq.get(&r.seq) {
                Some(&i) => {
                    let p = &mut self.probes[i];
                    p.rtt_ms = p.rtt_ms.or(Some(r.rtt_ms));
                }
                None => {
                    let point = ProbePoint {
                        sent_unix_ns: r.sent_unix_ns,
                        rtt_ms: Some(r.rtt_ms),
                    };
                    self.keep(r.seq, point);
                }
            },
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The bin length for probes sent over `span_ns`: whole seconds, at least one, so that at
/// most [`MAX_BINS`] bins cover the span.
fn bin_ns(span_ns: u64) -> u64 {
    const SEC: u64 = 1_000_000_000;
    let per_bin = span_ns / MAX_BINS + 1;
    per_bin.div_ceil(SEC).max(1) * SEC
}

/// `points` (in any order) cut into spans of whole seconds from the first probe; only spans
/// holding a probe are returned, in time order, each named `family`.
pub fn bins(family: &str, points: &mut [ProbePoint]) -> Vec<LatencyBin> {
    points.sort_by_key(|p| p.sent_unix_ns);
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Vec::new();
    };
    let (t0, width) = (
        first.sent_unix_ns,
        bin_ns(last.sent_unix_ns - first.sent_unix_ns),
    );
    let mut out = Vec::new();
    for span in
        points.chunk_by(|a, b| (a.sent_unix_ns - t0) / width == (b.sent_unix_ns - t0) / width)
    {
        let k = (span[0].sent_unix_ns - t0) / width;
        let mut rtts: Vec<f64> = span.iter().filter_map(|p| p.rtt_ms).collect();
        rtts.sort_by(f64::total_cmp);
        out.push(LatencyBin {
            family: family.to_owned(),
            start_unix: (t0 + k * width) as f64 / 1e9,
            secs: width as f64 / 1e9,
            sent: span.len() as u64,
            answered: rtts.len() as u64,
            median_ms: median(&rtts),
        });
    }
    out
}

/// The median of sorted `v`; the mean of the middle two for an even count.
fn median(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::model::{ProbeSent, RoundTrip};

    const SEC: u64 = 1_000_000_000;

    fn sent(seq: u64, at: u64) -> LatencyEvent {
        LatencyEvent::Sent(ProbeSent {
            seq,
            sent_unix_ns: at,
        })
    }

    fn back(seq: u64, at: u64, rtt_ms: f64) -> LatencyEvent {
        LatencyEvent::RoundTrip(RoundTrip {
            seq,
            sent_unix_ns: at,
            received_unix_ns: at + (rtt_ms * 1e6) as u64,
            rtt_ms,
            up_ms: None,
            down_ms: None,
        })
    }

    #[test]
    fn probes_are_binned_by_whole_seconds_with_their_losses_and_medians() {
        let mut t = ProbeTimeline::default();
        let t0 = 1_700_000_000 * SEC;
        // Second 0: three probes, RTTs 1, 3 and a duplicate reply of seq 1 (ignored).
        // Second 1: one probe, lost. Second 3: one probe, 4 ms.
        for ev in [
            sent(1, t0),
            sent(2, t0 + SEC / 3),
            sent(3, t0 + 2 * SEC / 3),
            back(1, t0, 1.0),
            back(3, t0 + 2 * SEC / 3, 3.0),
            back(1, t0, 9.0),
            sent(4, t0 + SEC + 1),
            sent(5, t0 + 3 * SEC),
            back(5, t0 + 3 * SEC, 4.0),
        ] {
            t.event(&ev).unwrap();
        }
        let mut points = t.into_points();
        let b = bins("IPv4", &mut points);
        let got: Vec<_> = b
            .iter()
            .map(|b| {
                (
                    b.start_unix - 1.7e9,
                    b.secs,
                    b.sent,
                    b.answered,
                    b.median_ms,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (0.0, 1.0, 3, 2, Some(2.0)),
                (1.0, 1.0, 1, 0, None),
                (3.0, 1.0, 1, 1, Some(4.0)),
            ]
        );
        assert!(b.iter().all(|b| b.family == "IPv4"));
    }

    #[test]
    fn a_long_run_gets_at_most_max_bins_of_whole_seconds() {
        // A probe every 2 s for 10 hours.
        let mut points: Vec<ProbePoint> = (0..18_000)
            .map(|i| ProbePoint {
                sent_unix_ns: i * 2 * SEC,
                rtt_ms: Some(1.0),
            })
            .collect();
        let b = bins("IPv6", &mut points);
        assert!(b.len() as u64 <= MAX_BINS, "{} bins", b.len());
        assert_eq!(b[0].secs, 150.0);
        assert_eq!(b.iter().map(|b| b.sent).sum::<u64>(), 18_000);
    }

    #[test]
    fn a_reply_without_its_send_still_counts_and_nothing_gives_no_bins() {
        let mut t = ProbeTimeline::default();
        t.event(&back(7, 5 * SEC, 2.5)).unwrap();
        let mut p = t.into_points();
        assert_eq!(bins("x", &mut p)[0].median_ms, Some(2.5));
        assert!(bins("x", &mut []).is_empty());
    }
}
