//! `sonde latency`: phase two of the CLI for latency runs (build the run configuration), then
//! run and report. Exit 0 when the run completed and at least one probe was answered.

use super::exit;
use crate::flags::latency::LatencyArgs;
use crate::flags::OutputArgs;
use crate::output::{self, LineOut};
use sonde_live::latency_json::{LatencyJsonLinesReporter, LatencyJsonReporter};
use sonde_live::latency_table::LatencyTableReporter;
use sonde_live::Sink;
use sonde_runtime::latency::{self, LatencyConfig};
use sonde_stats::latency::model::{LatencyEvent, LatencyMode};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The latency reporter the output flags ask for; `verbose` adds a line per answered probe.
pub fn reporter(
    o: &OutputArgs,
    verbose: bool,
    out: output::SharedOut,
) -> Box<dyn Sink<LatencyEvent> + Send> {
    let w = LineOut::new(out);
    if o.json {
        Box::new(LatencyJsonReporter::new(w))
    } else if o.json_stream {
        Box::new(LatencyJsonLinesReporter::new(w).per_probe(verbose))
    } else {
        Box::new(LatencyTableReporter::new(w).verbose(verbose))
    }
}

/// `host:port`, `[v6]:port` or `v6::addr:port` (the last colon splits).
fn split_host_port(s: &str) -> Result<(String, u16), String> {
    let bad = || format!("--tcp-connect needs HOST:PORT, got \"{s}\"");
    let (h, p) = if let Some(rest) = s.strip_prefix('[') {
        let (h, p) = rest.split_once("]:").ok_or_else(bad)?;
        (h, p)
    } else {
        s.rsplit_once(':').ok_or_else(bad)?
    };
    let port = p.parse::<u16>().map_err(|_| bad())?;
    if h.is_empty() || port == 0 {
        return Err(bad());
    }
    Ok((h.to_string(), port))
}

/// Turns validated flags into a run configuration.
///
/// # Errors
/// A usage message when flags contradict each other.
pub fn config(a: &LatencyArgs) -> Result<LatencyConfig, String> {
    let mode = if a.icmp {
        LatencyMode::Icmp
    } else if a.tcp_connect {
        LatencyMode::TcpConnect
    } else if a.tcp_rr {
        LatencyMode::TcpRr
    } else {
        LatencyMode::Udp
    };
    let (host, port) = if mode == LatencyMode::TcpConnect {
        split_host_port(&a.host)?
    } else {
        (a.host.clone(), a.port)
    };
    // netperf's TCP_RR: the next request leaves as soon as the response arrives, unless a
    // probe interval was asked for.
    let flood = a.flood || (mode == LatencyMode::TcpRr && a.interval.is_none());
    let interval = a.interval.unwrap_or(Duration::from_secs(1));
    if a.window > 1 && !a.flood {
        return Err("--window applies to --flood".into());
    }
    if a.window > 1 && matches!(mode, LatencyMode::TcpConnect | LatencyMode::TcpRr) {
        return Err(
            "--window applies to UDP and ICMP probes (TCP modes run one transaction at a time)"
                .into(),
        );
    }
    if !flood && interval < Duration::from_micros(100) {
        return Err(
            "--interval must be at least 100us (use --flood for back-to-back probes)".into(),
        );
    }
    if a.time.is_some_and(|t| t.is_zero()) {
        return Err("-t 0 would probe forever: give a duration or --count".into());
    }
    if a.clock_synced && mode != LatencyMode::Udp {
        return Err("--clock-synced needs UDP probes to a sonde server (one-way delay needs the server's timestamps)".into());
    }
    let duration = match (a.time, a.count) {
        (Some(t), _) => Some(t),
        (None, Some(_)) => None,
        (None, None) => Some(Duration::from_secs(10)),
    };
    Ok(LatencyConfig {
        host,
        port,
        family: a.ip.family(),
        mode,
        size: a.size as usize,
        interval,
        flood,
        window: a.window,
        count: a.count,
        duration,
        late: a.late.map(|ms| Duration::from_secs_f64(ms / 1e3)),
        clock_synced: a.clock_synced,
        report_interval: (!a.report_interval.is_zero())
            .then_some(a.report_interval.max(Duration::from_millis(100))),
        wait: a.wait,
        timeout: a.timeout.max(Duration::from_millis(1)),
        psk: super::auth::client_psk(&a.psk)?,
    })
}

/// Runs the latency command.
pub fn run(a: LatencyArgs, interrupt: &AtomicBool) -> i32 {
    let cfg = match config(&a) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let mut sink = reporter(&a.output, a.output.verbose, out);
    let outcome = latency::run(&cfg, interrupt, &mut output::Reported(&mut sink));
    if let Some(e) = &outcome.error {
        if !crate::output::errors_only_on_stderr(&a.output) {
            output::send(&mut sink, &LatencyEvent::Error(e.to_string()));
        }
    }
    // A run that measured but failed (no answer) says why in its document too.
    let unanswered = outcome
        .summary
        .as_ref()
        .filter(|s| s.error.is_none())
        .and_then(|s| latency::unanswered::unanswered(&cfg, &s.loss));
    if let (Some(why), false) = (&unanswered, output::errors_only_on_stderr(&a.output)) {
        output::send(&mut sink, &LatencyEvent::Error(why.clone()));
    }
    {
        let _whole = crate::signals::writing();
        if let Err(e) = sink.finish() {
            crate::output::write_failed(&e);
        }
    }
    // After the result, so that "above" is true.
    let where_ = if a.output.json || a.output.json_stream {
        "in the document"
    } else {
        "above"
    };
    let stopped = interrupt
        .load(std::sync::atomic::Ordering::SeqCst)
        .then(crate::signals::stopped_by)
        .flatten();
    if let Some(e) = &outcome.error {
        let interrupted = matches!(e, latency::LatencyError::Interrupted);
        crate::output::run_error(e, interrupted);
        return exit::FAILED;
    }
    match (
        outcome.summary.as_ref().and_then(|s| s.error.as_ref()),
        stopped,
    ) {
        (Some(_), Some(sig)) => crate::output::final_error(format_args!(
            "sonde: interrupted by {sig}; statistics so far are {where_}"
        )),
        (Some(e), None) => {
            crate::output::final_error(format_args!("sonde: {e}; statistics so far are {where_}"))
        }
        (None, _) => match &unanswered {
            Some(why) => crate::output::final_error(format_args!("sonde: {why}")),
            None => return exit::OK,
        },
    }
    exit::FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(split_host_port("h:80"), Ok(("h".into(), 80)));
        assert_eq!(split_host_port("[::1]:443"), Ok(("::1".into(), 443)));
        assert_eq!(split_host_port("::1:443"), Ok(("::1".into(), 443)));
        assert!(split_host_port("h").is_err());
        assert!(split_host_port("h:0").is_err());
        assert!(split_host_port(":80").is_err());
    }
}
