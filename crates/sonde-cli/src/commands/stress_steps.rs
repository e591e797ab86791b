//! `sonde stress --steps`: CPU load against offered rate against a sonde server.
//!
//! Each step is one run of the ordinary paced client (`sonde_runtime::client::run`) at the
//! step's rate over all -P streams; the server process's CPU over the step comes back in its
//! results when it has the `cpu-load` capability. A row is printed as each step ends. Exit 1
//! when a step failed (the steps after it are not run) or the run was interrupted.

use super::exit;
use crate::flags::stress::StressArgs;
use crate::output;
use sonde_live::{stress_steps, Discard};
use sonde_proto::message::TestParams;
use sonde_runtime::client::{self, ClientConfig};
use sonde_runtime::sockets::ClientSockets;
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::stress::steps::LoadStep;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The sonde server's default port.
const DEFAULT_PORT: u16 = 5201;

/// Pause between steps against an iperf3 server.
const IPERF3_REST: Duration = Duration::from_millis(500);

/// The test of one step at `rate_bps` over all streams.
fn params(a: &StressArgs, rate_bps: u64) -> TestParams {
    let protocol = if a.udp { Protocol::Udp } else { Protocol::Tcp };
    let direction = if a.chargen {
        Direction::Reverse
    } else if a.echo {
        Direction::Bidir
    } else {
        Direction::Upload
    };
    let default_len = if a.udp { 1448 } else { 128 * 1024 };
    TestParams {
        protocol,
        direction,
        parallel: a.parallel,
        duration_secs: a.step_time.as_secs_f64(),
        length: u32::try_from(a.length.unwrap_or(default_len)).unwrap_or(default_len as u32),
        rate: sonde_stats::units::Rate::from_bits_per_sec(
            (rate_bps / u64::from(a.parallel.max(1))).max(1),
        ),
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
    let protocol = if a.udp { "udp" } else { "tcp" };
    if !json {
        output::outln!(
            "CPU load against offered rate, {} to {} port {}, {} stream(s), {:.1} s per step",
            protocol.to_uppercase(),
            a.host,
            a.port.unwrap_or(DEFAULT_PORT),
            a.parallel,
            a.step_time.as_secs_f64()
        );
        output::outln!("{}", stress_steps::header());
    }
    let local = match super::auth::keyed_sockets(&a.psk) {
        Ok(l) => l,
        Err(e) => return super::auth::unusable_file(&e),
    };
    let mut steps = Vec::new();
    let mut error = None;
    let mut interrupted = false;
    for (i, &rate) in rates.iter().enumerate() {
        if a.iperf3 && i > 0 {
            // An iperf3 server refuses a test as busy for a moment after the last one ends.
            std::thread::sleep(IPERF3_REST);
        }
        let step = step(a, rate, &local, interrupt);
        if !json {
            output::outln!("{}", stress_steps::row(&step));
        }
        let why = step.error.clone();
        steps.push(step);
        if why.is_some() || interrupt.load(Ordering::SeqCst) {
            interrupted = interrupt.load(Ordering::SeqCst);
            error = why.or(Some("interrupted".into()));
            break;
        }
    }
    if json {
        let doc = stress_steps::document(&a.host, protocol, &steps, error.as_deref());
        output::document(std::io::stdout(), &doc);
    }
    match error {
        None => exit::OK,
        Some(e) => {
            output::run_error(&e, interrupted);
            exit::FAILED
        }
    }
}

/// The rates of `--steps`, once checked with `--step-time` and the first step's test.
fn rates(a: &StressArgs) -> Result<&[u64], String> {
    let Some(rates) = a.steps.as_deref().filter(|r| !r.is_empty()) else {
        return Err("--steps needs at least one rate".into());
    };
    if rates.contains(&0) || a.step_time < Duration::from_millis(500) {
        return Err("each --steps rate must be above 0 and --step-time at least 0.5 s".into());
    }
    params(a, rates[0]).validate().map_err(|e| e.to_string())?;
    Ok(rates)
}

/// One step: a run of the paced client (sonde's, or iperf3's with `--iperf3`) at `rate`.
fn step(a: &StressArgs, rate: u64, local: &ClientSockets, interrupt: &AtomicBool) -> LoadStep {
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
        rate as f64,
        outcome.summary.as_ref(),
        outcome.server_load.map(|l| l.percent()),
        outcome.error.as_ref().map(ToString::to_string),
    )
}
