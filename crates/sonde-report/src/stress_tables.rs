//! The tables of a stress document: a run's summary per connection and overall, a storm's
//! and an overload's figures, and the rows a ramp and a load-step run's charts are drawn
//! from (so the Markdown report keeps them).
//!
//! A run of many connections lists the first [`MAX_ROWS`] and says so; the overall table
//! still counts every one, and any connection that did not close cleanly is listed too.

use crate::fmt::{self, opt};
use crate::stress::{StressKind, StressRun};
use crate::stress_end::RunEnd;
use crate::table::{count, Section, Table, DASH};
use sonde_stats::stress::overload::OverloadReport;
use sonde_stats::stress::storm::StormReport;

/// Most connections listed one per row.
pub const MAX_ROWS: usize = 64;

fn bytes(v: Option<u64>) -> String {
    v.map_or_else(|| DASH.into(), fmt::bytes)
}

fn fairness(v: Option<f64>) -> String {
    opt(v, |f| fmt::num(f, 3))
}

fn figures(rows: Vec<(&str, String)>) -> Table {
    let mut tb = Table::new(&["Figure", "Value"]);
    tb.rows = rows
        .into_iter()
        .filter(|(_, v)| v != DASH)
        .map(|(k, v)| vec![k.to_owned(), v])
        .collect();
    tb
}

fn per_connection(e: &RunEnd) -> Table {
    let mut tb = Table::new(&[
        "Connection",
        "Sent",
        "Received",
        "Send rate",
        "Receive rate",
        "Zero samples",
        "Close",
        "Error",
    ]);
    let listed = e
        .connections
        .iter()
        .enumerate()
        .filter(|(i, c)| *i < MAX_ROWS || c.close.as_deref() != Some("clean"))
        .take(2 * MAX_ROWS);
    for (_, c) in listed {
        tb.rows.push(vec![
            format!("#{}", c.id),
            bytes(c.sent_bytes),
            bytes(c.received_bytes),
            opt(c.sent_bps, fmt::rate),
            opt(c.received_bps, fmt::rate),
            opt(c.zero_share.map(|z| z * 100.0), fmt::percent),
            c.close.clone().unwrap_or_else(|| DASH.into()),
            c.error.clone().unwrap_or_else(|| DASH.into()),
        ]);
    }
    tb.drop_empty_columns(1)
}

/// The worst connection's zero samples and the warm-up left out, where the run has them.
fn steady_rows(e: &RunEnd) -> Vec<(&'static str, String)> {
    let mut rows = Vec::new();
    if let Some(z) = e.zero_share_worst {
        rows.push((
            "Zero samples, worst connection",
            format!("{} of the intervals", fmt::percent(z * 100.0)),
        ));
    }
    if let Some(w) = e.warmup_secs {
        rows.push(("Warm-up, not in the rates", fmt::secs(w)));
    }
    rows
}

fn overall(s: &StressRun, e: &RunEnd) -> Table {
    let [asked, connected, refused, timed_out, other] = e.connect;
    let mut rows = vec![
        (
            "Connections",
            format!(
                "{} of {} opened ({} refused, {} timed out, {} failed otherwise) in {}",
                count(connected),
                count(asked),
                count(refused),
                count(timed_out),
                count(other),
                opt(e.connect_seconds, fmt::secs)
            ),
        ),
        ("Seconds measured", opt(s.seconds, fmt::secs)),
        (
            "Sent",
            format!("{}, {}", bytes(e.sent_bytes), opt(e.sent_bps, fmt::rate)),
        ),
        (
            "Received",
            format!(
                "{}, {}",
                bytes(e.received_bytes),
                opt(e.received_bps, fmt::rate)
            ),
        ),
        ("Fairness, to the device", fairness(e.fairness_sent)),
        ("Fairness, from the device", fairness(e.fairness_received)),
        (
            "Closed",
            format!(
                "{} clean, {} reset, {} timed out",
                count(e.closed_clean),
                count(e.closed_reset),
                count(e.closed_timeout)
            ),
        ),
        ("Failed during the run", count(e.failed_during_run)),
        (
            "Echo bytes that came back wrong",
            count(e.echo_mismatched_bytes),
        ),
    ];
    rows.extend(steady_rows(e));
    if let Some(u) = &e.udp {
        rows.extend([
            (
                "Datagram",
                u.datagram_bytes
                    .map_or_else(|| DASH.into(), |b| format!("{b} B")),
            ),
            ("Offered", opt(u.offered_bps, fmt::rate)),
            ("Datagrams sent", count(u.datagrams_sent)),
            ("Datagrams received", count(u.datagrams_received)),
            ("Echo lost", count(u.echo_lost)),
            ("Echo duplicates", count(u.echo_duplicates)),
            ("Echo reordered", count(u.echo_reordered)),
            (
                "Largest reply",
                u.largest_reply_bytes
                    .filter(|&b| b > 0)
                    .map_or_else(|| DASH.into(), |b| format!("{b} B")),
            ),
            (
                "Replies larger than the request (amplification)",
                count(u.oversized_replies),
            ),
        ]);
    }
    figures(rows)
}

