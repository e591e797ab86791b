//! The lab on a bare machine, as root: `sonde lab run` with nothing but iproute2 on `PATH`;
//! TCP over shaped links of 10, 100 and 1000 Mbit/s within 1 % of what the wire can carry;
//! and interface counters that count the same packets at both ends of a link.
//!
//! Without root each test prints why it skips and passes; `SONDE_REQUIRE_ALL=1` (CI) turns the
//! skip into a failure. The tests take one lock: they measure rates on a 2-core machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::lab_available_with as available_with;
use common::{lab_server as server_with, sonde_bin, which, Killed, TempDir};
use serde_json::Value;
use sonde_lab::{IfCounters, Lab};
use sonde_testkit::scenario::chain;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// True when the lab can run here (root, and iproute2's `ip` and `tc` installed); otherwise
/// prints why (and fails under SONDE_REQUIRE_ALL).
fn lab_available(test: &str) -> bool {
    available_with(test, &["ip", "tc"])
}

fn build(tag: &str, impair: &str) -> Lab {
    common::chain3_lab(
        &format!("sonde-b{}-{tag}", std::process::id() % 1_000_000),
        impair,
    )
}

/// `sonde server -1` in the server node, once it says it listens.
fn server(lab: &Lab) -> Killed {
    server_with(lab, &["server", "-1"])
}

/// The counters of `node`'s lab interface.
fn counters(lab: &Lab, node: &str, iface: &str) -> IfCounters {
    let all = lab.counters(node).expect("counters");
    all.into_iter()
        .find(|c| c.name == iface)
        .expect("the lab interface")
}

