//! `sonde stress`: phase two of the CLI (resolve, build the run), then run and report.
//!
//! Exit 0 only when every connection opened, moved data to the end, closed cleanly and (echo)
//! came back unchanged: a stress test is a check of the device, so any breakage is a failure.

use super::exit;
use crate::flags::stress::StressArgs;
use crate::output::{self, LineOut, SharedOut};
use sonde_live::stress_json::{StressJsonLinesReporter, StressJsonReporter};
use sonde_live::stress_table::{StressTableReporter, EACH_LIMIT};
use sonde_live::{Discard, Sink};
use sonde_platform::resolve::{resolve, Family};
use sonde_stats::stress::model::{
    CloseOutcome, ConnTotal, StressEvent, StressMode, StressSummary, Transport,
};
use sonde_stats::stress::ramp::{counts, RampStep};
use sonde_stress::client::{self, StressConfig};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

fn mode(a: &StressArgs) -> StressMode {
    if a.chargen {
        StressMode::Chargen
    } else if a.echo {
        StressMode::Echo
    } else {
        StressMode::Discard
    }
}

/// Checks what clap cannot: times that make sense together.
fn check(a: &StressArgs) -> Result<(), String> {
    if a.time.is_zero() {
        return Err("-t must be more than 0".into());
    }
    if a.interval < Duration::from_millis(50) {
        return Err("-i must be at least 0.05 s".into());
    }
    if a.overload && a.parallel < 2 {
        return Err("--overload needs -P N, the most connections to open (e.g. -P 10000)".into());
    }
    if a.connect_timeout.is_zero() || a.close_timeout.is_zero() {
        return Err("--connect-timeout and --close-timeout must be more than 0".into());
    }
    if a.udp && (a.storm || a.overload) {
        return Err(format!(
            "--{} measures TCP connection set-up (handshakes, refusals, closes) and UDP has \
             none; drop -u (a UDP device's limits show in -u runs and -u --ramp)",
            if a.storm { "storm" } else { "overload" }
        ));
    }
    if a.udp && a.steps.is_none() {
        super::stress_udp::check(a)?;
    }
    Ok(())
}

