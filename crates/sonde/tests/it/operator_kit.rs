//! The operator's kit under `deploy/`: the Prometheus alert rules pass `promtool check rules`
//! and their unit tests (and a broken copy does not, so the check can fail), and every query
//! of the Grafana dashboard, every template variable's and every rule's, is run by a real
//! Prometheus scraping a real agent that measures itself: each parses, and each dashboard
//! query returns series. Grafana itself is not needed: what its panels show is what these
//! queries return.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::agent::{stop, wait_for};
use common::prometheus::{self, Prometheus};
use common::{free_port, Proc, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `deploy/REL` in the repository.
fn deploy(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../deploy")
        .join(rel)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `promtool ARGS` run in `dir`: whether it succeeded, and what it said.
fn promtool(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn the_alert_rules_pass_promtool_and_their_unit_tests() {
    let _turn = crate::turns::take(module_path!());
    if !prometheus::available("promtool") {
        return;
    }
    let dir = deploy("prometheus");
    let (ok, said) = promtool(&dir, &["check", "rules", "sonde-rules.yml"]);
    assert!(ok, "promtool check rules:\n{said}");
    let (ok, said) = promtool(&dir, &["test", "rules", "sonde-rules.test.yml"]);
    assert!(ok, "promtool test rules:\n{said}");
    assert!(said.contains("SUCCESS"), "{said}");

    // The same two checks notice a broken copy: a syntax error, and a threshold moved away
    // from what the unit tests pin.
    let rules = read(&dir.join("sonde-rules.yml"));
    let tmp = TempDir::new("operator-kit-rules");
    std::fs::write(
        tmp.file("sonde-rules.test.yml"),
        read(&dir.join("sonde-rules.test.yml")),
    )
    .unwrap();
    let broken = rules.replacen("> 0.05 < 1", "> 0.05 <", 1);
    assert_ne!(
        broken, rules,
        "the loss alert's threshold moved: update this test"
    );
    std::fs::write(tmp.file("sonde-rules.yml"), &broken).unwrap();
    let (ok, said) = promtool(tmp.path(), &["check", "rules", "sonde-rules.yml"]);
    assert!(!ok, "a syntax error passed promtool check rules:\n{said}");
    let moved = rules.replacen("> 0.05 < 1", "> 0.5 < 1", 1);
    std::fs::write(tmp.file("sonde-rules.yml"), &moved).unwrap();
    let (ok, said) = promtool(tmp.path(), &["check", "rules", "sonde-rules.yml"]);
    assert!(ok, "{said}");
    let (ok, said) = promtool(tmp.path(), &["test", "rules", "sonde-rules.test.yml"]);
    assert!(!ok, "a moved threshold passed the unit tests:\n{said}");
    assert!(said.contains("SondeLatencyLossHigh"), "{said}");
}

/// An agent configuration that, within its first 10 s, runs every kind of test to its own
/// server (`self`): latency every second, a UDP throughput test every 6 s (its rate, loss and
/// jitter), a capacity run and a traffic profile; and latency and the rest to `gone`, a port
/// nobody listens on, whose runs fail.
fn agent_config(dir: &TempDir, port: u16) -> PathBuf {
    let text = format!(
        "listen_port = {port}\nstore = {store:?}\njitter = 0.1\n\n\
         [latency]\nevery_secs = 1\nprobes = 3\nprobe_interval_ms = 20\n\n\
         [throughput]\nevery_mins = 0.1\nduration_secs = 1\nshare = 0.01\nprotocol = \"udp\"\n\n\
         [capacity]\nevery_mins = 60\n\n\
         [profile]\nevery_mins = 1\nname = \"monitoring\"\nduration_secs = 2\nshare = 0.1\n\n\
         [[peer]]\nname = \"self\"\nhost = \"127.0.0.1\"\nport = {port}\nlink_rate = \"10G\"\n\n\
         [[peer]]\nname = \"gone\"\nhost = \"127.0.0.1\"\nport = {gone}\nlink_rate = \"10G\"\n",
        store = dir.file("kit.db"),
        gone = free_port(),
    );
    let path = dir.file("kit.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Every value of each template variable, as the variables' All gives it.
const ALL: [(&str, &str); 4] = [
    ("job", ".*"),
    ("instance", ".*"),
    ("peer", ".*"),
    ("family", ".*"),
];

/// `expr` with the dashboard's template variables (`$name`, `${name}`) set to `values` and
/// Grafana's rate window to a minute (at a 1 s scrape).
fn substitute(expr: &str, values: &[(&str, &str)]) -> String {
    let mut e = expr.replace("$__rate_interval", "1m");
    for (var, value) in values {
        e = e
            .replace(&format!("${{{var}}}"), value)
            .replace(&format!("${var}"), value);
    }
    assert!(
        !e.contains('$'),
        "a variable this test does not know: {expr}"
    );
    e
}

/// Every panel's queries in the dashboard, rows' panels too: (panel title, PromQL).
fn panel_queries(dash: &Value) -> Vec<(String, String)> {
    fn walk(panels: &Value, out: &mut Vec<(String, String)>) {
        for p in panels.as_array().into_iter().flatten() {
            let title = p["title"].as_str().unwrap_or("?").to_string();
            for t in p["targets"].as_array().into_iter().flatten() {
                let expr = t["expr"]
                    .as_str()
                    .unwrap_or_else(|| panic!("{title}: no expr"));
                out.push((title.clone(), expr.to_string()));
            }
            walk(&p["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dash["panels"], &mut out);
    out
}

/// The template variables' `label_values(SELECTOR, LABEL)` queries: (name, selector, label).
fn variable_queries(dash: &Value) -> Vec<(String, String, String)> {
    let list = dash["templating"]["list"].as_array().unwrap();
    list.iter()
        .filter(|v| v["type"] == "query")
        .map(|v| {
            let name = v["name"].as_str().unwrap().to_string();
            let def = v["definition"].as_str().unwrap();
            let inner = def
                .strip_prefix("label_values(")
                .and_then(|d| d.strip_suffix(')'))
                .unwrap_or_else(|| panic!("{name}: not label_values(): {def}"));
            let (selector, label) = inner.rsplit_once(',').unwrap();
            (name, selector.trim().to_string(), label.trim().to_string())
        })
        .collect()
}

/// Every rule's expression in the rule file: (alert or record name, PromQL).
fn rule_queries(path: &Path) -> Vec<(String, String)> {
    let doc: serde_yaml::Value = serde_yaml::from_str(&read(path)).unwrap();
    let mut out = Vec::new();
    for g in doc["groups"].as_sequence().unwrap() {
        for r in g["rules"].as_sequence().unwrap() {
            let name = r["alert"].as_str().or(r["record"].as_str()).unwrap();
            out.push((name.to_string(), r["expr"].as_str().unwrap().to_string()));
        }
    }
    out
}

/// The series `promql` returns now, or why it failed (an error status, no answer).
fn series(prom: &Prometheus, promql: &str) -> Result<usize, String> {
    let v = prom.query(promql).ok_or("no answer")?;
    if v["status"] != "success" {
        return Err(format!("{}: {}", v["errorType"], v["error"]));
    }
    Ok(v["data"]["result"].as_array().map_or(0, Vec::len))
}

/// Polls until every query of `queries` returns series, for up to `secs`; the names of those
/// that do not, with why, on time-out.
fn wait_for_series(prom: &Prometheus, queries: &[(String, String)], secs: u64) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let empty: Vec<String> = queries
            .iter()
            .filter_map(|(name, q)| match series(prom, q) {
                Ok(n) if n > 0 => None,
                Ok(_) => Some(format!("{name}: no series from {q}")),
                Err(e) => Some(format!("{name}: {e} in {q}")),
            })
            .collect();
        if empty.is_empty() || Instant::now() > deadline {
            return empty;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// Waits until Prometheus has evaluated every rule of the file and found it healthy.
fn wait_for_healthy_rules(prom: &Prometheus, rules: usize, procs: &[&Proc]) {
    let mut last = Value::Null;
    let healthy = |last: &mut Value| {
        let Some(v) = prom.get("/api/v1/rules") else {
            return false;
        };
        *last = v;
        let all: Vec<&Value> = last["data"]["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|g| g["rules"].as_array().into_iter().flatten())
            .collect();
        all.len() == rules && all.iter().all(|r| r["health"] == "ok")
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !healthy(&mut last) {
        if Instant::now() > deadline {
            let logs: Vec<String> = procs.iter().map(|p| p.stderr_so_far()).collect();
            panic!("rules not all healthy: {last:#}\n{}", logs.join("\n---\n"));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Each template variable's selector returns series with its label.
fn check_variables(prom: &Prometheus, dash: &Value) {
    for (name, selector, label) in variable_queries(dash) {
        let v = prom.query(&substitute(&selector, &ALL)).unwrap();
        let result = v["data"]["result"].as_array().cloned().unwrap_or_default();
        assert!(
            result.iter().any(|s| s["metric"][&label].is_string()),
            "variable {name}: no {label} in {v}"
        );
    }
}

#[test]
fn every_dashboard_and_rule_query_works_on_a_real_agents_series() {
    let _turn = crate::turns::take(module_path!());
    if !prometheus::available("prometheus") {
        return;
    }
    let started = Instant::now();
    let dir = TempDir::new("operator-kit");
    let (pa, pm) = (free_port(), free_port());
    let cfg = agent_config(&dir, pa);
    let agent = Proc::spawn(&[
        "agent",
        "--config",
        cfg.to_str().unwrap(),
        "--metrics",
        &format!("127.0.0.1:{pm}"),
    ]);
    let rules_file = deploy("prometheus/sonde-rules.yml");
    let prom = Prometheus::start(&dir, pm, &[&rules_file]);
    let first_latency = r#"sonde_tests_total{peer="self",test="latency",result="ok"}"#;
    wait_for(
        "Prometheus to hold the agent's first latency run",
        30,
        || series(&prom, first_latency).is_ok_and(|n| n > 0),
        &[&agent, &prom.proc],
    );
    // A reload of the unchanged file (`systemctl reload`): the reload series appear.
    agent.signal(libc::SIGHUP);

    let dash: Value = serde_json::from_str(&read(&deploy("grafana/sonde.json"))).unwrap();
    let panels = panel_queries(&dash);
    assert!(panels.len() >= 20, "{} queries", panels.len());
    let queries: Vec<(String, String)> = panels
        .iter()
        .map(|(t, e)| (t.clone(), substitute(e, &ALL)))
        .collect();
    // Every kind runs within the agent's first 10 s (its schedule's first spread), one after
    // another: throughput, capacity and profile runs each take a few seconds.
    let empty = wait_for_series(&prom, &queries, 60);
    assert!(
        empty.is_empty(),
        "dashboard queries without series:\n{}\nagent's log:\n{}",
        empty.join("\n"),
        agent.stderr_so_far()
    );
    // The variables as one picks them, which a misspelt label name would not match (as it
    // matches `.*`): job sonde, this agent, both its peers (Grafana's multi-value form), IPv4.
    let instance = format!("127.0.0.1:{pm}");
    let picked = [
        ("job", "sonde"),
        ("instance", instance.as_str()),
        ("peer", "(self|gone)"),
        ("family", "ipv4"),
    ];
    let picked_queries: Vec<(String, String)> = panels
        .iter()
        .map(|(t, e)| (t.clone(), substitute(e, &picked)))
        .collect();
    let empty = wait_for_series(&prom, &picked_queries, 5);
    assert!(empty.is_empty(), "with {picked:?}:\n{}", empty.join("\n"));
    check_variables(&prom, &dash);
    let rules = rule_queries(&rules_file);
    for (name, expr) in &rules {
        if let Err(e) = series(&prom, expr) {
            panic!("{name}: {e}\n{expr}");
        }
    }
    wait_for_healthy_rules(&prom, rules.len(), &[&agent, &prom.proc]);
    drop(prom);
    stop(agent);
    eprintln!(
        "{} dashboard queries and {} rules checked in {:.1?}",
        queries.len(),
        rules.len(),
        started.elapsed()
    );
}
