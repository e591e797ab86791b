//! The report's tables as plain text cells, shared by the Markdown and HTML renderers so the
//! two formats always show the same figures with the same formatting.

use crate::fmt::{self, opt};
use crate::latency::Latency;
use crate::link::BackendLine;
use crate::model::{Group, GroupKind, Report, Row, TestView};
use crate::result::ResultDoc;
use crate::table::{Table, DASH};
use crate::view::Throughput;

fn rate_pps(bps: Option<f64>, pps: Option<f64>) -> String {
    match (bps, pps) {
        (Some(b), Some(p)) => format!("{} ({})", fmt::rate(b), fmt::pkt_rate(p)),
        (Some(b), None) => fmt::rate(b),
        _ => DASH.into(),
    }
}

fn cpu(v: Option<f64>) -> String {
    opt(v, fmt::percent)
}

/// The header's key/value lines.
pub fn meta(r: &Report) -> Vec<(String, String)> {
    let m = &r.meta;
    let mut out = vec![("Source".to_owned(), m.source.clone())];
    let join = |v: &[String]| {
        if v.is_empty() {
            DASH.to_owned()
        } else {
            v.join(", ")
        }
    };
    if let Some(s) = &m.scenario {
        out.push(("Scenario".into(), s.clone()));
    }
    if let Some(d) = &m.description {
        out.push(("Description".into(), d.clone()));
    }
    if let Some(id) = m.run_id {
        let mut run = id.to_string();
        if !m.other_runs.is_empty() {
            let others: Vec<String> = m.other_runs.iter().map(i64::to_string).collect();
            run.push_str(&format!(
                " (the database also holds run {}: sonde report --run ID)",
                others.join(", ")
            ));
        }
        out.push(("Run".into(), run));
    }
    if let Some(s) = &m.status {
        out.push(("Status".into(), s.clone()));
    }
    if let Some(v) = &m.lab_version {
        out.push(("sonde version".into(), v.clone()));
    }
    let tool = if m.tools.len() > 1 { "Tools" } else { "Tool" };
    out.push((tool.into(), join(&m.tools)));
    out.push(("Hosts".into(), join(&m.hosts)));
    if !m.links.is_empty() {
        out.push(("Links".into(), m.links.join("; ")));
    }
    if !m.kernels.is_empty() {
        out.push(("Kernel".into(), join(&m.kernels)));
    }
    if let Some(seed) = m.seed {
        out.push(("Seed".into(), seed.to_string()));
    }
    out.push(("Date".into(), opt(m.started_unix, fmt::date)));
    let dur = m.started_unix.zip(m.ended_unix).map(|(s, e)| e - s);
    out.push(("Duration".into(), opt(dur, fmt::duration)));
    out.push(("Inputs".into(), join(&m.inputs)));
    out
}

/// Which backend applied each impairment.
pub fn backends(lines: &[BackendLine]) -> Table {
    let mut t = Table::new(&[
        "Settings",
        "Link",
        "Direction",
        "Backend",
        "Impairments",
        "Why",
        "Repeatable",
    ]);
    for b in lines {
        t.rows.push(vec![
            b.settings.clone(),
            b.link.clone(),
            b.direction.clone(),
            b.backend.clone(),
            b.impairments.clone(),
            b.reason.clone(),
            match b.repeatable {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => DASH.into(),
            },
        ]);
    }
    t
}

/// The link settings of the run.
pub fn settings(r: &Report) -> Table {
    let mut t = Table::new(&["Settings", "Rate", "Delay", "Loss", "Impairments"]);
    for s in &r.settings {
        t.rows.push(vec![
            s.name.clone(),
            opt(s.rate_bps, fmt::rate),
            opt(s.delay_ms, fmt::ms),
            opt(s.loss_percent, fmt::percent),
            if s.description.is_empty() {
                "none".into()
            } else {
                s.description.clone()
            },
        ]);
    }
    t
}

fn ok_cell(row: &Row) -> String {
    format!("{}/{}", row.ok, row.tests)
}

fn link_cell(row: &Row) -> String {
    row.link.as_ref().map_or_else(|| DASH.into(), |l| l.short())
}

