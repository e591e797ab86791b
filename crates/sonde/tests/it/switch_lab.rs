//! `sonde switch-test` across the lab, as root: client - router - server, every interface
//! with an IPv4 and an IPv6 address, the router-server link delayed both ways.
//!
//! - 1000 planned switches in one transfer: hashes equal, nothing lost, duplicated or
//!   reordered (the SHA-256 of the stream and its length match at both ends).
//! - Planned-switch stall: the receiving end's longest wait between two deliveries of new
//!   bytes from the switch's JOIN until the new path delivered (the server's `stall_ms`), the
//!   RTT being twice the link's configured one-way delay. The issue asks for one RTT + 1 ms.
//!   A planned switch resends nothing (the new path starts at the old path's MOVED offset, in
//!   small frames at first), and `switch-test` switches from a thread of its own, so the old
//!   path keeps carrying new bytes while the JOIN goes back and forth. At 10 ms RTT: median
//!   5.5-7.7 ms, p90 9.8-10 ms (three runs on a quiet host). CI asserts the target, one RTT +
//!   1 ms, on one run's median; the p90 within it is a benchmark (`bench/accuracy.sh`), since
//!   a busy host lengthens the tail (p90 12.7-20.3 ms under three builds beside the lab).
//! - A path cut mid-transfer: the router refuses IPv4 TCP of the test's port with a reset
//!   (an nft rule, so both ends see their IPv4 connection fail at once), then lets it pass
//!   again. The stream continues on IPv6 with nothing lost; the recovery time is the
//!   receiving application's longest wait for bytes in the whole transfer (it has no planned
//!   switches), which covers the failure's detection, the redial, the JOIN and the replay. A
//!   silently dropping path (no reset, no error) is found only by a heartbeat, not tested here.
//!
//! Without root each test prints why it skips and passes; `SONDE_REQUIRE_ALL=1` turns the
//! skip into a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::lab_available_with as available_with;
use common::{free_port, sonde_bin, Output, Proc};
use serde_json::Value;
use sonde_lab::Lab;
use std::time::Duration;

/// The binary under test; `SONDE_SWITCH_LAB_BIN` names another build (an older one, to
/// compare stalls side by side on the same host).
fn bin() -> String {
    std::env::var("SONDE_SWITCH_LAB_BIN").unwrap_or_else(|_| sonde_bin().to_string())
}

