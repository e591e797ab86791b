//! `sonde agent` over loopback: two agents measuring each other on a 1 s latency schedule,
//! one of them restarted meanwhile; their results in the store; the metrics endpoint's text;
//! and a real Prometheus server scraping it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{http_get, latest_tests, sample, stop, wait_for};
use common::prometheus::{self, Prometheus};
use common::{free_port, lab_available, sonde_bin, Proc, TempDir};
use sonde_store::{Store, TestStatus};
use std::path::Path;
use std::time::{Duration, Instant};

/// An agent configuration measuring `peers` (name, port) on 127.0.0.1 every second (also
/// agent_status's).
/// An agent named `self` that measures its own server (its one peer), with its metrics on a
/// free port of 127.0.0.1, which is returned with it.
pub(crate) fn self_measuring(dir: &TempDir) -> (Proc, u16) {
    let (pa, pm) = (free_port(), free_port());
    let cfg = config(dir, "self", pa, &[("self", pa)]);
    let agent = Proc::spawn(&[
        "agent",
        "--config",
        &cfg,
        "--metrics",
        &format!("127.0.0.1:{pm}"),
    ]);
    (agent, pm)
}

pub(crate) fn config(dir: &TempDir, name: &str, port: u16, peers: &[(&str, u16)]) -> String {
    let mut text = format!(
        "listen_port = {port}\nstore = {:?}\njitter = 0.2\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n",
        dir.file(&format!("{name}.db"))
    );
    for (peer, p) in peers {
        text.push_str(&format!(
            "\n[[peer]]\nname = \"{peer}\"\nhost = \"127.0.0.1\"\nport = {p}\n"
        ));
    }
    let path = dir.file(&format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Starts `sonde agent` on the configuration `text`, written to `NAME.toml` in `dir`.
fn spawn_agent(dir: &TempDir, name: &str, text: &str) -> Proc {
    let cfg = dir.file(&format!("{name}.toml"));
    std::fs::write(&cfg, text).unwrap();
    Proc::spawn(&["agent", "--config", cfg.to_str().unwrap()])
}

/// The statuses of the latest run's tests, in order (empty until the agent wrote its run).
fn statuses(db: &Path) -> Vec<TestStatus> {
    peer_results(db).into_iter().map(|(_, _, s, _)| s).collect()
}

/// The (peer, kind of run, status, failure reason) of each test of the latest run in `db`,
/// in order.
fn peer_results(db: &Path) -> Vec<(String, String, TestStatus, Option<String>)> {
    latest_tests(db)
        .into_iter()
        .map(|t| (t.settings, t.test_name, t.status, t.failure_reason))
        .collect()
}

/// Checks the exposition text line by line: comments of the known kinds, samples as
/// `name{labels} value` with a number, `# EOF` last.
fn check_exposition(text: &str) {
    assert!(text.ends_with("# EOF\n"), "no # EOF at the end:\n{text}");
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("# ") {
            let kind = c.split(' ').next().unwrap();
            assert!(["HELP", "TYPE", "UNIT", "EOF"].contains(&kind), "{line}");
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect(line);
        assert!(value.parse::<f64>().is_ok() || value == "+Inf", "{line}");
        let name = series.split('{').next().unwrap();
        assert!(
            name.starts_with("sonde_") || name.starts_with("process_"),
            "{line}"
        );
        assert!(
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{line}"
        );
    }
}

/// The agent's `process_*` series in `text` against what `/proc` says of `pid` just after
/// the scrape: resident memory within 25 %, descriptors within 4 (a test may open or close
/// some between the two reads), the thread count and the start within the last minute.
fn check_process_series(text: &str, pid: i32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap()
    };
    let rss = sample(text, "process_resident_memory_bytes").unwrap_or(0.0);
    let truth = field("VmRSS:") * 1024.0;
    assert!(
        (rss / truth - 1.0).abs() <= 0.25,
        "{rss} vs {truth}:\n{text}"
    );
    let fds = sample(text, "process_open_fds").unwrap_or(-100.0);
    let open = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count() as f64;
    assert!((fds - open).abs() <= 4.0, "{fds} vs {open}:\n{text}");
    let threads = sample(text, "process_threads").unwrap_or(0.0);
    assert!(threads >= 2.0, "{text}");
    assert!(
        sample(text, "process_max_fds").unwrap_or(0.0) >= fds,
        "{text}"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let start = sample(text, "process_start_time_seconds").unwrap_or(0.0);
    assert!(now - start >= 0.0 && now - start < 60.0, "{start} vs {now}");
    assert!(sample(text, "process_cpu_seconds_total").unwrap_or(-1.0) >= 0.0);
}

#[test]
fn agents_measure_each_other_through_a_restart_and_serve_metrics() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent");
    let (pa, pb, pm) = (free_port(), free_port(), free_port());
    let cfg_a = config(&dir, "a", pa, &[("b", pb)]);
    let cfg_b = config(&dir, "b", pb, &[("a", pa)]);
    let db_a = dir.file("a.db");
    let metrics = format!("127.0.0.1:{pm}");
    let a = Proc::spawn(&["agent", "--config", &cfg_a, "--metrics", &metrics]);
    let b = Proc::spawn(&["agent", "--config", &cfg_b]);

    let ok = |db: &Path| {
        statuses(db)
            .iter()
            .filter(|s| **s == TestStatus::Ok)
            .count()
    };
    wait_for("two good runs of a", 15, || ok(&db_a) >= 2, &[&a, &b]);
    let (status, text) = http_get(pm, "/metrics").expect("metrics endpoint answers");
    assert!(status.contains("200"), "{status}");
    check_exposition(&text);
    let tests_ok = r#"sonde_tests_total{peer="b",family="ipv4",test="latency",result="ok"}"#;
    assert!(sample(&text, tests_ok).unwrap_or(0.0) >= 2.0, "{text}");
    let count = r#"sonde_rtt_seconds_count{peer="b",family="ipv4"}"#;
    assert!(sample(&text, count).unwrap_or(0.0) >= 6.0, "{text}");
    let (status, _) = http_get(pm, "/other").unwrap();
    assert!(status.contains("404"), "{status}");
    check_process_series(&text, a.pid());

    // The peer stops cleanly on SIGTERM; a's runs fail meanwhile and the schedule goes on.
    let out_b = stop(b);
    assert!(
        ok(&dir.file("b.db")) >= 1,
        "b measured a: {}",
        out_b.describe()
    );
    let failed = |db: &Path| {
        statuses(db)
            .iter()
            .filter(|s| **s == TestStatus::Failed)
            .count()
    };
    wait_for(
        "a failed run while b is down",
        15,
        || failed(&db_a) >= 1,
        &[&a],
    );
    let ok_before = ok(&db_a);

    // The peer comes back on its port; a's next runs succeed again.
    let b = Proc::spawn(&["agent", "--config", &cfg_b]);
    wait_for(
        "a good run after b's restart",
        15,
        || ok(&db_a) > ok_before,
        &[&a, &b],
    );
    let (_, text) = http_get(pm, "/metrics").unwrap();
    let tests_failed =
        r#"sonde_tests_total{peer="b",family="ipv4",test="latency",result="failed"}"#;
    assert!(sample(&text, tests_failed).unwrap_or(0.0) >= 1.0, "{text}");

    a.signal(libc::SIGTERM);
    let started = Instant::now();
    let out_a = a.wait(Duration::from_secs(10));
    assert_eq!(out_a.code(), Some(0), "{}", out_a.describe());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "slow stop: {:?}",
        started.elapsed()
    );
    assert!(
        out_a.stderr.contains("stopped after"),
        "{}",
        out_a.describe()
    );
    // ok ... failed ... ok, in that order.
    let s = statuses(&db_a);
    let first_fail = s.iter().position(|x| *x == TestStatus::Failed).unwrap();
    assert!(s[..first_fail].contains(&TestStatus::Ok), "{s:?}");
    assert!(s[first_fail..].contains(&TestStatus::Ok), "{s:?}");
    let store = Store::open_read_only(&db_a).unwrap();
    let run = store
        .load_run(store.latest_run().unwrap().unwrap())
        .unwrap();
    assert_eq!(run.run.status, sonde_store::RunStatus::Completed);
    assert!(
        run.run.scenario_name.starts_with("agent:"),
        "{}",
        run.run.scenario_name
    );
    let failures: Vec<String> = run
        .tests
        .iter()
        .filter_map(|t| t.failure_reason.clone())
        .collect();
    // b's host (loopback) stayed up while b was down: it refused the probes ("port
    // unreachable"), which fails the run rather than counting as the path's loss.
    assert!(
        failures
            .iter()
            .any(|f| f.starts_with("refused: no server listening on port")),
        "{failures:?}"
    );
}

