//! The runtime as a library, on loopback: an in-process server (`sonde_runtime::server`) and
//! each kind's client driven through its public API, without the `sonde` binary: throughput
//! (TCP both ways, sized, UDP), latency, coded, capacity, profile, and a limit's refusal.
//! Every check compares figures the run itself reports (what one end sent against what the
//! other counted), never throughput, so the tests hold on a loaded host.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{bounded, loopback_config, Served};
use sonde_proto::message::TestParams;
use sonde_runtime::client::{self, ClientOutcome};
use sonde_runtime::error::RunError;
use sonde_runtime::latency::{self, LatencyConfig};
use sonde_stats::latency::model::LatencyEvent;
use sonde_stats::model::{DirectionSummary, Event, Protocol, TestSummary};
use sonde_stats::sink::FnSink;
use sonde_stats::units::{Rate, Size};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Runs one throughput test of `params` against `server`, bounded; its outcome and events.
fn run_client(server: &Served, params: TestParams) -> (ClientOutcome, Vec<Event>) {
    let cfg = server.client(params);
    bounded("the client run", move || {
        let mut events = Vec::new();
        let outcome = client::run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|ev: &Event| events.push(ev.clone())),
        );
        (outcome, events)
    })
}

/// The summary of a run that must have ended normally: no error, an `End` event equal to the
/// outcome's summary, not partial.
fn completed(outcome: &ClientOutcome, events: &[Event]) -> TestSummary {
    assert!(
        outcome.error.is_none(),
        "the run failed: {:?}",
        outcome.error
    );
    let summary = outcome
        .summary
        .clone()
        .expect("a complete run has a summary");
    let ends: Vec<&TestSummary> = events
        .iter()
        .filter_map(|e| match e {
            Event::End(s) => Some(&**s),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [&summary], "one End event, the outcome's summary");
    assert!(!summary.partial, "ended early: {:?}", summary.error);
    assert!(
        matches!(events.first(), Some(Event::Start(_))),
        "the first event is the start"
    );
    summary
}

/// The one direction of a one-way test, sender's and receiver's bytes both known.
fn one_way(summary: &TestSummary, client_sends: bool) -> (u64, u64) {
    let [d]: &[DirectionSummary; 1] = summary
        .directions
        .as_slice()
        .try_into()
        .expect("one direction of traffic");
    assert_eq!(d.client_sends, client_sends);
    let sent = d.sent.as_ref().expect("the sender's total").bytes;
    let received = d.received.as_ref().expect("the receiver's total").bytes;
    (sent, received)
}

fn timed_tcp(secs: f64) -> TestParams {
    TestParams {
        duration_secs: secs,
        interval_secs: 0.1,
        ..TestParams::default()
    }
}

#[test]
fn tcp_upload_receiver_counts_what_the_sender_sent() {
    let server = Served::start(loopback_config());
    let (outcome, events) = run_client(&server, timed_tcp(0.3));
    let summary = completed(&outcome, &events);
    assert_eq!(summary.protocol, Protocol::Tcp);
    let (sent, received) = one_way(&summary, true);
    assert!(sent > 0, "nothing sent");
    assert_eq!(sent, received, "TCP upload: sent != received");
    assert!(
        events.iter().any(|e| matches!(e, Event::Interval(_))),
        "no interval report in 0.3 s at 0.1 s intervals"
    );
}

#[test]
fn tcp_download_receiver_counts_what_the_sender_sent() {
    let server = Served::start(loopback_config());
    let params = TestParams {
        direction: sonde_stats::model::Direction::Reverse,
        ..timed_tcp(0.3)
    };
    let (outcome, events) = run_client(&server, params);
    let summary = completed(&outcome, &events);
    let (sent, received) = one_way(&summary, false);
    assert!(sent > 0, "nothing sent");
    assert_eq!(sent, received, "TCP download (-R): sent != received");
}

#[test]
fn tcp_sized_transfer_moves_exactly_its_bytes() {
    const BYTES: u64 = 1_000_000;
    let server = Served::start(loopback_config());
    let params = TestParams {
        duration_secs: 0.0,
        bytes: Size::from_bytes(BYTES),
        ..timed_tcp(0.0)
    };
    let (outcome, events) = run_client(&server, params);
    let summary = completed(&outcome, &events);
    assert_eq!(one_way(&summary, true), (BYTES, BYTES), "-n {BYTES}");
}

#[test]
fn udp_at_a_low_rate_loses_nothing_on_loopback() {
    let server = Served::start(loopback_config());
    let params = TestParams {
        protocol: Protocol::Udp,
        duration_secs: 0.5,
        interval_secs: 0.1,
        length: Size::from_bytes(1448),
        rate: Rate::from_bits_per_sec(2_000_000),
        ..TestParams::default()
    };
    let (outcome, events) = run_client(&server, params);
    let summary = completed(&outcome, &events);
    let d = &summary.directions[0];
    let sent = d.sent.as_ref().and_then(|v| v.udp_sent_packets);
    let rx = d
        .received
        .as_ref()
        .and_then(|v| v.udp_received)
        .expect("the receiver's datagram counts");
    let sent = sent.expect("the sender's datagram count");
    // 2 Mbit/s of 1448-byte datagrams for 0.5 s is about 86 of them.
    assert!(sent >= 10, "only {sent} datagrams sent");
    assert_eq!(rx.packets, sent, "datagrams expected by the receiver");
    assert_eq!(rx.lost, 0, "datagrams lost on loopback");
    assert_eq!(rx.duplicates, 0);
    let (bytes_sent, bytes_received) = one_way(&summary, true);
    assert_eq!(bytes_sent, bytes_received, "UDP bytes sent != received");
}

#[test]
fn latency_probes_are_all_answered_by_the_responder() {
    const PROBES: u64 = 5;
    let server = Served::start(loopback_config());
    let mut cfg = LatencyConfig::udp("127.0.0.1", server.port);
    cfg.family = sonde_runtime::client::Family::V4;
    cfg.count = Some(PROBES);
    cfg.duration = None;
    cfg.interval = Duration::from_millis(20);
    cfg.report_interval = None;
    cfg.wait = Some(Duration::from_secs(1));
    let (outcome, answered) = bounded("the latency run", move || {
        let mut answered = 0u64;
        let outcome = latency::run(
            &cfg,
            &AtomicBool::new(false),
            &mut FnSink(|ev: &LatencyEvent| {
                if matches!(ev, LatencyEvent::RoundTrip(_)) {
                    answered += 1;
                }
            }),
        );
        (outcome, answered)
    });
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let s = outcome.summary.expect("a summary");
    assert!(!s.partial);
    assert_eq!(s.loss.sent, PROBES);
    assert_eq!(s.loss.received, PROBES, "probes answered");
    assert_eq!(s.loss.lost, 0);
    assert_eq!(answered, PROBES, "RoundTrip events");
    let rtt = s.rtt.expect("RTT statistics");
    assert_eq!(rtt.samples, PROBES);
    assert!(rtt.min_ms > 0.0, "RTT {} ms", rtt.min_ms);
    assert!(rtt.max_ms >= rtt.min_ms);
    assert_eq!(outcome.rtt_sample_ms.len() as u64, PROBES);
}

#[test]
fn coded_sized_upload_delivers_its_bytes_with_equal_hashes() {
    const BYTES: u64 = 300_000;
    let server = Served::start(loopback_config());
    let params = TestParams {
        protocol: Protocol::Udp,
        coded: true,
        duration_secs: 0.0,
        bytes: Size::from_bytes(BYTES),
        length: Size::from_bytes(1448),
        rate: Rate::from_bits_per_sec(20_000_000),
        ..TestParams::default()
    };
    let cfg = server.client(params);
    let (out, err) = bounded("the coded run", move || {
        sonde_runtime::coded::client::run(&cfg, &AtomicBool::new(false))
    });
    assert!(err.is_none(), "the coded run failed: {err:?}");
    assert!(out.client_sends);
    let f = out.figures;
    assert!(f.complete, "every block delivered");
    assert_eq!(
        f.digest_ok,
        Some(true),
        "SHA-256 of both ends compared equal"
    );
    let sender = f.sender.expect("this end's sender report");
    let receiver = f.receiver.expect("the server's receiver report");
    assert_eq!(sender.data_bytes, BYTES, "bytes the sender read");
    assert_eq!(
        receiver.delivered_bytes, BYTES,
        "bytes the server delivered"
    );
    assert_eq!(receiver.mismatched_bytes, 0);
    assert_eq!(sender.sha256, receiver.sha256);
    assert!(sender.sha256.is_some(), "the digests were reported");
}

#[test]
fn max_bitrate_refusal_reaches_the_client_as_an_error() {
    let mut cfg = loopback_config();
    cfg.max_bitrate = Some(Rate::from_bits_per_sec(10_000_000));
    let server = Served::start(cfg);
    let params = TestParams {
        rate: Rate::from_bits_per_sec(50_000_000),
        ..timed_tcp(2.0)
    };
    let (outcome, events) = run_client(&server, params);
    match &outcome.error {
        Some(RunError::ServerRefused { message, .. }) => {
            assert!(message.contains("--max-bitrate"), "{message}")
        }
        other => panic!("expected the server's refusal, got {other:?}"),
    }
    assert!(
        !events.iter().any(|e| matches!(e, Event::End(_))),
        "a refused test has no end"
    );
    // The server still serves a test within its limit.
    let within = TestParams {
        rate: Rate::from_bits_per_sec(5_000_000),
        ..timed_tcp(0.3)
    };
    let (outcome, events) = run_client(&server, within);
    let (sent, received) = one_way(&completed(&outcome, &events), true);
    assert_eq!(sent, received);
}

#[test]
fn capacity_client_receives_every_train_of_its_plan() {
    let plan = sonde_proto::capacity::CapacityPlan {
        short_trains: 8,
        short_len: 10,
        long_trains: 2,
        long_len: 100,
        spacing_ms: 5,
        tx_timestamps: false,
        sizes: Default::default(),
    };
    let params = sonde_runtime::capacity::params(plan, 1472);
    params.validate().expect("a valid plan");
    let server = Served::start(loopback_config());
    let cfg = server.client(params);
    // No early stop: the whole plan is received.
    let (out, err) = bounded("the capacity run", move || {
        sonde_runtime::capacity::client::run_with(&cfg, None, &AtomicBool::new(false))
    });
    assert!(err.is_none(), "the capacity run failed: {err:?}");
    assert!(!out.interrupted);
    assert_eq!(out.family, "IPv4");
    assert_eq!(
        out.trains_received,
        plan.trains() as usize,
        "trains received"
    );
    let e = out.estimate.expect("an estimate from the trains");
    assert_eq!(e.short.trains, plan.short_trains, "short trains estimated");
    assert_eq!(e.long.trains, plan.long_trains, "long trains estimated");
}

#[test]
fn profile_streams_both_ways_receive_what_was_sent() {
    use sonde_runtime::profile::client::{run_as_requested, ProfileConfig};
    let profile = sonde_profile::builtin::get("monitoring-stress")
        .expect("a built-in profile")
        .with_duration(1.0);
    let streams = profile.streams.len();
    let server = Served::start(loopback_config());
    let cfg = ProfileConfig {
        host: "127.0.0.1".into(),
        port: server.port,
        family: sonde_runtime::client::Family::V4,
        local: Default::default(),
        connect_timeout: Duration::from_secs(5),
        request: sonde_proto::message::ProfileRequest {
            profile,
            clock_synced: true,
            clock_offset: None,
        },
    };
    let (out, notes) = bounded("the profile run", move || {
        let mut notes = Vec::new();
        let mut sink = sonde_stats::sink::FnSink(|n: &sonde_stats::sink::ProgressNote| {
            notes.push(n.0.clone())
        });
        let out = run_as_requested(&cfg, &AtomicBool::new(false), &mut sink);
        (out, notes)
    });
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("running profile monitoring-stress")),
        "the run's progress reaches its sink: {notes:?}"
    );
    assert!(
        out.error.is_none(),
        "the profile run failed: {:?}",
        out.error
    );
    let report = out.report.expect("the profile's report");
    assert_eq!(report.ended_early, None);
    assert_eq!(report.streams.len(), streams, "a result per stream");
    let directions: std::collections::BTreeSet<&str> = report
        .streams
        .iter()
        .map(|s| s.direction.as_str())
        .collect();
    assert_eq!(directions.len(), 2, "streams both ways: {directions:?}");
    for s in &report.streams {
        assert_eq!(s.received, s.sent, "stream {} ({})", s.id, s.name);
        assert_eq!(s.lost, 0, "stream {} ({})", s.id, s.name);
    }
    let sent: u64 = report.streams.iter().map(|s| s.sent).sum();
    assert!(sent > 0, "nothing sent in 1 s");
}
