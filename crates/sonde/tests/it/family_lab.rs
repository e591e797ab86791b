//! Issue 38, scenario 5: ground truth for `sonde compare-ip`'s verdict (root). One lab link
//! impairs IPv4 and IPv6 differently, as a 6in4 tunnel would (`ipv6 = { delay, mtu }` in its
//! settings): the verdict must name IPv4 better on latency by about the difference set, and
//! with both families set alike it must find no difference. Real namespaces, the real binary
//! on both ends, the lab's forwarder counting each family's stages.
//!
//! Without root each test prints why it skips; `SONDE_REQUIRE_ALL=1` (CI) makes that a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{lab_available, lab_server, run_program, sonde_bin, Output};
use sonde_emu::backend::KernelCaps;
use sonde_lab::{Lab, LabOptions, LabReport};
use sonde_stats::verdict::{FamilyChoice, Measure, MeasureVerdict, Verdict};
use sonde_testkit::scenario::chain;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// client - `wan` - server, the link impaired both ways with `impair` (inline TOML keys),
/// every impairment in the userspace engine's box. The scenario's test is never run here (a
/// scenario needs one); the test runs `compare-ip` itself.
fn lab(tag: char, impair: &str) -> Lab {
    let text = chain()
        .name("family-lab")
        .seed(38)
        .host("client")
        .link("wan")
        .host("server")
        .settings("s")
        .impair_inline("wan", impair)
        .sonde("latency", &["latency", "{server}"])
        .to_toml();
    let scenario = sonde_scenario::Scenario::from_toml(&text).expect("test scenario");
    let opts = LabOptions {
        prefix: Some(format!("sonde-fm{tag}{}", std::process::id() % 100_000)),
        caps: Some(KernelCaps::default()),
        ..LabOptions::default()
    };
    Lab::build(&scenario, Some("s"), opts).expect("lab builds")
}

/// The server's IPv4 and IPv6 addresses.
fn server_addrs(lab: &Lab) -> (String, String) {
    let f = &lab.node("server").unwrap().ifaces[0];
    (f.ipv4.to_string(), f.ipv6.to_string())
}

/// `PROGRAM ARGS` in `node`'s namespace, within the deadline.
fn in_node(lab: &Lab, node: &str, program: &str, args: &[&str]) -> Output {
    let ns = lab.netns(node).unwrap();
    let mut full = vec!["netns", "exec", ns, program];
    full.extend_from_slice(args);
    run_program("ip", &full, DEADLINE)
}

/// `compare-ip` from the client over both families: 100 probes each, 20 ms apart, latency
/// only; the verdict (read with the parser `switch-test --policy` uses) and its exit code.
fn compare(lab: &Lab) -> (Verdict, Output) {
    let (v4, v6) = server_addrs(lab);
    let args = [
        "compare-ip",
        "server",
        "--ipv4-addr",
        &v4,
        "--ipv6-addr",
        &v6,
        "-c",
        "100",
        "-i",
        "20ms",
        "--throughput-time",
        "0",
        "-J",
    ];
    let out = in_node(lab, "client", sonde_bin(), &args);
    let v = Verdict::parse(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.describe()));
    (v, out)
}

fn latency(v: &Verdict) -> &MeasureVerdict {
    v.per_measure
        .iter()
        .find(|m| m.measure == Measure::LatencyMedian)
        .unwrap_or_else(|| panic!("no latency measure: {v:?}"))
}

/// Frames the forwarder passed through stage `name`, both directions together.
fn passed(report: &LabReport, name: &str) -> u64 {
    report
        .userspace
        .iter()
        .flat_map(|d| &d.stages)
        .filter(|(n, _)| n == name)
        .map(|(_, s)| s.packets_out)
        .sum()
}

/// With fragmenting forbidden (`ping -M do`), the client sends a 1480-byte IPv6 packet but
/// refuses a 1481-byte one (its route MTU), and sends a 1500-byte IPv4 one (the link's MTU).
fn pings_stay_within_the_family_mtu(lab: &Lab, v4: &str, v6: &str) {
    if common::which("ping").is_none() {
        assert!(!common::require_all(), "ping (iputils) is needed");
        eprintln!("skipping the MTU pings: ping is not installed");
        return;
    }
    let ping = |flag: &str, payload: &str, to: &str| {
        let args = [flag, "-c", "1", "-W", "5", "-M", "do", "-s", payload, to];
        in_node(lab, "client", "ping", &args)
    };
    // ICMP payload + 8 B ICMP header + 40 B IPv6 / 20 B IPv4 header.
    let fits = ping("-6", "1432", v6);
    assert_eq!(fits.code(), Some(0), "1480 B IPv6: {}", fits.describe());
    let over = ping("-6", "1433", v6);
    assert_ne!(
        over.code(),
        Some(0),
        "1481 B IPv6 left: {}",
        over.describe()
    );
    let text = format!("{}{}", over.stdout, over.stderr);
    assert!(text.contains("1480"), "the refusal names the MTU: {text}");
    let v4_full = ping("-4", "1472", v4);
    assert_eq!(
        v4_full.code(),
        Some(0),
        "1500 B IPv4: {}",
        v4_full.describe()
    );
}

