//! Inputs → [`Report`]: reading every result, grouping tests by kind, averaging repetitions.
//!
//! Grouping: in a lab run a group is a scenario test (`tcp-cubic`), its rows the link settings
//! in scenario order; a row averages the figures of its successful repetitions (the per-test
//! sections show each one). Result documents have no scenario, so a group is what the document
//! says it measured (protocol, congestion control, target rate, direction) and each document is
//! its own row. CPU comes from the lab's own measurement when recorded, else from the document.

use std::collections::BTreeSet;

use serde_json::Value;
use sonde_scenario::Scenario;
use sonde_store::{InterfaceTraffic, LoadedRun, RunId, TestRecord, TestStatus};

use crate::input::{Document, Inputs};
use crate::json;
use crate::link::{backend_lines, BackendLine, LinkView};
use crate::model::*;
use crate::result::{self, ResultDoc};
use crate::stages::StagesView;
use crate::view::{CpuView, FeedbackView};

/// Builds the report of `inputs`.
pub fn report(inputs: &Inputs) -> Report {
    match inputs {
        Inputs::Run {
            path,
            run,
            all_runs,
        } => from_run(path, run, all_runs),
        Inputs::Documents(docs) => from_documents(docs),
    }
}

/// `key = value` pairs of a JSON value, nested keys joined with dots, sorted by key.
pub fn flatten(v: &Value) -> Vec<(String, String)> {
    fn walk(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, x, out);
                }
            }
            Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
                let parts: Vec<String> = a.iter().map(scalar).collect();
                out.push((prefix.to_owned(), parts.join(" ")));
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(&format!("{prefix}[{i}]"), x, out);
                }
            }
            other => out.push((prefix.to_owned(), scalar(other))),
        }
    }
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    let mut out = Vec::new();
    walk("", v, &mut out);
    out.sort();
    out
}

fn cpu_of(c: &sonde_store::Cpu) -> CpuView {
    CpuView {
        total: c.total,
        user: c.user,
        system: c.system,
    }
}

fn traffic_view(endpoint: &str, t: &InterfaceTraffic, secs: Option<f64>) -> TrafficView {
    let d = t.delta();
    let per_sec = |v: u64, k: f64| secs.filter(|s| *s > 0.0).map(|s| v as f64 * k / s);
    TrafficView {
        endpoint: endpoint.to_owned(),
        interface: t.interface.clone(),
        tx_packets: d.tx_packets,
        tx_bytes: d.tx_bytes,
        rx_packets: d.rx_packets,
        rx_bytes: d.rx_bytes,
        tx_bps: per_sec(d.tx_bytes, 8.0),
        tx_pps: per_sec(d.tx_packets, 1.0),
        rx_bps: per_sec(d.rx_bytes, 8.0),
        rx_pps: per_sec(d.rx_packets, 1.0),
    }
}

fn from_run(path: &str, loaded: &LoadedRun, all_runs: &[RunId]) -> Report {
    let run = &loaded.run;
    let scenario = Scenario::from_toml(&run.scenario_toml).ok();
    let settings: Vec<LinkView> = loaded
        .settings
        .iter()
        .map(|s| LinkView::resolve(&s.name, &s.settings, scenario.as_ref()))
        .collect();
    let backends: Vec<BackendLine> = loaded
        .settings
        .iter()
        .flat_map(|s| {
            s.backend_plan
                .as_ref()
                .map(|p| backend_lines(&s.name, p))
                .unwrap_or_default()
        })
        .collect();
    let tests: Vec<TestView> = loaded
        .tests
        .iter()
        .map(|t| run_test(t, &settings, &backends))
        .collect();
    let order: Vec<String> = settings.iter().map(|s| s.name.clone()).collect();
    let groups = groups(&tests, &order, true);
    let tools = tests
        .iter()
        .filter_map(|t| t.tool.clone())
        .collect::<BTreeSet<_>>();
    Report {
        title: format!("sonde lab report: {}", run.scenario_name),
        meta: Meta {
            source: "lab run".into(),
            inputs: vec![path.to_owned()],
            scenario: Some(run.scenario_name.clone()),
            description: scenario
                .as_ref()
                .map(|s| s.description.clone())
                .filter(|d| !d.is_empty()),
            run_id: Some(run.id.0),
            other_runs: all_runs
                .iter()
                .filter(|r| **r != run.id)
                .map(|r| r.0)
                .collect(),
            status: serde_json::to_value(run.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned)),
            lab_version: Some(run.sonde_version.clone()),
            tools: tools.into_iter().collect(),
            hosts: vec![run.hostname.clone()],
            links: Vec::new(),
            kernels: vec![run.kernel.clone()],
            seed: Some(run.seed),
            started_unix: Some(run.started_unix),
            ended_unix: run.ended_unix,
            backends,
        },
        settings,
        groups,
        totals: totals(&tests),
        tests,
    }
}

