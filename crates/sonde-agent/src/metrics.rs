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
use crate::status::Status;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Metric, Registry, Unit};
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

/// One series as the registry lists it: its name (the registry appends the unit's suffix, and
/// `_total` to a counter's), its help text and its unit.
struct Series {
    name: &'static str,
    help: &'static str,
    unit: Option<Unit>,
}

impl Series {
    const fn plain(name: &'static str, help: &'static str) -> Self {
        Series {
            name,
            help,
            unit: None,
        }
    }

    const fn seconds(name: &'static str, help: &'static str) -> Self {
        Series {
            name,
            help,
            unit: Some(Unit::Seconds),
        }
    }
}

// Every series, in the order [`Metrics::new`] registers (and the exposition lists) them.
const RTT: Series = Series::seconds(
    "sonde_rtt",
    "Round-trip times of the scheduled UDP latency probes",
);
const LATENCY_LOSS_RATIO: Series = Series::plain(
    "sonde_latency_loss_ratio",
    "Share of probes lost in the last latency run (0 to 1)",
);
const LATENCY_PROBES_SENT: Series =
    Series::plain("sonde_latency_probes_sent", "Latency probes sent");
const LATENCY_PROBES_LOST: Series =
    Series::plain("sonde_latency_probes_lost", "Latency probes never answered");
const THROUGHPUT: Series = Series::plain(
    "sonde_throughput_bits_per_second",
    "Received rate of the last scheduled throughput test, paced to the budget",
);
const UDP_LOSS_RATIO: Series = Series::plain(
    "sonde_udp_loss_ratio",
    "Share of datagrams lost in the last scheduled UDP throughput test (0 to 1)",
);
const UDP_JITTER: Series = Series::seconds(
    "sonde_udp_jitter",
    "Interarrival jitter (RFC 3550) at the end of the last scheduled UDP throughput test",
);
const UDP_DATAGRAMS: Series = Series::plain(
    "sonde_udp_datagrams",
    "Datagrams of scheduled UDP throughput tests, received or lost",
);
const UDP_DATAGRAMS_LOST: Series = Series::plain(
    "sonde_udp_datagrams_lost",
    "Datagrams of scheduled UDP throughput tests that never arrived",
);
const CAPACITY: Series = Series::plain(
    "sonde_capacity_bits_per_second",
    "Path capacity from the last packet-dispersion run (sustained rate)",
);
const PROFILE_WORST_LOSS: Series = Series::plain(
    "sonde_profile_worst_stream_loss_ratio",
    "Highest loss ratio of any stream in the last profile run (0 to 1)",
);
const TESTS: Series = Series::plain("sonde_tests", "Scheduled tests by kind and result");
const SKIPPED_RUNS: Series = Series::plain(
    "sonde_schedule_skipped_runs",
    "Scheduled runs skipped because an earlier test outlasted their planned time, or the peer's last latency run was still going",
);
const SYNC_FAILURES: Series = Series::plain(
    "sonde_store_sync_failures",
    "Failed copies of the local results to PostgreSQL (store_url); 0 without it",
);
const UNSYNCED_TESTS: Series = Series::plain(
    "sonde_store_unsynced_tests",
    "Tests recorded locally since the last successful copy to PostgreSQL; 0 without it",
);
const PRUNED_TESTS: Series = Series::plain(
    "sonde_store_pruned_tests",
    "Tests deleted from the local store as older than retain_days; 0 without it",
);
const RELOADS: Series = Series::plain(
    "sonde_config_reloads",
    "Reloads of the configuration asked for (SIGHUP), by result",
);
const LAST_RELOAD_OK: Series = Series::plain(
    "sonde_config_last_reload_successful",
    "1 when the configuration running is the file's as last read, 0 when the last reload refused the file",
);
const IN_FLIGHT: Series = Series::plain(
    "sonde_runs_in_flight",
    "Runs in progress now: latency runs fly side by side, any other kind runs alone",
);

/// Registers `metric` as `series` in `registry`; the metric, to keep (a clone shares its
/// values with the registered one).
fn register<M: Metric + Clone>(registry: &mut Registry, series: &Series, metric: M) -> M {
    match &series.unit {
        Some(unit) => {
            registry.register_with_unit(series.name, series.help, unit.clone(), metric.clone());
        }
        None => registry.register(series.name, series.help, metric.clone()),
    }
    metric
}

