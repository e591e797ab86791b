//! The agent's figures in OpenMetrics form, for Prometheus to scrape.
//!
//! Names follow Prometheus's conventions: a `sonde_` prefix, the base unit in the name
//! (seconds, bits per second, a ratio), `_total` on counters; labels `peer` (the configured
//! name) and `family` (`ipv4`/`ipv6` of the address the run used, `any` when it failed before
//! one was chosen). The registry is `prometheus-client`'s; this module only turns a finished
//! run ([`crate::outcome::RunOutcome`]) into observations. The agent's own process adds the
//! usual `process_*` series ([`crate::process`]).

use crate::outcome::{RunOutcome, RunResult};
use crate::process::ProcessCollector;
use crate::schedule::Kind;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;

/// Labels of per-peer series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PeerLabels {
    pub peer: String,
    pub family: String,
}

/// Labels of test outcome counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub peer: String,
    pub family: String,
    /// `latency` or `throughput`.
    pub test: String,
    /// `ok` or `failed`.
    pub result: String,
}

/// Labels of the reload counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReloadLabels {
    /// `ok` or `failed`.
    pub result: String,
}

/// Labels of throughput series.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ThroughputLabels {
    pub peer: String,
    pub family: String,
    /// `upload` (this agent sends) or `download`.
    pub direction: String,
}

type FloatGauge = Gauge<f64, AtomicU64>;

/// RTT histogram buckets, seconds: 10 µs (loopback) to ~5.2 s, doubling.
fn rtt_buckets() -> impl Iterator<Item = f64> {
    prometheus_client::metrics::histogram::exponential_buckets(10e-6, 2.0, 20)
}

