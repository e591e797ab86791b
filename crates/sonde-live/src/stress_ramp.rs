//! `sonde stress --ramp` output: a row per connection count as each step ends (with
//! `--repeat N`, the mean of its runs and a `max` row under it), the best step each way, or
//! one JSON document (`ramp`: the rows with their `max` and `runs`, `best_sent`,
//! `best_received`). A UDP ramp (`-u`) counts flows, and its last column is the loss instead
//! of the clean closes.

use serde_json::Value;
use sonde_schema::stress::{ramp as schema, KIND};
use sonde_stats::stress::model::Transport;
use sonde_stats::stress::ramp::{best, RampRow, RampStep};
use sonde_stats::units::format_bitrate;

/// The table's header.
pub fn header(transport: Transport) -> String {
    let (count, last) = match transport {
        Transport::Tcp => ("Conns", "Clean"),
        Transport::Udp => ("Flows", "Loss"),
    };
    format!(
        "{count:>7}  {:>6}  {:>16}  {:>16}  {:>8}  {:>8}  {last:>7}",
        "Open", "To device", "From device", "Fair to", "Fair fr"
    )
}

fn fairness(f: Option<f64>) -> String {
    f.map_or_else(|| "-".into(), |v| format!("{v:.3}"))
}

fn rate(bps: f64) -> String {
    if bps > 0.0 {
        format_bitrate(bps)
    } else {
        "-".into()
    }
}

/// One count's lines: the row of its mean and, over more than one run, the row of each
/// figure's maximum (`max` in the count's column).
pub fn lines(r: &RampRow) -> Vec<String> {
    let mut out = vec![row(&r.mean)];
    if r.runs.len() > 1 {
        out.push(line("max", &r.max));
    }
    out
}

/// One step's row: the clean closes of a TCP step, the loss of a UDP one ("-": discard).
pub fn row(s: &RampStep) -> String {
    line(&s.connections.to_string(), s)
}

/// A row with `count` in the count's column.
fn line(count: &str, s: &RampStep) -> String {
    let last = match (&s.udp, s.closed_clean) {
        (Some(u), _) => u
            .loss_percent
            .map_or_else(|| "-".into(), |l| format!("{l:.2} %")),
        (None, clean) => clean.map_or_else(|| "-".into(), |c| c.to_string()),
    };
    format!(
        "{count:>7}  {:>6}  {:>16}  {:>16}  {:>8}  {:>8}  {last:>7}",
        s.opened,
        rate(s.sent_bps),
        rate(s.received_bps),
        fairness(s.fairness_sent),
        fairness(s.fairness_received),
    )
}

