//! The agent's status page (`GET /`): one self-contained HTML document rendered on the server
//! from the same [`StatusDoc`] as `/api/status`, so it needs no script, no font and no style
//! from anywhere: its content-security policy ([`CSP`]) forbids them, and the browser reloads
//! it every 30 s. Every text that comes from the configuration or a failure (labels, hosts,
//! errors) is escaped ([`esc`]): a peer named `<script>` is shown, never run.

use crate::status::{Figures, KindStatus, PeerStatus, StatusDoc, KINDS};
use crate::status_svg::sparkline;
use std::fmt::Write;

/// The page's policy: nothing from anywhere, its own inline style only; no script at all.
/// The page repeats it in a `<meta>` (for a saved copy), which cannot carry `frame-ancestors`.
macro_rules! policy {
    () => {
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; \
         form-action 'none'"
    };
}
/// The policy as the `Content-Security-Policy` header sends it: also never in a frame.
pub const CSP: &str = concat!(policy!(), "; frame-ancestors 'none'");
const META_CSP: &str = policy!();

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.3em;margin:0 0 .5em}\
dl{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;margin:0 0 1em}\
dt{color:#666}dd{margin:0}\
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}\
th{background:#f3f3f3}td.ok{background:#e8f6e8}td.failed{background:#fbe3e3}td.none{color:#999}\
.err{display:block;color:#900;font-size:.85em;max-width:28em;overflow-wrap:anywhere}\
.age{color:#666;font-size:.85em}\
svg.spark .line{stroke:#2a6fb0;stroke-width:1.2}svg.spark .pt{fill:#2a6fb0}svg.spark .fail{fill:#c00}";

/// `s` safe as HTML text and inside a quoted attribute.
pub use sonde_stats::markup::escape as esc;

/// The whole page.
pub fn render(doc: &StatusDoc) -> String {
    let a = &doc.agent;
    let now = a.info.started_unix + a.uptime_secs;
    let mut out = String::with_capacity(4096 + doc.peers.len() * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{META_CSP}\">\
<meta http-equiv=\"refresh\" content=\"30\">\
<meta name=\"viewport\" content=\"width=device-width\">\
<title>sonde agent {name}</title><style>{STYLE}</style></head><body>\
<h1>sonde agent {name}</h1>",
        name = esc(&a.info.name)
    );
    header(&mut out, doc);
    out.push_str("<table><thead><tr><th>Peer</th><th>Host</th><th>Family</th>");
    for k in KINDS {
        if k == crate::schedule::Kind::Latency {
            out.push_str("<th>latency: RTT p50 / p90 / p99, loss</th><th>RTT p50, last runs</th>");
        } else {
            let _ = write!(out, "<th>{}</th>", k.as_str());
        }
    }
    out.push_str("</tr></thead><tbody>");
    for p in &doc.peers {
        row(&mut out, p, now);
    }
    if doc.peers.is_empty() {
        out.push_str("<tr><td colspan=\"8\">no peers</td></tr>");
    }
    out.push_str("</tbody></table>");
    let _ = writeln!(
        out,
        "<p class=\"age\">The same as JSON: <a href=\"/api/status\">/api/status</a>; \
for Prometheus: <a href=\"/metrics\">/metrics</a>. {}</p></body></html>",
        esc(&a.info.version)
    );
    out
}

/// The agent's own figures.
fn header(out: &mut String, doc: &StatusDoc) {
    let a = &doc.agent;
    let s = &a.store;
    let store = match s.unsynced_tests {
        Some(n) => format!(
            "{n} tests not yet copied to PostgreSQL; {} failed copies; {} pruned",
            s.sync_failures, s.pruned_tests
        ),
        None => format!("local only; {} pruned", s.pruned_tests),
    };
    let failing = doc
        .peers
        .iter()
        .filter(|p| p.kinds.values().any(|k| k.last.outcome == "failed"))
        .count();
    let mut peers = format!(
        "{} entries; {} peers shown, {failing} of them failing (a last run failed)",
        a.peers_configured,
        doc.peers.len()
    );
    if a.peers_not_shown > 0 {
        let _ = write!(
            peers,
            " ({} outcomes of peers beyond the page's bound)",
            a.peers_not_shown
        );
    }
    let rows = [
        ("Version", esc(&a.info.version)),
        ("Up for", duration(a.uptime_secs)),
        ("Peers", peers),
        (
            "Runs",
            format!(
                "{} ok, {} failed, {} skipped",
                a.runs.ok, a.runs.failed, a.runs.skipped
            ),
        ),
        (
            "Reloads",
            format!(
                "{} applied, {} refused; {}",
                a.reloads.ok,
                a.reloads.failed,
                if a.reloads.last_ok {
                    "running the file as last read"
                } else {
                    "the last reload was refused"
                }
            ),
        ),
        ("Store", store),
    ];
    out.push_str("<dl>");
    for (k, v) in rows {
        let _ = write!(out, "<dt>{k}</dt><dd>{v}</dd>");
    }
    out.push_str("</dl>");
}

/// One peer's row.
fn row(out: &mut String, p: &PeerStatus, now: f64) {
    let label = esc(&p.label);
    let _ = write!(
        out,
        "<tr><td class=\"peer\">{label}</td><td>{}</td><td>{}</td>",
        esc(p.host.as_deref().unwrap_or("")),
        esc(p.family.as_deref().unwrap_or(""))
    );
    for k in KINDS {
        let ks = p.kinds.get(k.as_str());
        cell(out, ks, now);
        if k == crate::schedule::Kind::Latency {
            let hist: Vec<_> = ks
                .map(|s| s.history.iter().copied().collect())
                .unwrap_or_default();
            let _ = write!(
                out,
                "<td>{}</td>",
                sparkline(&hist, &spark_title(&label, &hist))
            );
        }
    }
    out.push_str("</tr>");
}

/// What a sparkline's title says (`label` already escaped): the runs and the range drawn.
fn spark_title(label: &str, hist: &[crate::status::Point]) -> String {
    let v: Vec<f64> = hist.iter().filter_map(|p| p.v).collect();
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let failed = hist.len() - v.len();
    if v.is_empty() {
        return format!("RTT p50 of {label}: {failed} failed runs, nothing measured");
    }
    format!(
        "RTT p50 of {label}, last {} runs ({failed} failed): {} to {} ms",
        hist.len(),
        ms(Some(lo)),
        ms(Some(hi))
    )
}

/// The last result of one kind: its figures, its age, and its error.
fn cell(out: &mut String, ks: Option<&KindStatus>, now: f64) {
    let Some(ks) = ks else {
        out.push_str("<td class=\"none\">–</td>");
        return;
    };
    let last = &ks.last;
    let _ = write!(out, "<td class=\"{}\">", last.outcome);
    if let Some(f) = &last.figures {
        out.push_str(&figures(f));
    } else {
        out.push_str(last.outcome);
    }
    let _ = write!(
        out,
        " <span class=\"age\">{} ago; {} of {} failed</span>",
        duration(now - last.ended_unix),
        ks.failed,
        ks.runs
    );
    if let Some(e) = &last.error {
        let _ = write!(out, "<span class=\"err\">{}</span>", esc(e));
    }
    out.push_str("</td>");
}

/// A run's headline figures in one line.
fn figures(f: &Figures) -> String {
    match f {
        Figures::Latency {
            rtt_p50_ms,
            rtt_p90_ms,
            rtt_p99_ms,
            loss_ratio,
            ..
        } => format!(
            "{} / {} / {} ms, loss {}",
            ms(*rtt_p50_ms),
            ms(*rtt_p90_ms),
            ms(*rtt_p99_ms),
            loss_ratio.map_or("–".into(), percent)
        ),
        Figures::Throughput {
            upload_bps,
            download_bps,
        } => [("up", upload_bps), ("down", download_bps)]
            .iter()
            .filter_map(|(d, v)| v.map(|v| format!("{d} {}", bps(v))))
            .collect::<Vec<_>>()
            .join(", "),
        Figures::Capacity { bps: b } => bps(*b),
        Figures::Profile { worst_loss_ratio } => {
            format!("worst stream loss {}", percent(*worst_loss_ratio))
        }
    }
}

fn ms(v: Option<f64>) -> String {
    match v {
        Some(v) if v < 1.0 => format!("{v:.3}"),
        Some(v) if v < 100.0 => format!("{v:.2}"),
        Some(v) => format!("{v:.0}"),
        None => "–".into(),
    }
}

fn percent(r: f64) -> String {
    format!("{:.1} %", r * 100.0)
}

/// Bits per second with an SI prefix, three significant figures.
fn bps(v: f64) -> String {
    let (div, unit) = [(1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")]
        .into_iter()
        .find(|(d, _)| v >= *d)
        .unwrap_or((1.0, "bit/s"));
    let x = v / div;
    let digits = if x >= 100.0 {
        0
    } else if x >= 10.0 {
        1
    } else {
        2
    };
    format!("{x:.digits$} {unit}")
}

/// Seconds as `12 s`, `3 min 04 s`, `2 h 05 min`, `3 d 04 h`.
fn duration(s: f64) -> String {
    let t = if s.is_finite() {
        s.max(0.0).round() as u64
    } else {
        0
    };
    match t {
        0..60 => format!("{t} s"),
        60..3600 => format!("{} min {:02} s", t / 60, t % 60),
        3600..86_400 => format!("{} h {:02} min", t / 3600, t % 3600 / 60),
        _ => format!("{} d {:02} h", t / 86_400, t % 86_400 / 3600),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{LatencyFigures, RunOutcome, RunResult};
    use crate::schedule::Kind;
    use crate::status::{AgentInfo, Status};

    fn outcome(peer: &str, error: Option<&str>) -> RunOutcome {
        RunOutcome {
            peer: peer.into(),
            kind: Kind::Latency,
            seq: 0,
            family: "ipv4".into(),
            started_unix: 10.0,
            ended_unix: 11.0,
            result: RunResult::Latency(LatencyFigures {
                sent: 3,
                lost: 0,
                rtt_ms: vec![0.1, 0.2, 0.3],
            }),
            error: error.map(String::from),
            parameters: serde_json::json!({"host": "h\"><b>x</b>"}),
            document: None,
        }
    }

    #[test]
    fn labels_hosts_and_errors_are_escaped() {
        let s = Status::new();
        s.started(AgentInfo {
            name: "<i>a</i>".into(),
            version: "sonde 1".into(),
            started_unix: 0.0,
        });
        s.observe(&outcome("<script>alert(1)</script>", Some("bad & <worse>")));
        let html = render(&s.snapshot(20.0));
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(html.contains("bad &amp; &lt;worse&gt;"), "{html}");
        assert!(html.contains("h&quot;&gt;&lt;b&gt;x&lt;/b&gt;"), "{html}");
        assert!(!html.contains("<i>a</i>"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
        assert_eq!(esc("'&'"), "&#39;&amp;&#39;");
    }

    #[test]
    fn the_page_shows_figures_outcomes_and_a_sparkline() {
        let s = Status::new();
        s.observe(&outcome("b", None));
        let mut failed = outcome("c", Some("refused"));
        failed.result = RunResult::Failed;
        s.observe(&failed);
        let html = render(&s.snapshot(20.0));
        assert!(html.starts_with("<!DOCTYPE html>"));
        assert!(html.contains(META_CSP) && !html.contains("frame-ancestors"));
        assert!(CSP.starts_with(META_CSP) && CSP.ends_with("frame-ancestors 'none'"));
        assert!(html.contains("<meta http-equiv=\"refresh\" content=\"30\">"));
        assert!(
            html.contains("0.200 / 0.280 / 0.298 ms, loss 0.0 %"),
            "{html}"
        );
        assert!(html.contains("<td class=\"ok\">"), "{html}");
        assert!(html.contains("<td class=\"failed\">failed"), "{html}");
        assert_eq!(html.matches("<svg").count(), 2);
        assert!(html.contains("RTT p50 of b, last 1 runs (0 failed): 0.200 to 0.200 ms"));
        assert!(html.contains("RTT p50 of c: 1 failed runs, nothing measured"));
        assert!(html.contains("2 peers shown, 1 of them failing"), "{html}");
        assert!(
            !html.contains("<script") && !html.contains("http://"),
            "{html}"
        );
    }

    #[test]
    fn units() {
        assert_eq!(bps(940e6), "940 Mbit/s");
        assert_eq!(bps(1.5e9), "1.50 Gbit/s");
        assert_eq!(bps(12.0), "12.0 bit/s");
        assert_eq!(duration(3725.0), "1 h 02 min");
        assert_eq!(duration(5.2), "5 s");
        assert_eq!(ms(Some(12.345)), "12.35");
    }
}
