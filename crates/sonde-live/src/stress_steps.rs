//! `sonde stress --steps` output: a row per offered rate as each step ends (offered, achieved,
//! loss or retransmits, server CPU, client CPU), or one JSON document (`steps`).
//!
//! A server that does not report its CPU (an older sonde, iperf3) shows "not reported" in the
//! table and `null` in JSON: never a number it did not measure. With `--load-probe` a
//! "Device load" column holds each step's reading, or "-" and a note when the probe gave none.

use serde_json::Value;
use sonde_schema::stress::{steps as schema, KIND};
use sonde_stats::stress::steps::LoadStep;
use sonde_stats::units::format_bitrate;

/// The table's header; `probed`: with the "Device load" column.
pub fn header(probed: bool) -> String {
    let mut line = format!(
        "{:>16}  {:>16}  {:>12}  {:>14}  {:>10}",
        "Offered", "Achieved", "Loss/Retr", "Server CPU", "Client CPU"
    );
    if probed {
        line.push_str(&format!("  {:>12}", "Device load"));
    }
    line
}

fn percent(v: Option<f64>, absent: &str) -> String {
    v.map_or_else(|| absent.to_string(), |p| format!("{p:.1} %"))
}

/// One step's row; `probed`: with the "Device load" column (the probe's note after the row).
pub fn row(s: &LoadStep, probed: bool) -> String {
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
    let device = s.device_load.as_ref();
    if probed {
        let value = device.and_then(|d| d.value);
        line.push_str(&format!(
            "  {:>12}",
            value.map_or_else(|| "-".into(), |v| v.to_string())
        ));
    }
    for note in [s.error.as_ref(), device.and_then(|d| d.error.as_ref())]
        .into_iter()
        .flatten()
    {
        line.push_str(&format!("  ({note})"));
    }
    line
}

/// The `-J` document: [`sonde_schema::stress::steps`]'s model, as JSON.
pub fn document(
    host: &str,
    protocol: &str,
    load_probe: Option<&str>,
    steps: &[LoadStep],
    error: Option<&str>,
) -> Value {
    // A failed step ends the run: the steps after it are not run.
    sonde_schema::to_value(&schema::StepsDocument {
        host: Some(host.to_owned()),
        protocol: protocol.to_owned(),
        load_probe: load_probe.map(str::to_owned),
        steps: steps.to_vec(),
        envelope: sonde_schema::Envelope::new(KIND, error.is_some(), error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::steps::DeviceLoad;

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
            device_load: None,
        }
    }

    #[test]
    fn absent_server_cpu_is_not_a_number() {
        assert!(row(&step(None), false).contains("not reported"));
        assert!(row(&step(Some(12.34)), false).contains("12.3 %"));
        let d = document("h", "udp", None, &[step(None)], None);
        crate::snapshot::check("stress_steps_1", &d);
        assert!(d["steps"][0]["server_cpu_percent"].is_null());
        assert_eq!(d["steps"][0]["client_cpu_percent"], 2.5);
        assert!(d["steps"][0]["device_load"].is_null() && d.get("load_probe").is_none());
    }

    /// A probe's reading is the column's figure; a probe that gave none is "-" and its note.
    #[test]
    fn the_device_load_is_its_reading_or_a_note() {
        let read = |value, error: Option<&str>| LoadStep {
            device_load: Some(DeviceLoad {
                value,
                exit_status: Some(0),
                error: error.map(str::to_owned),
            }),
            ..step(None)
        };
        assert!(header(true).ends_with("Device load"), "{}", header(true));
        assert!(row(&read(Some(4711.0), None), true).ends_with("  4711"));
        let none = row(
            &read(None, Some("load probe printed no number on stdout")),
            true,
        );
        assert!(
            none.ends_with("  -  (load probe printed no number on stdout)"),
            "{none}"
        );
        let d = document("h", "tcp", Some("cat /x"), &[read(Some(1.5), None)], None);
        crate::snapshot::check("stress_steps_2", &d);
        assert_eq!(d["load_probe"], "cat /x");
        assert_eq!(d["steps"][0]["device_load"]["value"], 1.5);
        assert_eq!(d["steps"][0]["device_load"]["exit_status"], 0);
        assert!(d["steps"][0]["device_load"]["error"].is_null());
    }
}
