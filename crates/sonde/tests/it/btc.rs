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

/// The study's run: rounds repeated (`--count`), the server sending (`-R`), both families to
/// one name. The server listens on IPv4 only, so each IPv6 session fails (no IPv6 address,
/// or refused): it is recorded with its error, the run goes on, and the exit code says so.
#[test]
fn rounds_repeat_the_server_sends_and_a_failed_family_is_recorded() {
    let _turn = crate::turns::take(module_path!());
    let out = btc_study_run();
    out.expect_code(1);
    let doc = out.json();
    assert_eq!(doc["reverse"], true);
    let sessions = doc["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 3, "{}", out.describe());
    assert!(sessions.iter().all(|s| s["family"] == "IPv4"));
    assert!(sessions
        .iter()
        .all(|s| s["bytes"].as_u64() == Some(1 << 20)));
    let failed = doc["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 3, "one IPv6 session per round failed");
    let indices: Vec<u64> = failed
        .iter()
        .map(|f| f["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, vec![2, 4, 6], "IPv4 then IPv6 in each round");
    assert!(failed
        .iter()
        .all(|f| f["family"] == "IPv6" && !f["error"].as_str().unwrap().is_empty()));
    assert_eq!(doc["partial"], true);
    assert!(doc["error"]
        .as_str()
        .unwrap()
        .starts_with("3 sessions failed"));
    assert!(
        out.stderr
            .contains("3 of 6 BTC sessions failed: sessions 2, 4, 6: "),
        "each distinct error once: {}",
        out.describe()
    );
    // The spread per family, from the sessions' goodput (sample variance).
    let g: Vec<f64> = sessions
        .iter()
        .map(|s| s["goodput_bps"].as_f64().unwrap())
        .collect();
    let mean = g.iter().sum::<f64>() / 3.0;
    let var = g.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 2.0;
    let st = &doc["summary"]["IPv4"];
    let got = st["variance"].as_f64().unwrap();
    assert!((got - var).abs() <= var * 1e-9 + 1.0, "{got} vs {var}");
    let sd = st["stddev_bps"].as_f64().unwrap();
    assert!((sd - var.sqrt()).abs() <= 1.0, "{sd}");
    assert!(doc["summary"].get("IPv6").is_none());
}

/// `sonde btc localhost --both --count 3 -R --sizes 1M -J` against an IPv4-only server
/// (also the report tests' btc document).
pub fn btc_study_run() -> common::Output {
    let server = Server::start(&["-B", "127.0.0.1"]);
    let port = server.port.to_string();
    run(
        &[
            "btc",
            "localhost",
            "-p",
            &port,
            "--both",
            "--sizes",
            "1M",
            "--count",
            "3",
            "-R",
            "--every",
            "0.1s",
            "-J",
        ],
        DEADLINE,
    )
}

#[test]
fn a_duration_repeats_rounds_until_it_ends() {
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
            "1M",
            "-t",
            "0.5",
            "--every",
            "0.2s",
        ],
        DEADLINE,
    );
    out.expect_code(0);
    // Sessions start at 0, 0.2, 0.4 s (later if one takes longer); none after 0.5 s.
    let rows = out
        .stdout
        .lines()
        .filter(|l| l.contains("/sec") && !l.contains("BTC over"))
        .count();
    assert!((2..=3).contains(&rows), "{}", out.describe());
    assert!(out.stdout.contains("IPv4 BTC over "), "{}", out.describe());
    assert!(t0.elapsed() < Duration::from_secs(20));
}
