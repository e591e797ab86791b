//! `sonde lab run mesh` in real namespaces (root): 16 agents measuring each other for 15 s,
//! every ordered pair measured over both families (peers known by name), every metrics endpoint answering with its
//! peers' series, nothing left behind; with `--store`, every agent's rows in one real
//! PostgreSQL server, written while the mesh runs (relayed over TCP with TLS verified in
//! full, or to a Unix socket); on
//! Ctrl-C, the lab torn down and what was recorded kept.
//!
//! Two mesh tests run side by side (the harness's two threads): a mesh mostly waits (agents
//! probe a few times a second, a 1 s UDP test now and then), and what the tests check held
//! with two at once (RTT through a 10 ms link within 20-23 ms, losses within binomial
//! bounds, every pair of 16 nodes measured in 15 s): 45 s for the module where one at a time
//! took 82 s. Each test checks only its own run's namespaces and agents.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::postgres::{openssl_available, pg_available, Postgres};
use common::{lab_available, run, Proc, TempDir};
use serde_json::Value;
use sonde_store::{RunStatus, Store, TestStatus};

fn node(i: usize) -> String {
    format!("n{:02}", i + 1)
}

/// The built-in mesh description without its throughput table (latency only), written to
/// `dir`: 16 agents measuring 30 peers each with throughput too would spend the first 30 s
/// of the run on throughput tests, one after another.
fn latency_only(dir: &TempDir) -> String {
    let out = run(&["lab", "show", "mesh"], Duration::from_secs(10));
    out.expect_code(0);
    let text = out.stdout;
    let cut = text
        .find("[throughput]")
        .expect("the built-in has a throughput table");
    let path = dir.file("mesh-latency.toml");
    std::fs::write(&path, &text[..cut]).unwrap();
    path.display().to_string()
}

fn summary(out: &Path) -> Value {
    let text = std::fs::read_to_string(out.join("mesh.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// No namespace of the run's prefix is left.
fn assert_torn_down(summary: &Value) {
    let prefix = summary["prefix"].as_str().unwrap();
    assert!(prefix.starts_with("sonde-"), "{prefix}");
    let listed = run_ip_netns();
    let left: Vec<&str> = listed
        .lines()
        .filter(|l| l.starts_with(&format!("{prefix}-")))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    let etc: Vec<String> = std::fs::read_dir("/etc/netns")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(&format!("{prefix}-")))
                .collect()
        })
        .unwrap_or_default();
    assert!(etc.is_empty(), "hosts files left in /etc/netns: {etc:?}");
}

fn run_ip_netns() -> String {
    let out = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// No process is still running a command line naming `dir` (the agents' configurations).
fn assert_no_agent_left(dir: &Path) {
    let needle = dir.display().to_string();
    let mut left = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains("agent") && cmd.contains(&needle) {
            left.push(cmd);
        }
    }
    assert!(left.is_empty(), "agents still running: {left:?}");
}

/// (measuring node, peer label) of every successful latency run of the combined run.
fn measured_pairs(db: &Path) -> BTreeSet<(String, String)> {
    let store = Store::open_read_only(db).unwrap();
    let id = store.latest_run().unwrap().unwrap();
    let run = store.load_run(id).unwrap();
    run.tests
        .iter()
        .filter(|t| t.status == TestStatus::Ok)
        .filter_map(|t| {
            let peer = t.test_name.strip_prefix("latency ")?;
            Some((t.settings.clone(), peer.to_owned()))
        })
        .collect()
}

