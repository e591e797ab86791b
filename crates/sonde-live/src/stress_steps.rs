//! `sonde stress --steps` output: a row per offered rate as each step ends (offered, achieved,
//! loss or retransmits, server CPU, client CPU), or one JSON document (`steps`).
//!
//! A server that does not report its CPU (an older sonde, iperf3) shows "not reported" in the
//! table and `null` in JSON: never a number it did not measure.

use serde_json::Value;
use sonde_schema::stress::{steps as schema, KIND};
use sonde_stats::stress::steps::LoadStep;
use sonde_stats::units::format_bitrate;

/// The table's header.
pub fn header() -> String {
    format!(
        "{:>16}  {:>16}  {:>12}  {:>14}  {:>10}",
        "Offered", "Achieved", "Loss/Retr", "Server CPU", "Client CPU"
    )
}

fn percent(v: Option<f64>, absent: &str) -> String {
    v.map_or_else(|| absent.to_string(), |p| format!("{p:.1} %"))
}

/// One step's row.
pub fn row(s: &LoadStep) -> String {
    let loss = match (s.loss_percent, s.retransmits) {
        (Some(l), _) => format!("{l:.2} %"),
        (None, Some(r)) => format!("{r} retr"),
        (None, None) => "-".into(),
    };
    let mut line = format!(
        "{:>16}  {:>16}  {:>12}  {:>14}  {:>10}",
        format_bitrate(s.offered_bps),
        s.achieved_bps.map_or_else(|| "-".into(), format_bitrate),
        loss,
        percent(s.server_cpu_percent, "not reported"),
        percent(s.client_cpu_percent, "-"),
    );
    if let Some(e) = &s.error {
        line.push_str(&format!("  ({e})"));
    }
    line
}

/// The `-J` document: [`sonde_schema::stress::steps`]'s model, as JSON.
pub fn document(host: &str, protocol: &str, steps: &[LoadStep], error: Option<&str>) -> Value {
    // A failed step ends the run: the steps after it are not run.
    sonde_schema::to_value(&schema::StepsDocument {
        host: Some(host.to_owned()),
        protocol: protocol.to_owned(),
        steps: steps.iter().map(crate::stress_model::load_step).collect(),
        envelope: sonde_schema::Envelope::new(KIND, error.is_some(), error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(server: Option<f64>) -> LoadStep {
        LoadStep {
            offered_bps: 10e6,
            achieved_bps: Some(9.9e6),
            loss_percent: Some(1.0),
            retransmits: None,
            server_cpu_percent: server,
            client_cpu_percent: Some(2.5),
            seconds: 3.0,
            error: None,
        }
    }

    #[test]
    fn absent_server_cpu_is_not_a_number() {
        assert!(row(&step(None)).contains("not reported"));
        assert!(row(&step(Some(12.34))).contains("12.3 %"));
        let d = document("h", "udp", &[step(None)], None);
        assert!(d["steps"][0]["server_cpu_percent"].is_null());
        assert_eq!(d["steps"][0]["client_cpu_percent"], 2.5);
    }
}