/// Why a finished run counts as a failure, if it does.
fn verdict(s: &StressSummary, mode: StressMode) -> Option<String> {
    if let Some(u) = &s.udp {
        return super::stress_udp::verdict(s, u, mode);
    }
    let mut why = Vec::new();
    let not_open = s.connect.asked.saturating_sub(s.connect.connected);
    if not_open > 0 {
        why.push(format!("{not_open} connections did not open"));
    }
    if s.failed_during_run > 0 {
        why.push(format!("{} failed during the run", s.failed_during_run));
    }
    let unclean = s.closed_reset + s.closed_timeout;
    if unclean > 0 {
        why.push(format!("{unclean} did not close cleanly"));
    }
    if s.echo_mismatched_bytes > 0 {
        why.push(format!("{} echoed bytes differed", s.echo_mismatched_bytes));
    }
    if s.echo_unreturned_bytes > 0 {
        why.push(format!(
            "{} bytes sent never came back",
            s.echo_unreturned_bytes
        ));
    }
    why.extend(silent(s, mode));
    if s.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// Connections that moved nothing the mode needs: nothing came back (echo, chargen: the
/// device is not the service asked for, e.g. a discard server) or nothing could be sent. A
/// test of the device that measured no data proves nothing, so it fails.
fn silent(s: &StressSummary, mode: StressMode) -> Vec<String> {
    // A connection that failed is named as such already.
    let count = |f: fn(&ConnTotal) -> u64| {
        s.connections
            .iter()
            .filter(|c| c.close != CloseOutcome::FailedDuringRun && f(c) == 0)
            .count()
    };
    let mut why = Vec::new();
    // Bytes read after our FIN count: an echo may answer only once it saw the end.
    let got_nothing = count(ConnTotal::returned_bytes);
    if mode.receives() && got_nothing > 0 {
        why.push(format!(
            "{got_nothing} of {} connections received nothing (is {} listening there?)",
            s.connections.len(),
            mode.name()
        ));
    }
    let sent_nothing = count(|c| c.sent_bytes);
    if mode.sends() && sent_nothing > 0 {
        why.push(format!(
            "{sent_nothing} of {} connections could send nothing",
            s.connections.len()
        ));
    }
    why
}

/// Runs the stress command.
pub fn run(a: StressArgs, interrupt: &AtomicBool) -> i32 {
    if let Err(e) = check(&a) {
        eprintln!("sonde: usage error - {e}");
        return exit::USAGE;
    }
    if a.steps.is_some() {
        return super::stress_steps::run(&a, interrupt);
    }
    let mode = mode(&a);
    let port = a.port.unwrap_or(mode.well_known_port());
    let family = a.ip.family();
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let cfg = match config(&a, mode, port, family, interrupt) {
        Ok(c) => c,
        Err(e) => {
            return failed(&a, &e);
        }
    };
    if let Some((lo, hi)) = a.ramp {
        return ramp(&a, cfg, (lo, hi), interrupt);
    }
    if a.storm {
        return storm(&a, &cfg, interrupt);
    }
    if a.overload {
        return overload(&a, &cfg, interrupt);
    }
    single(&a, &cfg, out, interrupt)
}

/// One run of `cfg` with its live rows (or events) and its summary written to `out`.
fn single(a: &StressArgs, cfg: &StressConfig, out: SharedOut, interrupt: &AtomicBool) -> i32 {
    let w = LineOut::new(out);
    let mut sink: Box<dyn Sink<StressEvent>> = if a.output.json {
        Box::new(StressJsonReporter::new(w))
    } else if a.output.json_stream {
        Box::new(StressJsonLinesReporter::new(w))
    } else {
        let limit = if a.each { usize::MAX } else { EACH_LIMIT };
        Box::new(StressTableReporter::new(w).each_limit(limit))
    };
    let result = if a.udp {
        super::stress_udp::run(a, cfg, interrupt, &mut output::Reported(&mut sink))
    } else {
        client::run(cfg, interrupt, &mut output::Reported(&mut sink)).map_err(|e| e.to_string())
    };
    // A failure's reason goes into the document too (`-J`: its `error`), and once on stderr.
    let failure = match &result {
        Ok(s) => verdict(s, cfg.mode).map(|why| ("stress found problems: ", why)),
        Err(e) => Some(("error - ", e.clone())),
    };
    if let Some((lead, why)) = &failure {
        if !output::errors_only_on_stderr(&a.output) {
            output::send(&mut sink, &StressEvent::Error(why.clone()));
        }
        output::final_error(format_args!("sonde: {lead}{why}"));
    }
    {
        // The reporters write their document (or the table's summary) in finish: whole, even
        // when signals ask sonde to leave meanwhile.
        let _whole = crate::signals::writing();
        if let Err(e) = sink.finish() {
            output::write_failed(&e);
        }
    }
    if failure.is_some() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The run configuration: the address resolved, the flags as the client takes them.
fn config(
    a: &StressArgs,
    mode: StressMode,
    port: u16,
    family: Family,
    interrupt: &AtomicBool,
) -> Result<StressConfig, String> {
    let addrs = resolve(&a.host, port, family, interrupt).map_err(|e| e.to_string())?;
    let addr = addrs
        .first()
        .copied()
        .ok_or_else(|| format!("{} has no address", a.host))?;
    Ok(StressConfig {
        addr,
        remote: a.host.clone(),
        mode,
        connections: a.parallel,
        duration: a.time,
        interval: a.interval,
        connect_timeout: a.connect_timeout,
        close_timeout: a.close_timeout,
        block: usize::try_from(a.length.unwrap_or(128 * 1024)).unwrap_or(128 * 1024),
        echo_window: a.window,
    })
}

/// `--ramp LO..HI`: one whole run per connection count (`-u`: per flow count, the same
/// offered rate over all flows), a row each, the best each way. A step that fails the checks
/// of a single run (TCP: connections that did not open, failed or did not close cleanly,
/// changed echo bytes; `-u`: send or receive errors, changed echo bytes, amplification, no
/// reply) makes the ramp exit 1 once every step has run, naming each failed step.
fn ramp(a: &StressArgs, cfg: StressConfig, (lo, hi): (u32, u32), interrupt: &AtomicBool) -> i32 {
    use sonde_live::stress_ramp;
    let json = a.output.json;
    let transport = if a.udp {
        Transport::Udp
    } else {
        Transport::Tcp
    };
    if !json {
        ramp_heading(a, &cfg, transport);
    }
    let (steps, error, problems) = ramp_steps(a, &cfg, (lo, hi), interrupt);
    let problems = (!problems.is_empty())
        .then(|| format!("the ramp found problems - {}", problems.join("; ")));
    if json {
        // The document's error: what ended the ramp, else the steps that failed.
        let why = error.as_deref().or(problems.as_deref());
        let doc = stress_ramp::document(cfg.mode.name(), transport, &steps, why);
        output::document(std::io::stdout(), &doc);
    } else {
        for line in stress_ramp::best_lines(&steps, transport) {
            output::outln!("{line}");
        }
    }
    // Steps that failed before an error ended the ramp are named too.
    if let Some(p) = &problems {
        output::final_error(format_args!("sonde: {p}"));
    }
    if let Some(e) = &error {
        output::final_error(format_args!("sonde: error - {e}"));
    }
    if error.is_some() || problems.is_some() {
        exit::FAILED
    } else {
        exit::OK
    }
}

/// The ramp's table heading: what runs, and what its rates are.
fn ramp_heading(a: &StressArgs, cfg: &StressConfig, transport: Transport) {
    let what = if a.udp {
        let udp = super::stress_udp::config(a, cfg);
        format!(
            "rates are UDP payload, {} offered over all flows",
            sonde_stats::units::format_bitrate(udp.rate_bps as f64)
        )
    } else {
        "rates are TCP payload".to_string()
    };
    output::outln!(
        "{} ramp to {} ({}), {:.1} s per step; {what}",
        cfg.mode.name(),
        a.host,
        cfg.addr,
        a.time.as_secs_f64()
    );
    output::outln!("{}", sonde_live::stress_ramp::header(transport));
}

/// Runs the ramp's steps in order, a table row each (without `-J`), until the last or the
/// first that ends with an error or a stop: the steps run, that error, and the steps that
/// failed their checks ("N connections: why").
fn ramp_steps(
    a: &StressArgs,
    cfg: &StressConfig,
    (lo, hi): (u32, u32),
    interrupt: &AtomicBool,
) -> (Vec<RampStep>, Option<String>, Vec<String>) {
    let mut steps = Vec::new();
    let mut problems = Vec::new();
    for n in counts(lo, hi) {
        let s = match ramp_step(a, cfg, n, interrupt) {
            Ok(s) => s,
            Err(e) => return (steps, Some(e), problems),
        };
        let step = RampStep::of(n, &s, cfg.mode);
        if !a.output.json {
            output::outln!("{}", sonde_live::stress_ramp::row(&step));
        }
        steps.push(step);
        if s.partial {
            return (steps, Some("interrupted".to_string()), problems);
        }
        if let Some(why) = verdict(&s, cfg.mode) {
            let unit = match (a.udp, n) {
                (true, 1) => "flow",
                (true, _) => "flows",
                (false, 1) => "connection",
                (false, _) => "connections",
            };
            problems.push(format!("{n} {unit}: {why}"));
        }
    }
    (steps, None, problems)
}

/// One step of a ramp: a whole run with `n` connections (or UDP flows), no live output.
fn ramp_step(
    a: &StressArgs,
    cfg: &StressConfig,
    n: u32,
    interrupt: &AtomicBool,
) -> Result<StressSummary, String> {
    if a.udp {
        let udp = sonde_stress::client::udp::UdpStressConfig {
            flows: n,
            ..super::stress_udp::config(a, cfg)
        };
        return sonde_stress::client::udp::run(&udp, interrupt, &mut Discard)
            .map_err(|e| e.to_string());
    }
    let step_cfg = StressConfig {
        connections: n,
        ..cfg.clone()
    };
    client::run(&step_cfg, interrupt, &mut Discard).map_err(|e| e.to_string())
}

/// `--storm`: connections opened and closed as fast as the device takes them.
fn storm(a: &StressArgs, cfg: &StressConfig, interrupt: &AtomicBool) -> i32 {
    use sonde_live::stress_storm;
    use sonde_stress::client::storm::{self, StormConfig};
    let scfg = StormConfig {
        addr: cfg.addr,
        concurrency: a.parallel,
        duration: a.time,
        connect_timeout: a.connect_timeout,
    };
    let report = match storm::run(&scfg, interrupt) {
        Ok(r) => r,
        Err(e) => return failed(a, &e.to_string()),
    };
    let why = storm_problems(&report);
    if a.output.json {
        let doc = stress_storm::document(cfg.mode.name(), &a.host, &report, why.as_deref());
        output::document(std::io::stdout(), &doc);
    } else {
        output::outln!(
            "{} storm to {} ({}), {:.1} s",
            cfg.mode.name(),
            a.host,
            cfg.addr,
            a.time.as_secs_f64()
        );
        for line in stress_storm::lines(&report) {
            output::outln!("{line}");
        }
    }
    problems_found(why.as_deref())
}

/// Why a storm counts as a failure: a device that refused or dropped connections under it,
/// or accepted none, failed the check.
fn storm_problems(r: &sonde_stats::stress::storm::StormReport) -> Option<String> {
    let failed = r.refused + r.timed_out + r.failed;
    let mut why = Vec::new();
    if failed > 0 {
        why.push(format!("{failed} attempts failed"));
    }
    if r.accepted == 0 {
        why.push("none was accepted".into());
    }
    if r.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// Why an overload counts as a failure: a held connection that did not close cleanly, no
/// recovery within the wait, or a run cut short.
fn overload_problems(r: &sonde_stats::stress::overload::OverloadReport) -> Option<String> {
    let mut why = Vec::new();
    let unclean = r.closed_reset + r.closed_timeout;
    if unclean > 0 {
        why.push(format!("{unclean} held connections did not close cleanly"));
    }
    if r.recovery_seconds.is_none() && !r.partial {
        why.push("no new connection was accepted after the close".into());
    }
    if r.partial {
        why.push("interrupted".into());
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The exit code of a finished run, `why` (if any) said once on stderr.
fn problems_found(why: Option<&str>) -> i32 {
    match why {
        Some(why) => {
            output::final_error(format_args!("sonde: stress found problems: {why}"));
            exit::FAILED
        }
        None => exit::OK,
    }
}

/// A run that failed before it had a result: the document with the error alone (`-J`), the
/// error once on stderr.
fn failed(a: &StressArgs, e: &str) -> i32 {
    // The run's destination: standard output or the --logfile, as a finished run's.
    match output::destination(&a.output) {
        Ok(out) => output::failed_document(&a.output, &out, "stress", e),
        Err(open) => output::final_error(format_args!("sonde: error - {open:#}")),
    }
    output::final_error(format_args!("sonde: error - {e}"));
    exit::FAILED
}

/// `--overload`: open until refused, hold, close all, time the recovery.
fn overload(a: &StressArgs, cfg: &StressConfig, interrupt: &AtomicBool) -> i32 {
    let report = match sonde_stress::client::overload::run(cfg, interrupt) {
        Ok(r) => r,
        Err(e) => return failed(a, &e.to_string()),
    };
    let why = overload_problems(&report);
    if a.output.json {
        let doc = sonde_live::envelope::Envelope::new("stress")
            .partial(report.partial)
            .error(why.as_deref())
            .wrap(
                &serde_json::json!({ "mode": cfg.mode.name(), "host": a.host, "overload": report }),
            );
        output::document(std::io::stdout(), &doc);
    } else {
        output::outln!("{} overload of {} ({})", cfg.mode.name(), a.host, cfg.addr);
        for line in report.lines() {
            output::outln!("{line}");
        }
    }
    problems_found(why.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::overload::{OverloadReport, Refusal};

    /// Regression: a failed overload's document said `"error": null`; its reason, now in the
    /// document, is there exactly when the report is not healthy.
    #[test]
    fn an_overload_has_a_reason_exactly_when_it_is_not_healthy() {
        let good = OverloadReport {
            attempted: 10,
            held: 10,
            dropped_after_accept: 0,
            refusal: Refusal::None,
            first_error: None,
            held_seconds: 0.5,
            closed_clean: 10,
            closed_reset: 0,
            closed_timeout: 0,
            recovery_seconds: Some(0.01),
            partial: false,
        };
        let cases = [
            (good.clone(), None),
            (
                OverloadReport {
                    closed_reset: 2,
                    closed_timeout: 1,
                    ..good.clone()
                },
                Some("3 held connections did not close cleanly"),
            ),
            (
                OverloadReport {
                    recovery_seconds: None,
                    ..good.clone()
                },
                Some("no new connection was accepted after the close"),
            ),
            (
                OverloadReport {
                    partial: true,
                    recovery_seconds: None,
                    ..good
                },
                Some("interrupted"),
            ),
        ];
        for (r, want) in cases {
            assert_eq!(overload_problems(&r).as_deref(), want, "{r:?}");
            assert_eq!(r.healthy(), want.is_none(), "{r:?}");
        }
    }
}