/// One sonde TCP upload over the lab: the client's JSON document, and the traffic counted by
/// the client's and the server's lab interface while it ran.
fn tcp_upload(lab: &Lab, secs: &str) -> (Value, IfCounters, IfCounters) {
    let dst = lab.node("server").expect("server").ifaces[0]
        .ipv4
        .to_string();
    let _server = server(lab);
    let (c0, s0) = (
        counters(lab, "client", "s-lan"),
        counters(lab, "server", "s-wan"),
    );
    let out = lab
        .command("client", sonde_bin(), &["client", &dst, "-t", secs, "-J"])
        .expect("client node")
        .output()
        .expect("sonde client runs");
    let (c1, s1) = (
        counters(lab, "client", "s-lan"),
        counters(lab, "server", "s-wan"),
    );
    assert!(
        out.status.success(),
        "sonde client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    (doc, c1.since(&c0), s1.since(&s0))
}

/// Busy and softirq shares of all CPUs between two `/proc/stat` readings, in %.
fn cpu_split(before: &[u64], after: &[u64]) -> (f64, f64) {
    let d: Vec<u64> = after
        .iter()
        .zip(before)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect();
    let total = d.iter().sum::<u64>().max(1) as f64;
    let idle = d.get(3).copied().unwrap_or(0) + d.get(4).copied().unwrap_or(0);
    let softirq = d.get(6).copied().unwrap_or(0);
    (
        100.0 - idle as f64 * 100.0 / total,
        softirq as f64 * 100.0 / total,
    )
}

fn proc_stat() -> Vec<u64> {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let line = text.lines().next().unwrap_or_default();
    line.split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect()
}

/// The machine's steal time so far (sonde_lab::steal), 0 where the kernel has none.
fn steal_now() -> Duration {
    sonde_lab::steal::total().unwrap_or_default()
}

/// The time the hypervisor held the machine's CPUs back since `before` (a `steal_now`), in
/// ms: a virtual machine paused for that long, sender, shaper and receiver alike.
fn steal_ms(before: Duration) -> u64 {
    u64::try_from(steal_now().saturating_sub(before).as_millis()).unwrap_or(u64::MAX)
}

/// Steal during a run from which its figures no longer count against the lab: 30 ms of a
/// 3 s run is 1 %, the tolerance of the checks it would fail.
const STEAL_EXCUSE_MS: u64 = 30;

/// How busy all CPUs are over `span` while nothing of this test runs, in %.
fn background_busy(span: Duration) -> f64 {
    let before = proc_stat();
    std::thread::sleep(span);
    cpu_split(&before, &proc_stat()).0
}

/// Other work may use at most this share of all CPUs before a 1000 Mbit/s run for its
/// shortfall to count as the lab's.
const QUIET_BUSY_PCT: f64 = 10.0;

/// Issue 9: a shaped link delivers its configured rate to TCP. The ceiling is what the wire
/// carries of the payload: a 1500-byte MTU with TCP timestamps (Linux's default) leaves
/// 1500 - 20 (IPv4) - 20 (TCP) - 12 (timestamp option) = 1448 bytes of payload per frame,
/// and tbf counts each frame as its 1514 bytes (IP packet + 14-byte Ethernet header, no FCS or
/// preamble: the lab sets no `overhead`). So goodput ≤ rate × 1448 / 1514, e.g. 95.64 Mbit/s
/// at 100 Mbit/s; every run must stay below ceiling + 1 % and one of up to three 3-second
/// runs must come within 1 % of it. On a virtual machine the hypervisor may pause the whole
/// machine (steal time): two CI runs of 2026-11-29 with 0.5-3 % steal each had every 100
/// Mbit/s run 1.6-3.6 % short. A run with 30 ms or more of steal does not count among the
/// three (at most six in all), and when every run had it the lower bound is not asserted.
///
/// At 1000 Mbit/s the packet path (83 k frames/s without segmentation offloads, client
/// stack, router, tbf, server stack) runs in softirq on one core: measured 43-57 % of this
/// 2-core machine, against 1-2 % with offloads on. When other work shares that core, the
/// sender falls short (measured -1 to -10 %) through no fault of the shaper, so the lower
/// bound at 1000 Mbit/s is asserted only when some run had the machine otherwise quiet
/// around it (at most [`QUIET_BUSY_PCT`] % busy over the second before and the second after:
/// a build that starts mid-run shows in the second after); otherwise the test says so. A
/// failure prints each run's CPU use.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn tcp_over_shaped_links_comes_within_one_percent_of_the_wire_ceiling() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("tcp_over_shaped_links") {
        return;
    }
    for mbit in [10u64, 100, 1000] {
        let ceiling = mbit as f64 * 1e6 * 1448.0 / 1514.0;
        let lab = build(&format!("r{mbit}"), &format!(r#"rate = "{mbit}mbit""#));
        let mut runs: Vec<(f64, f64, String)> = Vec::new();
        let mut paused = 0;
        while runs.len() - paused < 3 && runs.len() < 6 {
            let background = background_busy(Duration::from_secs(1));
            let before = proc_stat();
            let steal_before = steal_now();
            let (doc, _, _) = tcp_upload(&lab, "3");
            let stolen = steal_ms(steal_before);
            let (busy, softirq) = cpu_split(&before, &proc_stat());
            if stolen >= STEAL_EXCUSE_MS {
                paused += 1;
            }
            // Quiet on both sides of the run, or other work may have shared it.
            let after = background_busy(Duration::from_secs(1));
            let background = background.max(after);
            let bps = doc["end"]["sum_received"]["bits_per_second"]
                .as_f64()
                .unwrap_or(0.0);
            let off = (bps / ceiling - 1.0) * 100.0;
            let line = format!(
                "{mbit} Mbit/s: TCP {:.2} Mbit/s, ceiling {:.2} ({off:+.2} %); all cores \
                 {background:.0} % busy around it, {busy:.0} % during (softirq {softirq:.0} %), \
                 {stolen} ms stolen by the hypervisor",
                bps / 1e6,
                ceiling / 1e6
            );
            eprintln!("{line}");
            assert!(off <= 1.0, "above the ceiling: {line}");
            runs.push((off, background, line));
            if off.abs() <= 1.0 {
                break;
            }
        }
        let _ = lab.finish();
        if runs.iter().any(|(off, _, _)| off.abs() <= 1.0) {
            continue;
        }
        let lines = runs
            .iter()
            .map(|(_, _, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let quiet = runs.iter().any(|(_, bg, _)| *bg <= QUIET_BUSY_PCT);
        if paused == runs.len() {
            // Every run had the whole machine paused under it for 1 % of its time or more:
            // the hypervisor's shortfall, not the shaper's.
            eprintln!(
                "{mbit} Mbit/s lower bound not asserted: the hypervisor stole {STEAL_EXCUSE_MS} \
                 ms or more of every run:\n{lines}"
            );
            continue;
        }
        // Below 1000 Mbit/s the path needs a few % of one core: load is no excuse there.
        assert!(
            mbit == 1000 && !quiet,
            "no run within 1 % of the ceiling:\n{lines}"
        );
        eprintln!(
            "1000 Mbit/s lower bound not asserted: other work kept the CPUs over \
             {QUIET_BUSY_PCT} % busy around every run, and this path needs one core:\n{lines}"
        );
    }
}

/// Issue 9: interface counters count wire packets. With segmentation offloads on, a TCP
/// sender's interface counted 64 KiB super-packets (1.16 k packets/s at 93 Mbit/s) while the
/// far side counted the 7.99 k frames/s that crossed the shaped link. The lab turns TSO, GSO
/// and GRO off on every interface, so the client's `s-lan` (first hop) and the server's
/// `s-wan` (last hop, after the router and the shaper) count the same frames, and data
/// frames number the bytes over 1448.
#[test]
fn sender_and_receiver_count_the_same_packets_over_a_100_mbit_link() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("packet_counts") {
        return;
    }
    let lab = build("cnt", r#"rate = "100mbit""#);
    let (doc, client, server) = tcp_upload(&lab, "3");
    let _ = lab.finish();
    let bytes = doc["end"]["sum_received"]["bytes"].as_u64().unwrap_or(0);
    let close = |a: u64, b: u64| a.abs_diff(b) as f64 <= (a.max(b) as f64 * 0.005).max(20.0);
    eprintln!(
        "100 Mbit/s TCP upload, {bytes} bytes: client sent {} / server received {} packets; \
         server sent {} / client received {} (acks)",
        client.tx_packets, server.rx_packets, server.tx_packets, client.rx_packets
    );
    assert!(
        close(client.tx_packets, server.rx_packets),
        "data: client sent {} packets, server received {}",
        client.tx_packets,
        server.rx_packets
    );
    assert!(
        close(server.tx_packets, client.rx_packets),
        "acks: server sent {} packets, client received {}",
        server.tx_packets,
        client.rx_packets
    );
    // Wire packets, not super-packets: at least one per 1448 bytes of payload.
    let frames = bytes / 1448;
    assert!(
        client.tx_packets >= frames && client.tx_packets <= frames + frames / 20 + 100,
        "{} packets for {bytes} bytes ({frames} full frames)",
        client.tx_packets
    );
}

/// What TCP can carry on the 100 Mbit/s link: 1448 payload bytes per 1514-byte frame.
const BTC_CEILING: f64 = 100e6 * 1448.0 / 1514.0;

/// A client - router - server lab with a 100 Mbit/s link, a sonde server in it and one
/// [`btc_sessions`] run, torn down after.
fn btc_over_a_100_mbit_lab() -> (Vec<f64>, f64) {
    let lab = build("btc", r#"rate = "100mbit""#);
    let dst = lab.node("server").expect("server").ifaces[0]
        .ipv4
        .to_string();
    let server = server_with(&lab, &["server"]);
    let run = btc_sessions(&lab, &dst);
    drop(server);
    let _ = lab.finish();
    run
}

/// One `sonde btc` of 6, 12 and 24 MiB sessions over the 100 Mbit/s link: each session's
/// goodput and the IPv4 mean, bit/s, printed against [`BTC_CEILING`].
fn btc_sessions(lab: &Lab, dst: &str) -> (Vec<f64>, f64) {
    let out = lab
        .command(
            "client",
            sonde_bin(),
            &["btc", dst, "--sizes", "6M,12M,24M", "--every", "0.2s", "-J"],
        )
        .expect("client node")
        .output()
        .expect("sonde btc runs");
    assert!(
        out.status.success(),
        "sonde btc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a JSON document");
    let per_session: Vec<f64> = doc["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["goodput_bps"].as_f64())
        .collect();
    assert_eq!(per_session.len(), 3, "{doc}");
    let mean = doc["summary"]["IPv4"]["mean_bps"].as_f64().unwrap_or(0.0);
    eprintln!(
        "BTC at 100 Mbit/s: sessions {:.2?} Mbit/s, mean {:.2} vs ceiling {:.2} ({:+.2} %)",
        per_session.iter().map(|b| b / 1e6).collect::<Vec<_>>(),
        mean / 1e6,
        BTC_CEILING / 1e6,
        (mean / BTC_CEILING - 1.0) * 100.0
    );
    (per_session, mean)
}

/// Bulk transfer capacity (RFC 3148) over a 100 Mbit/s link, one run: no session and no mean
/// above what TCP can carry there (1 % for the timing of a session's ends), which no load can
/// cause, and every session at least half of it. A session held up by other work on a busy
/// host only comes in lower (one CI run: 94.84, 90.93, 95.70 Mbit/s against 95.64), so the
/// 1 % below the ceiling is the benchmark's, below.
#[test]
fn btc_over_a_100_mbit_link_never_exceeds_the_tcp_ceiling() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("btc") {
        return;
    }
    let (sessions, mean) = btc_over_a_100_mbit_lab();
    for b in sessions.iter().chain([&mean]) {
        assert!(
            *b <= BTC_CEILING * 1.01 && *b >= BTC_CEILING / 2.0,
            "{:.2} Mbit/s against a ceiling of {:.2}",
            b / 1e6,
            BTC_CEILING / 1e6
        );
    }
}

/// The same on a quiet host, one run: the mean within 1 % of the ceiling.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn btc_over_a_100_mbit_link_comes_within_one_percent_of_the_tcp_ceiling() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("btc") {
        return;
    }
    let (_, mean) = btc_over_a_100_mbit_lab();
    let off = (mean / BTC_CEILING - 1.0) * 100.0;
    assert!(off.abs() <= 1.0, "mean {off:+.2} % from the ceiling");
}

/// Runs `sonde args...` with `PATH` set to `path`, within `timeout`.
fn sonde_with_path(args: &[&str], path: &Path, timeout: Duration) -> (Option<i32>, String) {
    let child = Command::new(sonde_bin())
        .args(args)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sonde starts");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(Ok(out)) => (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        ),
        Ok(Err(e)) => panic!("waiting for sonde: {e}"),
        Err(_) => {
            // SAFETY: kill(2) on the child we spawned and have not reaped.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGINT);
            }
            let _ = rx.recv_timeout(Duration::from_secs(30));
            panic!("sonde {args:?} did not finish within {timeout:?}");
        }
    }
}

