//! `sonde rrul`: latency under load, rendered as a table, one JSON document (`-J`) or one
//! JSON line (`--json-stream`). Exit 0 when all four phases completed with their load and
//! answered probes; 1 when any phase's load or probes could not run (the error is in `-J`).

use super::exit;
use crate::flags::latency::RrulArgs;
use crate::output;
use sonde_live::envelope::Envelope;
use sonde_live::latency_table::write_rrul;
use sonde_runtime::latency::LatencyConfig;
use sonde_runtime::latency::LatencyError;
use sonde_runtime::rrul::{run_rrul, PhaseStart, RrulConfig};
use sonde_stats::sink::FnSink;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// idle, download, upload, bidirectional: a run that reached its end has them all.
const PHASES: usize = 4;

/// Runs the rrul command.
pub fn run(a: RrulArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    if a.step < Duration::from_millis(10) || a.phase < a.step * 3 {
        eprintln!("sonde: usage error - --step must be at least 10ms and --phase at least 3 steps");
        return exit::USAGE;
    }
    let mut probe = LatencyConfig::udp(&a.host, a.port);
    probe.size = a.size as usize;
    probe.family = a.ip.family();
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
    let mut progress = FnSink(|phase: &PhaseStart| {
        if table {
            let name = phase.name;
            eprintln!("sonde rrul: {name} phase ({:.1} s)", a.phase.as_secs_f64());
        }
    });
    let result = match run_rrul(&cfg, interrupt, &mut progress) {
        Ok(r) => r,
        Err(e) => {
            output::failed_document(&a.output, &out, "rrul", &e.to_string());
            output::run_error(&e, matches!(e, LatencyError::Interrupted));
            return exit::FAILED;
        }
    };
    // Ended early: interrupted, or stopped before the last phase (an unanswered idle phase
    // gives the loaded ones no baseline).
    let ended_early = result.partial || result.phases.len() < PHASES;
    let env = Envelope::new("rrul")
        .partial(ended_early)
        .error(result.error.as_deref());
    // The document is the typed model (`sonde report` reads it back); the stream's `end`
    // line is the runtime's result, as before.
    let data = if a.output.json {
        sonde_live::rrul_json::document(&result, ended_early)
    } else {
        serde_json::to_value(&result).unwrap_or_default()
    };
    output::one_result(&out, &a.output, &env, data, |mut w| {
        write_rrul(&mut w, &result)
    });
    if result.partial || result.error.is_some() {
        let why = result.error.as_deref().unwrap_or("the run ended early");
        output::run_error(&why, interrupt.load(Ordering::SeqCst));
        return exit::FAILED;
    }
    exit::OK
}