fn connections(n: u32, transport: Transport) -> String {
    let what = match transport {
        Transport::Tcp => "connection",
        Transport::Udp => "flow",
    };
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The best step each way, as lines.
pub fn best_lines(steps: &[RampStep], transport: Transport) -> Vec<String> {
    let connections = |n| connections(n, transport);
    let (up, down) = best(steps);
    let mut out = Vec::new();
    if let Some(s) = up {
        out.push(format!(
            "most to the device: {} with {}",
            format_bitrate(s.sent_bps),
            connections(s.connections)
        ));
    }
    if let Some(s) = down {
        out.push(format!(
            "most from the device: {} with {}",
            format_bitrate(s.received_bps),
            connections(s.connections)
        ));
    }
    out
}

/// The ramp as one document: [`sonde_schema::stress::ramp`]'s model, as JSON; the best
/// count each way by its mean.
pub fn document(
    mode: &str,
    transport: Transport,
    rows: &[RampRow],
    repeat: u32,
    error: Option<&str>,
) -> Value {
    use crate::stress_model::ramp_row;
    let means = means(rows);
    let (up, down) = best(&means);
    // A failed step ends the ramp: the steps after it are not run.
    sonde_schema::to_value(&schema::RampDocument {
        mode: mode.to_owned(),
        transport: crate::stress_model::transport(transport).to_owned(),
        layer: Some(
            match transport {
                Transport::Tcp => "TCP payload",
                Transport::Udp => "UDP payload",
            }
            .to_owned(),
        ),
        repeat: repeat.max(1),
        ramp: rows.iter().map(ramp_row).collect(),
        best_sent: up.copied(),
        best_received: down.copied(),
        envelope: sonde_schema::Envelope::new(KIND, error.is_some(), error),
    })
}

/// Each count's mean row, in order.
pub fn means(rows: &[RampRow]) -> Vec<RampStep> {
    rows.iter().map(|r| r.mean).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_line_up_and_the_best_is_named() {
        let s = RampStep {
            connections: 8,
            opened: 8,
            sent_bps: 94e6,
            received_bps: 0.0,
            fairness_sent: Some(0.99),
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: Some(8),
            udp: None,
        };
        let (h, r) = (header(Transport::Tcp), row(&s));
        assert_eq!(h.len(), r.len(), "{h}\n{r}");
        assert!(r.contains("94.0 Mbits/sec") && r.contains("0.990"), "{r}");
        assert!(h.ends_with("Clean") && r.ends_with(" 8"), "{h}\n{r}");
        assert_eq!(
            best_lines(&[s], Transport::Tcp),
            vec!["most to the device: 94.0 Mbits/sec with 8 connections"]
        );
        let one = RampRow::of(vec![s]).unwrap_or_else(|| unreachable!());
        assert_eq!(lines(&one), vec![r.clone()], "one run: one line");
        let d = document("discard", Transport::Tcp, &[one], 1, None);
        crate::snapshot::check("stress_ramp_1", &d);
        assert_eq!(d["best_sent"]["connections"], 8);
        assert!(d["best_received"].is_null());
        assert_eq!(
            (d["transport"].as_str(), d["layer"].as_str()),
            (Some("tcp"), Some("TCP payload"))
        );
    }

    #[test]
    fn a_udp_ramp_shows_loss_and_counts_flows() {
        use sonde_stats::stress::ramp::RampUdp;
        let s = RampStep {
            connections: 4,
            opened: 4,
            sent_bps: 1e6,
            received_bps: 0.9e6,
            fairness_sent: Some(1.0),
            fairness_received: Some(1.0),
            zero_share_worst: None,
            closed_clean: None,
            udp: Some(RampUdp {
                requests: 244,
                replies: 220,
                loss_percent: Some(9.836),
                send_errors: 0,
            }),
        };
        let (h, r) = (header(Transport::Udp), row(&s));
        assert_eq!(h.len(), r.len(), "{h}\n{r}");
        assert!(h.starts_with("  Flows") && h.ends_with("Loss"), "{h}");
        assert!(r.ends_with("9.84 %"), "{r}");
        assert_eq!(
            best_lines(&[s], Transport::Udp)[1],
            "most from the device: 900 Kbits/sec with 4 flows"
        );
        let one = RampRow::of(vec![s]).unwrap_or_else(|| unreachable!());
        let d = document("echo", Transport::Udp, &[one], 1, None);
        crate::snapshot::check("stress_ramp_2", &d);
        assert_eq!(
            (d["transport"].as_str(), d["layer"].as_str()),
            (Some("udp"), Some("UDP payload"))
        );
        assert_eq!(d["ramp"][0]["udp"]["replies"], 220);
    }

    #[test]
    fn repeated_runs_show_the_mean_and_a_max_row() {
        let run = |sent| RampStep {
            connections: 3,
            opened: 3,
            sent_bps: sent,
            received_bps: 0.0,
            fairness_sent: Some(1.0),
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: Some(3),
            udp: None,
        };
        let row = RampRow::of(vec![run(10e6), run(30e6)]).unwrap_or_else(|| unreachable!());
        let l = lines(&row);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[0].len(), header(Transport::Tcp).len());
        assert!(
            l[0].starts_with("      3") && l[0].contains("20.0 Mbits/sec"),
            "{l:?}"
        );
        assert!(
            l[1].starts_with("    max") && l[1].contains("30.0 Mbits/sec"),
            "{l:?}"
        );
        let d = document("discard", Transport::Tcp, &[row], 2, None);
        crate::snapshot::check("stress_ramp_3", &d);
        assert_eq!(d["repeat"], 2);
        assert_eq!(d["ramp"][0]["sent_bps"], 20e6);
        assert_eq!(d["ramp"][0]["max"]["sent_bps"], 30e6);
        assert_eq!(d["ramp"][0]["runs"].as_array().map(Vec::len), Some(2));
        assert_eq!(d["best_sent"]["sent_bps"], 20e6, "the best by its mean");
    }
}