/// Every series the agent exports, and the registry that encodes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    rtt: Family<PeerLabels, Histogram, fn() -> Histogram>,
    loss_ratio: Family<PeerLabels, FloatGauge>,
    probes_sent: Family<PeerLabels, Counter>,
    probes_lost: Family<PeerLabels, Counter>,
    throughput: Family<ThroughputLabels, FloatGauge>,
    udp_loss_ratio: Family<ThroughputLabels, FloatGauge>,
    udp_jitter: Family<ThroughputLabels, FloatGauge>,
    udp_datagrams: Family<ThroughputLabels, Counter>,
    udp_lost: Family<ThroughputLabels, Counter>,
    capacity: Family<PeerLabels, FloatGauge>,
    profile_loss: Family<PeerLabels, FloatGauge>,
    tests: Family<OutcomeLabels, Counter>,
    skipped: Counter,
    sync_failures: Counter,
    unsynced: Gauge,
    pruned: Counter,
    reloads: Family<ReloadLabels, Counter>,
    last_reload_ok: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// An empty set of series, registered.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let rtt = Family::<PeerLabels, Histogram, fn() -> Histogram>::new_with_constructor(|| {
            Histogram::new(rtt_buckets())
        });
        let loss_ratio = Family::<PeerLabels, FloatGauge>::default();
        let probes_sent = Family::<PeerLabels, Counter>::default();
        let probes_lost = Family::<PeerLabels, Counter>::default();
        let throughput = Family::<ThroughputLabels, FloatGauge>::default();
        let udp_loss_ratio = Family::<ThroughputLabels, FloatGauge>::default();
        let udp_jitter = Family::<ThroughputLabels, FloatGauge>::default();
        let udp_datagrams = Family::<ThroughputLabels, Counter>::default();
        let udp_lost = Family::<ThroughputLabels, Counter>::default();
        let capacity = Family::<PeerLabels, FloatGauge>::default();
        let profile_loss = Family::<PeerLabels, FloatGauge>::default();
        let tests = Family::<OutcomeLabels, Counter>::default();
        let skipped = Counter::default();
        let sync_failures = Counter::default();
        let unsynced = Gauge::default();
        let pruned = Counter::default();
        let reloads = Family::<ReloadLabels, Counter>::default();
        // The configuration the agent started with loaded, or it would not have started.
        let last_reload_ok = Gauge::default();
        last_reload_ok.set(1);
        registry.register_with_unit(
            "sonde_rtt",
            "Round-trip times of the scheduled UDP latency probes",
            Unit::Seconds,
            rtt.clone(),
        );
        registry.register(
            "sonde_latency_loss_ratio",
            "Share of probes lost in the last latency run (0 to 1)",
            loss_ratio.clone(),
        );
        registry.register(
            "sonde_latency_probes_sent",
            "Latency probes sent",
            probes_sent.clone(),
        );
        registry.register(
            "sonde_latency_probes_lost",
            "Latency probes never answered",
            probes_lost.clone(),
        );
        registry.register(
            "sonde_throughput_bits_per_second",
            "Received rate of the last scheduled throughput test, paced to the budget",
            throughput.clone(),
        );
        registry.register(
            "sonde_udp_loss_ratio",
            "Share of datagrams lost in the last scheduled UDP throughput test (0 to 1)",
            udp_loss_ratio.clone(),
        );
        registry.register_with_unit(
            "sonde_udp_jitter",
            "Interarrival jitter (RFC 3550) at the end of the last scheduled UDP throughput test",
            Unit::Seconds,
            udp_jitter.clone(),
        );
        registry.register(
            "sonde_udp_datagrams",
            "Datagrams of scheduled UDP throughput tests, received or lost",
            udp_datagrams.clone(),
        );
        registry.register(
            "sonde_udp_datagrams_lost",
            "Datagrams of scheduled UDP throughput tests that never arrived",
            udp_lost.clone(),
        );
        registry.register(
            "sonde_capacity_bits_per_second",
            "Path capacity from the last packet-dispersion run (sustained rate)",
            capacity.clone(),
        );
        registry.register(
            "sonde_profile_worst_stream_loss_ratio",
            "Highest loss ratio of any stream in the last profile run (0 to 1)",
            profile_loss.clone(),
        );
        registry.register(
            "sonde_tests",
            "Scheduled tests by kind and result",
            tests.clone(),
        );
        registry.register(
            "sonde_schedule_skipped_runs",
            "Scheduled runs skipped because an earlier test outlasted their planned time, or the peer's last latency run was still going",
            skipped.clone(),
        );
        registry.register(
            "sonde_store_sync_failures",
            "Failed copies of the local results to PostgreSQL (store_url); 0 without it",
            sync_failures.clone(),
        );
        registry.register(
            "sonde_store_unsynced_tests",
            "Tests recorded locally since the last successful copy to PostgreSQL; 0 without it",
            unsynced.clone(),
        );
        registry.register(
            "sonde_store_pruned_tests",
            "Tests deleted from the local store as older than retain_days; 0 without it",
            pruned.clone(),
        );
        registry.register(
            "sonde_config_reloads",
            "Reloads of the configuration asked for (SIGHUP), by result",
            reloads.clone(),
        );
        registry.register(
            "sonde_config_last_reload_successful",
            "1 when the configuration running is the file's as last read, 0 when the last reload refused the file",
            last_reload_ok.clone(),
        );
        Self {
            registry,
            rtt,
            loss_ratio,
            probes_sent,
            probes_lost,
            throughput,
            udp_loss_ratio,
            udp_jitter,
            udp_datagrams,
            udp_lost,
            capacity,
            profile_loss,
            tests,
            skipped,
            sync_failures,
            unsynced,
            pruned,
            reloads,
            last_reload_ok,
        }
    }

    /// [`Metrics::new`] with the `process_*` series of this process, which started at
    /// `started_unix` ([`crate::process`]).
    pub fn with_process(started_unix: f64) -> Self {
        let mut m = Self::new();
        m.registry
            .register_collector(Box::new(ProcessCollector::new(started_unix)));
        m
    }

    /// Records one finished run.
    pub fn observe(&self, o: &RunOutcome) {
        let peer = PeerLabels {
            peer: o.peer.clone(),
            family: o.family.clone(),
        };
        let result = if o.ok() { "ok" } else { "failed" };
        self.tests
            .get_or_create(&OutcomeLabels {
                peer: o.peer.clone(),
                family: o.family.clone(),
                test: o.kind.as_str().into(),
                result: result.into(),
            })
            .inc();
        match &o.result {
            RunResult::Latency(l) => {
                let h = self.rtt.get_or_create(&peer);
                for ms in &l.rtt_ms {
                    h.observe(ms / 1e3);
                }
                self.probes_sent.get_or_create(&peer).inc_by(l.sent);
                self.probes_lost.get_or_create(&peer).inc_by(l.lost);
                if l.sent > 0 {
                    self.loss_ratio
                        .get_or_create(&peer)
                        .set(l.lost as f64 / l.sent as f64);
                }
            }
            RunResult::Throughput(t) => {
                for (direction, bps) in &t.received_bps {
                    self.throughput
                        .get_or_create(&ThroughputLabels {
                            peer: o.peer.clone(),
                            family: o.family.clone(),
                            direction: (*direction).into(),
                        })
                        .set(*bps);
                }
                for (direction, u) in &t.udp {
                    let labels = ThroughputLabels {
                        peer: o.peer.clone(),
                        family: o.family.clone(),
                        direction: (*direction).into(),
                    };
                    self.udp_datagrams.get_or_create(&labels).inc_by(u.packets);
                    self.udp_lost.get_or_create(&labels).inc_by(u.lost);
                    self.udp_jitter
                        .get_or_create(&labels)
                        .set(u.jitter_ms / 1e3);
                    if u.packets > 0 {
                        self.udp_loss_ratio
                            .get_or_create(&labels)
                            .set(u.lost as f64 / u.packets as f64);
                    }
                }
            }
            RunResult::Capacity(c) => {
                self.capacity.get_or_create(&peer).set(c.bps);
            }
            RunResult::Profile(p) => {
                self.profile_loss
                    .get_or_create(&peer)
                    .set(p.worst_loss_ratio);
            }
            RunResult::Failed => {}
        }
    }

    /// Drops every series of `peer` over `family`: a member of an `every_address` entry that
    /// left the fleet (crate::group). Its series end in Prometheus as a gone target's do,
    /// instead of staying at their last values for as long as the agent runs.
    pub fn forget_peer(&self, peer: &str, family: &str) {
        let labels = PeerLabels {
            peer: peer.into(),
            family: family.into(),
        };
        self.rtt.remove(&labels);
        self.loss_ratio.remove(&labels);
        self.probes_sent.remove(&labels);
        self.probes_lost.remove(&labels);
        self.capacity.remove(&labels);
        self.profile_loss.remove(&labels);
        for direction in ["upload", "download"] {
            let labels = ThroughputLabels {
                peer: peer.into(),
                family: family.into(),
                direction: direction.into(),
            };
            self.throughput.remove(&labels);
            self.udp_loss_ratio.remove(&labels);
            self.udp_jitter.remove(&labels);
            self.udp_datagrams.remove(&labels);
            self.udp_lost.remove(&labels);
        }
        for kind in [
            Kind::Latency,
            Kind::Throughput,
            Kind::Capacity,
            Kind::Profile,
        ] {
            for result in ["ok", "failed"] {
                self.tests.remove(&OutcomeLabels {
                    peer: peer.into(),
                    family: family.into(),
                    test: kind.as_str().into(),
                    result: result.into(),
                });
            }
        }
    }

    /// Sets the count of skipped runs (the schedule keeps the total).
    pub fn set_skipped(&self, total: u64) {
        let have = self.skipped.get();
        if total > have {
            self.skipped.inc_by(total - have);
        }
    }

    /// Counts a failed copy to PostgreSQL.
    pub fn sync_failed(&self) {
        self.sync_failures.inc();
    }

    /// Sets how many locally recorded tests PostgreSQL may still lack.
    pub fn set_unsynced(&self, tests: u64) {
        self.unsynced.set(i64::try_from(tests).unwrap_or(i64::MAX));
    }

    /// Counts a reload of the configuration, applied (`ok`) or refused.
    pub fn reloaded(&self, ok: bool) {
        let result = if ok { "ok" } else { "failed" };
        self.reloads
            .get_or_create(&ReloadLabels {
                result: result.into(),
            })
            .inc();
        self.last_reload_ok.set(i64::from(ok));
    }

    /// Counts tests deleted from the local store by the retention.
    pub fn pruned(&self, tests: u64) {
        self.pruned.inc_by(tests);
    }

    /// The exposition text (OpenMetrics 1.0, ending in `# EOF`).
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Encoding into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{LatencyFigures, ThroughputFigures, UdpFigures};

    fn outcome(kind: Kind, result: RunResult, error: Option<&str>) -> RunOutcome {
        RunOutcome {
            peer: "b".into(),
            kind,
            seq: 0,
            family: "ipv4".into(),
            started_unix: 0.0,
            ended_unix: 1.0,
            result,
            error: error.map(String::from),
            parameters: serde_json::Value::Null,
            document: None,
        }
    }

    #[test]
    fn exposition_names_units_and_labels() {
        let m = Metrics::new();
        m.observe(&outcome(
            Kind::Latency,
            RunResult::Latency(LatencyFigures {
                sent: 4,
                lost: 1,
                rtt_ms: vec![0.2, 0.3, 1.5],
            }),
            None,
        ));
        m.observe(&outcome(
            Kind::Throughput,
            RunResult::Throughput(ThroughputFigures {
                paced_bps: 1_000_000,
                received_bps: vec![("upload", 999_000.0)],
                udp: vec![(
                    "download",
                    UdpFigures {
                        packets: 200,
                        lost: 10,
                        jitter_ms: 0.5,
                    },
                )],
            }),
            None,
        ));
        m.observe(&outcome(Kind::Latency, RunResult::Failed, Some("refused")));
        m.set_skipped(2);
        m.sync_failed();
        m.set_unsynced(7);
        m.pruned(40);
        m.reloaded(false);
        let text = m.encode();
        for want in [
            "# TYPE sonde_rtt_seconds histogram",
            "# UNIT sonde_rtt_seconds seconds",
            "sonde_rtt_seconds_count{peer=\"b\",family=\"ipv4\"} 3",
            "sonde_rtt_seconds_bucket{le=\"0.00032\",peer=\"b\",family=\"ipv4\"} 2",
            "sonde_latency_loss_ratio{peer=\"b\",family=\"ipv4\"} 0.25",
            "sonde_latency_probes_lost_total{peer=\"b\",family=\"ipv4\"} 1",
            "sonde_throughput_bits_per_second{peer=\"b\",family=\"ipv4\",direction=\"upload\"} 999000.0",
            "sonde_udp_loss_ratio{peer=\"b\",family=\"ipv4\",direction=\"download\"} 0.05",
            "# UNIT sonde_udp_jitter_seconds seconds",
            "sonde_udp_jitter_seconds{peer=\"b\",family=\"ipv4\",direction=\"download\"} 0.0005",
            "sonde_udp_datagrams_total{peer=\"b\",family=\"ipv4\",direction=\"download\"} 200",
            "sonde_udp_datagrams_lost_total{peer=\"b\",family=\"ipv4\",direction=\"download\"} 10",
            "sonde_tests_total{peer=\"b\",family=\"ipv4\",test=\"latency\",result=\"failed\"} 1",
            "sonde_tests_total{peer=\"b\",family=\"ipv4\",test=\"throughput\",result=\"ok\"} 1",
            "sonde_schedule_skipped_runs_total 2",
            "sonde_store_sync_failures_total 1",
            "sonde_store_unsynced_tests 7",
            "sonde_store_pruned_tests_total 40",
            "sonde_config_reloads_total{result=\"failed\"} 1",
            "sonde_config_last_reload_successful 0",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));

        // A peer that left: none of its series stay; another peer's do.
        let mut c = outcome(Kind::Capacity, RunResult::Failed, Some("gone"));
        c.peer = "c".into();
        m.observe(&c);
        m.forget_peer("b", "ipv4");
        let text = m.encode();
        assert!(!text.contains("peer=\"b\""), "{text}");
        assert!(
            text.contains("sonde_tests_total{peer=\"c\",family=\"ipv4\",test=\"capacity\",result=\"failed\"} 1"),
            "{text}"
        );
    }
}