/// One link through the userspace engine (loss) and one shaped by tbf. The node names are
/// this test's own, to tell its namespaces from those of other labs on the machine.
fn bare() -> String {
    chain()
        .name("bare")
        .seed(3)
        .host("bclient")
        .link("lan")
        .router("brouter")
        .link("wan")
        .host("bserver")
        .settings("lossy")
        .impair("wan", "rate = \"100mbit\"\nloss = \"2%\"")
        .settings("shaped")
        .impair("wan", "rate = \"50mbit\"")
        .sonde("tcp", &["client", "{server}", "-t", "1"])
        .sonde("udp", &["client", "{server}", "-u", "-b", "10m", "-t", "1"])
        .to_toml()
}

/// Issue 9: `sonde lab` on a machine with only iproute2: `PATH` holds `ip` and `tc` and
/// nothing else (no nft, ethtool, sysctl, not even a shell), and a scenario with a userspace
/// box and a tbf link runs every test.
#[test]
fn lab_run_needs_nothing_but_iproute2() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("lab_run_bare") {
        return;
    }
    let dir = TempDir::new("lab-bare");
    let bin = dir.file("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    for tool in ["ip", "tc"] {
        let target = which(tool).expect("checked above");
        std::os::unix::fs::symlink(target, bin.join(tool)).expect("symlink");
    }
    let file = dir.file("bare.toml");
    std::fs::write(&file, bare()).expect("scenario file");
    let out_dir = dir.file("out");
    let (file, out_arg) = (
        file.to_string_lossy().into_owned(),
        out_dir.to_string_lossy().into_owned(),
    );
    let (code, text) = sonde_with_path(
        &["lab", "run", &file, "--out", &out_arg],
        &bin,
        Duration::from_secs(120),
    );
    eprintln!("{text}");
    assert_eq!(code, Some(0), "{text}");
    for id in ["lossy/tcp/1", "lossy/udp/1", "shaped/tcp/1", "shaped/udp/1"] {
        assert!(
            text.contains(&format!("ok      {id}")),
            "{id} not ok:\n{text}"
        );
    }
    assert!(out_dir.join("report.md").exists());
    let left: Vec<String> = sonde_lab::netns::list()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| {
            ["-bclient", "-bserver", "-brouter"]
                .iter()
                .any(|s| n.ends_with(s))
        })
        .collect();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
}

