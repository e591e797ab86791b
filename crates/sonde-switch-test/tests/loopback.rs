//! A switch-test server and client in one process over 127.0.0.1 and ::1: the stream moves
//! between the families on its schedule, both ends' SHA-256 agree, and the document and the
//! table say so.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_stats::sink::FnSink;
use sonde_switch::{Backend, Family, Targets};
use sonde_switch_test::client::{self, ClientConfig};
use sonde_switch_test::schedule::Schedule;
use sonde_switch_test::server::{Server, ServerConfig};
use sonde_switch_test::{document, table, Event};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// A run of `time` against `addrs`, switching every 100 ms.
fn config(addrs: &[SocketAddr], time: Duration) -> ClientConfig {
    ClientConfig {
        backend: Backend::Framed,
        targets: Targets::from_addrs(addrs),
        start: Family::V4,
        time,
        schedule: Schedule::new(0.1, &[]),
        switches: None,
        policy: None,
    }
}

#[test]
fn a_transfer_that_switches_every_100ms_arrives_intact_with_both_ends_records() {
    if !sonde_testkit::net::ipv6_loopback_or_skip("the switch-test loopback") {
        return;
    }
    let server = Server::bind(ServerConfig {
        backend: Backend::Framed,
        addrs: ["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()],
        interval: Duration::from_millis(50),
        one_off: true,
    })
    .unwrap();
    let addrs = server.local_addrs();
    let served = std::thread::spawn(move || {
        let mut events = Vec::new();
        let r = server.run(
            &AtomicBool::new(false),
            &mut FnSink(|e: &Event| {
                events.push(format!("{e:?}"));
            }),
        );
        (r.map_err(|e| e.to_string()), events)
    });
    let cfg = config(&addrs, Duration::from_millis(450));
    let o = client::run(&cfg, &AtomicBool::new(false), &mut FnSink(|_: &Event| {})).unwrap();
    let (ended, events) = served.join().unwrap();
    ended.unwrap();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].starts_with("Served"), "{events:?}");
    assert_eq!(o.error, None);
    assert!(o.hash_equal(), "{o:?}");
    assert_eq!(o.failure(), None);
    let n = o.client.switches.len();
    assert!(n >= 2, "{n} switches");
    assert!(o.client.sent_by_family.iter().all(|b| *b > 0), "{o:?}");
    let server_side = o.server.as_ref().unwrap();
    assert_eq!(server_side.switches.len(), n, "both ends saw every switch");
    let series = server_side.received_over_time.as_ref().unwrap();
    assert_eq!(series.bytes.iter().sum::<u64>(), o.server_bytes);
    let doc = sonde_schema::to_value(&document::document(Default::default(), &o));
    assert_eq!(doc["end"]["hash_equal"], true);
    assert_eq!(doc["end"]["sha256"], doc["end"]["server_sha256"]);
    assert_eq!(doc["kind"], "switch-test");
    let lines = table::lines(&o);
    assert!(lines.last().unwrap().ends_with(": equal"), "{lines:?}");
}

#[test]
fn a_port_where_nothing_listens_is_an_error_before_anything_is_measured() {
    let closed = sonde_testkit::net::free_port();
    let addrs = [
        format!("127.0.0.1:{closed}").parse().unwrap(),
        format!("[::1]:{closed}").parse().unwrap(),
    ];
    let cfg = config(&addrs, Duration::from_millis(100));
    let e = client::run(&cfg, &AtomicBool::new(false), &mut FnSink(|_: &Event| {})).unwrap_err();
    assert!(matches!(e, sonde_switch_test::Error::Switch(_)), "{e}");
    assert!(e.to_string().contains("refused"), "{e}");
}