/// The value of `sonde_rtt_seconds_count` for `peer` in a scraped metrics text.
fn rtt_count(text: &str, peer: &str) -> Option<f64> {
    let key = format!("sonde_rtt_seconds_count{{peer=\"{peer}\",");
    text.lines()
        .find(|l| l.starts_with(&key))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

#[test]
fn the_mesh_is_listed_shown_and_its_flags_checked() {
    let _turn = crate::turns::take(module_path!());
    let list = run(&["lab", "list"], Duration::from_secs(10));
    list.expect_code(0);
    assert!(list.stdout.contains("mesh "), "{}", list.describe());
    let show = run(&["lab", "show", "mesh"], Duration::from_secs(10));
    show.expect_code(0);
    assert!(
        show.stdout.contains("kind = \"mesh\""),
        "{}",
        show.describe()
    );
    // Mesh flags on a matrix scenario, and values out of range, are usage errors before
    // anything is built (no root needed to see them).
    let dir = TempDir::new("meshflags");
    let o = dir.file("out").display().to_string();
    let wrong = run(
        &["lab", "run", "quick", "--nodes", "4", "-o", &o],
        Duration::from_secs(10),
    );
    wrong.expect_code(2);
    assert!(wrong.stderr.contains("--nodes"), "{}", wrong.describe());
    let one = run(
        &["lab", "run", "mesh", "--nodes", "1", "-o", &o],
        Duration::from_secs(10),
    );
    one.expect_code(2);
    assert!(
        one.stderr.contains("nodes must be 2..=64"),
        "{}",
        one.describe()
    );
    let picked = run(
        &["lab", "run", "mesh", "--settings", "clean", "-o", &o],
        Duration::from_secs(10),
    );
    picked.expect_code(2);
    let unknown = run(&["lab", "run", "mesg", "-o", &o], Duration::from_secs(10));
    unknown.expect_code(2);
    assert!(
        unknown.stderr.contains("sonde lab run mesh"),
        "{}",
        unknown.describe()
    );
}

#[test]
fn a_mesh_of_16_agents_measures_every_pair_and_leaves_nothing() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("mesh16");
    let file = latency_only(&dir);
    let out = dir.file("out");
    let o = out.display().to_string();
    let started = Instant::now();
    let res = run(
        &["lab", "run", &file, "--nodes", "16", "-t", "15", "-o", &o],
        Duration::from_secs(50),
    );
    let took = started.elapsed();
    eprintln!("16-node mesh of 15 s took {took:?}");
    res.expect_code(0);
    assert!(
        res.stdout
            .contains("all 480 ordered pairs x families measured"),
        "{}",
        res.stdout
    );
    let s = summary(&out);
    assert_torn_down(&s);
    assert_no_agent_left(&out);
    // The agents knew their peers by name (one name per node, the family chosen per peer
    // entry), resolved from the hosts file the lab gave each namespace: nothing to note,
    // but on a busy virtual machine the hypervisor's steal time (sonde_lab::steal).
    let notes: Vec<&str> = s["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| !n.starts_with(sonde_lab::steal::NOTE_START))
        .collect();
    assert!(notes.is_empty(), "{s}");
    let config = std::fs::read_to_string(out.join("agents").join("n01.toml")).unwrap();
    assert!(
        config.contains("host = \"n02\"\nport = 5201\nfamily = \"ipv6\""),
        "{config}"
    );
    assert!(!config.contains("10.77."), "{config}");

    // Every ordered pair, both families, from the combined database itself.
    let pairs = measured_pairs(&out.join("results.db"));
    for a in 0..16 {
        for b in (0..16).filter(|&b| b != a) {
            for fam in ["v4", "v6"] {
                let peer = format!("{}-{fam}", node(b));
                assert!(
                    pairs.contains(&(node(a), peer.clone())),
                    "{} never measured {peer} successfully",
                    node(a)
                );
            }
        }
    }
    // Every endpoint answered at the end, with RTT series of all its 30 peers.
    let scrapes = s["metrics"].as_array().unwrap();
    assert_eq!(scrapes.len(), 16);
    for (i, sc) in scrapes.iter().enumerate() {
        assert_eq!(sc["status"], 200, "{sc}");
        let text =
            std::fs::read_to_string(out.join("metrics").join(format!("{}.txt", node(i)))).unwrap();
        for b in (0..16).filter(|&b| b != i) {
            for fam in ["v4", "v6"] {
                let peer = format!("{}-{fam}", node(b));
                let n = rtt_count(&text, &peer);
                assert!(
                    n.is_some_and(|n| n > 0.0),
                    "{}'s metrics have no RTT samples of {peer}",
                    node(i)
                );
            }
        }
    }
    // Every agent stopped on SIGTERM, cleanly.
    for a in s["agents"].as_array().unwrap() {
        assert_eq!(a["code"], 0, "{a}");
        assert_eq!(a["killed"], false, "{a}");
    }
    // The report reads the mesh's directory.
    let report_dir = dir.file("report");
    let r = run(
        &["report", &o, "-o", &report_dir.display().to_string()],
        Duration::from_secs(30),
    );
    r.expect_code(0);
    let md = std::fs::read_to_string(report_dir.join("report.md")).unwrap();
    assert!(
        md.contains("latency n02-v6"),
        "{}",
        &md[..md.len().min(2000)]
    );
}

/// The runs in the database at `url` (scenario names, `agent:n01`) with a successful test;
/// none while it cannot be read.
fn agents_with_ok_tests(url: &str) -> BTreeSet<String> {
    let Ok(remote) = Store::open_read_only(url) else {
        return BTreeSet::new();
    };
    let runs = remote.runs().unwrap_or_default();
    runs.iter()
        .filter(|r| {
            remote
                .load_run(r.id)
                .is_ok_and(|l| l.tests.iter().any(|t| t.status == TestStatus::Ok))
        })
        .map(|r| r.scenario_name.clone())
        .collect()
}

#[test]
fn with_store_every_agent_row_lands_in_one_postgresql() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() || !pg_available() || !openssl_available() {
        return;
    }
    // Over TLS only, verified in full: the relay carries the agents' TLS untouched, and their
    // URLs keep the name the certificate is checked against.
    let dir = TempDir::new("meshpg");
    let pg = Postgres::start_tls(dir.path());
    let url = pg.tls_url(&dir.file("good-ca.pem"));
    let out = dir.file("out");
    let o = out.display().to_string();
    // The built-in, throughput included, shrunk to 4 nodes.
    let mut p = Proc::spawn(&[
        "lab", "run", "mesh", "--nodes", "4", "-t", "12", "--store", &url, "-o", &o,
    ]);
    // The agents write as they measure (through the relay on their node's loopback): every
    // agent's run, named after its node, has tests in PostgreSQL while the mesh still runs.
    let want: BTreeSet<String> = (0..4).map(|i| format!("agent:{}", node(i))).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Whether the mesh had ended is taken before PostgreSQL is read: its final check
        // copies everything too, and rows that came only from it must not pass.
        let running = !p.has_exited();
        let seen = agents_with_ok_tests(&url);
        assert!(
            running && Instant::now() < deadline,
            "while the mesh ran (it ended: {}), PostgreSQL had tests of {seen:?}: {}{}",
            !running,
            p.stdout_so_far(),
            p.stderr_so_far()
        );
        if seen == want {
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    let res = p.wait(Duration::from_secs(50));
    res.expect_code(0);
    // Every agent's run was in PostgreSQL before the end: the final check created none.
    assert!(res.stdout.contains("added 0 runs"), "{}", res.stdout);
    assert!(
        res.stdout.contains("every agent's database copied"),
        "{}",
        res.stdout
    );
    assert_torn_down(&summary(&out));

    let remote = Store::open_read_only(&url).unwrap();
    let remote_runs = remote.runs().unwrap();
    assert_eq!(remote_runs.len(), 4, "one run per agent: {remote_runs:?}");
    let mut kinds = BTreeSet::new();
    for i in 0..4 {
        let local =
            Store::open_read_only(out.join("agents").join(format!("{}.db", node(i)))).unwrap();
        let local_runs = local.runs().unwrap();
        assert_eq!(local_runs.len(), 1);
        let l = local.load_run(local_runs[0].id).unwrap();
        assert_eq!(l.run.status, RunStatus::Completed);
        let twin = remote_runs
            .iter()
            .find(|r| r.started_unix == l.run.started_unix && r.seed == l.run.seed)
            .unwrap_or_else(|| panic!("{}'s run is not in PostgreSQL", node(i)));
        let r = remote.load_run(twin.id).unwrap();
        let ids = |t: &[sonde_store::TestRecord]| -> Vec<(String, TestStatus)> {
            t.iter().map(|t| (t.matrix_id.clone(), t.status)).collect()
        };
        assert!(!l.tests.is_empty());
        assert_eq!(ids(&r.tests), ids(&l.tests), "{}'s tests", node(i));
        kinds.extend(l.tests.iter().map(|t| t.test_name.clone()));
    }
    assert!(
        kinds.contains("latency") && kinds.contains("throughput"),
        "{kinds:?}"
    );
}

#[test]
fn a_store_on_a_unix_socket_is_relayed_to_as_well() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() || !pg_available() {
        return;
    }
    let pg = Postgres::start_new();
    let url = pg.socket_url();
    let dir = TempDir::new("meshsock");
    let file = latency_only(&dir);
    let out = dir.file("out");
    let o = out.display().to_string();
    let res = run(
        &[
            "lab", "run", &file, "--nodes", "2", "-t", "6", "--store", &url, "-o", &o,
        ],
        Duration::from_secs(40),
    );
    res.expect_code(0);
    // The agents created their runs themselves, through the relay: the final check added none.
    assert!(res.stdout.contains("added 0 runs"), "{}", res.stdout);
    let want: BTreeSet<String> = (0..2).map(|i| format!("agent:{}", node(i))).collect();
    assert_eq!(agents_with_ok_tests(&url), want);
}