/// One test of a lab run: its stored result read, its link settings and backends attached,
/// CPU from the lab's measurement or else the result's.
fn run_test(t: &TestRecord, settings: &[LinkView], backends: &[BackendLine]) -> TestView {
    let (result, result_problem) = stored_result(t.result_json.as_deref());
    let (doc_client, doc_server) = match &result {
        Some(ResultDoc::Throughput(th)) => (th.cpu_client, th.cpu_server),
        _ => (None, None),
    };
    let traffic = run_traffic(t, result.as_ref());
    let link = settings.iter().find(|s| s.name == t.settings).cloned();
    TestView {
        id: t.matrix_id.clone(),
        settings: t.settings.clone(),
        group: t.test_name.clone(),
        repetition: Some(t.repetition),
        ok: t.status == TestStatus::Ok,
        failure_reason: t.failure_reason.clone(),
        started_unix: Some(t.started_unix),
        ended_unix: Some(t.ended_unix),
        parameters: flatten(&t.parameters),
        result_path: t.result_path.clone(),
        tool: result.as_ref().and_then(tool_of),
        link: Some(link.unwrap_or_else(|| LinkView::unknown(&t.settings))),
        backends: backends
            .iter()
            .filter(|b| b.settings == t.settings)
            .cloned()
            .collect(),
        result,
        result_problem,
        cpu_client: t.client.cpu.as_ref().map(cpu_of).or(doc_client),
        cpu_server: t.server.cpu.as_ref().map(cpu_of).or(doc_server),
        traffic,
        stage_stats: t.stage_stats.as_ref().map(StagesView::read),
    }
}

/// A stored result document read, or why it could not be (none when nothing was stored).
fn stored_result(text: Option<&str>) -> (Option<ResultDoc>, Option<String>) {
    match text {
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(v) => match result::read(&v) {
                Ok(r) => (Some(r), None),
                Err(why) => (None, Some(why)),
            },
            Err(e) => (None, Some(format!("result is not valid JSON: {e}"))),
        },
        None => (None, None),
    }
}

/// The interface counters of a test's client and server ends, as rates.
fn run_traffic(t: &TestRecord, result: Option<&ResultDoc>) -> Vec<TrafficView> {
    // The counters are read just before and after the test process, which also spends
    // time connecting and draining; rates are over the time traffic flowed (the
    // result's measured duration) when the result says, the whole window otherwise.
    let traffic_secs = match result {
        Some(ResultDoc::Throughput(th)) => th.directions.iter().find_map(|d| d.seconds),
        _ => None,
    };
    let secs = traffic_secs
        .filter(|s| *s > 0.0)
        .or(Some(t.ended_unix - t.started_unix));
    let mut traffic = Vec::new();
    for (name, end) in [("client", &t.client), ("server", &t.server)] {
        if let Some(tr) = &end.traffic {
            traffic.push(traffic_view(name, tr, secs));
        }
    }
    traffic
}

fn tool_of(r: &ResultDoc) -> Option<String> {
    match r {
        ResultDoc::Throughput(t) => t.tool.clone(),
        ResultDoc::Latency(l) => l.tool.clone(),
        ResultDoc::Profile(_)
        | ResultDoc::Stress(_)
        | ResultDoc::Sweep(_)
        | ResultDoc::Capacity(_)
        | ResultDoc::CompareIp(_)
        | ResultDoc::Rrul(_)
        | ResultDoc::Btc(_)
        | ResultDoc::Serial(_) => None,
    }
}