/// A dual-stack chain whose router-server link delays `one_way_ms` each way.
fn lab(tag: &str, one_way_ms: u32) -> Lab {
    common::chain3_lab(
        &format!("sonde-sw{}-{tag}", std::process::id() % 1_000_000),
        &format!(r#"delay = "{one_way_ms}ms""#),
    )
}

/// The server's IPv4 and IPv6 addresses in the lab.
fn server_addrs(lab: &Lab) -> (String, String) {
    let f = &lab.node("server").expect("server node").ifaces[0];
    (f.ipv4.to_string(), f.ipv6.to_string())
}

/// `sonde switch-test --listen -1` in the server node, once it listens.
fn serve(lab: &Lab, port: &str) -> Proc {
    let args = ["switch-test", "--listen", "-1", "-p", port, "-i", "0.01"];
    let cmd = lab.command("server", &bin(), &args).expect("server");
    let mut p = Proc::spawn_command(cmd, args.iter().map(|s| s.to_string()).collect());
    p.wait_says(common::SWITCH_TEST_LISTENING, Duration::from_secs(10));
    p
}

/// `sonde switch-test ARGS -J` from the client node to the server.
fn client(lab: &Lab, port: &str, extra: &[&str]) -> Proc {
    let (v4, v6) = server_addrs(lab);
    let mut args: Vec<String> = ["switch-test", "--v4", &v4, "--v6", &v6, "-p", port, "-J"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let cmd = lab.command("client", &bin(), &refs).expect("client");
    Proc::spawn_command(cmd, args)
}

/// The document of a run that must have kept the stream intact.
fn intact(out: &Output) -> Value {
    out.expect_code(0);
    let doc = out.json();
    let end = &doc["end"];
    assert_eq!(end["hash_equal"], true, "{end}");
    assert_eq!(end["sha256"], end["server_sha256"], "{end}");
    assert_eq!(end["bytes"], end["server_bytes"], "{end}");
    assert!(end["bytes"].as_u64().unwrap() > 0);
    doc
}

/// One switch-test with planned switches against a fresh server: its intact document.
fn planned(lab: &Lab, args: &[&str]) -> Value {
    let port = free_port().to_string();
    let _server = serve(lab, &port);
    intact(&client(lab, &port, args).wait(Duration::from_secs(90)))
}

fn stalls(doc: &Value) -> Vec<f64> {
    let mut v: Vec<f64> = doc["server"]["switches"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["stall_ms"].as_f64())
        .collect();
    v.sort_by(f64::total_cmp);
    v
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// 1000 planned switches in one transfer over a 2 ms RTT (1 ms each way: each switch dials
/// and joins, so the count sets the test's length).
#[test]
fn a_thousand_planned_switches_lose_nothing() {
    let _turn = crate::turns::take(module_path!());
    if !available_with("planned switches", &["ip"]) {
        return;
    }
    let lab1 = lab("p1", 1);
    let doc = planned(
        &lab1,
        &["-t", "60", "--every", "0.001", "--switches", "1000"],
    );
    assert_eq!(doc["end"]["switches"], 1000, "{}", doc["end"]);
    assert_eq!(doc["server"]["switches"].as_array().unwrap().len(), 1000);
    assert!(doc["end"]["sent_by_family"]["ipv4"].as_u64().unwrap() > 0);
    assert!(doc["end"]["sent_by_family"]["ipv6"].as_u64().unwrap() > 0);
    eprintln!(
        "1000 switches, 2 ms RTT: {} bytes in {:.2} s, replayed {} B, hashes equal",
        doc["end"]["bytes"],
        doc["end"]["seconds"].as_f64().unwrap(),
        doc["end"]["replayed"]
    );
}

/// One run of 20 planned switches 0.2 s apart on a 10 ms RTT (5 ms each way): the stalls'
/// median, p90 and largest, in ms, printed with the run's figures.
fn planned_stalls(lab5: &Lab) -> (f64, f64, f64) {
    let doc = planned(lab5, &["-t", "30", "--every", "0.2", "--switches", "20"]);
    let s = stalls(&doc);
    assert!(
        s.len() >= 15,
        "{} of 20 switches have a stall: {}",
        s.len(),
        doc["server"]["switches"]
    );
    let run = (quantile(&s, 0.5), quantile(&s, 0.9), *s.last().unwrap());
    eprintln!(
        "10 ms RTT, 20 switches 0.2 s apart: stall median {:.2} ms, p90 {:.2} ms, max {:.2} ms; \
         {:.0} Mbit/s, {} B replayed per switch",
        run.0,
        run.1,
        run.2,
        doc["end"]["bits_per_second"].as_f64().unwrap() / 1e6,
        doc["end"]["replayed"].as_u64().unwrap() / 20
    );
    eprintln!(
        "  median switch, server: {}\n  client: {}",
        doc["server"]["switches"][10], doc["client"]["switches"][10]
    );
    run
}

/// The planned-switch stall on a 10 ms RTT, one run: its median within one RTT + 1 ms. The
/// median held there under three builds beside the lab (9.98-10.03 ms), where the p90 did not
/// (12.7-20.3 ms): the tail is the host's, so the p90 bound is the benchmark's below.
#[test]
fn a_planned_switch_stalls_the_receiver_a_median_of_at_most_one_rtt_plus_1ms() {
    let _turn = crate::turns::take(module_path!());
    if !available_with("planned-switch stall", &["ip"]) {
        return;
    }
    let (median, _, _) = planned_stalls(&lab("p5", 5));
    let limit = RTT_MS + STALL_LIMIT_EXTRA_MS;
    assert!(
        median <= limit,
        "planned-switch stall median {median:.2} ms: over one RTT + 1 ms ({limit} ms)"
    );
}

/// The issue's target on a quiet host, one run: median and p90 within one RTT + 1 ms.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn a_planned_switch_stalls_the_receiver_at_most_one_rtt_plus_1ms() {
    let _turn = crate::turns::take(module_path!());
    if !available_with("planned-switch stall", &["ip"]) {
        return;
    }
    let (median, p90, _) = planned_stalls(&lab("p5", 5));
    let limit = RTT_MS + STALL_LIMIT_EXTRA_MS;
    assert!(
        median <= limit && p90 <= limit,
        "planned-switch stall median {median:.2} ms, p90 {p90:.2} ms: over one RTT + 1 ms \
         ({limit} ms)"
    );
}

/// The lab's round-trip time for the stall tests: 5 ms each way.
const RTT_MS: f64 = 10.0;

/// The bound on the stalls' median and p90: one RTT + 1 ms (see the module docs).
const STALL_LIMIT_EXTRA_MS: f64 = 1.0;

/// Refuses (`on`) or lets pass again IPv4 TCP to and from `port` in the router.
fn cut_ipv4(lab: &Lab, port: &str, on: bool) {
    let script = if on {
        format!(
            "add table ip sondecut\n\
             add chain ip sondecut pass {{ type filter hook forward priority 0; }}\n\
             add rule ip sondecut pass tcp dport {port} reject with tcp reset\n\
             add rule ip sondecut pass tcp sport {port} reject with tcp reset\n"
        )
    } else {
        "delete table ip sondecut\n".to_string()
    };
    let status = lab
        .command("router", "nft", &["-f", "-"])
        .expect("router")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .expect("stdin")
                .write_all(script.as_bytes())?;
            c.wait()
        })
        .expect("nft runs");
    assert!(status.success(), "nft {script}");
}