/// Per UDP throughput test in the agent databases under `out/agents`: whether it went
/// through node `via` (from or to it), its receivers' datagrams and losses.
fn udp_through(out: &Path, nodes: usize, via: &str) -> Vec<(bool, u64, u64)> {
    let mut found = Vec::new();
    for i in 0..nodes {
        let db = out.join("agents").join(format!("{}.db", node(i)));
        let store = Store::open_read_only(&db).unwrap();
        let run = store
            .load_run(store.latest_run().unwrap().unwrap())
            .unwrap();
        for t in &run.tests {
            if t.test_name != "throughput" || t.status != TestStatus::Ok {
                continue;
            }
            assert_eq!(t.protocol.as_deref(), Some("udp"), "{}", t.matrix_id);
            let through = node(i) == via || t.settings.starts_with(via);
            let doc: Value = serde_json::from_str(t.result_json.as_deref().unwrap()).unwrap();
            for d in doc["end"]["directions"].as_array().unwrap() {
                let u = &d["received"]["udp_received"];
                found.push((
                    through,
                    u["packets"].as_u64().unwrap(),
                    u["lost"].as_u64().unwrap(),
                ));
            }
        }
    }
    found
}

/// Whether `got` of `n` is within 4 binomial standard deviations of probability `p` (a false
/// failure once in some 15 000 runs); says so either way.
fn binomially_near(what: &str, got: f64, n: f64, p: f64) -> bool {
    let sd = (p * (1.0 - p) / n).sqrt();
    eprintln!(
        "{what}: {got} of {n} lost ({:.2} %, set {:.2} % +- {:.2})",
        got / n * 100.0,
        p * 100.0,
        4.0 * sd * 100.0
    );
    (got / n - p).abs() <= 4.0 * sd
}

