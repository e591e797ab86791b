//! `sonde compare-ip`'s scenario modes and `sonde switch-test --policy`, through the real
//! binary on 127.0.0.1 and ::1 against one `sonde server`: latency per probe size with the
//! probe counts asked, BTC and capacity for both families, the verdict's JSON (read back with
//! the same parser the switching side uses) agreeing with the exit code, and the policy
//! switching over its margin and not under it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{
    arr, at, ipv6_loopback_or_skip, num, require_all, run, switch_test_loopback, text, uint,
    Output, Proc, Server, TempDir,
};
use sonde_stats::verdict::{FamilyChoice, Measure, Verdict};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(40);

/// Runs `sonde compare-ip` to the server over 127.0.0.1 and ::1 with `extra` flags.
fn compare(srv: &Server, extra: &[&str]) -> Output {
    run(&srv.compare_ip_args(extra), DEADLINE)
}

/// The verdict in the document parses with `Verdict::parse` and its `better` gives the exit
/// code (0 neither, 3 IPv4, 4 IPv6).
fn verdict_agrees_with_exit(out: &Output) -> Verdict {
    let v = Verdict::parse(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    let want = match v.better {
        FamilyChoice::Neither => 0,
        FamilyChoice::Ipv4 => 3,
        FamilyChoice::Ipv6 => 4,
    };
    assert_eq!(out.code(), Some(want), "{}", out.describe());
    v
}

#[test]
fn sizes_give_a_row_per_family_and_size_with_the_probes_asked() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("compare-ip --sizes") {
        return;
    }
    let srv = Server::start(&[]);
    let sizes = [56u64, 500, 1500];
    let out = compare(
        &srv,
        &[
            "--sizes",
            "56,500,1500",
            "--every",
            "20ms",
            "-c",
            "4",
            "--throughput-time",
            "0",
            "-J",
        ],
    );
    let doc = out.json();
    let rows = arr(&doc, "sizes");
    assert_eq!(rows.len(), 6, "{}", out.describe());
    for (i, row) in rows.iter().enumerate() {
        let (family, overhead) = if i < 3 { ("IPv4", 28) } else { ("IPv6", 48) };
        assert_eq!(text(row, "family"), family);
        assert_eq!(uint(row, "payload_bytes"), sizes[i % 3]);
        assert_eq!(uint(row, "ip_bytes"), sizes[i % 3] + overhead);
        assert_eq!(uint(row, "sent"), 4, "{row}");
        assert_eq!(uint(row, "received") + uint(row, "lost"), 4, "{row}");
        let (min, med, max) = (
            num(row, "rtt.min_ms"),
            num(row, "rtt.median_ms"),
            num(row, "rtt.max_ms"),
        );
        assert!(0.0 < min && min <= med && med <= max, "{row}");
        assert!(num(row, "rtt.mean_ms") > 0.0);
        let (sd, var) = (num(row, "rtt.stddev_ms"), num(row, "rtt.variance_ms2"));
        assert!((sd * sd - var).abs() <= 1e-9 + var * 1e-6, "{row}");
    }
    assert!((num(&doc, "every_secs") - 0.02).abs() < 1e-9);
    // Both families' RTTs over all sizes are judged: 12 samples each unless a probe was lost.
    let v = verdict_agrees_with_exit(&out);
    let lat = &v.per_measure[0];
    assert_eq!(lat.test, "mann-whitney-u");
    assert!(lat.samples_ipv4 >= 10 && lat.samples_ipv6 >= 10, "{lat:?}");

    // -t instead of -c: as many full cycles as fit (0.35 s / (3 x 50 ms) = 2), and the table
    // names the layer of the sizes.
    let out = compare(
        &srv,
        &[
            "--sizes",
            "56,500,1500",
            "--every",
            "50ms",
            "-t",
            "0.35",
            "--throughput-time",
            "0",
        ],
    );
    assert!(matches!(out.code(), Some(0 | 3 | 4)), "{}", out.describe());
    assert!(
        out.stdout
            .contains("size = UDP payload, IP = the IP packet"),
        "{}",
        out.stdout
    );
    let ipv6_1500: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("IPv6") && l.contains(" 1548 "))
        .collect();
    assert_eq!(ipv6_1500.len(), 1, "{}", out.stdout);
    assert!(
        ipv6_1500[0].split_whitespace().nth(3) == Some("2"),
        "{}",
        out.stdout
    );
}

