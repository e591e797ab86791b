//! The agent's measuring path as a library, on loopback: a peer's server (the runtime's, with
//! the configuration the agent gives its own from `[server]`) in this process on 127.0.0.1,
//! one scheduled run of each kind the agent runs (latency, TCP and UDP throughput, capacity,
//! profile) through `sonde_agent::runner`, each outcome recorded by `sonde_agent::record` into
//! a store in a temporary directory and observed by `sonde_agent::metrics`; the figures are
//! checked against what the runs themselves report, never against a rate.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_agent::config::AgentConfig;
use sonde_agent::metrics::Metrics;
use sonde_agent::outcome::{RunOutcome, RunResult};
use sonde_agent::record::Recorder;
use sonde_agent::runner::run_job;
use sonde_agent::schedule::{Job, Kind};
use sonde_agent::server_settings::ServerSettings;
use sonde_runtime::server::{Server, SinkFactory};
use sonde_stats::sink::Discard;
use sonde_store::{Store, TestStatus};
use sonde_testkit::TempDir;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Longest one run may take before its test fails.
const BOUND: Duration = Duration::from_secs(30);
const PROBES: u64 = 5;

/// The peer: a server configured as an agent configures its own, bound to 127.0.0.1 on a
/// port the kernel picks; stopped (its interrupt raised, its thread joined) when dropped.
struct Peer {
    port: u16,
    interrupt: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Peer {
    fn start() -> Peer {
        let mut cfg = ServerSettings::default()
            .server_config(0)
            .expect("the server's configuration");
        cfg.bind = Some(IpAddr::V4(Ipv4Addr::LOCALHOST));
        let interrupt = Arc::new(AtomicBool::new(false));
        let sinks: SinkFactory = Arc::new(|_peer: &str| Box::new(Discard));
        let log = Arc::new(|m: &str| eprintln!("peer: {m}"));
        // Listening once bound: the runs may connect at once.
        let server = Server::bind(cfg, interrupt.clone(), sinks, log).expect("bind 127.0.0.1");
        let port = server.local_addr().expect("bound").port();
        let thread = std::thread::spawn(move || server.run().expect("the peer's server"));
        Peer {
            port,
            interrupt,
            thread: Some(thread),
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.interrupt.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take().filter(|_| !std::thread::panicking()) {
            assert!(within("the peer's stop", move || t.join().is_ok()));
        }
    }
}

/// `f` on a thread of its own, failing the test when it takes longer than [`BOUND`].
fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(BOUND)
        .unwrap_or_else(|e| panic!("{what}: no result within {BOUND:?} ({e})"))
}

/// An agent's configuration with one peer, the server at `port`, and a task of each kind;
/// the store in `dir`.
fn config(dir: &TempDir, port: u16, protocol: &str) -> AgentConfig {
    let text = format!(
        r#"
store = "{store}"
name = "loopback"
seed = 1
[latency]
every_secs = 10
probes = {PROBES}
probe_interval_ms = 20
[throughput]
every_mins = 1
duration_secs = 1
share = 0.05
protocol = "{protocol}"
[capacity]
every_mins = 10
[profile]
every_mins = 10
name = "monitoring-stress"
duration_secs = 1
share = 0.05
[[peer]]
host = "127.0.0.1"
port = {port}
family = "ipv4"
link_rate = "100M"
"#,
        store = dir.file("agent.db").display()
    );
    AgentConfig::parse(&text).expect("the test's configuration")
}

/// One scheduled run of `kind` to the configuration's only peer, bounded.
fn run(cfg: &AgentConfig, kind: Kind) -> RunOutcome {
    let cfg = cfg.clone();
    within(kind.as_str(), move || {
        let job = Job {
            peer: 0,
            kind,
            seq: 0,
        };
        run_job(&cfg.peers[0], job, &cfg, None, &AtomicBool::new(false))
    })
}

/// A run that completed, over IPv4, to the peer at `port`.
fn ok(o: &RunOutcome, kind: Kind, port: u16) {
    assert!(o.ok(), "{} failed: {:?}", kind.as_str(), o.error);
    assert_eq!(o.kind, kind);
    assert_eq!(o.peer, "127.0.0.1");
    assert_eq!(o.family, "ipv4");
    assert_eq!(o.parameters["host"], "127.0.0.1");
    assert_eq!(o.parameters["port"], port);
    assert!(o.ended_unix >= o.started_unix);
}

/// The document's sender and receiver bytes of its one direction.
fn sent_and_received(doc: &serde_json::Value) -> (u64, u64) {
    let d = &doc["end"]["directions"][0];
    let bytes = |end: &str| d[end]["bytes"].as_u64().expect("bytes in the document");
    (bytes("sent"), bytes("received"))
}

/// One run of `kind` (a throughput test over `protocol`) to a peer of its own, which
/// completed.
fn run_alone(kind: Kind, protocol: &str) -> RunOutcome {
    let peer = Peer::start();
    let dir = TempDir::new(&format!("agent-{}", kind.as_str()));
    let o = run(&config(&dir, peer.port, protocol), kind);
    ok(&o, kind, peer.port);
    o
}

#[test]
fn latency_run_counts_every_probe_answered() {
    let o = run_alone(Kind::Latency, "tcp");
    let RunResult::Latency(l) = &o.result else {
        panic!("latency figures, got {:?}", o.result);
    };
    assert_eq!((l.sent, l.lost), (PROBES, 0));
    assert_eq!(l.rtt_ms.len() as u64, PROBES, "an RTT per probe");
    assert!(l.rtt_ms.iter().all(|&ms| ms > 0.0), "{:?}", l.rtt_ms);
    let doc = o.document.as_ref().expect("the run's document");
    assert_eq!(doc["end"]["loss"]["received"], PROBES);
}

#[test]
fn tcp_throughput_run_receives_what_it_sent() {
    let o = run_alone(Kind::Throughput, "tcp");
    let RunResult::Throughput(t) = &o.result else {
        panic!("throughput figures, got {:?}", o.result);
    };
    // 5 % of the 100M link rate.
    assert_eq!(t.paced_bps, 5_000_000);
    let [("upload", bps)] = t.received_bps.as_slice() else {
        panic!("one upload direction, got {:?}", t.received_bps);
    };
    assert!(*bps > 0.0);
    let (sent, received) = sent_and_received(o.document.as_ref().expect("document"));
    assert!(sent > 0, "nothing sent");
    assert_eq!(sent, received, "bytes sent != received");
}

#[test]
fn udp_throughput_run_loses_nothing_on_loopback() {
    let o = run_alone(Kind::Throughput, "udp");
    assert_eq!(o.parameters["protocol"], "udp");
    let RunResult::Throughput(t) = &o.result else {
        panic!("throughput figures, got {:?}", o.result);
    };
    let [("upload", u)] = t.udp.as_slice() else {
        panic!("the upload's datagram counts, got {:?}", t.udp);
    };
    let doc = o.document.as_ref().expect("document");
    let sent = doc["end"]["directions"][0]["sent"]["udp_sent_packets"]
        .as_u64()
        .expect("datagrams sent");
    assert!(sent > 0);
    assert_eq!(u.packets, sent, "datagrams the receiver expected");
    assert_eq!(u.lost, 0, "datagrams lost on loopback");
}

#[test]
fn capacity_run_gives_an_estimate_from_its_trains() {
    let o = run_alone(Kind::Capacity, "tcp");
    let RunResult::Capacity(c) = &o.result else {
        panic!("capacity figures, got {:?}", o.result);
    };
    assert!(c.bps.is_finite() && c.bps >= 1.0, "{}", c.bps);
    let doc = o.document.as_ref().expect("document");
    assert!(doc["trains_received"].as_u64().expect("trains") > 0);
    assert_eq!(doc["family"], "IPv4");
}

#[test]
fn profile_run_receives_every_datagram_both_ways() {
    let o = run_alone(Kind::Profile, "tcp");
    let RunResult::Profile(p) = &o.result else {
        panic!("profile figures, got {:?}", o.result);
    };
    assert_eq!(p.worst_loss_ratio, 0.0, "loss on loopback");
    let doc = o.document.as_ref().expect("document");
    assert_eq!(doc["profile"], "monitoring-stress");
    let streams = doc["streams"].as_array().expect("the streams' results");
    assert!(!streams.is_empty());
    for s in streams {
        assert_eq!(s["received"], s["sent"], "{s}");
    }
    let sent: u64 = streams.iter().filter_map(|s| s["sent"].as_u64()).sum();
    assert!(sent > 0, "nothing sent");
}

/// The value of the exposition's series `name` for the peer, if it has one.
fn series(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")))
        .find(|l| l.contains("peer=\"127.0.0.1\""))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

#[test]
fn each_kind_is_recorded_in_the_store_and_the_metrics() {
    let peer = Peer::start();
    let dir = TempDir::new("agent-store");
    let cfg = config(&dir, peer.port, "tcp");
    let mut recorder = Recorder::open(&cfg, "", "test", 1, 0.0).expect("open the store");
    let run_id = recorder.run_id();
    let metrics = Metrics::new();
    let kinds = [
        Kind::Latency,
        Kind::Throughput,
        Kind::Capacity,
        Kind::Profile,
    ];
    let outcomes: Vec<RunOutcome> = kinds.iter().map(|&k| run(&cfg, k)).collect();
    for o in &outcomes {
        ok(o, o.kind, peer.port);
        recorder.record(o).expect("record the run");
        metrics.observe(o);
    }
    recorder.finish(1.0).expect("finish the store's run");
    let loaded = Store::open_read_only(dir.file("agent.db"))
        .expect("reopen the store")
        .load_run(run_id)
        .expect("the agent's run");
    assert_eq!(loaded.run.scenario_name, "agent:loopback");
    assert_eq!(loaded.tests.len(), kinds.len(), "a row per run");
    for (row, o) in loaded.tests.iter().zip(&outcomes) {
        assert_eq!(row.test_name, o.kind.as_str());
        assert_eq!(row.settings, "127.0.0.1");
        assert_eq!(row.status, TestStatus::Ok, "{:?}", row.failure_reason);
        assert_eq!(row.parameters["host"], "127.0.0.1");
        assert_eq!(row.parameters["port"], peer.port);
        let stored: serde_json::Value =
            serde_json::from_str(row.result_json.as_deref().expect("the run's document"))
                .expect("JSON");
        assert_eq!(Some(&stored), o.document.as_ref(), "the stored document");
    }
    let text = metrics.encode();
    assert_eq!(
        series(&text, "sonde_latency_probes_sent_total"),
        Some(PROBES as f64),
        "{text}"
    );
    assert_eq!(series(&text, "sonde_latency_probes_lost_total"), Some(0.0));
    let RunResult::Capacity(c) = &outcomes[2].result else {
        panic!("capacity figures");
    };
    assert_eq!(series(&text, "sonde_capacity_bits_per_second"), Some(c.bps));
    assert!(series(&text, "sonde_throughput_bits_per_second").is_some_and(|b| b > 0.0));
    assert_eq!(
        series(&text, "sonde_profile_worst_stream_loss_ratio"),
        Some(0.0)
    );
}
