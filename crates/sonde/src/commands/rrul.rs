//! `sonde rrul`: latency under load, rendered as a table, one JSON document (`-J`) or one
//! JSON line (`--json-stream`). Exit 0 when all four phases completed with their load and
//! answered probes; 1 when any phase's load or probes could not run (the error is in `-J`).

use super::exit;
use crate::cli_latency::RrulArgs;
use crate::output;
use sonde_report::latency_table::write_rrul;
use sonde_runtime::latency::load::{run_rrul, RrulConfig};
use sonde_runtime::latency::LatencyConfig;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Runs the rrul command.
pub fn run(a: RrulArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    if a.step < Duration::from_millis(10) || a.phase < a.step * 3 {
        eprintln!("sonde: usage error - --step must be at least 10ms and --phase at least 3 steps");
        return exit::USAGE;
    }
    let mut probe = LatencyConfig::udp(&a.host, a.port);
    probe.size = a.size as usize;
    probe.family = super::family(a.ipv4, a.ipv6);
    probe.psk = match super::auth::client_psk(&a.psk) {
        Ok(k) => k,
        Err(e) => return super::auth::unusable_file(&e),
    };
    let cfg = RrulConfig {
        probe,
        streams: a.streams,
        phase: a.phase,
        step: a.step,
        connect_timeout: a.connect_timeout,
    };
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let table = !a.output.json && !a.output.json_stream;
    let mut progress = |phase: &str| {
        if table {
            eprintln!("sonde rrul: {phase} phase ({:.1} s)", a.phase.as_secs_f64());
        }
    };
    let result = match run_rrul(&cfg, interrupt, &mut progress) {
        Ok(r) => r,
        Err(e) => {
            output::failed_document(&a.output, "rrul", &e.to_string());
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    let mut w = output::LineOut::new(out);
    let written = if a.output.json {
        let env = sonde_report::envelope::Envelope::new("rrul")
            .partial(result.partial)
            .error(result.error.as_deref());
        serde_json::to_writer_pretty(&mut w, &env.wrap(&result))
            .map_err(std::io::Error::from)
            .and_then(|_| w.write_all(b"\n"))
    } else if a.output.json_stream {
        serde_json::to_writer(&mut w, &serde_json::json!({"event": "end", "data": result}))
            .map_err(std::io::Error::from)
            .and_then(|_| w.write_all(b"\n"))
    } else {
        write_rrul(&mut w, &result)
    };
    if let Err(e) = written.and_then(|_| w.flush()) {
        crate::output::write_failed(&e);
    }
    if result.partial || result.error.is_some() {
        if let Some(e) = &result.error {
            crate::output::final_error(format_args!("sonde: error - {e}"));
        }
        return exit::FAILED;
    }
    exit::OK
}