#[test]
fn btc_and_capacity_side_by_side() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("compare-ip --btc --capacity") {
        return;
    }
    let srv = Server::start(&[]);
    let out = compare(
        &srv,
        &[
            "-c",
            "20",
            "-i",
            "2ms",
            "--throughput-time",
            "0",
            "--btc",
            "--btc-sizes",
            "2M,4M",
            "--btc-every",
            "0",
            "--capacity",
            "-J",
        ],
    );
    let doc = out.json();
    for (i, family) in ["IPv4", "IPv6"].iter().enumerate() {
        let b = at(&doc, &format!("btc.{i}"));
        assert_eq!(text(b, "family"), *family);
        assert_eq!(arr(b, "sessions").len(), 2, "{}", out.describe());
        assert_eq!(uint(b, "summary.sessions"), 2);
        assert!(num(b, "summary.mean_bps") > 0.0);
        assert!(num(b, "summary.min_bps") <= num(b, "summary.max_bps"));
        let c = at(&doc, &format!("capacity.{i}"));
        assert_eq!(text(c, "family"), *family);
        // On loopback the hosts set the rate: the honest answer, not a path figure.
        assert_eq!(text(c, "verdict"), "host-limited", "{}", out.describe());
        assert!(at(c, "error").is_null(), "{c}");
    }
    assert_eq!(uint(&doc, "capacity.0.payload_bytes"), 1472);
    assert_eq!(uint(&doc, "capacity.1.payload_bytes"), 1452);
    // The BTC sessions alternate: by start time IPv4, IPv6, IPv4, IPv6, numbered 1..4 in
    // that order, each family's sessions in its own list with 2M before 4M.
    let mut starts: Vec<(f64, u64, String, u64)> = (0..2)
        .flat_map(|i| arr(at(&doc, &format!("btc.{i}")), "sessions").clone())
        .map(|s| {
            (
                num(&s, "start_unix_s"),
                uint(&s, "index"),
                text(&s, "family").to_string(),
                uint(&s, "size"),
            )
        })
        .collect();
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let order: Vec<(u64, &str, u64)> = starts
        .iter()
        .map(|(_, i, f, s)| (*i, f.as_str(), *s))
        .collect();
    let (m2, m4) = (2 << 20, 4 << 20);
    assert_eq!(
        order,
        [
            (1, "IPv4", m2),
            (2, "IPv6", m2),
            (3, "IPv4", m4),
            (4, "IPv6", m4)
        ],
        "{}",
        out.describe()
    );
    assert!(
        starts[0].0 > 1.7e9,
        "start times are wall-clock seconds: {starts:?}"
    );
    let v = verdict_agrees_with_exit(&out);
    let measures: Vec<String> = v
        .per_measure
        .iter()
        .map(|m| format!("{:?}", m.measure))
        .collect();
    assert_eq!(measures, ["LatencyMedian", "BtcMean", "Capacity"], "{v:?}");
    let cap = &v.per_measure[2];
    assert_eq!(cap.better, FamilyChoice::Neither);
    assert!(
        cap.ipv4.is_none() && cap.ipv6.is_none(),
        "a host figure is no capacity: {cap:?}"
    );
    assert!(
        cap.note.as_deref().unwrap_or("").contains("not the path"),
        "{cap:?}"
    );
}