#[test]
fn a_real_prometheus_scrapes_the_agent() {
    let _turn = crate::turns::take(module_path!());
    if !prometheus::available("prometheus") {
        return;
    }
    let dir = TempDir::new("agent-prom");
    // The agent measures its own server: one process is enough for a series to appear.
    let (agent, pm) = self_measuring(&dir);
    let prom = Prometheus::start(&dir, pm, &[]);
    let pp = prom.port;
    let query = "/api/v1/query?query=sonde_tests_total%7Bresult%3D%22ok%22%7D";
    let mut last = String::new();
    wait_for(
        "Prometheus to hold sonde_tests_total with the agent's labels",
        40,
        || {
            let Some((_, body)) = http_get(pp, query) else {
                return false;
            };
            last = body;
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&last) else {
                return false;
            };
            v["data"]["result"].as_array().is_some_and(|r| {
                r.iter().any(|s| {
                    let m = &s["metric"];
                    m["peer"] == "self"
                        && m["family"] == "ipv4"
                        && m["test"] == "latency"
                        && m["job"] == "sonde"
                        && s["value"][1].as_str().and_then(|x| x.parse::<f64>().ok()) >= Some(1.0)
                })
            })
        },
        &[&agent, &prom.proc],
    );
    // The histogram arrives whole: its count series is queryable too.
    let (_, body) = http_get(pp, "/api/v1/query?query=sonde_rtt_seconds_count").unwrap();
    assert!(body.contains("\"peer\":\"self\""), "{body}");
    drop(prom);
    stop(agent);
}

