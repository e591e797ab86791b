//! `sonde capacity`: phase two (the run configuration), then the run and its report.

use super::exit;
use crate::flags::capacity::CapacityArgs;
use crate::output::{self, outln};
use sonde_live::capacity::{departure_lines, document, lines, RunInfo};
use sonde_proto::capacity::CapacityPlan;
use sonde_runtime::capacity::client::CapacityOutcome;
use sonde_runtime::client::ClientConfig;
use sonde_runtime::RunError;
use sonde_stats::capacity::converge::StopRule;
use sonde_stats::capacity::Estimate;
use std::sync::atomic::AtomicBool;

/// Runs the capacity command.
pub fn run(a: CapacityArgs, interrupt: &AtomicBool) -> i32 {
    let (cfg, plan) = match config(&a) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let rule = match (a.no_early_stop, a.quick) {
        (true, _) => None,
        (false, true) => Some(StopRule::quick()),
        (false, false) => Some(StopRule::default()),
    };
    let (out, mut error) = sonde_runtime::capacity::client::run_with(&cfg, rule, interrupt);
    let longest = if a.longest_train && error.is_none() {
        let limit = std::time::Duration::from_secs(u64::from(a.search_time));
        let (o, e) =
            sonde_runtime::capacity::longest::run(&cfg, a.max_train, a.spacing, limit, interrupt);
        error = e;
        Some(o)
    } else {
        None
    };
    let error_text = error.as_ref().map(ToString::to_string);
    let info = RunInfo {
        host: &a.host,
        server: &out.server,
        family: out.family,
        layers: out.layers,
        short_len: plan.short_len,
        long_len: plan.long_len,
        kernel_stamps: out.kernel_stamps,
        seconds: out.seconds,
        ignored: out.ignored,
        quick: a.quick,
        trains_planned: plan.trains(),
        trains_sent: out.trains_sent,
        train_sizes: &out.train_sizes,
        by_size: &out.by_size,
        longest: longest.as_ref(),
        early_stop: Some(&out.early_stop),
        error: error_text.as_deref(),
    };
    if a.output.json {
        let doc = document(&info, out.estimate.as_ref(), out.departures.as_ref());
        output::document(std::io::stdout(), &doc);
    } else if let Some(e) = &out.estimate {
        table(&info, e, &out, &plan);
    }
    match error {
        None => exit::OK,
        Some(e) => {
            let so_far = match out.estimate {
                Some(_) => format!(
                    "the estimate {} is of the trains that arrived",
                    output::result_place(a.output.json || a.output.json_stream)
                ),
                None => "the result so far is partial".to_owned(),
            };
            output::run_error_saying(&e, matches!(e, RunError::Interrupted), &so_far);
            exit::FAILED
        }
    }
}

/// The client's configuration and the trains' plan the flags ask for, or the exit code of
/// flags that cannot run (the reason said on stderr).
fn config(a: &CapacityArgs) -> Result<(ClientConfig, CapacityPlan), i32> {
    let plan = CapacityPlan {
        short_trains: a.short_trains,
        short_len: a.short_len,
        long_trains: a.long_trains,
        long_len: a.long_len,
        spacing_ms: a.spacing,
        tx_timestamps: a.tx_timestamps,
        sizes: a.sizes.unwrap_or_default(),
    };
    let literal_v6 = a
        .host
        .trim_matches(['[', ']'])
        .parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_ipv6());
    let length = a
        .length
        .unwrap_or(if a.ip.ipv6 || literal_v6 { 1452 } else { 1472 });
    let params = sonde_runtime::capacity::params(plan, length);
    if let Err(e) = params.validate() {
        eprintln!("sonde: usage error - {e}");
        return Err(exit::USAGE);
    }
    let local = super::auth::keyed_sockets(&a.psk).map_err(|e| super::auth::unusable_file(&e))?;
    let cfg = ClientConfig {
        host: a.host.clone(),
        port: a.port,
        family: a.ip.family(),
        cport: None,
        params,
        connect_timeout: a.connect.connect_timeout,
        local,
        rcv_timeout: None,
        file: None,
    };
    Ok((cfg, plan))
}

/// The table of an estimate, then the departure check's lines when it was asked for.
fn table(info: &RunInfo<'_>, e: &Estimate, out: &CapacityOutcome, plan: &CapacityPlan) {
    for line in lines(info, e) {
        outln!("{line}");
    }
    if let Some(d) = &out.departures {
        // Trains asked for: the plan's, or up to the early stop.
        let asked = match out.early_stop.after_long_trains {
            Some(n) if out.early_stop.stopped => plan.short_trains + n,
            _ => plan.trains(),
        };
        for line in departure_lines(d, asked) {
            outln!("{line}");
        }
    }
}