/// An RTT histogram of [`rtt_buckets`], as each peer's is made.
fn rtt_histogram() -> Histogram {
    Histogram::new(rtt_buckets())
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
    in_flight: Gauge,
    /// What the status page shows, fed by the same calls.
    status: Status,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// An empty set of series, registered in the order of the exposition (the table above).
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let r = &mut registry;
        // The configuration the agent started with loaded, or it would not have started.
        let last_reload_ok = Gauge::default();
        last_reload_ok.set(1);
        Self {
            rtt: register(r, &RTT, Family::new_with_constructor(rtt_histogram)),
            loss_ratio: register(r, &LATENCY_LOSS_RATIO, Family::default()),
            probes_sent: register(r, &LATENCY_PROBES_SENT, Family::default()),
            probes_lost: register(r, &LATENCY_PROBES_LOST, Family::default()),
            throughput: register(r, &THROUGHPUT, Family::default()),
            udp_loss_ratio: register(r, &UDP_LOSS_RATIO, Family::default()),
            udp_jitter: register(r, &UDP_JITTER, Family::default()),
            udp_datagrams: register(r, &UDP_DATAGRAMS, Family::default()),
            udp_lost: register(r, &UDP_DATAGRAMS_LOST, Family::default()),
            capacity: register(r, &CAPACITY, Family::default()),
            profile_loss: register(r, &PROFILE_WORST_LOSS, Family::default()),
            tests: register(r, &TESTS, Family::default()),
            skipped: register(r, &SKIPPED_RUNS, Counter::default()),
            sync_failures: register(r, &SYNC_FAILURES, Counter::default()),
            unsynced: register(r, &UNSYNCED_TESTS, Gauge::default()),
            pruned: register(r, &PRUNED_TESTS, Counter::default()),
            reloads: register(r, &RELOADS, Family::default()),
            last_reload_ok: register(r, &LAST_RELOAD_OK, last_reload_ok),
            in_flight: register(r, &IN_FLIGHT, Gauge::default()),
            status: Status::new(),
            registry,
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

    /// The status page's model, fed by each call here (crate::status).
    pub fn status(&self) -> &Status {
        &self.status
    }

    /// Records one finished run.
    pub fn observe(&self, o: &RunOutcome) {
        self.status.observe(o);
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
        self.status.forget(peer);
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

    /// How many runs are in progress now.
    pub fn set_in_flight(&self, runs: usize) {
        self.in_flight.set(i64::try_from(runs).unwrap_or(i64::MAX));
    }

    /// Sets the count of skipped runs (the schedule keeps the total).
    pub fn set_skipped(&self, total: u64) {
        self.status.set_skipped(total);
        let have = self.skipped.get();
        if total > have {
            self.skipped.inc_by(total - have);
        }
    }

    /// Counts a failed copy to PostgreSQL.
    pub fn sync_failed(&self) {
        self.status.sync_failed();
        self.sync_failures.inc();
    }

    /// Sets how many locally recorded tests PostgreSQL may still lack.
    pub fn set_unsynced(&self, tests: u64) {
        self.status.set_unsynced(tests);
        self.unsynced.set(i64::try_from(tests).unwrap_or(i64::MAX));
    }

    /// Counts a reload of the configuration, applied (`ok`) or refused.
    pub fn reloaded(&self, ok: bool) {
        self.status.reloaded(ok);
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
        self.status.pruned(tests);
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
        // The status page's model saw the same calls.
        let doc = m.status().snapshot(1.0);
        assert_eq!(doc.peers[0].label, "b");
        assert_eq!(doc.peers[0].kinds["latency"].runs, 2);
        assert_eq!((doc.agent.runs.failed, doc.agent.runs.skipped), (1, 2));
        assert_eq!(doc.agent.store.unsynced_tests, Some(7));
        assert!(!doc.agent.reloads.last_ok);
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
        let labels: Vec<_> = m
            .status()
            .snapshot(1.0)
            .peers
            .into_iter()
            .map(|p| p.label)
            .collect();
        assert_eq!(labels, ["c"]);
        assert!(
            text.contains("sonde_tests_total{peer=\"c\",family=\"ipv4\",test=\"capacity\",result=\"failed\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn the_runs_in_flight_are_a_gauge_that_follows_the_loop() {
        let m = Metrics::new();
        assert!(
            m.encode().contains("\nsonde_runs_in_flight 0\n"),
            "{}",
            m.encode()
        );
        m.set_in_flight(3);
        let text = m.encode();
        assert!(
            text.contains("# TYPE sonde_runs_in_flight gauge\n"),
            "{text}"
        );
        assert!(text.contains("\nsonde_runs_in_flight 3\n"), "{text}");
        m.set_in_flight(0);
        assert!(m.encode().contains("\nsonde_runs_in_flight 0\n"));
    }

    #[test]
    fn a_series_is_registered_with_its_help_and_unit() {
        let mut registry = Registry::default();
        let jitter: Gauge = register(
            &mut registry,
            &Series::seconds("sonde_x_jitter", "Jitter, as a test"),
            Gauge::default(),
        );
        let runs: Counter = register(
            &mut registry,
            &Series::plain("sonde_x_runs", "Runs, as a test"),
            Counter::default(),
        );
        // The kept clones share their values with the registered metrics.
        jitter.set(3);
        runs.inc_by(2);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        assert_eq!(
            text,
            "# HELP sonde_x_jitter_seconds Jitter, as a test.\n\
             # TYPE sonde_x_jitter_seconds gauge\n\
             # UNIT sonde_x_jitter_seconds seconds\n\
             sonde_x_jitter_seconds 3\n\
             # HELP sonde_x_runs Runs, as a test.\n\
             # TYPE sonde_x_runs counter\n\
             sonde_x_runs_total 2\n\
             # EOF\n"
        );
    }
}