/// `sonde capacity` in the lab node `client` against `dst`: its JSON document. The server
/// serves every test the run makes (`--longest-train` makes one per length tried).
fn capacity(lab: &Lab, dst: &str, extra: &[&str]) -> Value {
    let _server = server_with(lab, &["server"]);
    let mut args = vec!["capacity", dst, "-J"];
    args.extend_from_slice(extra);
    let out = lab
        .command("client", sonde_bin(), &args)
        .expect("client node")
        .output()
        .expect("sonde capacity runs");
    assert!(
        out.status.success(),
        "sonde capacity failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("a JSON document")
}

/// Issue 12: over tbf links of 10 and 100 Mbit/s `sonde capacity` finds the sustained rate
/// within 3 % of the configured one at the layer tbf counts (IP + 14-byte Ethernet header);
/// with a 300 KB bucket it reports the peak, the sustained rate and the bucket within 25 %;
/// and over plain veth links (no impairment at all) it invents no shaper.
///
/// The unshaped case has no impairment, not even a delay: on a kernel without netem a delay
/// puts the lab's userspace box in the path, and that box, a forwarding process with its
/// own packet-rate ceiling (2-3.5 Gbit/s of 1500-byte datagrams on one 2-core VM, 7-9 on
/// another), is then the narrowest element of the path, which the verdict "link" rightly
/// reports. Without the box, trains cross the veths at the hosts' speed, and a quiet host
/// says so ("host-limited": the benchmark below); on a busy one the receiving host's own
/// work can slow arrivals below departures (seen once in five quiet runs and in CI beside
/// other builds: arrivals at 0.79 of departures), which reads as a link at the host's speed.
/// So here, in one run, the unshaped case must give no shaper and no bucket, and a rate, if
/// it gives one, far above every shaped case of this test.
#[test]
fn capacity_finds_the_shaped_rate_and_the_bucket_and_knows_an_unshaped_link() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity") {
        return;
    }
    let cases: [(&str, &str, Option<f64>, Option<f64>); 4] = [
        ("c10", r#"rate = "10mbit""#, Some(10e6), None),
        ("c100", r#"rate = "100mbit""#, Some(100e6), None),
        (
            "cbkt",
            r#"rate = "100mbit", burst = "300kb""#,
            Some(100e6),
            Some(300_000.0),
        ),
        ("cveth", "", None, None),
    ];
    for (tag, impair, rate, bucket) in cases {
        let (doc, secs, line) = capacity_case(tag, impair);
        let e = &doc["estimate"];
        let Some(rate) = rate else {
            assert_ne!(doc["verdict"], "shaped", "{line}");
            assert!(e["bucket_bytes"].is_null(), "{line}");
            if doc["verdict"] == "link" {
                let ip = doc["sustained_ip_bps"].as_f64().unwrap_or(0.0);
                assert!(ip >= 500e6, "an unshaped veth read as a slow link: {line}");
            } else {
                assert_eq!(doc["verdict"], "host-limited", "{line}");
            }
            continue;
        };
        let shaper = doc["sustained_shaper_bps"].as_f64().unwrap_or(0.0);
        assert!((shaper / rate - 1.0).abs() <= 0.03, "{line}");
        assert!(secs <= 10.0, "took {secs:.1} s: {line}");
        if let Some(b) = bucket {
            assert_eq!(doc["verdict"], "shaped", "{line}");
            // tbf's bucket counts IP + 14 bytes; the estimate IP bytes.
            let want = b * 1500.0 / 1514.0;
            let got = e["bucket_bytes"].as_f64().unwrap_or(0.0);
            assert!(
                (got / want - 1.0).abs() <= 0.25,
                "bucket {got} vs {want}: {line}"
            );
            assert!(
                e["peak"]["low_bps"].as_f64().unwrap_or(0.0) > 1.5 * rate,
                "{line}"
            );
        } else {
            assert_ne!(doc["verdict"], "host-limited", "{line}");
        }
    }
}

/// `sonde capacity --longest-train` against a queue the lab sets: a 10 Mbit/s link whose
/// queue holds 50 packets and whose bucket one. A train up to the queue's length arrives
/// whole; a longer one loses its tail, except for what the link drains while the train
/// arrives, which is a tenth of it or less with the sender ten times faster than the link
/// (a datagram sender does thousands of Mbit/s on veth here, loaded or not). So the answer
/// lies in 50..=75, and the shortest lossy length right above it.
#[test]
fn the_longest_loss_free_train_is_the_queue_the_lab_set() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity-train") {
        return;
    }
    let lab = build(
        "ctrain",
        r#"rate = "10mbit", burst = "3kb", queue_limit = "50pkt""#,
    );
    let dst = lab.node("server").expect("server").ifaces[0]
        .ipv4
        .to_string();
    let doc = capacity(
        &lab,
        &dst,
        &["--quick", "--longest-train", "--max-train", "400"],
    );
    let _ = lab.finish();
    let t = &doc["longest_loss_free_train"];
    let len = t["length"].as_u64().unwrap_or(0);
    eprintln!(
        "queue of 50 packets at 10 Mbit/s: longest loss-free train {len}, tried {}",
        t["tried"]
    );
    assert!(
        (50..=75).contains(&len),
        "longest loss-free train {len}: {t}"
    );
    assert_eq!(t["at_least"], false, "{t}");
    assert_eq!(t["shortest_lossy"].as_u64(), Some(len + 1), "{t}");
    // Every length tried is accounted for, and the lossy ones are the longer ones.
    for tried in t["tried"].as_array().expect("lengths tried") {
        let (n, got, lost) = (
            tried["len"].as_u64().unwrap(),
            tried["received"].as_u64().unwrap(),
            tried["lost"].as_u64().unwrap(),
        );
        assert_eq!(got + lost, n, "{tried}");
        assert_eq!(lost == 0, n <= len, "{tried} against the answer {len}");
    }
}