#[test]
fn ipv6_behind_a_slower_tunnel_makes_ipv4_better_on_latency() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // 5 ms each way for IPv4, 15 ms each way for IPv6: 20 ms more round trip.
    let lab = lab(
        't',
        r#"delay = "5ms", ipv6 = { delay = "15ms", mtu = 1480 }"#,
    );
    let _srv = lab_server(&lab, &["server"]);
    let (v4, v6) = server_addrs(&lab);
    // The MTU is the IPv6 route MTU of both ends; IPv4 keeps the link's.
    for (node, peer6, peer4) in [
        ("client", v6.clone(), v4.clone()),
        (
            "server",
            lab.node("client").unwrap().ifaces[0].ipv6.to_string(),
            String::new(),
        ),
    ] {
        let r6 = in_node(&lab, node, "ip", &["-6", "route", "get", &peer6]);
        assert!(
            r6.stdout.contains(" mtu 1480 "),
            "{node}: {}",
            r6.describe()
        );
        if !peer4.is_empty() {
            let r4 = in_node(&lab, node, "ip", &["-4", "route", "get", &peer4]);
            assert!(!r4.stdout.contains(" mtu "), "{node}: {}", r4.describe());
        }
    }
    pings_stay_within_the_family_mtu(&lab, &v4, &v6);
    let (v, out) = compare(&lab);
    let report = lab.finish();
    eprintln!("tunnel-like IPv6: {}", v.summary);
    let m = latency(&v);
    eprintln!(
        "medians IPv4 {:?} ms, IPv6 {:?} ms, margin {:.1} %, p {:?}; frames through delay {} / ipv6 delay {}",
        m.ipv4,
        m.ipv6,
        m.margin_pct,
        m.p_value,
        passed(&report, "delay"),
        passed(&report, "ipv6 delay")
    );
    assert_eq!(
        out.code(),
        Some(3),
        "IPv4 better exits 3: {}",
        out.describe()
    );
    assert_eq!(v.better, FamilyChoice::Ipv4, "{v:?}");
    assert_eq!(v.measure, Some(Measure::LatencyMedian), "{v:?}");
    assert!(v.confidence.is_some_and(|c| c >= 0.95), "{v:?}");
    assert!(m.significant && m.better == FamilyChoice::Ipv4, "{m:?}");
    let (m4, m6) = (m.ipv4.unwrap(), m.ipv6.unwrap());
    // Ground truth 20 ms; a loaded host adds time to both alike, so only a lower bound.
    assert!(m6 - m4 >= 15.0, "medians {m4} / {m6} ms");
    assert!(m4 >= 10.0, "IPv4's median {m4} ms is under the 10 ms set");
    // Each family's frames went through its own chain: 100 probes and replies at least.
    assert!(
        passed(&report, "ipv6 delay") >= 200,
        "{:?}",
        report.userspace
    );
    assert!(passed(&report, "delay") >= 200, "{:?}", report.userspace);
}

#[test]
fn both_families_set_alike_give_no_latency_difference() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    // IPv6 through a chain of its own with the same values: the split itself adds nothing.
    let lab = lab('s', r#"delay = "15ms", ipv6 = { delay = "15ms" }"#);
    let _srv = lab_server(&lab, &["server"]);
    let (v, out) = compare(&lab);
    let report = lab.finish();
    let m = latency(&v);
    eprintln!(
        "alike: {}; medians {:?} / {:?} ms, margin {:.2} %, p {:?}",
        v.summary, m.ipv4, m.ipv6, m.margin_pct, m.p_value
    );
    // The tool calls a difference only at a margin of 5 % or more (and p < 0.05); the truth
    // is none, so the medians of 30 ms round trips must be within that.
    assert!(m.margin_pct < 5.0, "{m:?}");
    assert!(!m.significant && m.better == FamilyChoice::Neither, "{m:?}");
    assert_eq!(v.better, FamilyChoice::Neither, "{v:?}");
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    assert!(
        passed(&report, "ipv6 delay") >= 200,
        "{:?}",
        report.userspace
    );
}

/// The same link through `sonde lab run`, compare-ip as the scenario's test: the run counts
/// its verdict exit (3, IPv4 better) as a result, exits 0, and records each family's stages.
#[test]
fn a_lab_run_records_the_verdict_and_each_familys_stages() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let text = chain()
        .name("family-run")
        .seed(38)
        .host("client")
        .link("wan")
        .host("server")
        .settings("tunnel")
        .impair_inline(
            "wan",
            r#"delay = "5ms", ipv6 = { delay = "15ms", mtu = 1480 }"#,
        )
        .sonde(
            "compare",
            &[
                "compare-ip",
                "server",
                "--ipv4-addr",
                "{server4}",
                "--ipv6-addr",
                "{server6}",
                "-c",
                "50",
                "-i",
                "20ms",
                "--throughput-time",
                "0",
            ],
        )
        .to_toml();
    let dir = common::TempDir::new("family-run");
    let out_dir = common::run_lab(&dir, &text, Duration::from_secs(120));
    let doc = common::lab_result(&out_dir, "tunnel", "compare", 1);
    assert_eq!(doc["verdict"]["better"], "ipv4", "{doc}");
    assert_eq!(doc["verdict"]["measure"], "latency_median", "{doc}");
    let store = sonde_store::Store::open_read_only(out_dir.join("results.db")).expect("db");
    let run = store.latest_run().expect("runs").expect("a run");
    let test = store.load_run(run).expect("the run").tests.remove(0);
    let stats = test.stage_stats.expect("the userspace engine's counters");
    for direction in ["a-to-b", "b-to-a"] {
        let stages = stats[format!("wan {direction}")]["stages"]
            .as_array()
            .cloned();
        let names: Vec<String> = stages
            .unwrap_or_default()
            .iter()
            .filter_map(|s| s[0].as_str().map(str::to_owned))
            .collect();
        assert_eq!(names, ["delay", "ipv6 delay"], "{direction}: {stats}");
    }
}