#[test]
fn throughput_and_profiles_keep_to_their_share_of_the_measured_capacity() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-budget");
    let pa = free_port();
    // 10 G configured, far above what the capacity run measures on loopback only when the
    // host is fast; the budget takes the smaller reference either way.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\njitter = 0.1\n\n[capacity]\nevery_mins = 60\n\n[throughput]\nevery_mins = 0.1\nduration_secs = 1\nshare = 0.01\n\n[profile]\nevery_mins = 1\nname = \"monitoring\"\nduration_secs = 2\nshare = 0.1\n\n[[peer]]\nname = \"self\"\nhost = \"127.0.0.1\"\nport = {pa}\nlink_rate = \"10G\"\n",
        dir.file("self.db")
    );
    let db = dir.file("self.db");
    let agent = spawn_agent(&dir, "self", &text);
    // Within 10 s the capacity and the first throughput run start; a throughput run after
    // the capacity one uses its figure.
    let paced_after_capacity = |db: &Path| -> Option<(f64, f64, f64)> {
        let store = Store::open_read_only(db).ok()?;
        let run = store.load_run(store.latest_run().ok()??).ok()?;
        let cap_at = run
            .tests
            .iter()
            .find(|t| t.test_name == "capacity" && t.status == TestStatus::Ok)?
            .ended_unix;
        let t = run.tests.iter().find(|t| {
            t.test_name == "throughput" && t.status == TestStatus::Ok && t.started_unix >= cap_at
        })?;
        let measured = t.parameters["measured_capacity_bps"].as_f64()?;
        let paced = t.parameters["bitrate_bps"].as_f64()?;
        let doc: serde_json::Value = serde_json::from_str(t.result_json.as_deref()?).ok()?;
        let received = doc["end"]["directions"][0]["received"]["bits_per_second"].as_f64()?;
        Some((measured, paced, received))
    };
    wait_for(
        "a throughput run after a capacity run",
        40,
        || paced_after_capacity(&db).is_some(),
        &[&agent],
    );
    let (measured, paced, received) = paced_after_capacity(&db).unwrap();
    // The profile (first run within 10 s of the start) fits its share and runs.
    let profile_ok = |db: &Path| -> bool {
        let Ok(store) = Store::open_read_only(db) else {
            return false;
        };
        let Ok(Some(id)) = store.latest_run() else {
            return false;
        };
        store.load_run(id).is_ok_and(|r| {
            r.tests
                .iter()
                .any(|t| t.test_name == "profile" && t.status == TestStatus::Ok)
        })
    };
    wait_for("a profile run", 30, || profile_ok(&db), &[&agent]);
    let reference = measured.min(10e9);
    assert!(
        (paced - (reference * 0.01).floor()).abs() <= 1.0,
        "{paced} vs {reference}"
    );
    // Paced: never above its share (writes of 10 ms of the pace: the sender is at most 10 ms
    // ahead, 1 % of the 1 s test, and some slack).
    assert!(
        received <= paced * 1.03,
        "received {received} > paced {paced}"
    );
    assert!(
        received >= paced * 0.5,
        "received {received} << paced {paced}"
    );
    stop(agent);
    eprintln!("capacity {measured:.0} bit/s, paced {paced:.0}, received {received:.0}");
}