/// `sonde capacity --sizes` over a 10 Mbit/s link with a 3000-byte bucket, against tbf's own
/// model: a train of n datagrams of IP size ip (frames f = ip + 14, as tbf counts) arrives in
/// a burst at a full bucket B; datagram j leaves once j + 1 frames' tokens have come, at
/// ((j + 1) f - B) x 8 / R (the first ones at once, from the bucket), so from the first
/// departure to the last (n f - B) x 8 / R, and the dispersion rate of the train's IP bytes
/// is (n - 1) ip R / (n f - B). With trains of 20: 12.1 Mbit/s for 600-byte payloads, 10.5
/// for 1400 (a bucket holds more small datagrams). Each size's estimate lies within 5 % of
/// its own figure and its range (the mode's bin) holds that figure within 5 %.
#[test]
fn each_probe_size_measures_what_the_labs_shaper_lets_through() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity-sizes") {
        return;
    }
    const N: f64 = 20.0;
    const BUCKET: f64 = 3000.0;
    const RATE: f64 = 10e6;
    let lab = build("csize", r#"rate = "10mbit", burst = "3kb""#);
    let dst = lab.node("server").expect("server").ifaces[0]
        .ipv4
        .to_string();
    let doc = capacity(
        &lab,
        &dst,
        &["--sizes", "600,1000,1400", "--short-len", "20"],
    );
    let _ = lab.finish();
    let rows = doc["by_size"].as_array().expect("a row per size");
    let payloads: Vec<u64> = rows
        .iter()
        .map(|r| r["payload_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(payloads, [600, 1000, 1400], "{rows:?}");
    for r in rows {
        let ip = r["ip_bytes"].as_f64().unwrap();
        let truth = (N - 1.0) * ip * RATE / (N * (ip + 14.0) - BUCKET);
        let (est, low, high) = (
            r["estimate_bps"].as_f64().unwrap_or(0.0),
            r["low_bps"].as_f64().unwrap_or(f64::MAX),
            r["high_bps"].as_f64().unwrap_or(0.0),
        );
        eprintln!(
            "{} B over 10 Mbit/s, bucket 3000 B, trains of 20: estimate {:.3} Mbit/s \
             ({:.3}..{:.3}), tbf's model {:.3}, {} of {} trains",
            r["payload_bytes"],
            est / 1e6,
            low / 1e6,
            high / 1e6,
            truth / 1e6,
            r["used"],
            r["trains"]
        );
        assert!((est / truth - 1.0).abs() <= 0.05, "{r}: model {truth}");
        assert!(
            low <= truth * 1.05 && high >= truth * 0.95,
            "{r}: model {truth}"
        );
    }
}

/// Over plain veth links, on a quiet host, `sonde capacity` says the hosts are the limit:
/// the long trains arrived as fast as they left.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn capacity_over_an_unshaped_veth_says_the_hosts_are_the_limit() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity-unshaped") {
        return;
    }
    let (doc, _, line) = capacity_case("cveth", "");
    assert_eq!(doc["verdict"], "host-limited", "{line}");
}

