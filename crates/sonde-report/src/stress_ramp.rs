//! `sonde stress --ramp` output: a row per connection count as each step ends, the best step
//! each way, or one JSON document (`ramp`: the steps, `best_sent`, `best_received`).

use serde_json::{json, Value};
use sonde_stats::stress::ramp::{best, RampStep};
use sonde_stats::units::format_bitrate;

/// The table's header.
pub fn header() -> String {
    format!(
        "{:>7}  {:>6}  {:>16}  {:>16}  {:>8}  {:>8}  {:>6}",
        "Conns", "Open", "To device", "From device", "Fair to", "Fair fr", "Clean"
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

/// One step's row.
pub fn row(s: &RampStep) -> String {
    format!(
        "{:>7}  {:>6}  {:>16}  {:>16}  {:>8}  {:>8}  {:>6}",
        s.connections,
        s.opened,
        rate(s.sent_bps),
        rate(s.received_bps),
        fairness(s.fairness_sent),
        fairness(s.fairness_received),
        s.closed_clean
    )
}

fn connections(n: u32) -> String {
    format!("{n} connection{}", if n == 1 { "" } else { "s" })
}

/// The best step each way, as lines.
pub fn best_lines(steps: &[RampStep]) -> Vec<String> {
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

/// The ramp as one document.
pub fn document(mode: &str, steps: &[RampStep], error: Option<&str>) -> Value {
    let (up, down) = best(steps);
    json!({
        "mode": mode,
        "layer": "TCP payload",
        "ramp": steps,
        "best_sent": up,
        "best_received": down,
        "partial": error.is_some(),
        "error": error,
    })
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
            closed_clean: 8,
        };
        let (h, r) = (header(), row(&s));
        assert_eq!(h.len(), r.len(), "{h}\n{r}");
        assert!(r.contains("94.0 Mbits/sec") && r.contains("0.990"), "{r}");
        assert_eq!(
            best_lines(&[s]),
            vec!["most to the device: 94.0 Mbits/sec with 8 connections"]
        );
        let d = document("discard", &[s], None);
        assert_eq!(d["best_sent"]["connections"], 8);
        assert!(d["best_received"].is_null());
    }
}
