//! The `aqm` keys and a queue limit in time: accepted forms, refused forms and their messages.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::time::Duration;

use sonde_scenario::{Aqm, QueueLimit, Scenario, ScenarioError};
use sonde_testkit::scenario::tcp_lab_with as with_settings;

fn impair(text: &str) -> sonde_scenario::Impairments {
    let s = Scenario::from_toml(&with_settings(text)).unwrap_or_else(|e| panic!("{text}: {e}"));
    let (_, _, imp) = s.setting("s").unwrap().directions().next().unwrap();
    imp.clone()
}

fn refused(text: &str) -> String {
    match Scenario::from_toml(&with_settings(text)) {
        Err(e @ (ScenarioError::Invalid { .. } | ScenarioError::Parse(_))) => e.to_string(),
        other => panic!("{text}: expected an error, got {other:?}"),
    }
}

#[test]
fn accepts_each_aqm_with_and_without_tuning() {
    assert_eq!(impair("rate = \"10mbit\"").aqm, None);
    assert_eq!(
        impair("rate = \"10mbit\"\naqm = \"codel\"").aqm,
        Some(Aqm::Codel)
    );
    assert_eq!(
        impair("rate = \"10mbit\"\naqm = \"pie\"").aqm,
        Some(Aqm::Pie)
    );
    let fq = impair(
        "rate = \"10mbit\"\naqm = \"fq_codel\"\naqm_target = \"5ms\"\naqm_interval = \"100ms\"\n\
         flows = 1024\nquantum = 1514",
    );
    assert_eq!(fq.aqm, Some(Aqm::FqCodel));
    assert_eq!(fq.aqm_target.map(|d| d.0), Some(Duration::from_millis(5)));
    assert_eq!(
        fq.aqm_interval.map(|d| d.0),
        Some(Duration::from_millis(100))
    );
    assert_eq!((fq.flows, fq.quantum), (Some(1024), Some(1514)));
    let pie = impair("rate = \"10mbit\"\naqm = \"pie\"\naqm_target = \"20ms\"");
    assert_eq!(pie.aqm_target.map(|d| d.0), Some(Duration::from_millis(20)));
    assert_eq!(Aqm::Pie.default_target(), Duration::from_millis(15));
    assert_eq!(Aqm::Codel.default_target(), Duration::from_millis(5));
}

#[test]
fn queue_limit_takes_a_time_besides_packets_and_bytes() {
    let t = impair("rate = \"20mbit\"\nqueue_limit = \"100ms\"").queue_limit;
    assert_eq!(t, Some(QueueLimit::Time(Duration::from_millis(100))));
    assert_eq!(
        t.map(|l| l.at_rate(20_000_000)),
        Some(QueueLimit::Bytes(250_000))
    );
    let p = impair("rate = \"20mbit\"\nqueue_limit = \"100pkt\"").queue_limit;
    assert_eq!(p, Some(QueueLimit::Packets(100)));
    let b = impair("rate = \"20mbit\"\nqueue_limit = \"150kb\"").queue_limit;
    assert_eq!(b, Some(QueueLimit::Bytes(150_000)));
    assert_eq!(b.map(|l| l.at_rate(1)), b);
}

#[test]
fn refuses_aqm_settings_that_do_nothing_or_make_no_sense() {
    let cases = [
        ("aqm = \"codel\"", "aqm needs rate"),
        ("rate = \"10mbit\"\naqm = \"red\"", "unknown variant `red`"),
        (
            "rate = \"10mbit\"\naqm_target = \"5ms\"",
            "aqm_target needs aqm",
        ),
        (
            "rate = \"10mbit\"\naqm = \"pie\"\naqm_interval = \"100ms\"",
            "aqm_interval needs aqm = \"codel\" or \"fq_codel\"",
        ),
        (
            "rate = \"10mbit\"\naqm = \"codel\"\nflows = 64",
            "flows needs aqm = \"fq_codel\"",
        ),
        (
            "rate = \"10mbit\"\nquantum = 300",
            "quantum needs aqm = \"fq_codel\"",
        ),
        (
            "rate = \"10mbit\"\naqm = \"fq_codel\"\nflows = 0",
            "flows must be more than zero",
        ),
        (
            "rate = \"10mbit\"\naqm = \"fq_codel\"\nquantum = 0",
            "quantum must be more than zero",
        ),
        (
            "rate = \"10mbit\"\naqm = \"codel\"\naqm_target = \"0ms\"",
            "aqm_target must be more than zero",
        ),
        (
            "rate = \"10mbit\"\nqueue_limit = \"0ms\"",
            "queue_limit must be more than zero",
        ),
        ("queue_limit = \"100ms\"", "queue_limit needs rate"),
        (
            "rate = \"10mbit\"\nqueue_limit = \"100 fortnights\"",
            "queue limit",
        ),
    ];
    for (text, want) in cases {
        let got = refused(text);
        eprintln!("{got}");
        assert!(got.contains(want), "{text}: {got:?} does not say {want:?}");
    }
}