/// One `sonde capacity` run in a fresh lab whose link has `impair`: the document, the
/// client's seconds and a line of its figures (printed, and the message of every assert).
fn capacity_case(tag: &str, impair: &str) -> (Value, f64, String) {
    let what = if impair.is_empty() {
        "no impairment"
    } else {
        impair
    };
    let lab = build(tag, impair);
    let dst = lab.node("server").expect("server").ifaces[0]
        .ipv4
        .to_string();
    let t0 = std::time::Instant::now();
    let doc = capacity(&lab, &dst, &[]);
    let secs = t0.elapsed().as_secs_f64();
    let _ = lab.finish();
    let e = &doc["estimate"];
    let line = format!(
        "{what}: verdict {}, sustained {:.3} Mbit/s IP = {:.3} as tbf counts, peak mode {}, \
         bucket {} B, ADR {:.1} Mbit/s, departure {:.1} Mbit/s, CoV {}, {secs:.1} s",
        doc["verdict"],
        doc["sustained_ip_bps"].as_f64().unwrap_or(0.0) / 1e6,
        doc["sustained_shaper_bps"].as_f64().unwrap_or(0.0) / 1e6,
        e["peak"],
        e["bucket_bytes"],
        e["adr_bps"].as_f64().unwrap_or(0.0) / 1e6,
        e["departure_bps"].as_f64().unwrap_or(0.0) / 1e6,
        e["cov"],
    );
    eprintln!("{line}");
    (doc, secs, line)
}

