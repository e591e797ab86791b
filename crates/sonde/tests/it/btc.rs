//! `sonde btc` through the real binary on loopback: one TCP transfer per session of exactly
//! the asked size, the running statistics per family, and the usage errors.
//! (The accuracy against a shaped link's ceiling is checked as root in `lab_bare.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Server};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn sessions_move_exactly_their_size_and_the_statistics_follow() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let t0 = Instant::now();
    let out = run(
        &[
            "btc",
            "127.0.0.1",
            "-p",
            &port,
            "--sizes",
            "1M,2M,3M",
            "--every",
            "0.5s",
            "-J",
        ],
        DEADLINE,
    );
    out.expect_code(0);
    // Three sessions started 0.5 s apart: at least a second.
    assert!(
        t0.elapsed() >= Duration::from_millis(1000),
        "{:?}",
        t0.elapsed()
    );
    let doc = out.json();
    let sessions = doc["sessions"].as_array().unwrap();
    let sizes: Vec<u64> = sessions
        .iter()
        .map(|s| s["bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, vec![1 << 20, 2 << 20, 3 << 20]);
    let goodput: Vec<f64> = sessions
        .iter()
        .map(|s| s["goodput_bps"].as_f64().unwrap())
        .collect();
    assert!(goodput.iter().all(|&g| g > 1e6), "{goodput:?}");
    let st = &doc["summary"]["IPv4"];
    assert_eq!(st["sessions"], 3);
    let (min, max, mean) = (
        st["min_bps"].as_f64().unwrap(),
        st["max_bps"].as_f64().unwrap(),
        st["mean_bps"].as_f64().unwrap(),
    );
    let expect_mean = goodput.iter().sum::<f64>() / 3.0;
    assert!((mean - expect_mean).abs() < 1.0, "{mean} vs {expect_mean}");
    assert!(min <= mean && mean <= max);
    assert_eq!(doc["partial"], false);
    // The table: a row per session and the statistics line.
    let table = run(
        &[
            "btc",
            "127.0.0.1",
            "-p",
            &port,
            "--sizes",
            "1M",
            "--every",
            "0.1s",
        ],
        DEADLINE,
    );
    table.expect_code(0);
    assert!(
        table.stdout.contains("IPv4 BTC over 1 session: min "),
        "{}",
        table.describe()
    );
}

#[test]
fn an_ipv6_session_is_labelled_so_and_usage_errors_come_first() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let port = server.port.to_string();
    if common::ipv6_loopback_available() {
        let out = run(
            &[
                "btc", "::1", "-p", &port, "--sizes", "1M", "--every", "0.1s", "-J",
            ],
            DEADLINE,
        );
        out.expect_code(0);
        assert_eq!(out.json()["sessions"][0]["family"], "IPv6");
    }
    for bad in [
        &["btc", "127.0.0.1", "--both"][..],
        &["btc", "127.0.0.1", "--sizes", "0"],
        &["btc", "127.0.0.1", "--every", "x"],
    ] {
        let out = run(bad, DEADLINE);
        out.expect_code(2);
    }
    // Nothing listening: exit 1 with the reason, and the document says so.
    let closed = common::free_port().to_string();
    let out = run(
        &["btc", "127.0.0.1", "-p", &closed, "--sizes", "1M", "-J"],
        DEADLINE,
    );
    out.expect_code(1);
    assert_eq!(out.json()["partial"], true);
}