/// One transfer of 3 s whose IPv4 path the router refuses from 1 s to 2 s: the stream goes on
/// over IPv6, intact; returns the receiver's longest wait for bytes, ms.
fn cut_run(lab5: &Lab) -> f64 {
    let port = free_port().to_string();
    let server = serve(lab5, &port);
    let c = client(lab5, &port, &["-t", "3", "--every", "100"]);
    std::thread::sleep(Duration::from_millis(1000));
    cut_ipv4(lab5, &port, true);
    std::thread::sleep(Duration::from_millis(1000));
    cut_ipv4(lab5, &port, false);
    let out = c.wait(Duration::from_secs(30));
    let doc = intact(&out);
    drop(server);
    // The client saw its IPv4 connection fail and recovered; the server may see the
    // JOIN before its own IPv4 socket has had the reset, and then calls the move planned.
    let (client, server) = (&doc["client"]["switches"], &doc["server"]["switches"]);
    assert_eq!(client.as_array().unwrap().len(), 1, "one switch: {client}");
    assert_eq!(client[0]["kind"], "recovery", "{client}");
    assert_eq!(client[0]["to"], "IPv6", "{client}");
    assert_eq!(server.as_array().unwrap().len(), 1, "one switch: {server}");
    assert_eq!(server[0]["to"], "IPv6", "{server}");
    assert!(doc["end"]["sent_by_family"]["ipv6"].as_u64().unwrap() > 0);
    let gap = doc["server"]["received_over_time"]["gaps"][0]["ms"]
        .as_f64()
        .unwrap();
    eprintln!(
        "IPv4 refused mid-transfer, 10 ms RTT: the receiver waited {gap:.1} ms at most; \
         client's record {}, server's {}",
        client[0], server[0]
    );
    gap
}

/// The IPv4 path refused for 1 s mid-transfer, one run: the stream recovers on IPv6, nothing
/// lost, before the cut is lifted (the receiver's longest wait under the cut's 1 s). How soon
/// (22-182 ms over eleven quiet runs) is the host's as much as the tool's: the bound of 300 ms
/// + one RTT is the benchmark below.
#[test]
fn a_cut_ipv4_path_recovers_on_ipv6_with_nothing_lost() {
    let _turn = crate::turns::take(module_path!());
    if !available_with("path cut", &["ip", "nft"]) {
        return;
    }
    let gap = cut_run(&lab("c5", 5));
    assert!(
        gap < 1000.0,
        "recovery took {gap:.1} ms, as long as the cut"
    );
}

/// The same on a quiet host, one run: recovered within 300 ms + one RTT.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn a_cut_ipv4_path_recovers_on_ipv6_within_300_ms_and_one_rtt() {
    let _turn = crate::turns::take(module_path!());
    if !available_with("path cut", &["ip", "nft"]) {
        return;
    }
    let gap = cut_run(&lab("c5", 5));
    assert!(
        gap <= 300.0 + RTT_MS,
        "recovery took {gap:.1} ms, over 300 ms + one RTT"
    );
}