/// A documents report's title: the tools that wrote them (`"iperf3 report"`).
fn documents_title(tools: &BTreeSet<String>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for t in tools {
        let name = t.split_whitespace().next().unwrap_or("sonde");
        if !names.contains(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        names.push("sonde");
    }
    format!("{} report", names.join(" + "))
}

/// A group name for a document without a scenario: its protocol (the parameters column tells
/// the documents of one protocol apart).
fn doc_protocol(r: &ResultDoc) -> String {
    match r {
        ResultDoc::Throughput(t) => t.protocol.clone(),
        ResultDoc::Latency(l) => format!("latency, {}", l.mode),
        ResultDoc::Profile(p) => format!("profile, {}", p.profile),
        other => crate::kinds::label(other).unwrap_or_default(),
    }
}

/// A title for a group: what its first result measured.
fn doc_group(r: &ResultDoc) -> String {
    match r {
        ResultDoc::Throughput(t) => {
            let p = t.params_label();
            if p.is_empty() {
                t.protocol.clone()
            } else {
                format!("{}, {p}", t.protocol)
            }
        }
        ResultDoc::Latency(l) => format!("latency, {}", l.mode),
        ResultDoc::Profile(p) => format!("profile, {}", p.profile),
        other => crate::kinds::label(other).unwrap_or_default(),
    }
}

fn from_documents(docs: &[Document]) -> Report {
    let mut tools = BTreeSet::new();
    let mut hosts = BTreeSet::new();
    let mut links = BTreeSet::new();
    let mut tests = Vec::new();
    for d in docs {
        // Inputs::parse_document checked that this reads.
        let result = result::read(&d.value).ok();
        if let Some(ResultDoc::Throughput(t)) = &result {
            hosts.extend(t.system_info.clone());
            links.extend(crate::throughput::link_lines(&d.value));
        }
        let o = doc_outcome(result.as_ref());
        let tool = result.as_ref().and_then(tool_of);
        tools.extend(tool.clone());
        tests.push(TestView {
            id: d.name.clone(),
            settings: d.name.clone(),
            group: result.as_ref().map_or_else(|| "other".into(), doc_protocol),
            repetition: None,
            ok: o.ok,
            failure_reason: o
                .reason
                .or_else(|| (!o.ok).then(|| "the test did not complete".into())),
            started_unix: o.started,
            ended_unix: o.started.zip(o.secs).map(|(s, d)| s + d),
            parameters: doc_parameters(&d.value),
            result_path: Some(d.name.clone()),
            tool,
            link: None,
            backends: Vec::new(),
            result,
            result_problem: None,
            cpu_client: o.cpu.0,
            cpu_server: o.cpu.1,
            traffic: Vec::new(),
            stage_stats: None,
        });
    }
    let order: Vec<String> = tests.iter().map(|t| t.settings.clone()).collect();
    let groups = groups(&tests, &order, false);
    let started = tests.iter().filter_map(|t| t.started_unix).reduce(f64::min);
    let ended = tests.iter().filter_map(|t| t.ended_unix).reduce(f64::max);
    Report {
        title: documents_title(&tools),
        meta: Meta {
            source: "result documents".into(),
            inputs: docs.iter().map(|d| d.name.clone()).collect(),
            scenario: None,
            description: None,
            run_id: None,
            other_runs: Vec::new(),
            status: None,
            lab_version: None,
            tools: tools.into_iter().collect(),
            hosts: hosts.into_iter().collect(),
            links: links.into_iter().collect(),
            kernels: Vec::new(),
            seed: None,
            started_unix: started,
            ended_unix: ended,
            backends: Vec::new(),
        },
        settings: Vec::new(),
        groups,
        totals: totals(&tests),
        tests,
    }
}

/// What a result document says of its own run.
struct DocOutcome {
    started: Option<f64>,
    secs: Option<f64>,
    ok: bool,
    reason: Option<String>,
    /// Client and server CPU.
    cpu: (Option<CpuView>, Option<CpuView>),
}

/// When a document's test started, how long it ran, whether it succeeded (and why not) and
/// its CPU, as far as its kind records them.
fn doc_outcome(result: Option<&ResultDoc>) -> DocOutcome {
    let (started, secs, ok, reason, cpu) = match result {
        Some(ResultDoc::Throughput(t)) => {
            let secs = t.directions.iter().find_map(|d| d.seconds);
            let failed = t.partial || t.error.is_some();
            (
                t.timestamp_unix,
                secs.or(t.duration_secs),
                !failed,
                t.error.clone(),
                (t.cpu_client, t.cpu_server),
            )
        }
        Some(ResultDoc::Latency(l)) => {
            let failed = l.partial || l.error.is_some();
            (
                l.timestamp_unix,
                None,
                !failed,
                l.error.clone(),
                (None, None),
            )
        }
        Some(ResultDoc::Profile(p)) => {
            let why = p.error.clone().or_else(|| p.ended_early.clone());
            (None, p.ran_s, why.is_none(), why, (None, None))
        }
        Some(other) => {
            let (secs, why) = crate::kinds::outcome(other);
            (None, secs, why.is_none(), why, (None, None))
        }
        None => (None, None, false, None, (None, None)),
    };
    DocOutcome {
        started,
        secs,
        ok,
        reason,
        cpu,
    }
}

/// A document's parameters (its `start` section, timestamps and connections left out).
fn doc_parameters(v: &Value) -> Vec<(String, String)> {
    json::at(v, &["start", "test_start"])
        .or_else(|| v.get("start"))
        .or_else(|| crate::kinds::parameters(v))
        .map(|v| {
            let mut p = flatten(v);
            p.retain(|(k, _)| !k.starts_with("timestamp") && k != "connected");
            p
        })
        .unwrap_or_default()
}

fn totals(tests: &[TestView]) -> Totals {
    let succeeded = tests.iter().filter(|t| t.ok).count();
    Totals {
        total: tests.len(),
        succeeded,
        failed: tests.len() - succeeded,
    }
}

fn mean(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let xs: Vec<f64> = v.flatten().filter(|x| x.is_finite()).collect();
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Groups in order of first appearance; rows in `order` (settings order), then any other.
/// With `describe`, a group's title says what its first result measured.
fn groups(tests: &[TestView], order: &[String], describe: bool) -> Vec<Group> {
    let mut names: Vec<&str> = Vec::new();
    for t in tests {
        if !names.contains(&t.group.as_str()) {
            names.push(&t.group);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let members: Vec<&TestView> = tests.iter().filter(|t| t.group == name).collect();
            let first = members.iter().find_map(|t| t.result.as_ref());
            let kind = match first {
                Some(ResultDoc::Throughput(_)) => GroupKind::Throughput,
                Some(ResultDoc::Latency(_)) => GroupKind::Latency,
                _ => GroupKind::Other,
            };
            let title = first
                .filter(|_| describe)
                .map_or_else(|| name.to_owned(), doc_group);
            let mut settings: Vec<&str> = Vec::new();
            for s in order {
                if members.iter().any(|t| &t.settings == s) && !settings.contains(&s.as_str()) {
                    settings.push(s);
                }
            }
            for t in &members {
                if !settings.contains(&t.settings.as_str()) {
                    settings.push(&t.settings);
                }
            }
            let rows = settings
                .into_iter()
                .map(|s| {
                    let of: Vec<&TestView> = members
                        .iter()
                        .copied()
                        .filter(|t| t.settings == s)
                        .collect();
                    row(s, &of)
                })
                .collect();
            Group {
                name: name.to_owned(),
                title,
                kind,
                rows,
            }
        })
        .collect()
}

fn th<'a>(t: &&'a TestView) -> Option<&'a crate::view::Throughput> {
    match &t.result {
        Some(ResultDoc::Throughput(x)) => Some(x),
        _ => None,
    }
}