/// A switch-test client run with `--policy file --margin margin` against its own server.
fn switch_with_policy(file: &std::path::Path, margin: &str) -> Output {
    let f = file.to_string_lossy();
    let extra = [
        "-t", "0.6", "--every", "0.1", "--policy", &f, "--margin", margin, "-J",
    ];
    switch_test_loopback(&extra, DEADLINE)
}

const V6_BETTER_BY_30: &str = r#"{"schema":1,"better":"ipv6","measure":"latency_median","margin_pct":30.0,"confidence":0.999,"per_measure":[],"summary":"IPv6 is better"}"#;

#[test]
fn the_policy_switches_over_its_margin_and_not_under_it() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("switch-test --policy") {
        return;
    }
    let dir = TempDir::new("policy");
    let verdict = dir.file("verdict.json");
    std::fs::write(&verdict, V6_BETTER_BY_30).unwrap();
    // 30 % over a 10 % margin: one switch to IPv6 at the start, then it stays (already better).
    let out = switch_with_policy(&verdict, "10%");
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(uint(&doc, "end.switches"), 1, "{}", out.describe());
    assert_eq!(at(&doc, "end.hash_equal"), true);
    let d = arr(&doc, "policy.decisions");
    assert_eq!(text(&d[0], "switched_to"), "IPv6", "{d:?}");
    assert!(text(&d[0], "reason").contains("30.0 %"), "{d:?}");
    assert!(uint(&doc, "end.sent_by_family.ipv6") > uint(&doc, "end.sent_by_family.ipv4"));
    // The same verdict under a 40 % margin: no switch, and the reason says why.
    let out = switch_with_policy(&verdict, "40");
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(uint(&doc, "end.switches"), 0, "{}", out.describe());
    assert_eq!(uint(&doc, "end.sent_by_family.ipv6"), 0);
    let d = arr(&doc, "policy.decisions");
    assert!(at(&d[0], "switched_to").is_null(), "{d:?}");
    assert!(
        text(&d[0], "reason").contains("under the 40.0 % margin"),
        "{d:?}"
    );
    // A malformed verdict is refused before anything is sent, naming the file.
    std::fs::write(&verdict, V6_BETTER_BY_30.replace("30.0", "300.0")).unwrap();
    let out = switch_with_policy(&verdict, "10%");
    out.expect_code(1);
    assert!(
        out.stderr.contains("verdict.json") && out.stderr.contains("margin_pct"),
        "{}",
        out.describe()
    );
}

#[test]
fn a_compare_ip_document_drives_switch_test() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("compare-ip into switch-test") {
        return;
    }
    let srv = Server::start(&[]);
    let out = compare(
        &srv,
        &["-c", "10", "-i", "2ms", "--throughput-time", "0", "-J"],
    );
    let v = verdict_agrees_with_exit(&out);
    let dir = TempDir::new("policy-doc");
    let file = dir.file("compare.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let sw = switch_with_policy(&file, "10%");
    sw.expect_code(0);
    let doc = sw.json();
    let d = arr(&doc, "policy.decisions");
    assert!(!d.is_empty(), "{}", sw.describe());
    // It switched exactly when the measured verdict named IPv6 better by 10 % or more.
    let should = v.better == FamilyChoice::Ipv6
        && v.margin_pct >= 10.0
        && v.confidence.unwrap_or(1.0) >= 0.95;
    assert_eq!(
        uint(&doc, "end.switches"),
        u64::from(should),
        "{v:?}\n{}",
        sw.describe()
    );
}