#[test]
fn a_throughput_run_both_ways_paces_each_direction_to_half_the_share() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-both");
    let (pa, pm) = (free_port(), free_port());
    // 100 Mbit/s at 0.2: 20 Mbit/s for the two directions together, 10 each.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\njitter = 0.1\n\n[throughput]\nevery_mins = 0.2\nduration_secs = 2\nshare = 0.2\ndirection = \"both\"\n\n[[peer]]\nname = \"self\"\nhost = \"127.0.0.1\"\nport = {pa}\nlink_rate = \"100M\"\n",
        dir.file("self.db")
    );
    let db = dir.file("self.db");
    let cfg = dir.file("self.toml");
    std::fs::write(&cfg, text).unwrap();
    let metrics = format!("127.0.0.1:{pm}");
    let agent = Proc::spawn(&[
        "agent",
        "--config",
        cfg.to_str().unwrap(),
        "--metrics",
        &metrics,
    ]);
    let first_ok = |db: &Path| -> Option<(serde_json::Value, serde_json::Value)> {
        let store = Store::open_read_only(db).ok()?;
        let run = store.load_run(store.latest_run().ok()??).ok()?;
        let t = run
            .tests
            .iter()
            .find(|t| t.test_name == "throughput" && t.status == TestStatus::Ok)?;
        let doc = serde_json::from_str(t.result_json.as_deref()?).ok()?;
        Some((t.parameters.clone(), doc))
    };
    wait_for(
        "a throughput run both ways",
        30,
        || first_ok(&db).is_some(),
        &[&agent],
    );
    let (params, doc) = first_ok(&db).unwrap();
    assert_eq!(params["direction"], "both", "{params}");
    assert_eq!(params["bitrate_bps"].as_f64(), Some(10e6), "{params}");
    let directions = doc["end"]["directions"].as_array().expect("directions");
    let mut seen = Vec::new();
    for d in directions {
        let sends = d["client_sends"].as_bool().expect("client_sends");
        let received = d["received"]["bits_per_second"].as_f64().expect("received");
        // Paced to its half of the share: within 3 % (the writes are 10 ms of the pace, so
        // the sender is never more than 10 ms ahead), and not starved either.
        assert!(
            (9e6..=10.3e6).contains(&received),
            "client_sends {sends}: received {received} bit/s, paced 10 Mbit/s"
        );
        eprintln!("client_sends {sends}: received {received:.0} bit/s, paced 10 Mbit/s");
        seen.push(sends);
    }
    seen.sort();
    assert_eq!(seen, [false, true], "one direction each way: {doc}");
    let (_, text) = http_get(pm, "/metrics").unwrap();
    for direction in ["upload", "download"] {
        let series = format!(
            "sonde_throughput_bits_per_second{{peer=\"self\",family=\"ipv4\",direction=\"{direction}\"}}"
        );
        let v = sample(&text, &series).unwrap_or(0.0);
        assert!((9e6..=10.3e6).contains(&v), "{series} = {v}\n{text}");
    }
    stop(agent);
}

