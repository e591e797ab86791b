//! `sonde client --coded`: one coded transfer against a sonde server.
//!
//! The control session is the usual one (so limits, refusals and aborts behave as for UDP):
//! hello (the server must list `coded`), a UDP test request of one stream marked coded, the
//! stream's hello, start. Then this end drives its coded sender (upload) or receiver (`-R`)
//! until the receiver reports every block decoded, stops, and both ends exchange results
//! (their CPU). The coded figures of the far end arrive in the protocol's own close.

use super::endpoint::{drive, CodedFigures, Limits, Side};
use sonde_platform::cpu;
use sonde_proto::session::ClientSession;
use sonde_runtime_core::connect::ClientConfig;
use sonde_runtime_core::control_conn::ControlConn;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::own_loop::{self, Needs};
use sonde_stats::model::{CpuUsage, Direction};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
/// How long past its duration a timed transfer may take to deliver its last blocks (and a
/// sized one at least, on top of its time at the target rate) before it is given up.
const GRACE: Duration = Duration::from_secs(30);

/// The result of a coded test, for the reporters.
#[derive(Debug, Clone, Default)]
pub struct CodedOutcome {
    /// This end sent (upload) or received (`-R`).
    pub client_sends: bool,
    pub server: String,
    pub figures: CodedFigures,
    pub cpu_local: Option<CpuUsage>,
    pub cpu_remote: Option<CpuUsage>,
}

/// Runs a coded test; on failure the figures so far come with the error.
pub fn run(cfg: &ClientConfig, interrupt: &AtomicBool) -> (CodedOutcome, Option<RunError>) {
    let mut out = CodedOutcome {
        client_sends: cfg.params.direction != Direction::Reverse,
        ..CodedOutcome::default()
    };
    let err = execute(cfg, interrupt, &mut out).err();
    (out, err)
}

fn execute(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    out: &mut CodedOutcome,
) -> Result<(), RunError> {
    let (mut conn, mut s, server) = own_loop::connect(cfg, &mut out.server, interrupt)?;
    let r = run_session(cfg, interrupt, &mut conn, &mut s, server, out);
    if let Err(e) = &r {
        own_loop::abort_on(&mut conn, &mut s, e);
    }
    r
}

fn run_session(
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    conn: &mut ControlConn,
    s: &mut ClientSession,
    server: std::net::SocketAddr,
    out: &mut CodedOutcome,
) -> Result<(), RunError> {
    let p = &cfg.params;
    let options = p.coded_options.is_some_and(|o| o.needs_capability());
    let needs = if options {
        Needs {
            capability: "coded-options",
            what: "run the coded transport with --file, --feedback or --coded=arq",
        }
    } else {
        Needs {
            capability: "coded",
            what: "run the coded transport (--coded)",
        }
    };
    let sock = own_loop::open_stream(cfg, interrupt, conn, s, server, &needs)?;
    let span = cpu::ProcessSpan::start();
    let t0 = Instant::now();
    let mut side = Side::new(p, out.client_sends, cfg.file.as_deref())?;
    let timed = p.bytes.is_zero();
    let run_for = Duration::from_secs_f64(if timed {
        p.duration_secs
    } else {
        // A sized transfer at the target rate, with room for repair and a slow path.
        (p.bytes.bytes() as f64 * 8.0 / p.rate.bits_per_sec().max(1_000_000) as f64) * 4.0
    });
    let limits = Limits {
        finish_at: timed.then(|| t0 + run_for),
        deadline: t0 + run_for + GRACE,
        interrupt,
    };
    let mut watch = || own_loop::watch_control(conn, s).map(|()| false);
    let driven = drive(&mut side, &sock, &limits, &mut watch, &mut out.figures);
    out.cpu_local = Some(span.usage());
    driven?;
    out.cpu_remote = Some(own_loop::close(
        conn,
        s,
        out.cpu_local.unwrap_or_default(),
        interrupt.load(std::sync::atomic::Ordering::Relaxed),
    )?);
    if !out.figures.complete {
        return Err(RunError::Setup(
            "the coded transfer ended before every block was delivered".into(),
        ));
    }
    match out.figures.digest_ok {
        Some(true) => Ok(()),
        Some(false) => Err(RunError::Setup(
            "the SHA-256 of the delivered bytes differs from the sender's".into(),
        )),
        None if cfg.file.is_some() => Err(RunError::Setup(
            "the other end's SHA-256 did not arrive: the file could not be verified".into(),
        )),
        None => Ok(()),
    }
}