fn lat<'a>(t: &&'a TestView) -> Option<&'a crate::latency::Latency> {
    match &t.result {
        Some(ResultDoc::Latency(x)) => Some(x),
        _ => None,
    }
}

/// The feedback cell of a row: the first test's mode, with the mean counts where the tests
/// have them ("unrestricted: 4843 messages, 132 repair rounds").
fn feedback_cell<'a>(views: impl Iterator<Item = &'a FeedbackView>) -> Option<String> {
    let views: Vec<&FeedbackView> = views.collect();
    let mode = &views.first()?.mode;
    let messages = mean(views.iter().map(|v| v.messages.map(|m| m as f64)));
    let rounds = mean(views.iter().map(|v| v.rounds.map(|r| r as f64)));
    Some(match (messages, rounds) {
        (Some(m), Some(r)) => format!("{mode}: {m:.0} messages, {r:.0} repair rounds"),
        (Some(m), None) => format!("{mode}: {m:.0} messages"),
        (None, Some(r)) => format!("{mode}: {r:.0} repair rounds"),
        (None, None) => mode.clone(),
    })
}

fn row(settings: &str, tests: &[&TestView]) -> Row {
    let ok: Vec<&TestView> = tests.iter().copied().filter(|t| t.ok).collect();
    let params = tests
        .iter()
        .find_map(|t| th(t).map(|x| x.params_label()))
        .or_else(|| {
            tests.iter().find_map(|t| {
                lat(t).map(|l| {
                    let mut s = l.mode.clone();
                    if let Some(n) = l.size {
                        s.push_str(&format!(", {n} B"));
                    }
                    s
                })
            })
        })
        .or_else(|| {
            tests.iter().find_map(|t| match &t.result {
                Some(ResultDoc::Profile(p)) => Some(format!("profile {}", p.profile)),
                Some(other) => crate::kinds::label(other),
                None => None,
            })
        })
        .unwrap_or_default();
    let rates: Vec<_> = ok.iter().map(|t| t.link_rates()).collect();
    Row {
        settings: settings.to_owned(),
        link: tests.first().and_then(|t| t.link.clone()),
        params,
        tests: tests.len(),
        ok: ok.len(),
        goodput_bps: mean(ok.iter().map(|t| th(t).and_then(|x| x.goodput_bps()))),
        link_send_bps: mean(rates.iter().map(|r| r.0.map(|x| x.0))),
        link_send_pps: mean(rates.iter().map(|r| r.0.map(|x| x.1))),
        link_recv_bps: mean(rates.iter().map(|r| r.1.map(|x| x.0))),
        link_recv_pps: mean(rates.iter().map(|r| r.1.map(|x| x.1))),
        latency_ms: mean(ok.iter().map(|t| {
            th(t)
                .and_then(|x| x.tcp_rtt_ms)
                .or_else(|| lat(t).and_then(|l| l.rtt.map(|r| r.median)))
        })),
        jitter_ms: mean(ok.iter().map(|t| {
            th(t)
                .and_then(|x| x.jitter_ms())
                .or_else(|| lat(t).and_then(|l| l.jitter_ms))
        })),
        delivered_percent: mean(ok.iter().map(|t| {
            th(t).and_then(|x| x.delivered_percent()).or_else(|| {
                lat(t).and_then(|l| {
                    let (s, r) = (l.sent?, l.received?);
                    (s > 0).then(|| 100.0 * r as f64 / s as f64)
                })
            })
        })),
        retransmits: mean(
            ok.iter()
                .map(|t| th(t).and_then(|x| x.retransmits()).map(|r| r as f64)),
        ),
        feedback: feedback_cell(ok.iter().filter_map(|t| th(t)?.feedback.as_ref())),
        cpu_client: mean(ok.iter().map(|t| t.cpu_client.map(|c| c.total))),
        cpu_server: mean(ok.iter().map(|t| t.cpu_server.map(|c| c.total))),
        rtt_p99_ms: mean(ok.iter().map(|t| lat(t).and_then(|l| l.rtt.map(|r| r.p99)))),
    }
}