/// A 64-character pre-shared key file in `dir`.
fn key_file(dir: &TempDir) -> String {
    let path = dir.file("fleet.psk");
    std::fs::write(&path, format!("{}\n", "k3y".repeat(22))).unwrap();
    path.display().to_string()
}

#[test]
fn the_agents_server_takes_its_limits_and_key_from_the_server_table() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-limits");
    let key = key_file(&dir);
    let (pa, dead) = (free_port(), free_port());
    // The agent measures a port nobody serves: its own runs never touch its server's limits.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\n\n[server]\nmax_test_rate = 3\nmax_duration_secs = 30\npsk_file = {key:?}\n\n[latency]\nevery_secs = 5\nprobes = 1\n\n[[peer]]\nhost = \"127.0.0.1\"\nport = {dead}\n",
        dir.file("limits.db")
    );
    let agent = spawn_agent(&dir, "limits", &text);
    let port = pa.to_string();
    let client = |extra: &[&str]| {
        let mut args = vec!["client", "127.0.0.1", "-p", &port];
        args.extend_from_slice(extra);
        common::run(&args, Duration::from_secs(20))
    };
    wait_for(
        "the agent's server to listen",
        10,
        || std::net::TcpStream::connect(("127.0.0.1", pa)).is_ok(),
        &[&agent],
    );
    // The key is required ...
    let no_key = client(&["-t", "1"]);
    assert_eq!(no_key.code(), Some(1), "{}", no_key.describe());
    assert!(
        no_key.stderr_lc().contains("--psk-file"),
        "{}",
        no_key.describe()
    );
    // ... the duration limit holds for clients with it ...
    let long = client(&["-t", "60", "--psk-file", &key]);
    assert_eq!(long.code(), Some(1), "{}", long.describe());
    assert!(
        long.stderr_lc().contains("limit of 30 s"),
        "{}",
        long.describe()
    );
    let ok = client(&["-t", "1", "--psk-file", &key]);
    assert_eq!(ok.code(), Some(0), "{}", ok.describe());
    // ... and the per-source test rate (3 a minute; whether the refusals above counted is
    // the server's business): a refusal comes within four more tests.
    let refused = (0..4)
        .map(|_| client(&["-t", "1", "--psk-file", &key]))
        .find(|o| o.code() != Some(0))
        .expect("a test beyond max_test_rate is refused");
    assert!(
        refused
            .stderr_lc()
            .contains("too many tests from 127.0.0.1"),
        "{}",
        refused.describe()
    );
    stop(agent);
}

#[test]
fn throughput_runs_answer_a_peers_key() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-psk");
    let key = key_file(&dir);
    let pa = free_port();
    // The agent measures its own server, which asks for the key its peer entry holds.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\njitter = 0.05\n\n[server]\npsk_file = {key:?}\n\n[throughput]\nevery_mins = 0.1\nduration_secs = 1\nshare = 0.1\n\n[[peer]]\nname = \"self\"\nhost = \"127.0.0.1\"\nport = {pa}\nlink_rate = \"100M\"\npsk_file = {key:?}\n",
        dir.file("psk.db")
    );
    let db = dir.file("psk.db");
    let agent = spawn_agent(&dir, "psk", &text);
    wait_for(
        "a throughput run through the key",
        15,
        || statuses(&db).contains(&TestStatus::Ok),
        &[&agent],
    );
    stop(agent);
}

