//! `sonde stress --steps`: CPU load against offered rate against a sonde server.
//!
//! The loop over the steps is `sonde_stress::steps`'; what this wires into it is one step:
//! one run of the ordinary paced client (`sonde_runtime::client::run`, or iperf3's) at the
//! step's rate over all -P streams; the server process's CPU over the step comes back in its
//! results when it has the `cpu-load` capability. A row is printed as each step ends. Exit 1
//! when a step failed (the steps after it are not run) or the run was interrupted; a
//! `--load-probe` that gives no reading is a note on its step, not a failure.

use super::exit;
use crate::flags::stress::StressArgs;
use crate::output;
use sonde_live::{stress_steps, Discard};
use sonde_proto::message::TestParams;
use sonde_runtime::client::{self, ClientConfig};
use sonde_runtime::sockets::ClientSockets;
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::sink::FnSink;
use sonde_stats::stress::steps::LoadStep;
use sonde_stats::units::{Rate, Size};
use sonde_stress::load_probe::LoadProbe;
use sonde_stress::steps::StepsConfig;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// The sonde server's default port.
const DEFAULT_PORT: u16 = 5201;

/// Pause between steps against an iperf3 server.
const IPERF3_REST: Duration = Duration::from_millis(500);

/// The test of one step at `rate` over all streams.
fn params(a: &StressArgs, rate: Rate) -> TestParams {
    let protocol = if a.udp { Protocol::Udp } else { Protocol::Tcp };
    let direction = if a.chargen {
        Direction::Reverse
    } else if a.echo {
        Direction::Bidir
    } else {
        Direction::Upload
    };
    let default_len = Size::from_bytes(if a.udp { 1448 } else { 128 * 1024 });
    TestParams {
        protocol,
        direction,
        parallel: a.parallel,
        duration_secs: a.step_time.as_secs_f64(),
        length: a.length.unwrap_or(default_len),
        // Each stream's share of the step's rate: the pacer paces a stream.
        rate: Rate::from_bits_per_sec((rate.bits_per_sec() / u64::from(a.parallel.max(1))).max(1)),
        interval_secs: a.step_time.as_secs_f64(),
        ..TestParams::default()
    }
}

/// Runs every step; returns the exit code.
pub fn run(a: &StressArgs, interrupt: &AtomicBool) -> i32 {
    let rates = match rates(a) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let json = a.output.json;
    let probed = a.load_probe.is_some();
    let protocol = if a.udp { "udp" } else { "tcp" };
    if !json {
        heading(a, protocol);
    }
    let local = match super::auth::keyed_sockets(&a.psk) {
        Ok(l) => l,
        Err(e) => return super::auth::unusable_file(&e),
    };
    let cfg = StepsConfig {
        rates: rates.to_vec(),
        // An iperf3 server refuses a test as busy for a moment after the last one ends.
        rest: if a.iperf3 {
            IPERF3_REST
        } else {
            Duration::ZERO
        },
        load_probe: a.load_probe.as_ref().map(|command| LoadProbe {
            command: command.clone(),
            timeout: a.load_probe_timeout,
        }),
    };
    let mut rows = FnSink(|s: &LoadStep| {
        if !json {
            output::outln!("{}", stress_steps::row(s, probed));
        }
    });
    let outcome = sonde_stress::steps::run(
        &cfg,
        &mut |rate, stop| step(a, rate, &local, stop),
        interrupt,
        &mut rows,
    );
    let (steps, error) = (outcome.steps, outcome.error);
    if json {
        let doc = stress_steps::document(
            &a.host,
            protocol,
            a.load_probe.as_deref(),
            &steps,
            error.as_deref(),
        );
        output::document(std::io::stdout(), &doc);
    }
    match error {
        None => exit::OK,
        Some(e) => {
            output::run_error(&e, outcome.interrupted);
            exit::FAILED
        }
    }
}

/// The table's title lines (what runs, what reads the device's load) and its header.
fn heading(a: &StressArgs, protocol: &str) {
    output::outln!(
        "CPU load against offered rate, {} to {} port {}, {} stream(s), {:.1} s per step",
        protocol.to_uppercase(),
        a.host,
        a.port.unwrap_or(DEFAULT_PORT),
        a.parallel,
        a.step_time.as_secs_f64()
    );
    if let Some(cmd) = &a.load_probe {
        output::outln!(
            "Device load: the last number `{cmd}` prints at each step's end (timeout {:.1} s)",
            a.load_probe_timeout.as_secs_f64()
        );
    }
    output::outln!("{}", stress_steps::header(a.load_probe.is_some()));
}

/// The rates of `--steps`, once checked with `--step-time` and the first step's test.
fn rates(a: &StressArgs) -> Result<&[Rate], String> {
    let Some(rates) = a.steps.as_deref().filter(|r| !r.is_empty()) else {
        return Err("--steps needs at least one rate".into());
    };
    if rates.iter().any(|r| r.is_unlimited()) || a.step_time < Duration::from_millis(500) {
        return Err("each --steps rate must be above 0 and --step-time at least 0.5 s".into());
    }
    if a.load_probe.is_some() && a.load_probe_timeout < Duration::from_millis(100) {
        return Err("--load-probe-timeout must be at least 0.1 s".into());
    }
    params(a, rates[0]).validate().map_err(|e| e.to_string())?;
    Ok(rates)
}

/// One step: a run of the paced client (sonde's, or iperf3's with `--iperf3`) at `rate`.
fn step(a: &StressArgs, rate: Rate, local: &ClientSockets, interrupt: &AtomicBool) -> LoadStep {
    let cfg = ClientConfig {
        host: a.host.clone(),
        port: a.port.unwrap_or(DEFAULT_PORT),
        family: a.ip.family(),
        cport: None,
        params: params(a, rate),
        connect_timeout: a.connect_timeout,
        local: local.clone(),
        rcv_timeout: None,
        file: None,
    };
    let outcome = if a.iperf3 {
        let opts = sonde_proto::iperf3::params::Iperf3Options {
            udp_counters_64bit: false,
            get_server_output: false,
            repeating_payload: false,
        };
        sonde_runtime::iperf3::client::run(&cfg, opts, interrupt, &mut Discard)
    } else {
        client::run(&cfg, interrupt, &mut Discard)
    };
    LoadStep::of(
        rate.bits_per_sec() as f64,
        outcome.summary.as_ref(),
        outcome.server_load.map(|l| l.percent()),
        outcome.error.as_ref().map(ToString::to_string),
    )
}
