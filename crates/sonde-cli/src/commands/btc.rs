//! `sonde btc`: phase two (the run configuration), then the sessions and their report.

use super::exit;
use crate::flags::btc::BtcArgs;
use crate::output::{self, outln};
use sonde_live::btc;
use sonde_proto::message::TestParams;
use sonde_runtime::btc::{BtcConfig, SessionEnd};
use sonde_runtime::client::{ClientConfig, Family};
use sonde_stats::sink::FnSink;
use sonde_stats::units::Size;
use std::sync::atomic::AtomicBool;

/// First session of the default series (RFC 3148 users start at a few megabytes).
const FIRST_SIZE: u64 = 6_000_000;

/// Runs the btc command.
pub fn run(a: BtcArgs, interrupt: &AtomicBool) -> i32 {
    let cfg = match config(&a) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let json = a.output.json;
    if !json {
        outln!("{}", intro(&a, &cfg));
        outln!("{}", btc::header());
    }
    let mut rows = FnSink(|end: &SessionEnd<'_>| match end {
        SessionEnd::Done(s) if !json => outln!("{}", btc::row(s)),
        SessionEnd::Failed(f) if !json => outln!("{}", btc::failed_row(f)),
        _ => {}
    });
    let out = sonde_runtime::btc::run(&cfg, interrupt, &mut rows);
    if json {
        let doc = btc::document(&btc::BtcRun {
            host: &a.host,
            reverse: cfg.reverse,
            sessions: &out.sessions,
            failed: &out.failed,
            interrupted: out.interrupted,
        });
        output::document(std::io::stdout(), &doc);
    } else {
        for line in btc::summary_lines(&out.sessions) {
            outln!("{line}");
        }
    }
    if out.interrupted {
        output::run_error(&sonde_runtime::error::RunError::Interrupted, true);
        return exit::FAILED;
    }
    if out.failed.is_empty() {
        exit::OK
    } else {
        let total = out.failed.len() + out.sessions.len();
        output::run_error(&btc::failures_line(&out.failed, total), false);
        exit::FAILED
    }
}

/// The table's first line: what will run.
fn intro(a: &BtcArgs, cfg: &BtcConfig) -> String {
    let per_round = cfg.sizes.len() * cfg.families.len();
    let rounds = match (cfg.count, cfg.duration) {
        (Some(n), Some(t)) => format!("{n} round(s) within {:.0} s", t.as_secs_f64()),
        (Some(n), None) => format!("{n} round(s)"),
        (None, Some(t)) => format!("rounds for {:.0} s", t.as_secs_f64()),
        (None, None) => "one round".into(),
    };
    format!(
        "BTC to {} port {}: {per_round} session(s) a round, {rounds}, one every {:.1} s, {} sending; goodput is TCP payload at the receiver",
        a.host,
        a.port,
        cfg.every.as_secs_f64(),
        if cfg.reverse { "the server" } else { "this host" }
    )
}

/// The run configuration of the flags, or the exit code of flags that cannot run (the
/// reason said on stderr).
fn config(a: &BtcArgs) -> Result<BtcConfig, i32> {
    if a.length.to_u32("-l").is_err() {
        eprintln!("sonde: usage error - -l {} is too large", a.length.bytes());
        return Err(exit::USAGE);
    }
    let families = families(a).map_err(|e| {
        eprintln!("sonde: usage error - {e}");
        exit::USAGE
    })?;
    let local = super::auth::keyed_sockets(&a.psk).map_err(|e| super::auth::unusable_file(&e))?;
    let sizes = if a.sizes.is_empty() {
        sonde_stats::btc::doubling_sizes(FIRST_SIZE, a.max_size.bytes())
            .into_iter()
            .map(Size::from_bytes)
            .collect()
    } else {
        a.sizes.clone()
    };
    Ok(BtcConfig {
        client: ClientConfig {
            host: a.host.clone(),
            port: a.port,
            family: Family::Any,
            cport: None,
            params: TestParams {
                length: a.length,
                congestion: a.congestion.clone(),
                ..TestParams::default()
            },
            connect_timeout: a.connect.connect_timeout,
            local,
            rcv_timeout: None,
            file: None,
        },
        sizes,
        families,
        every: a.every,
        count: a.count,
        duration: a.time,
        reverse: a.reverse,
    })
}

/// The families to measure: both (`--both`, of a name), the one asked for, or any.
fn families(a: &BtcArgs) -> Result<Vec<Family>, String> {
    let literal = a
        .host
        .trim_matches(['[', ']'])
        .parse::<std::net::IpAddr>()
        .ok();
    if let (true, Some(ip)) = (a.both, literal) {
        return Err(format!(
            "--both measures IPv4 and IPv6 to one host: give its name, not the address {ip}"
        ));
    }
    Ok(if a.both {
        vec![Family::V4, Family::V6]
    } else if a.ipv4 {
        vec![Family::V4]
    } else if a.ipv6 {
        vec![Family::V6]
    } else {
        vec![Family::Any]
    })
}