/// One group's summary table: a row per link setting.
pub fn summary(g: &Group) -> Table {
    let mut t = match g.kind {
        GroupKind::Throughput => Table::new(&[
            "Settings",
            "Link",
            "Parameters",
            "Goodput",
            "Link send",
            "Link receive",
            "RTT",
            "Jitter",
            "Delivered/sent",
            "Retransmits",
            "Feedback",
            "CPU client",
            "CPU server",
            "OK",
        ]),
        GroupKind::Latency => Table::new(&[
            "Settings",
            "Link",
            "Parameters",
            "RTT median",
            "RTT p99",
            "Jitter",
            "Delivered/sent",
            "CPU client",
            "CPU server",
            "OK",
        ]),
        GroupKind::Other => Table::new(&["Settings", "Link", "Parameters", "OK"]),
    };
    for row in &g.rows {
        let params = if row.params.is_empty() {
            DASH.into()
        } else {
            row.params.clone()
        };
        let mut cells: Vec<String> = vec![row.settings.clone(), link_cell(row), params];
        match g.kind {
            GroupKind::Throughput => cells.extend([
                opt(row.goodput_bps, fmt::rate),
                rate_pps(row.link_send_bps, row.link_send_pps),
                rate_pps(row.link_recv_bps, row.link_recv_pps),
                opt(row.latency_ms, fmt::ms),
                opt(row.jitter_ms, fmt::ms),
                opt(row.delivered_percent, fmt::percent),
                opt(row.retransmits, |v| {
                    fmt::num(v, if v.fract() == 0.0 { 0 } else { 1 })
                }),
                row.feedback.clone().unwrap_or_else(|| DASH.into()),
                cpu(row.cpu_client),
                cpu(row.cpu_server),
            ]),
            GroupKind::Latency => cells.extend([
                opt(row.latency_ms, fmt::ms),
                opt(row.rtt_p99_ms, fmt::ms),
                opt(row.jitter_ms, fmt::ms),
                opt(row.delivered_percent, fmt::percent),
                cpu(row.cpu_client),
                cpu(row.cpu_server),
            ]),
            GroupKind::Other => {}
        }
        cells.push(ok_cell(row));
        t.rows.push(cells);
    }
    t.drop_empty_columns(1)
}

/// A test's overview lines.
pub fn test_overview(t: &TestView) -> Vec<(String, String)> {
    let mut out = vec![(
        "Status".to_owned(),
        if t.ok { "ok".into() } else { "failed".into() },
    )];
    if let Some(r) = &t.failure_reason {
        out.push(("Failure".into(), r.clone()));
    }
    if let Some(p) = &t.result_problem {
        out.push(("Result".into(), format!("not shown: {p}")));
    }
    out.push(("Started".into(), opt(t.started_unix, fmt::date)));
    out.push(("Duration".into(), opt(t.duration(), fmt::duration)));
    if let Some(l) = &t.link {
        out.push(("Link".into(), l.short()));
        if !l.description.is_empty() {
            out.push(("Impairments".into(), l.description.clone()));
        }
    }
    for b in &t.backends {
        out.push((
            "Backend".into(),
            format!("{} {}: {} ({})", b.link, b.direction, b.backend, b.reason),
        ));
    }
    if let Some(tool) = &t.tool {
        out.push(("Tool".into(), tool.clone()));
    }
    if let Some(p) = &t.result_path {
        out.push(("Result file".into(), p.clone()));
    }
    out
}

/// A test's full parameters.
pub fn parameters(t: &TestView) -> Table {
    let mut tb = Table::new(&["Parameter", "Value"]);
    tb.rows = t
        .parameters
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    tb
}

/// Both ends' summaries: one row per direction and end, then CPU.
pub fn ends(t: &TestView) -> Table {
    let tb = match &t.result {
        Some(ResultDoc::Latency(l)) => latency_ends(l),
        Some(ResultDoc::Profile(p)) => profile_streams(p),
        Some(ResultDoc::Throughput(th)) => throughput_ends(th),
        Some(
            ResultDoc::Stress(_)
            | ResultDoc::Sweep(_)
            | ResultDoc::Capacity(_)
            | ResultDoc::CompareIp(_)
            | ResultDoc::Rrul(_)
            | ResultDoc::Btc(_)
            | ResultDoc::Serial(_),
        )
        | None => throughput_table(),
    };
    tb.drop_empty_columns(2)
}

/// The header of a throughput test's ends, a row per direction and end.
fn throughput_table() -> Table {
    Table::new(&[
        "Direction",
        "End",
        "Bytes",
        "Rate",
        "Retransmits",
        "Lost",
        "Jitter",
        "Out of order",
        "Duplicates",
    ])
}

/// A throughput test: per direction, the sender's row then the receiver's.
fn throughput_ends(th: &Throughput) -> Table {
    let mut tb = throughput_table();
    for d in &th.directions {
        let (snd, rcv) = if d.client_sends {
            ("client (sender)", "server (receiver)")
        } else {
            ("server (sender)", "client (receiver)")
        };
        tb.rows.push(vec![
            d.label().into(),
            snd.into(),
            opt(d.sent_bytes.map(|b| b as f64), |b| fmt::bytes(b as u64)),
            opt(d.sent_bps, fmt::rate),
            opt(d.retransmits.map(|r| r as f64), |r| fmt::num(r, 0)),
            DASH.into(),
            DASH.into(),
            DASH.into(),
            DASH.into(),
        ]);
        let u = d.udp.as_ref();
        tb.rows.push(vec![
            d.label().into(),
            rcv.into(),
            opt(d.received_bytes.map(|b| b as f64), |b| fmt::bytes(b as u64)),
            opt(d.received_bps, fmt::rate),
            DASH.into(),
            u.map_or(DASH.into(), |u| {
                format!(
                    "{}/{} ({})",
                    u.lost,
                    u.packets,
                    fmt::percent(u.lost_percent)
                )
            }),
            u.map_or(DASH.into(), |u| fmt::ms(u.jitter_ms)),
            u.map_or(DASH.into(), |u| u.out_of_order.to_string()),
            u.map_or(DASH.into(), |u| u.duplicates.to_string()),
        ]);
    }
    tb
}