#[test]
fn ctrl_c_keeps_the_rows_so_far() {
    let _turn = crate::turns::take(module_path!());
    if !ipv6_loopback_or_skip("compare-ip interrupted") {
        return;
    }
    let srv = Server::start(&[]);
    let p = Proc::spawn(&srv.compare_ip_args(&[
        "--sizes",
        "56,1500",
        "--every",
        "300ms",
        "-c",
        "20",
        "--throughput-time",
        "0",
        "-J",
    ]));
    std::thread::sleep(Duration::from_millis(1500));
    p.signal(libc::SIGINT);
    let out = p.wait(DEADLINE);
    out.expect_code(1);
    let doc = out.json();
    assert_eq!(at(&doc, "partial"), true, "{}", out.describe());
    let rows = arr(&doc, "sizes");
    assert_eq!(rows.len(), 4);
    for r in rows {
        // A cycle is 600 ms: 2 or 3 probes of each size went out in 1.5 s, not the 20 asked.
        let sent = uint(r, "sent");
        assert!((1..=4).contains(&sent), "{r}");
    }
}

/// Two namespaces joined by two veth pairs, one carrying IPv4 only, one IPv6 only, each
/// shaped with tbf at both ends: the families' paths differ by construction. Deleted on drop.
struct SplitPaths {
    client: String,
    server: String,
}

impl SplitPaths {
    const V4: &'static str = "10.77.4.2";
    const V6: &'static str = "fd77:6::2";