#[test]
fn latency_runs_tag_their_probes_with_a_peers_key() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-psk-latency");
    let key = key_file(&dir);
    let pa = free_port();
    // The agent probes its own keyed server twice over: once as a peer entry holding the key,
    // once as one without it, whose untagged probes the server must drop.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\njitter = 0.05\n\n[server]\npsk_file = {key:?}\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[[peer]]\nname = \"keyed\"\nhost = \"127.0.0.1\"\nport = {pa}\npsk_file = {key:?}\n\n[[peer]]\nname = \"bare\"\nhost = \"127.0.0.1\"\nport = {pa}\n",
        dir.file("psk-latency.db")
    );
    let db = dir.file("psk-latency.db");
    let agent = spawn_agent(&dir, "psk-latency", &text);
    let done = |peer: &str| peer_results(&db).iter().any(|(p, _, _, _)| p == peer);
    wait_for(
        "a latency run to each peer entry",
        15,
        || done("keyed") && done("bare"),
        &[&agent],
    );
    stop(agent);
    // The first run of each (a later one may be cut short by the SIGTERM).
    let results = peer_results(&db);
    let first = |peer: &str| {
        results
            .iter()
            .find(|(p, _, _, _)| p == peer)
            .cloned()
            .unwrap()
    };
    let (_, _, status, why) = first("keyed");
    assert_eq!(status, TestStatus::Ok, "keyed: {why:?}");
    let (_, _, status, why) = first("bare");
    assert_eq!(status, TestStatus::Failed, "untagged probes were answered");
    let why = why.unwrap_or_default();
    assert!(why.contains("was answered"), "bare: {why}");
}

#[test]
fn capacity_and_profile_runs_answer_a_peers_key() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-psk-capacity");
    let key = key_file(&dir);
    let pa = free_port();
    // The agent measures its own keyed server: a capacity run and a profile run, each of
    // which the server refuses without the key.
    let text = format!(
        "listen_port = {pa}\nstore = {:?}\njitter = 0.05\n\n[server]\npsk_file = {key:?}\n\n[capacity]\nevery_mins = 60\n\n[profile]\nevery_mins = 1\nname = \"monitoring\"\nduration_secs = 2\nshare = 0.1\n\n[[peer]]\nname = \"self\"\nhost = \"127.0.0.1\"\nport = {pa}\nlink_rate = \"10G\"\npsk_file = {key:?}\n",
        dir.file("psk-capacity.db")
    );
    let db = dir.file("psk-capacity.db");
    let agent = spawn_agent(&dir, "psk-capacity", &text);
    let first = |kind: &str| {
        peer_results(&db)
            .into_iter()
            .find(|(_, k, _, _)| k == kind)
            .map(|(_, _, status, why)| (status, why))
    };
    wait_for(
        "a capacity and a profile run",
        40,
        || first("capacity").is_some() && first("profile").is_some(),
        &[&agent],
    );
    stop(agent);
    for kind in ["capacity", "profile"] {
        let (status, why) = first(kind).unwrap();
        assert_eq!(status, TestStatus::Ok, "{kind}: {why:?}");
    }
}

#[test]
fn a_key_file_that_cannot_be_used_stops_the_agent_before_it_writes_anything() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-bad-key");
    let missing = dir.file("missing.psk");
    let db = dir.file("bad-key.db");
    let peer = format!(
        "[[peer]]\nhost = \"127.0.0.1\"\nport = {}\npsk_file = {missing:?}\n",
        free_port()
    );
    let server = format!("[server]\npsk_file = {missing:?}\n\n[[peer]]\nhost = \"127.0.0.1\"\n");
    for (what, tail) in [("peer", peer), ("server", server)] {
        let text = format!(
            "listen_port = {}\nstore = {db:?}\n\n[latency]\nevery_secs = 10\n\n{tail}",
            free_port()
        );
        let cfg = dir.file("bad-key.toml");
        std::fs::write(&cfg, text).unwrap();
        let out = common::run(
            &["agent", "--config", cfg.to_str().unwrap()],
            Duration::from_secs(10),
        );
        // A bad value of the configuration, like any other: a usage error naming the file.
        assert_eq!(out.code(), Some(2), "{what}: {}", out.describe());
        let err = out.stderr_lc();
        assert!(
            err.contains("psk_file") && err.contains("missing.psk"),
            "{what}: {}",
            out.describe()
        );
        assert!(!db.exists(), "{what}: a run was opened in the store");
    }
}

