//! The bookkeeping every latency mode shares: the tracker, the interval clock, the end of
//! probing and the events out (per-probe records, interval rows, the summary).
//!
//! A run lasts what it was asked for: `-t T` probes for T seconds and `-c N` for N intervals
//! (probe n owns the slot from (n − 1) × interval to n × interval), so `-c 10 -i 1` and
//! `-t 10 -i 1` are the same run with the same ten rows. Flooding ends when the last probe
//! leaves. Rows are cut at every report boundary and at the end of probing, and given out
//! when every probe in them is answered or the reply wait has passed (see
//! `sonde_stats::latency::intervals`); the last ones at the very end.

use super::{LatencyConfig, LatencyOutcome};
use sonde_stats::latency::model::{LatencyEvent, LatencySummary, ProbeSent};
use sonde_stats::latency::tracker::{ProbeTracker, Reply, TrackerConfig, Verdict};
use sonde_stats::sink::{deliver, Sink};
use std::time::{Duration, Instant};

/// Shared bookkeeping of a run: tracker, interval clock, event sink.
pub(crate) struct RunState<'a> {
    pub tracker: ProbeTracker,
    pub start: Instant,
    /// The next interval boundary (None for the summary only, and once probing ended).
    pub next_report: Option<Instant>,
    report_every: Option<Duration>,
    emit: &'a mut dyn Sink<LatencyEvent>,
    pub max_rtt: Duration,
    /// Count replies seen (UDP).
    pub count_replies: u64,
    /// `--wait`, if given.
    wait: Option<Duration>,
    /// Seconds from the start to the end of probing, once it ended.
    probing_secs: Option<f64>,
}

impl<'a> RunState<'a> {
    pub(crate) fn new(cfg: &LatencyConfig, emit: &'a mut dyn Sink<LatencyEvent>) -> Self {
        let start = Instant::now();
        Self {
            tracker: ProbeTracker::new(TrackerConfig {
                late_ns: cfg.late.map(|d| d.as_nanos().min(u64::MAX as u128) as u64),
                clock_synced: cfg.clock_synced,
            }),
            start,
            next_report: cfg.report_interval.and_then(|d| start.checked_add(d)),
            report_every: cfg.report_interval,
            emit,
            max_rtt: Duration::ZERO,
            count_replies: 0,
            wait: cfg.wait,
            probing_secs: None,
        }
    }

    fn secs(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.start).as_secs_f64()
    }

    /// Probe `seq` left at `sent_unix_ns` (wall clock).
    pub(crate) fn sent(&mut self, seq: u64, sent_unix_ns: u64) {
        self.tracker.on_sent(seq);
        deliver(
            self.emit,
            &LatencyEvent::Sent(ProbeSent { seq, sent_unix_ns }),
        );
    }

    /// Accounts a reply; a fresh one also goes out as a per-probe record.
    pub(crate) fn answer(&mut self, r: &Reply) -> Verdict {
        let v = self.tracker.on_reply(r);
        if v == Verdict::Fresh {
            self.max_rtt = self
                .max_rtt
                .max(Duration::from_nanos(r.recv_ns.saturating_sub(r.sent_ns)));
            if let Some(rt) = self.tracker.last_round_trip().copied() {
                deliver(self.emit, &LatencyEvent::RoundTrip(rt));
            }
        }
        v
    }

    /// Cuts the intervals whose boundary has passed and emits the rows that are ready.
    pub(crate) fn report_due(&mut self, now: Instant) {
        while let (Some(at), Some(every)) = (self.next_report, self.report_every) {
            if now < at {
                break;
            }
            let end = self.secs(at);
            self.tracker.close_interval(end);
            self.next_report = at.checked_add(every);
        }
        self.emit_rows(now, false);
    }

    fn emit_rows(&mut self, now: Instant, force: bool) {
        if self.report_every.is_none() {
            return;
        }
        let (now, grace) = (self.secs(now), self.final_wait().as_secs_f64());
        while let Some(iv) = self.tracker.pop_interval(now, grace, force) {
            deliver(self.emit, &LatencyEvent::Interval(iv));
        }
    }

    /// When probing ends: after `--count` intervals (at the last send when flooding, never
    /// before `now`), at the run's duration, whichever comes first. A probe that overran the
    /// duration belongs to the last interval, which still ends at the duration.
    pub(crate) fn probing_end(&self, cfg: &LatencyConfig, sent: u64, now: Instant) -> Instant {
        let by_count = cfg.count.filter(|&c| sent >= c).map(|c| {
            let slots = u32::try_from(c).unwrap_or(u32::MAX);
            let nominal = if cfg.flood {
                None
            } else {
                self.start.checked_add(cfg.interval.saturating_mul(slots))
            };
            nominal.map_or(now, |n| n.max(now))
        });
        let by_time = cfg.duration.and_then(|d| self.start.checked_add(d));
        match (by_count, by_time) {
            (Some(c), Some(t)) => c.min(t),
            (c, t) => c.or(t).unwrap_or(now),
        }
    }

    /// Probing ended at `at`: the last interval is cut there, no boundary follows.
    pub(crate) fn end_probing(&mut self, at: Instant) {
        if self.probing_secs.is_some() {
            return;
        }
        self.report_due(at);
        let end = self.secs(at);
        if self.report_every.is_some() {
            self.tracker.close_interval(end);
        }
        self.next_report = None;
        self.probing_secs = Some(end);
    }

    /// Emits the remaining interval rows and the summary.
    pub(crate) fn finish(
        mut self,
        partial: bool,
        error: Option<String>,
        extra: impl FnOnce(&mut LatencySummary),
    ) -> LatencyOutcome {
        let now = Instant::now();
        self.end_probing(now);
        self.emit_rows(now, true);
        let secs = self.probing_secs.unwrap_or_else(|| self.secs(now));
        let t = &self.tracker;
        let mut s = LatencySummary {
            seconds: secs,
            loss: t.loss(),
            rtt: t.rtt(),
            rtt_histogram: t.rtt_histogram(),
            jitter_ms: t.jitter_ms(),
            ipdv: t.ipdv(),
            one_way: t.one_way(),
            server_turnaround_us: t.turnaround_us(),
            schedule: None,
            rate_per_second: if secs > 0.0 {
                t.received() as f64 / secs
            } else {
                0.0
            },
            partial,
            error,
        };
        extra(&mut s);
        deliver(self.emit, &LatencyEvent::End(Box::new(s.clone())));
        LatencyOutcome {
            summary: Some(s),
            error: None,
            rtt_sample_ms: self.tracker.rtt_sample_ms(),
        }
    }

    /// How long to wait for the last replies, and for the replies of an interval before its
    /// row is written: `--wait`, else 3 × the largest RTT (0.1..3 s), 1 s before any reply.
    pub(crate) fn final_wait(&self) -> Duration {
        self.wait.unwrap_or(if self.max_rtt.is_zero() {
            Duration::from_secs(1)
        } else {
            (self.max_rtt * 3).clamp(Duration::from_millis(100), Duration::from_secs(3))
        })
    }
}