/// Runs the mesh described by `text` on 3 nodes for `secs`, which must succeed; its output
/// directory and what it printed.
fn run_three_nodes(
    dir: &TempDir,
    text: &str,
    secs: u32,
    extra: &[&str],
) -> (std::path::PathBuf, common::Output) {
    let file = dir.file("mesh.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.file("out");
    let o = out.display().to_string();
    let t = secs.to_string();
    let mut args = vec![
        "lab",
        "run",
        file.to_str().unwrap(),
        "--nodes",
        "3",
        "-t",
        &t,
        "-o",
        &o,
    ];
    args.extend_from_slice(extra);
    let res = run(&args, Duration::from_secs(60));
    res.expect_code(0);
    (out, res)
}

#[test]
fn an_impaired_link_shows_in_every_pair_through_its_node_and_no_other() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("meshimp");
    // 20 probes 10 ms apart every second, and at the start a 1 s UDP upload to each peer at
    // 10 Mbit/s; n03's link to the router delays 10 ms and loses 5 % each way: a round trip
    // through it takes 20 ms more and loses 1 - 0.95^2 = 9.75 % of the probes, a datagram
    // crosses it once and is lost 5 % of the time.
    let builtin = run(&["lab", "show", "mesh"], Duration::from_secs(10));
    builtin.expect_code(0);
    let text = builtin
        .stdout
        .replace("every_secs = 5", "every_secs = 1")
        .replace("probes = 5", "probes = 20")
        .replace("probe_interval_ms = 20", "probe_interval_ms = 10")
        .replace("jitter = 0.2", "jitter = 0.02")
        .replace(
            "link_rate = \"1G\"",
            "link_rate = \"1G\"\nprotocol = \"udp\"",
        )
        + "\n[[link]]\nnode = \"n03\"\nimpair = { delay = \"10ms\", loss = \"5%\" }\n";
    let (out, res) = run_three_nodes(&dir, &text, 20, &[]);
    assert!(
        res.stdout
            .contains("impaired: n03's link, both ways: delay 10ms, loss 5%"),
        "{}",
        res.stdout
    );
    let s = summary(&out);
    assert_torn_down(&s);
    let (mut sent, mut lost) = (0.0, 0.0);
    for family in ["ipv4", "ipv6"] {
        for (a, b) in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)] {
            let cell = &s["matrix"]["cells"][family][a][b];
            let rtt = cell["median_rtt_ms"].as_f64().unwrap_or(f64::NAN);
            let pair = format!("{}->{} {family}", node(a), node(b));
            if a == 2 || b == 2 {
                assert!(
                    (20.0..23.0).contains(&rtt),
                    "{pair}: median RTT {rtt} ms, set 20"
                );
                sent += cell["probes_sent"].as_f64().unwrap();
                lost += cell["probes_lost"].as_f64().unwrap();
            } else {
                assert!(rtt < 2.0, "{pair}: median RTT {rtt} ms on a clean path");
                assert_eq!(cell["probes_lost"], 0, "{pair}: loss on a clean path");
            }
        }
    }
    assert!(sent >= 200.0, "only {sent} probes through n03");
    let set = 1.0 - 0.95f64.powi(2);
    assert!(binomially_near("probes through n03", lost, sent, set));

    // The UDP tests: 5 % lost through n03, nothing on the clean pair.
    let udp = udp_through(&out, 3, "n03");
    let sum = |through: bool| {
        udp.iter()
            .filter(|u| u.0 == through)
            .fold((0.0, 0.0), |(n, l), u| (n + u.1 as f64, l + u.2 as f64))
    };
    let (n, l) = sum(true);
    // Each first run is due within 1.2 s (the jitter, 0.02 of its minute), but an agent runs
    // one test at a time, between its latency runs: by the end most of the 8 directed pairs
    // through n03 have had theirs (a test cut short by the stop is not counted).
    let through = udp.iter().filter(|u| u.0).count();
    assert!(through >= 5, "UDP tests through n03: {udp:?}");
    assert!(binomially_near("datagrams through n03", l, n, 0.05));
    let (n, l) = sum(false);
    assert!(
        n > 1000.0 && l <= n * 0.005,
        "clean pair: {l} of {n} datagrams lost"
    );
    // And the agents' metrics say so: the losses towards n03 in the series of n01 and n02.
    let scraped: String = ["n01", "n02"]
        .iter()
        .map(|n| std::fs::read_to_string(out.join("metrics").join(format!("{n}.txt"))).unwrap())
        .collect();
    let lost_to_n03: f64 = scraped
        .lines()
        .filter(|l| l.starts_with("sonde_udp_datagrams_lost_total{peer=\"n03-"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(
        lost_to_n03 > 0.0,
        "no UDP loss towards n03 in the metrics:\n{scraped}"
    );
}

/// n03's link down 3 s after the agents answer, for 4 s, in a 3-node mesh measuring every
/// second: set against the outage's recorded start and end, every run to or from n03 that
/// sent its probes inside it failed, every one that began a second after it ended succeeded (in both
/// families: the router keeps its IPv6 addresses through the outage), and the other pair
/// never noticed: its runs went on meanwhile. A run to a peer that answers nothing takes 2 s
/// (1 s for replies, then three 300 ms asks for the peer's count); when an agent ran one
/// test at a time, n01 and n02 could spend the whole outage on their two runs to n03, one
/// per family, and begin none to each other (CI, 2026-11-29).
#[test]
fn an_outage_fails_the_runs_through_its_node_while_it_lasts_and_no_others() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("meshout");
    let builtin = run(&["lab", "show", "mesh"], Duration::from_secs(10));
    builtin.expect_code(0);
    let text = &builtin.stdout[..builtin.stdout.find("[throughput]").unwrap()];
    assert!(text.contains("every_secs = 5"), "{text}");
    let text = text.replace("every_secs = 5", "every_secs = 1")
        + "\n[[outage]]\nnode = \"n03\"\nat_secs = 3\nfor_secs = 4\n";
    // With PostgreSQL, the agents write to it as they measure, n03's way to it cut with its
    // link.
    let pg = pg_available().then(Postgres::start_new);
    let url = pg.as_ref().map(Postgres::url);
    let store: Vec<&str> = url.iter().flat_map(|u| ["--store", u.as_str()]).collect();
    let (out, res) = run_three_nodes(&dir, &text, 12, &store);
    assert!(
        res.stdout
            .contains("outage planned: n03's link down 3 s after the agents answer, for 4 s"),
        "{}",
        res.stdout
    );
    assert!(
        res.stdout.contains("outage: n03's link was down"),
        "{}",
        res.stdout
    );
    let s = summary(&out);
    assert_torn_down(&s);
    let outage = &s["outages"][0];
    assert_eq!(outage["error"], Value::Null, "{outage}");
    let (down, up) = (
        outage["down_unix"].as_f64().unwrap(),
        outage["up_unix"].as_f64().unwrap(),
    );
    assert!((up - down - 4.0).abs() < 0.3, "down {down}, up {up}");
    let store = Store::open_read_only(out.join("results.db")).unwrap();
    let run = store
        .load_run(store.latest_run().unwrap().unwrap())
        .unwrap();
    // Every run, its start and end in seconds from the link going down, for the messages.
    let mut timeline: Vec<(f64, String)> = run
        .tests
        .iter()
        .map(|t| {
            let line = format!(
                "{:+7.2} {:+7.2} {} {} {:?} {}",
                t.started_unix - down,
                t.ended_unix - down,
                t.settings,
                t.test_name,
                t.status,
                t.failure_reason.as_deref().unwrap_or("")
            );
            (t.started_unix, line)
        })
        .collect();
    timeline.sort_by(|a, b| a.0.total_cmp(&b.0));
    let timeline: Vec<String> = timeline.into_iter().map(|(_, l)| l).collect();
    let timeline = format!(
        "{outage}\nruns (start, end, s from the link going down; up at {:+.2}):\n{}",
        up - down,
        timeline.join("\n")
    );
    // The summary's tally of the runs begun meanwhile: through n03 they failed, no other.
    assert!(
        outage["through"]["failed"].as_u64().unwrap() >= 2,
        "{timeline}"
    );
    assert_eq!(outage["elsewhere"]["failed"], 0, "{timeline}");
    // n01 and n02 measure each other over two families every second: about 16 runs in the
    // 4 s, at least a quarter of them under load.
    assert!(
        outage["elsewhere"]["runs"].as_u64().unwrap() >= 4,
        "{timeline}"
    );

    let (mut inside, mut after) = (BTreeSet::new(), BTreeSet::new());
    for t in &run.tests {
        let peer = t.test_name.strip_prefix("latency ").unwrap_or("");
        let through = t.settings == "n03" || peer.starts_with("n03-");
        let family = if peer.ends_with("-v6") { "v6" } else { "v4" };
        let ok = t.status == TestStatus::Ok;
        let why = t.failure_reason.clone().unwrap_or_default();
        let what = format!(
            "{} -> {peer} {:.2}-{:.2}: {why}",
            t.settings, t.started_unix, t.ended_unix
        );
        // A run refused at the start (its peer's agent not yet serving), or cut short when
        // the agents were stopped, is no outage's doing.
        let refused = why.starts_with("refused");
        if why.starts_with("interrupted") {
            continue;
        }
        if !through || t.ended_unix < down {
            assert!(ok || refused, "failed without an outage: {what}");
        } else if t.started_unix >= down && t.started_unix + 0.2 <= up {
            // Its 5 probes, 20 ms apart, all went out while the link was down.
            assert!(!ok, "answered through a link that was down: {what}");
            inside.insert(family);
        } else if t.started_unix >= up + 1.0 {
            assert!(ok, "not back a second after the outage: {what}");
            after.insert(family);
        }
    }
    let both: BTreeSet<&str> = ["v4", "v6"].into();
    assert_eq!(
        inside, both,
        "runs that lay inside the outage, by family\n{timeline}"
    );
    assert_eq!(after, both, "runs a second after it, by family\n{timeline}");

    if url.is_some() {
        // n03's way to PostgreSQL crossed its link: what it could not copy during the outage
        // (a copy in flight waits for the link, a new connection times out) it copied
        // itself once back, so the check at the end found nothing missing. The others never
        // lost it.
        assert!(
            res.stdout.contains("added 0 runs and 0 tests"),
            "{}",
            res.stdout
        );
        let log = |n: &str| std::fs::read_to_string(out.join("agents").join(format!("{n}.log")));
        let n03 = log("n03").unwrap();
        eprintln!("n03's agent:\n{n03}");
        if n03.contains("cannot copy results to PostgreSQL") {
            assert!(n03.contains("is back after"), "{n03}");
        }
        for n in ["n01", "n02"] {
            let text = log(n).unwrap();
            assert!(!text.contains("cannot copy"), "{n}: {text}");
        }
    }
}