/// Issue 12: once its long trains agree, `sonde capacity` stops sending them. Over tbf links
/// of 10 and 100 Mbit/s, run by run side by side with `--no-early-stop` (the whole plan of
/// 5 long trains): the early-stopped run still finds the shaped rate within 3 %, says in its
/// document after how many long trains it stopped, and at 10 Mbit/s (where a long train
/// takes 0.6 s and as long again idle) it is the shorter run.
#[test]
#[ignore = "benchmark: needs a quiet host (bench/accuracy.sh runs it)"]
fn capacity_stops_early_once_long_trains_agree_and_stays_within_3_percent() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity-early-stop") {
        return;
    }
    for (tag, impair, rate) in [
        ("e10", r#"rate = "10mbit""#, 10e6),
        ("e100", r#"rate = "100mbit""#, 100e6),
    ] {
        let lab = build(tag, impair);
        let dst = lab.node("server").expect("server").ifaces[0]
            .ipv4
            .to_string();
        let mut secs = Vec::new();
        for extra in [&["--no-early-stop"][..], &[]] {
            let mut t0 = std::time::Instant::now();
            let mut before = steal_now();
            let mut doc = capacity(&lab, &dst, extra);
            let mut stolen = steal_ms(before);
            // The rule rightly refuses to stop when a train was held up by the host (seen once
            // in a CI run beside other work: a spread of 0.32 % and shapes that differed, where
            // quiet runs agree within 0.01 %); such a run gets a second one in the same lab,
            // and a third when the hypervisor paused the machine under the first two.
            let mut tries = 1;
            while extra.is_empty()
                && doc["early_stop"]["stopped"] != true
                && (tries == 1 || (tries == 2 && stolen >= STEAL_EXCUSE_MS))
            {
                eprintln!(
                    "{impair}: no early stop ({}), {stolen} ms stolen by the hypervisor, \
                     running again",
                    doc["early_stop"]["last"]
                );
                t0 = std::time::Instant::now();
                before = steal_now();
                doc = capacity(&lab, &dst, extra);
                stolen = steal_ms(before);
                tries += 1;
            }
            let took = t0.elapsed().as_secs_f64();
            let es = &doc["early_stop"];
            let shaper = doc["sustained_shaper_bps"].as_f64().unwrap_or(0.0);
            let line = format!(
                "{impair} {extra:?}: sustained {:.3} Mbit/s as tbf counts, long trains {}, \
                 stopped {} after {}, last {}, run {:.2} s (client {took:.2} s), {stolen} ms \
                 stolen by the hypervisor",
                shaper / 1e6,
                doc["estimate"]["long"]["trains"],
                es["stopped"],
                es["after_long_trains"],
                es["last"],
                doc["seconds"].as_f64().unwrap_or(0.0),
            );
            eprintln!("{line}");
            assert!((shaper / rate - 1.0).abs() <= 0.03, "{line}");
            if extra.is_empty() {
                assert_eq!(es["enabled"], true, "{line}");
                assert_eq!(es["stopped"], true, "{line}");
                let after = es["after_long_trains"].as_u64().unwrap_or(0);
                assert!((3..5).contains(&after), "{line}");
                assert_eq!(doc["estimate"]["long"]["trains"].as_u64(), Some(after));
            } else {
                assert_eq!(es["enabled"], false, "{line}");
                assert_eq!(doc["estimate"]["long"]["trains"], 5, "{line}");
            }
            secs.push(doc["seconds"].as_f64().unwrap_or(0.0));
        }
        let _ = lab.finish();
        if rate < 50e6 {
            assert!(secs[1] < secs[0], "early stop {secs:?} not shorter");
        }
    }
}

/// One capacity run per address family against the lab's server: (family, JSON, seconds).
fn capacity_per_family(lab: &Lab, extra: &[&str]) -> Vec<(&'static str, Value, f64)> {
    let iface = &lab.node("server").expect("server").ifaces[0];
    let targets = [
        ("IPv4", iface.ipv4.to_string(), "-4"),
        ("IPv6", iface.ipv6.to_string(), "-6"),
    ];
    targets
        .into_iter()
        .map(|(family, dst, flag)| {
            let t0 = std::time::Instant::now();
            let mut args = vec![flag];
            args.extend_from_slice(extra);
            let doc = capacity(lab, &dst, &args);
            (family, doc, t0.elapsed().as_secs_f64())
        })
        .collect()
}

/// The figures of one capacity run on one line, for the test's output and its failures.
fn capacity_line(what: &str, family: &str, doc: &Value, secs: f64) -> String {
    let e = &doc["estimate"];
    let ip = doc["ip_bytes"].as_f64().unwrap_or(1.0);
    let sus = doc["sustained_ip_bps"].as_f64().unwrap_or(0.0);
    format!(
        "{what} {family}: verdict {}, sustained {:.2} Mbit/s IP = {:.2} as tbf counts = {:.0} pkt/s, \
         ADR {:.1} Mbit/s, departure {:.1} Mbit/s, arrival/departure {:.2}, peak mode {}, \
         trains short {} long {}, {secs:.1} s",
        doc["verdict"],
        sus / 1e6,
        doc["sustained_shaper_bps"].as_f64().unwrap_or(0.0) / 1e6,
        sus / (8.0 * ip),
        e["adr_bps"].as_f64().unwrap_or(0.0) / 1e6,
        e["departure_bps"].as_f64().unwrap_or(0.0) / 1e6,
        e["arrival_share"].as_f64().unwrap_or(0.0),
        e["peak"],
        e["short"],
        e["long"],
    )
}

/// The share of its departure rate at which a train of `train` bytes sent at `departure`
/// bit/s crosses a token bucket of `bucket` bytes filling at `rate` bit/s (all bytes as the
/// shaper counts them), the bucket full when the train starts.
fn tbf_arrival_share(departure: f64, rate: f64, bucket: f64, train: f64) -> f64 {
    if departure <= rate || train <= 0.0 {
        return 1.0;
    }
    let drained_after = bucket / (1.0 - rate / departure);
    if drained_after >= train {
        return 1.0;
    }
    let sent = train * 8.0 / departure;
    let arrived = drained_after * 8.0 / departure + (train - drained_after) * 8.0 / rate;
    sent / arrived
}

/// Issue 12 at 1000 Mbit/s and behind a device with a packet ceiling, IPv4 and IPv6, each run
/// in 10 s at most. Through the device (8000 frames/s, a 20-frame ring; its rate counts
/// frames, whatever their size) the sustained rate is within 3 % of 8000 packets/s. At
/// 1000 Mbit/s (tbf) the sustained rate as tbf counts it is within 3 % of 1000 Mbit/s, or,
/// when the sending host cannot hand the kernel a train faster than the link carries it (on
/// this 2-core machine, or not by more than tbf's bucket absorbs), the verdict says the host
/// is the limit and the trains arrived at about the pace they left: no number is given as
/// the path's.
#[test]
#[ignore = "intermittent: once let 25,520 pkt/s through the 8000 pkt/s device on a quiet host (bench/RESULTS.md, 2026-12-01); bench/accuracy.sh runs it until that is understood"]
fn capacity_at_1000_mbit_and_behind_a_packet_ceiling_in_both_families() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available("capacity-fast") {
        return;
    }
    let lab = build("cdev", "device = { pps = 8000, ring = 20 }");
    let runs = capacity_per_family(&lab, &["--tx-timestamps"]);
    let _ = lab.finish();
    for (family, doc, secs) in &runs {
        let line = capacity_line("device 8000 pkt/s, ring 20", family, doc, *secs);
        eprintln!("{line}");
        let pps = doc["sustained_ip_bps"].as_f64().unwrap_or(0.0)
            / (8.0 * doc["ip_bytes"].as_f64().unwrap_or(1.0));
        assert!((pps / 8000.0 - 1.0).abs() <= 0.03, "{line}");
        assert_ne!(doc["verdict"], "host-limited", "{line}");
        assert!(*secs <= 10.0, "{line}");
        // The departure reports cross the device after each train, when its ring is empty.
        let d = &doc["departures"];
        eprintln!(
            "  departures: {} reported, median gap {} ns, largest {} ns, not back to back {}",
            d["reported"], d["median_gap_ns"], d["max_gap_ns"], d["not_back_to_back"]
        );
        // One report per train sent: 40 short and the long ones up to the early stop.
        let long = doc["estimate"]["long"]["trains"].as_u64().unwrap_or(0);
        assert_eq!(d["reported"].as_u64(), Some(40 + long), "{line}");
    }
    let lab = build("cgig", r#"rate = "1000mbit""#);
    let runs = capacity_per_family(&lab, &[]);
    let _ = lab.finish();
    for (family, doc, secs) in &runs {
        let line = capacity_line("tbf 1000 Mbit/s", family, doc, *secs);
        eprintln!("{line}");
        assert!(*secs <= 10.0, "{line}");
        let shaper = doc["sustained_shaper_bps"].as_f64().unwrap_or(0.0);
        if doc["verdict"] == "host-limited" {
            let share = doc["estimate"]["arrival_share"].as_f64().unwrap_or(0.0);
            assert!(share >= 0.8, "{line}");
            // That share agrees with what tbf does to such a train. A long train of L bytes
            // (as tbf counts them) sent at D into a bucket of B bytes at rate R empties the
            // bucket after x = B / (1 - R/D) bytes, which leave at D; the rest leave at R. So
            // it arrives at (L/D) / (x/D + (L-x)/R) of its departure rate, all of it while
            // D <= R L / (L - B) (1.2 Gbit/s for 500 frames of 1514 bytes and the lab's
            // 125 kB bucket, 1 ms at the rate). Host-limited is right where that share is at
            // least the verdict's 0.8 (a 5 % margin for the measured departure rate).
            let ip = doc["ip_bytes"].as_f64().unwrap_or(1.0);
            let per_ip = (ip + f64::from(sonde_stats::capacity::ETHERNET_HEADER)) / ip;
            let long = doc["long_train_len"]
                .as_f64()
                .expect("the document gives the long trains' length")
                * ip
                * per_ip;
            let bucket = sonde_lab::qdisc::default_burst(1_000_000_000, 1500) as f64;
            let departure = doc["estimate"]["departure_bps"].as_f64().unwrap_or(0.0) * per_ip;
            let expected = tbf_arrival_share(departure, 1e9, bucket, long);
            assert!(
                expected >= 0.8 * 0.95,
                "departure {:.1} Mbit/s as tbf counts: tbf would pass a long train at {expected:.2} \
                 of it: {line}",
                departure / 1e6
            );
        } else {
            assert!((shaper / 1e9 - 1.0).abs() <= 0.03, "{line}");
        }
    }
}