/// A latency test: its one row of probes, loss and round-trip times.
fn latency_ends(l: &Latency) -> Table {
    let mut tb = Table::new(&["Probes sent", "Answered", "Loss", "RTT min", "RTT median"]);
    tb.header
        .extend(["RTT mean", "RTT p99", "RTT max", "Jitter"].map(String::from));
    let r = l.rtt;
    tb.rows.push(vec![
        opt(l.sent.map(|v| v as f64), |v| fmt::num(v, 0)),
        opt(l.received.map(|v| v as f64), |v| fmt::num(v, 0)),
        opt(l.loss_percent, fmt::percent),
        opt(r.map(|r| r.min), fmt::ms),
        opt(r.map(|r| r.median), fmt::ms),
        opt(r.map(|r| r.mean), fmt::ms),
        opt(r.map(|r| r.p99), fmt::ms),
        opt(r.map(|r| r.max), fmt::ms),
        opt(l.jitter_ms, fmt::ms),
    ]);
    tb
}

/// A profile run: one row per stream with its loss, lateness, order, whole bursts and
/// one-way delay (the basis column says whether it was measured or estimated).
fn profile_streams(p: &crate::profile::ProfileRun) -> Table {
    let mut tb = Table::new(&[
        "Stream",
        "Direction",
        "Plan",
        "Sent",
        "Lost",
        "Late",
        "Out of order",
        "Duplicates",
        "Bursts whole",
        "Delay p50",
        "Delay p99",
        "Delay max",
        "Delay basis",
    ]);
    let count = |v: Option<u64>| opt(v.map(|v| v as f64), |v| fmt::num(v, 0));
    for s in &p.streams {
        let lost = match (s.lost, s.sent) {
            (Some(l), Some(n)) if n > 0 => {
                format!("{l} ({})", fmt::percent(l as f64 * 100.0 / n as f64))
            }
            (l, _) => count(l),
        };
        let whole = match (s.bursts_complete, s.bursts_sent) {
            (Some(c), Some(n)) => format!("{c}/{n}"),
            _ => DASH.into(),
        };
        tb.rows.push(vec![
            s.name.clone(),
            s.direction.clone(),
            s.plan(),
            count(s.sent),
            lost,
            count(s.late),
            count(s.out_of_order),
            count(s.duplicates),
            whole,
            opt(s.delay_p50_ms, fmt::ms),
            opt(s.delay_p99_ms, fmt::ms),
            opt(s.delay_max_ms, fmt::ms),
            match s.delay_basis.as_deref() {
                Some("synced") => "measured (clocks synced)".into(),
                Some(_) => "estimate (above fastest)".into(),
                None => DASH.into(),
            },
        ]);
    }
    tb
}

/// CPU of both ends.
pub fn cpu_table(t: &TestView) -> Table {
    let mut tb = Table::new(&["End", "Total", "User", "System"]);
    for (end, c) in [("client", t.cpu_client), ("server", t.cpu_server)] {
        if let Some(c) = c {
            tb.rows.push(vec![
                end.into(),
                fmt::percent(c.total),
                fmt::percent(c.user),
                fmt::percent(c.system),
            ]);
        }
    }
    tb
}

/// Interface counters of both ends over the test.
pub fn traffic(t: &TestView) -> Table {
    let mut tb = Table::new(&[
        "End",
        "Interface",
        "Sent",
        "Received",
        "Send rate",
        "Receive rate",
    ]);
    for x in &t.traffic {
        tb.rows.push(vec![
            x.endpoint.clone(),
            x.interface.clone(),
            format!("{} pkt, {}", x.tx_packets, fmt::bytes(x.tx_bytes)),
            format!("{} pkt, {}", x.rx_packets, fmt::bytes(x.rx_bytes)),
            rate_pps(x.tx_bps, x.tx_pps),
            rate_pps(x.rx_bps, x.rx_pps),
        ]);
    }
    tb
}

/// The failed tests with their parameters and reasons.
pub fn failures(r: &Report) -> Table {
    let mut tb = Table::new(&["Test", "Parameters", "Reason"]);
    for t in r.tests.iter().filter(|t| !t.ok) {
        let params: Vec<String> = t
            .parameters
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        tb.rows.push(vec![
            t.id.clone(),
            if params.is_empty() {
                DASH.into()
            } else {
                params.join("; ")
            },
            t.failure_reason
                .clone()
                .unwrap_or_else(|| "no reason recorded".into()),
        ]);
    }
    tb
}