#[test]
fn ctrl_c_tears_the_mesh_down_and_keeps_what_was_recorded() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("meshint");
    // An outage still on at the Ctrl-C is ended before the lab goes.
    let file = latency_only(&dir);
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n[[outage]]\nnode = \"n02\"\nat_secs = 3\nfor_secs = 50\n");
    std::fs::write(&file, text).unwrap();
    let out = dir.file("out");
    let o = out.display().to_string();
    let mut p = Proc::spawn(&["lab", "run", &file, "--nodes", "3", "-t", "120", "-o", &o]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !p.stdout_so_far().contains("agents: 3 of 3") {
        assert!(
            Instant::now() < deadline && !p.has_exited(),
            "the agents never came up: {}{}",
            p.stdout_so_far(),
            p.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // Past the outage's start (3 s after the agents are up), and until the agents' own
    // databases hold a few successful runs: how many they hold when the signal goes is what
    // the combined store must keep. (A fixed count after a fixed sleep depended on where the
    // first run of each pair fell in its spread and on how fast a loaded host ran them.)
    std::thread::sleep(Duration::from_secs(4));
    let deadline = Instant::now() + Duration::from_secs(60);
    let recorded = loop {
        let ok = ok_runs_in_agent_databases(&out);
        if ok >= 4 {
            break ok;
        }
        assert!(
            Instant::now() < deadline && !p.has_exited(),
            "only {ok} successful runs recorded by the agents: {}{}",
            p.stdout_so_far(),
            p.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    p.signal(libc::SIGINT);
    let res = p.wait(Duration::from_secs(30));
    res.expect_code(1);
    assert!(res.stdout.contains("interrupted"), "{}", res.stdout);
    let s = summary(&out);
    assert_eq!(s["interrupted"], true);
    let outage = &s["outages"][0];
    assert!(
        outage["down_unix"].is_f64() && outage["up_unix"].is_f64(),
        "{outage}"
    );
    assert_torn_down(&s);
    assert_no_agent_left(&out);
    let store = Store::open_read_only(out.join("results.db")).unwrap();
    let run = store
        .load_run(store.latest_run().unwrap().unwrap())
        .unwrap();
    assert_eq!(run.run.status, RunStatus::Interrupted);
    let ok = run
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::Ok)
        .count();
    assert!(
        ok >= recorded,
        "{recorded} successful runs recorded before Ctrl-C, only {ok} kept (of {} tests)",
        run.tests.len()
    );
}

/// Successful tests in every agent's own database under `out/agents`, read while the agents
/// write (the databases are WAL: a reader does not block them).
fn ok_runs_in_agent_databases(out: &Path) -> usize {
    let Ok(dir) = std::fs::read_dir(out.join("agents")) else {
        return 0;
    };
    let mut ok = 0;
    for db in dir.flatten().map(|e| e.path()) {
        if db.extension().is_none_or(|e| e != "db") {
            continue;
        }
        let Ok(store) = Store::open_read_only(&db) else {
            continue;
        };
        for r in store.runs().unwrap_or_default() {
            if let Ok(run) = store.load_run(r.id) {
                ok += run
                    .tests
                    .iter()
                    .filter(|t| t.status == TestStatus::Ok)
                    .count();
            }
        }
    }
    ok
}
