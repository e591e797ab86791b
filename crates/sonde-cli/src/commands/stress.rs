//! `sonde stress`: phase two of the CLI (check the flags together, resolve, build the run's
//! configuration), then the run in `sonde-stress` (one run, a ramp, a storm, an overload),
//! its output and the exit code.
//!
//! Exit 0 only when every connection opened, moved data to the end, closed cleanly and (echo)
//! came back unchanged: a stress test is a check of the device, so any breakage is a failure
//! (`sonde_stress::verdict` says which).

use super::exit;
use crate::flags::stress::StressArgs;
use crate::output::{self, LineOut, SharedOut};
use sonde_live::stress_json::{StressJsonLinesReporter, StressJsonReporter};
use sonde_live::stress_table::{StressTableReporter, EACH_LIMIT};
use sonde_live::Sink;
use sonde_platform::resolve::{resolve, Family};
use sonde_stats::sink::FnSink;
use sonde_stats::stress::model::{StressEvent, StressMode};
use sonde_stats::stress::ramp::RampRow;
use sonde_stats::units::Size;
use sonde_stress::client::StressConfig;
use sonde_stress::flows::Flows;
use sonde_stress::ramp::RampConfig;
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
    if a.warmup >= a.time {
        return Err("--warmup must be shorter than -t (it leaves the first intervals out)".into());
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
    if !a.udp {
        tcp_rate(a)?;
    }
    Ok(())
}

/// `-b` over TCP paces what each connection sends: not chargen's (the device sends), nor a
/// run without data (--storm, --overload) or one that sets its own rates (--steps).
fn tcp_rate(a: &StressArgs) -> Result<(), String> {
    let Some(rate) = a.bitrate else {
        return Ok(());
    };
    if rate.is_unlimited() {
        return Err("-b must be more than 0".into());
    }
    let other = if a.steps.is_some() {
        Some("--steps, whose rates are the steps'")
    } else if a.storm || a.overload {
        Some("--storm or --overload, which move no data")
    } else if a.chargen {
        Some("--chargen over TCP: the device sends, and -b paces what this end sends")
    } else {
        None
    };
    match other {
        Some(what) => Err(format!("-b does not go with {what}")),
        None => Ok(()),
    }
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
    if a.storm {
        return storm(&a, &cfg, interrupt);
    }
    if a.overload {
        return overload(&a, &cfg, interrupt);
    }
    let flows = if a.udp {
        Flows::Udp(super::stress_udp::config(&a, &cfg))
    } else {
        Flows::Tcp(cfg)
    };
    if let Some((lo, hi)) = a.ramp {
        let repeat = a.repeat;
        let cfg = RampConfig {
            flows,
            lo,
            hi,
            repeat,
        };
        return ramp(&a, &cfg, interrupt);
    }
    single(&a, &flows, out, interrupt)
}

/// One run of `flows` with its live rows (or events) and its summary written to `out`.
fn single(a: &StressArgs, flows: &Flows, out: SharedOut, interrupt: &AtomicBool) -> i32 {
    let w = LineOut::new(out);
    let mut sink: Box<dyn Sink<StressEvent>> = if a.output.json {
        Box::new(StressJsonReporter::new(w))
    } else if a.output.json_stream {
        Box::new(StressJsonLinesReporter::new(w))
    } else {
        let limit = if a.each { usize::MAX } else { EACH_LIMIT };
        Box::new(StressTableReporter::new(w).each_limit(limit))
    };
    let result = sonde_stress::single::run(flows, interrupt, &mut output::Reported(&mut sink));
    // A failure's reason goes into the document too (`-J`: its `error`), and once on stderr.
    let failure = match result {
        Ok(checked) => checked.problems.map(|why| ("stress found problems: ", why)),
        Err(e) => Some(("error - ", e.to_string())),
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
        // At most 16M (the flag's bound): a buffer's length on any host.
        block: a.length.map_or(128 * 1024, Size::as_len),
        echo_window: a.window.bytes(),
        // -b: each TCP connection paced (with -u the rate is the flows' together, not this).
        rate: a.bitrate.filter(|_| !a.udp && mode.sends()),
        warmup: a.warmup,
    })
}

/// `--ramp LO..HI`: the ramp's steps (`sonde_stress::ramp`), a table row as each ends (or one
/// document), the best each way. A step that fails the checks of a single run makes the ramp
/// exit 1 once every step has run, naming each failed step.
fn ramp(a: &StressArgs, cfg: &RampConfig, interrupt: &AtomicBool) -> i32 {
    use sonde_live::stress_ramp;
    let json = a.output.json;
    let transport = cfg.flows.transport();
    if !json {
        ramp_heading(a, &cfg.flows);
    }
    let mut rows = FnSink(|row: &RampRow| {
        if !json {
            for line in stress_ramp::lines(row) {
                output::outln!("{line}");
            }
        }
    });
    let outcome = sonde_stress::ramp::run(cfg, interrupt, &mut rows);
    let problems = outcome.problems_line();
    let error = outcome.error.as_ref().map(ToString::to_string);
    let mode = cfg.flows.mode().name();
    if json {
        // The document's error: what ended the ramp, else the steps that failed.
        let why = error.as_deref().or(problems.as_deref());
        let doc = stress_ramp::document(mode, transport, &outcome.steps, cfg.repeat, why);
        output::document(std::io::stdout(), &doc);
    } else {
        for line in stress_ramp::best_lines(&stress_ramp::means(&outcome.steps), transport) {
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
fn ramp_heading(a: &StressArgs, flows: &Flows) {
    let what = match flows {
        Flows::Udp(udp) => format!("rates are UDP payload, {} offered over all flows", udp.rate),
        Flows::Tcp(_) => "rates are TCP payload".to_string(),
    };
    let runs = if a.repeat > 1 {
        format!(" x {} runs (their mean, then the max)", a.repeat)
    } else {
        String::new()
    };
    output::outln!(
        "{} ramp to {} ({}), {:.1} s per step{runs}; {what}",
        flows.mode().name(),
        a.host,
        flows.addr(),
        a.time.as_secs_f64()
    );
    output::outln!("{}", sonde_live::stress_ramp::header(flows.transport()));
}

/// `--storm`: connections opened and closed as fast as the device takes them.
fn storm(a: &StressArgs, cfg: &StressConfig, interrupt: &AtomicBool) -> i32 {
    use sonde_live::stress_storm;
    use sonde_stress::client::storm::StormConfig;
    let scfg = StormConfig {
        addr: cfg.addr,
        concurrency: a.parallel,
        duration: a.time,
        connect_timeout: a.connect_timeout,
    };
    let (report, why) = match sonde_stress::storm::run(&scfg, interrupt) {
        Ok(o) => (o.report, o.problems),
        Err(e) => return failed(a, &e.to_string()),
    };
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
    let (report, why) = match sonde_stress::overload::run(cfg, interrupt) {
        Ok(o) => (o.report, o.problems),
        Err(e) => return failed(a, &e.to_string()),
    };
    if a.output.json {
        let doc = sonde_live::stress_overload::document(
            cfg.mode.name(),
            &a.host,
            &report,
            why.as_deref(),
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