#[test]
fn a_postgresql_that_accepts_and_never_answers_does_not_hold_up_the_stop() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-silent-pg");
    // Accepts connections (the kernel's backlog) and never answers the driver's start-up.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "postgres://sonde@127.0.0.1:{}/sonde",
        silent.local_addr().unwrap().port()
    );
    let text = format!(
        "listen_port = {}\nstore = {:?}\nstore_url = {url:?}\n\n[latency]\nevery_secs = 10\n\n[[peer]]\nhost = \"127.0.0.1\"\nport = {}\n",
        free_port(),
        dir.file("silent.db"),
        free_port()
    );
    let agent = spawn_agent(&dir, "silent", &text);
    wait_for(
        "the agent to start",
        10,
        || agent.stderr_so_far().contains("serving tests"),
        &[&agent],
    );
    let t0 = Instant::now();
    let out = stop(agent);
    // The 10 s grace for the last copy, and no more.
    assert!(t0.elapsed() < Duration::from_secs(14), "{}", out.describe());
    assert!(
        out.stderr
            .contains("stopping without the last copy to PostgreSQL"),
        "{}",
        out.describe()
    );
    drop(silent);
}

/// A network namespace of this test's own with one address on an interface, deleted
/// when dropped (also when the test fails).
struct OwnNamespace(String);

impl OwnNamespace {
    fn new(addr_cidr: &str) -> OwnNamespace {
        let ns = OwnNamespace(format!("sonde-own-{}", std::process::id()));
        let ip = |args: &[&str]| {
            let out = std::process::Command::new("ip")
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ip {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        ip(&["netns", "add", &ns.0]);
        ip(&["-n", &ns.0, "link", "set", "lo", "up"]);
        // A veth pair with both ends inside (this kernel has no dummy interfaces).
        ip(&[
            "-n", &ns.0, "link", "add", "d0", "type", "veth", "peer", "name", "d1",
        ]);
        ip(&["-n", &ns.0, "addr", "add", addr_cidr, "dev", "d0"]);
        ip(&["-n", &ns.0, "link", "set", "d0", "up"]);
        ip(&["-n", &ns.0, "link", "set", "d1", "up"]);
        ns
    }
}

impl Drop for OwnNamespace {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .output();
    }
}

/// One peer list for a whole fleet names each agent among its own peers: the entry that is
/// this agent (this host's address, this agent's port) is not measured and said once in the
/// log; loopback written out is still measured, as asked. In a namespace of the test's own,
/// where the host's address is 10.203.7.1.
#[test]
fn the_peer_entry_that_is_this_agent_is_not_measured() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let ns = OwnNamespace::new("10.203.7.1/24");
    let dir = TempDir::new("agent-own");
    let port = free_port();
    let db = dir.file("own.db");
    let text = format!(
        "listen_port = {port}\nstore = {db:?}\njitter = 0.05\n\n[latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n[[peer]]\nname = \"me\"\nhost = \"10.203.7.1\"\nport = {port}\n\n[[peer]]\nname = \"loop\"\nhost = \"127.0.0.1\"\nport = {port}\n"
    );
    let cfg = dir.file("own.toml");
    std::fs::write(&cfg, text).unwrap();
    let agent = Proc::spawn_program(
        "ip",
        &[
            "netns",
            "exec",
            &ns.0,
            sonde_bin(),
            "agent",
            "--config",
            cfg.to_str().unwrap(),
        ],
    );
    let runs_to = |peer: &str| {
        peer_results(&db)
            .iter()
            .filter(|(p, _, _, _)| p == peer)
            .count()
    };
    wait_for(
        "three runs to the loopback entry",
        15,
        || runs_to("loop") >= 3,
        &[&agent],
    );
    let out = stop(agent);
    assert_eq!(runs_to("me"), 0, "the agent measured itself");
    let said = format!("peer me (10.203.7.1:{port}) is this agent itself: not measured");
    assert_eq!(out.stderr.matches(&said).count(), 1, "{}", out.stderr);
    let results = peer_results(&db);
    assert!(
        results
            .iter()
            .filter(|(p, _, _, _)| p == "loop")
            .any(|(_, _, status, _)| *status == TestStatus::Ok),
        "{results:?}"
    );
}