fn storm(s: &StormReport) -> Table {
    let ms = |v: Option<f64>| opt(v, fmt::ms);
    figures(vec![
        ("Attempts", s.attempts.to_string()),
        ("Accepted", s.accepted.to_string()),
        ("Accepted per second", fmt::num(s.accepted_per_second, 0)),
        ("Refused (reset)", s.refused.to_string()),
        ("Timed out", s.timed_out.to_string()),
        ("Failed otherwise", s.failed.to_string()),
        ("In flight at once", s.concurrency.to_string()),
        ("Run time", fmt::secs(s.seconds)),
        ("Connect time, median", ms(s.connect_ms_median)),
        ("Connect time, p99", ms(s.connect_ms_p99)),
        ("Connect time, max", ms(s.connect_ms_max)),
        ("Cut short", yes_no(s.partial)),
    ])
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn overload(o: &OverloadReport) -> Table {
    figures(vec![
        ("Held", format!("{} of {} attempted", o.held, o.attempted)),
        (
            "Accepted, then dropped by the device",
            o.dropped_after_accept.to_string(),
        ),
        ("Refused the next", o.refused_how()),
        ("Held for", fmt::secs(o.held_seconds)),
        ("Closed cleanly", o.closed_clean.to_string()),
        ("Closed with a reset", o.closed_reset.to_string()),
        ("Close timed out", o.closed_timeout.to_string()),
        (
            "Recovery time",
            match o.recovery_seconds {
                Some(s) => fmt::ms(s * 1e3),
                None => "no new connection accepted within the wait".into(),
            },
        ),
        // The command's own rule (it picks the exit code by it).
        ("Came through cleanly", yes_no(o.healthy())),
    ])
}

fn ramp(s: &StressRun) -> Table {
    let udp = s.transport == "udp";
    // With --repeat the rates are each count's mean; the maxima and the runs follow.
    let repeated = s.ramp.iter().any(|r| r.runs > 1);
    let mut head = vec![
        if udp { "Flows" } else { "Connections" },
        "To the device",
        "From the device",
    ];
    if udp {
        head.push("Loss");
    }
    if repeated {
        head.extend(["Runs", "Max to", "Max from"]);
    }
    let mut tb = Table::new(&head);
    for r in &s.ramp {
        let mut row = vec![
            fmt::num(r.connections, 0),
            fmt::rate(r.sent_bps),
            fmt::rate(r.received_bps),
        ];
        if udp {
            row.push(opt(r.loss_percent, fmt::percent));
        }
        if repeated {
            row.push(r.runs.to_string());
            row.push(opt(r.max_sent_bps, fmt::rate));
            row.push(opt(r.max_received_bps, fmt::rate));
        }
        tb.rows.push(row);
    }
    tb
}

/// The load steps; with a `--load-probe`, the device's load (or the probe's note) too.
fn steps(s: &StressRun) -> Table {
    let probed = s.load_probe.is_some();
    let mut head = vec!["Offered", "Achieved", "Server CPU", "Client CPU"];
    if probed {
        head.push("Device load");
    }
    let mut tb = Table::new(&head);
    for r in &s.steps {
        let mut row = vec![
            fmt::rate(r.offered_bps),
            opt(r.achieved_bps, fmt::rate),
            r.server_cpu
                .map_or_else(|| "not reported".into(), fmt::percent),
            opt(r.client_cpu, fmt::percent),
        ];
        if probed {
            row.push(match (r.device_load, &r.device_note) {
                (Some(v), _) => v.to_string(),
                (None, Some(note)) => format!("- ({note})"),
                (None, None) => "-".into(),
            });
        }
        tb.rows.push(row);
    }
    tb
}

/// The load steps' note: what CPU is, and what read the device's load.
fn steps_note(s: &StressRun) -> String {
    let cpu = "CPU is user + system, percent of one core.";
    match &s.load_probe {
        Some(cmd) => {
            format!("{cpu} Device load: the last number `{cmd}` printed at each step's end.")
        }
        None => cpu.into(),
    }
}

/// The stress document's tables, by kind.
pub fn sections(s: &StressRun) -> Vec<Section> {
    match s.kind {
        StressKind::Run => {
            let Some(e) = &s.end else {
                return Vec::new();
            };
            let n = e.connections.len();
            let note = (n > MAX_ROWS).then(|| {
                format!(
                    "The first {MAX_ROWS} of {n} connections, then up to {MAX_ROWS} more that did \
                     not close cleanly; the overall figures count every one."
                )
            });
            vec![
                Section::new("Summary", None, overall(s, e)),
                Section::new("Per connection", note, per_connection(e)),
            ]
        }
        StressKind::Storm => s
            .storm
            .as_ref()
            .map(|st| {
                vec![Section::new(
                    "Storm",
                    Some(format!(
                        "Connections to the {} service opened and closed as fast as it took them.",
                        s.mode
                    )),
                    storm(st),
                )]
            })
            .unwrap_or_default(),
        StressKind::Overload => s
            .overload
            .as_ref()
            .map(|o| {
                vec![Section::new(
                    "Overload",
                    Some(format!(
                        "Connections to the {} service opened until it refused one, held, \
                         closed, then the time until it accepted a new one.",
                        s.mode
                    )),
                    overload(o),
                )]
            })
            .unwrap_or_default(),
        StressKind::Ramp if s.transport == "udp" => vec![Section::new(
            "Total speed per flow count",
            Some(
                "UDP flows sharing the same offered rate; loss is requests without a reply \
                 (none to see for discard)."
                    .into(),
            ),
            ramp(s),
        )],
        StressKind::Ramp => vec![Section::new(
            "Total speed per connection count",
            None,
            ramp(s),
        )],
        StressKind::Steps => vec![Section::new("Load steps", Some(steps_note(s)), steps(s))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A UDP chargen run against a server that amplifies: the report's summary names it.
    #[test]
    fn a_udp_run_shows_its_largest_reply_and_the_amplification() {
        let doc = json!({
            "start": {"mode": "chargen", "transport": "udp", "connections": 1,
                "connect_timeout_secs": 0.0},
            "intervals": [],
            "end": {"seconds": 1.0, "connect": {"asked": 1, "connected": 1, "refused": 0,
                "timed_out": 0, "other_failed": 0, "seconds": 0.0},
                "sent_bytes": 124928, "received_bytes": 249856, "sent_bps": 999424.0,
                "received_bps": 1998848.0, "closed_clean": 0, "closed_reset": 0,
                "closed_timeout": 0, "failed_during_run": 0, "echo_mismatched_bytes": 0,
                "connections": [], "udp": {"datagram_bytes": 512, "offered_bps": 1e6,
                "datagrams_sent": 244,
                "datagrams_received": 244, "largest_reply_bytes": 1024,
                "oversized_replies": 244}},
            "error": null
        });
        let run = crate::stress::read(&doc).unwrap();
        let rows = sections(&run)
            .into_iter()
            .flat_map(|s| s.table.rows)
            .collect::<Vec<_>>();
        let row = |k: &str| rows.iter().find(|r| r[0] == k).map(|r| r[1].clone());
        assert_eq!(row("Largest reply").as_deref(), Some("1024 B"), "{rows:?}");
        assert_eq!(
            row("Replies larger than the request (amplification)").as_deref(),
            Some("244"),
            "{rows:?}"
        );
    }

    /// A steps run with `--load-probe`: a "Device load" column with each reading, or a dash
    /// and the probe's note; the command in the section's note. Without one, no column.
    #[test]
    fn load_steps_show_the_device_load_or_the_probes_note() {
        let doc = json!({"protocol": "tcp", "load_probe": "cat /x", "steps": [
            {"offered_bps": 1e7, "device_load": {"value": 1007.0, "exit_status": 0}},
            {"offered_bps": 2e7, "device_load": {"value": null, "exit_status": null,
                "error": "load probe timed out after 1 s (killed)"}}]});
        let run = crate::stress::read(&doc).unwrap();
        let secs = sections(&run);
        let t = &secs[0].table;
        assert_eq!(t.header.last().map(String::as_str), Some("Device load"));
        assert_eq!(t.rows[0].last().map(String::as_str), Some("1007"));
        assert_eq!(
            t.rows[1].last().map(String::as_str),
            Some("- (load probe timed out after 1 s (killed))")
        );
        assert!(secs[0]
            .note
            .as_deref()
            .is_some_and(|n| n.contains("`cat /x`")));
        let plain = json!({"protocol": "tcp", "steps": [{"offered_bps": 1e7}]});
        let t = steps(&crate::stress::read(&plain).unwrap());
        assert!(
            !t.header.iter().any(|h| h == "Device load"),
            "{:?}",
            t.header
        );
    }

    /// A ramp with `--repeat`: the mean rates, then the runs and each count's maximum.
    #[test]
    fn a_repeated_ramp_shows_its_runs_and_maxima() {
        let doc = json!({"mode": "discard", "repeat": 2, "ramp": [{"connections": 3,
            "sent_bps": 2e6, "received_bps": 0.0, "max": {"connections": 3, "sent_bps": 3e6,
            "received_bps": 0.0}, "runs": [
                {"connections": 3, "sent_bps": 1e6, "received_bps": 0.0},
                {"connections": 3, "sent_bps": 3e6, "received_bps": 0.0}]}]});
        let run = crate::stress::read(&doc).unwrap();
        let t = ramp(&run);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0].len(), 6, "{:?}", t.rows);
        assert_eq!(t.rows[0][3], "2", "{:?}", t.rows);
        assert_eq!(t.rows[0][4], fmt::rate(3e6), "{:?}", t.rows);
        // An older ramp (one run per count) keeps its three columns.
        let old = json!({"mode": "discard", "ramp": [{"connections": 3, "sent_bps": 2e6,
            "received_bps": 0.0}]});
        let t = ramp(&crate::stress::read(&old).unwrap());
        assert_eq!(t.rows[0].len(), 3, "{:?}", t.rows);
    }

    /// A run with `--warmup` and zero samples: both in the summary, the share per connection.
    #[test]
    fn a_run_shows_its_zero_samples_and_warm_up() {
        let doc = json!({
            "start": {"mode": "discard", "connections": 2, "connect_timeout_secs": 5.0},
            "intervals": [],
            "end": {"seconds": 2.0, "connect": {"asked": 2, "connected": 2, "refused": 0,
                "timed_out": 0, "other_failed": 0, "seconds": 0.0},
                "sent_bytes": 10, "received_bytes": 0, "sent_bps": 40.0, "received_bps": 0.0,
                "closed_clean": 2, "closed_reset": 0, "closed_timeout": 0,
                "failed_during_run": 0, "echo_mismatched_bytes": 0,
                "warmup_secs": 0.5, "zero_share_worst": 0.25,
                "connections": [
                    {"id": 1, "sent_bytes": 10, "received_bytes": 0, "sent_bps": 40.0,
                     "received_bps": 0.0, "close": "clean", "zero_share": 0.0},
                    {"id": 2, "sent_bytes": 0, "received_bytes": 0, "sent_bps": 0.0,
                     "received_bps": 0.0, "close": "clean", "zero_share": 0.25}]},
            "error": null
        });
        let run = crate::stress::read(&doc).unwrap();
        let secs = sections(&run);
        let rows: Vec<Vec<String>> = secs[0].table.rows.clone();
        let row = |k: &str| rows.iter().find(|r| r[0] == k).map(|r| r[1].clone());
        assert_eq!(
            row("Zero samples, worst connection").as_deref(),
            Some("25.00 % of the intervals"),
            "{rows:?}"
        );
        assert!(row("Warm-up, not in the rates").is_some(), "{rows:?}");
        let per = &secs[1].table;
        let col = per.header.iter().position(|h| h == "Zero samples").unwrap();
        assert_eq!(per.rows[1][col], "25.00 %", "{:?}", per.rows);
        // An older run has neither: no row, no column.
        let mut old = doc.clone();
        for k in ["warmup_secs", "zero_share_worst"] {
            old["end"].as_object_mut().unwrap().remove(k);
        }
        for c in old["end"]["connections"].as_array_mut().unwrap() {
            c.as_object_mut().unwrap().remove("zero_share");
        }
        let secs = sections(&crate::stress::read(&old).unwrap());
        assert!(secs[0].table.rows.iter().all(|r| !r[0].starts_with("Zero")));
        assert!(!secs[1].table.header.iter().any(|h| h == "Zero samples"));
    }
}