    fn new(v4_rate: &str, v6_rate: &str) -> Self {
        let id = std::process::id();
        let p = SplitPaths {
            client: format!("sondecmpc{id}"),
            server: format!("sondecmps{id}"),
        };
        let (c, s) = (p.client.as_str(), p.server.as_str());
        for ns in [c, s] {
            ip(&["netns", "add", ns]);
            sh(&[
                "ip",
                "netns",
                "exec",
                ns,
                "sysctl",
                "-qw",
                "net.ipv6.conf.all.accept_dad=0",
                "net.ipv6.conf.default.accept_dad=0",
            ]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        for (cd, sd, ca, sa, rate, burst) in [
            ("c4", "s4", "10.77.4.1/24", "10.77.4.2/24", v4_rate, "15k"),
            ("c6", "s6", "fd77:6::1/64", "fd77:6::2/64", v6_rate, "4k"),
        ] {
            ip(&[
                "link", "add", cd, "netns", c, "type", "veth", "peer", "name", sd, "netns", s,
            ]);
            for (ns, dev, addr) in [(c, cd, ca), (s, sd, sa)] {
                let mut a = vec!["-n", ns, "addr", "add", addr, "dev", dev];
                if addr.contains(':') {
                    a.push("nodad");
                }
                ip(&a);
                ip(&["-n", ns, "link", "set", dev, "up"]);
                sh(&[
                    "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", rate,
                    "burst", burst, "latency", "40ms",
                ]);
            }
        }
        p
    }

    /// `sonde ARGS` inside namespace `ns`.
    fn sonde(ns: &str, args: &[&str]) -> Vec<String> {
        let mut a: Vec<String> = ["netns", "exec", ns, common::sonde_bin()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(args.iter().map(|s| s.to_string()));
        a
    }
}

impl Drop for SplitPaths {
    fn drop(&mut self) {
        for ns in [&self.client, &self.server] {
            let _ = std::process::Command::new("ip")
                .args(["netns", "del", ns])
                .status();
        }
    }
}

fn sh(args: &[&str]) {
    let st = std::process::Command::new(args[0])
        .args(&args[1..])
        .status()
        .unwrap();
    assert!(st.success(), "{args:?} failed");
}

fn ip(args: &[&str]) {
    let mut a = vec!["ip"];
    a.extend_from_slice(args);
    sh(&a);
}

/// Runs `ip netns exec NS sonde ARGS` to completion.
fn in_ns(ns: &str, args: &[&str], timeout: Duration) -> Output {
    common::run_program("ip", &SplitPaths::sonde(ns, args), timeout)
}

#[test]
fn shaped_paths_make_ipv4_better_and_the_policy_moves_to_it() {
    let _turn = crate::turns::take(module_path!());
    if !common::lab_available() {
        return;
    }
    if !["ip", "tc"]
        .iter()
        .all(|p| std::process::Command::new(p).arg("-V").output().is_ok())
    {
        assert!(!require_all(), "iproute2 (ip, tc) is needed");
        eprintln!("skipping: iproute2 (ip, tc) is not installed");
        return;
    }
    // IPv4 shaped to 100 Mbit/s, IPv6 to 20 Mbit/s (tbf counts IP + 14 B Ethernet header).
    let net = SplitPaths::new("100mbit", "20mbit");
    let port = common::free_port().to_string();
    let _srv = Proc::spawn_program(
        "ip",
        &SplitPaths::sonde(&net.server, &["server", "-p", &port]),
    );
    // A fresh link's first IPv6 packets wait about a second in the kernel: probe until a
    // reply is quick, so the comparison measures the paths, not the link's start.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let w = in_ns(
            &net.client,
            &[
                "latency",
                SplitPaths::V6,
                "-p",
                &port,
                "-c",
                "1",
                "--wait",
                "3s",
                "-J",
            ],
            DEADLINE,
        );
        let ok = w.code() == Some(0)
            && at(&w.json(), "end.rtt.max_ms")
                .as_f64()
                .is_some_and(|v| v < 20.0);
        if ok {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "IPv6 never settled: {}",
            w.describe()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let out = in_ns(
        &net.client,
        &[
            "compare-ip",
            "x",
            "-p",
            &port,
            "--ipv4-addr",
            SplitPaths::V4,
            "--ipv6-addr",
            SplitPaths::V6,
            "--sizes",
            "56,1000,1400",
            "--every",
            "20ms",
            "-c",
            "10",
            "--throughput-time",
            "0",
            "--btc",
            "--btc-sizes",
            "1M,1M,2M",
            "--btc-every",
            "0",
            "--capacity",
            "-J",
        ],
        Duration::from_secs(60),
    );
    let v = verdict_agrees_with_exit(&out);
    assert_eq!(v.better, FamilyChoice::Ipv4, "{}", out.describe());
    // Idle probes pass a tbf with tokens in its bucket at line speed: latency shows no
    // difference worth the name, so BTC decides (or, should three sessions on a busy host
    // leave its t-test short of p < 0.05, capacity, whose ranges are far apart).
    assert!(
        matches!(v.measure, Some(Measure::BtcMean | Measure::Capacity)),
        "{v:?}"
    );
    for m in &v.per_measure {
        assert_ne!(m.better, FamilyChoice::Ipv6, "{m:?}");
        if m.measure == Measure::Capacity {
            assert_eq!(m.better, FamilyChoice::Ipv4, "{m:?}");
        }
    }
    let doc = out.json();
    // Capacity at the IP layer: tbf's rate x 1500 / 1514, within 3 %.
    for (i, mbit) in [(0, 100.0), (1, 20.0)] {
        let want = mbit * 1e6 * 1500.0 / 1514.0;
        let got = num(&doc, &format!("capacity.{i}.sustained_bps"));
        assert!(
            (got / want - 1.0).abs() < 0.03,
            "family {i}: {got} against {want}"
        );
    }
    let btc4 = num(&doc, "btc.0.summary.mean_bps");
    let btc6 = num(&doc, "btc.1.summary.mean_bps");
    eprintln!(
        "split paths: capacity IP {:.3} / {:.3} Mbit/s, BTC mean {:.2} / {:.2} Mbit/s, verdict: {}",
        num(&doc, "capacity.0.sustained_bps") / 1e6,
        num(&doc, "capacity.1.sustained_bps") / 1e6,
        btc4 / 1e6,
        btc6 / 1e6,
        v.summary
    );
    assert!(btc4 > 3.0 * btc6 && btc6 < 20e6, "BTC {btc4} / {btc6}");
    // The same document as a policy: switch-test starts on IPv6 and moves to IPv4.
    let dir = TempDir::new("split-policy");
    let file = dir.file("verdict.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let sport = common::free_port().to_string();
    let _sw = Proc::spawn_program(
        "ip",
        &SplitPaths::sonde(
            &net.server,
            &["switch-test", "--listen", "-1", "-p", &sport],
        ),
    );
    std::thread::sleep(Duration::from_millis(300));
    let f = file.to_string_lossy();
    let sw = in_ns(
        &net.client,
        &[
            "switch-test",
            "--v4",
            SplitPaths::V4,
            "--v6",
            SplitPaths::V6,
            "-p",
            &sport,
            "--start",
            "6",
            "-t",
            "1",
            "--every",
            "0.2",
            "--policy",
            &f,
            "--margin",
            "10%",
            "-J",
        ],
        DEADLINE,
    );
    sw.expect_code(0);
    let d = sw.json();
    assert_eq!(uint(&d, "end.switches"), 1, "{}", sw.describe());
    assert_eq!(text(&d, "policy.decisions.0.switched_to"), "IPv4");
    assert_eq!(at(&d, "end.hash_equal"), true);
}

/// `compare-ip 127.0.0.1` to the server: 20 probes, `--throughput-time SECS`; IPv6 does not
/// resolve.
fn to_ipv4_only(srv: &Server, secs: &str) -> Output {
    let port = srv.port.to_string();
    let args = [
        "compare-ip",
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "20",
        "-i",
        "2ms",
    ];
    run(
        &[&args[..], &["--throughput-time", secs]].concat(),
        DEADLINE,
    )
}

/// A family that never resolved is "not resolved" in the verdict's lines, not "n = 0/0"; and
/// each difference has one percentage: the comparisons in short are the verdict's measures.
#[test]
fn an_unresolved_family_is_not_resolved_and_a_difference_has_one_percentage() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let out = to_ipv4_only(&srv, "0.6");
    out.expect_code(1);
    assert!(
        out.stdout.contains("IPv6 not resolved"),
        "{}",
        out.describe()
    );
    assert!(!out.stdout.contains("n = 0/0"), "{}", out.describe());
    if !ipv6_loopback_or_skip("compare-ip percentages") {
        return;
    }
    let doc = compare(
        &srv,
        &["-c", "30", "-i", "2ms", "--throughput-time", "0.9", "-J"],
    )
    .json();
    for (short, measure) in [("latency", "latency_median"), ("throughput", "throughput")] {
        let m = arr(&doc, "verdict.per_measure")
            .iter()
            .find(|m| text(m, "measure") == measure)
            .unwrap_or_else(|| panic!("no {measure} measure: {doc}"));
        assert_eq!(
            num(&doc, &format!("{short}.difference_percent")),
            num(m, "margin_pct"),
            "{doc}"
        );
        assert_eq!(at(&doc, &format!("{short}.p_value")), at(m, "p_value"));
    }
    // The uploads ran in alternating rounds, one sample a round and family.
    let tp = arr(&doc, "verdict.per_measure")
        .iter()
        .find(|m| text(m, "measure") == "throughput")
        .unwrap();
    assert_eq!(
        (uint(tp, "samples_ipv4"), text(tp, "test")),
        (3, "paired-t")
    );
}

/// A run says where it is on stderr (redirected here, so in plain lines), at most one line
/// every two seconds, and keeps stdout for the results.
#[test]
fn compare_ip_prints_its_progress_to_a_redirected_stderr() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let out = to_ipv4_only(&srv, "0.9");
    let lines: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("sonde compare-ip: "))
        .collect();
    assert!(
        lines
            .first()
            .is_some_and(|l| l.contains("latency: round 1 of 4, 5 probes a family")),
        "{}",
        out.describe()
    );
    let most = 1 + (out.elapsed.as_secs_f64() / 2.0) as usize;
    assert!(
        lines.len() <= most,
        "{} lines: {}",
        lines.len(),
        out.describe()
    );
    assert!(
        !out.stdout.contains("sonde compare-ip: "),
        "{}",
        out.describe()
    );
}
