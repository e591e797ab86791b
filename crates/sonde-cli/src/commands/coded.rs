//! `sonde client --coded`: checks the coded test's flags, runs it, renders its result as a
//! table or (`-J`) a JSON document.

use super::exit;
use crate::flags::OutputArgs;
use serde_json::json;
use sonde_proto::coded::{CodedData, CodedFeedback, CodedOptions, CodedScheme};
use sonde_proto::message::TestParams;
use sonde_runtime::client::ClientConfig;
use sonde_runtime::coded::client::CodedOutcome;
use sonde_runtime::coded::CodedFigures;
use sonde_runtime::error::RunError;
use sonde_stats::model::Direction;
use sonde_stats::units::format_mbit;
use std::sync::atomic::AtomicBool;

/// Target rate without `-b`: the lossy-link scenario's 100 Mbit/s link.
pub const DEFAULT_RATE: u64 = 100_000_000;

/// The coded test's options from its flags: a file upload sends the file's bytes (`-R --file`
/// receives the server's test data into the file), `--feedback` picks the receiver's policy,
/// `--coded=arq` the ARQ baseline.
pub fn options(
    a: &crate::flags::ClientArgs,
    scheme: crate::flags::coded::SchemeArg,
) -> CodedOptions {
    CodedOptions {
        data: if a.file.is_some() && !a.reverse {
            CodedData::File
        } else {
            CodedData::Pattern
        },
        feedback: a
            .coded_args
            .feedback
            .map_or_else(Default::default, Into::into),
        scheme: scheme.into(),
    }
}

/// Flags a coded test cannot take.
///
/// # Errors
/// A usage message.
pub fn check(p: &TestParams) -> Result<(), String> {
    if p.parallel != 1 {
        return Err("--coded runs one transfer: -P is not supported with it".into());
    }
    if p.direction == Direction::Bidir {
        return Err("--coded runs one direction: use -R for the server to send".into());
    }
    if sonde_runtime::coded::symbol_size(p.length) < 64 {
        return Err(format!(
            "-l {} is too small for --coded (at least 92 bytes)",
            p.length
        ));
    }
    if p.blocks > 0 {
        return Err("--coded takes -t or -n, not -k".into());
    }
    Ok(())
}

/// Runs the coded test and prints its result; returns the exit code.
pub fn run(cfg: &ClientConfig, output: &OutputArgs, interrupt: &AtomicBool) -> i32 {
    let (out, err) = sonde_runtime::coded::client::run(cfg, interrupt);
    let opts = cfg.params.coded_options.unwrap_or_default();
    let mode = Mode {
        scheme: match opts.scheme {
            CodedScheme::Coded => "coded",
            CodedScheme::Arq => "arq",
        },
        feedback: match opts.feedback {
            CodedFeedback::Unrestricted => "unrestricted",
            CodedFeedback::Restricted => "restricted",
        },
        file: cfg.file.as_ref().map(|f| f.display().to_string()),
    };
    if output.json {
        let mut doc = document(&out);
        doc["target_bits_per_second"] = json!(cfg.params.rate.bits_per_sec());
        doc["scheme"] = json!(mode.scheme);
        doc["feedback"] = json!(mode.feedback);
        doc["file"] = json!(mode.file);
        doc["sha256_verified"] = json!(out.figures.digest_ok);
        if mode.file.is_some() && out.client_sends {
            doc["mismatched_bytes"] = serde_json::Value::Null;
        }
        let error = err.as_ref().map(ToString::to_string);
        // A coded run is a client's: the iperf3-shaped documents' envelope.
        sonde_live::envelope::Envelope::iperf3("client")
            .partial(!out.figures.complete)
            .error(error.as_deref())
            .stamp(&mut doc);
        crate::output::document(std::io::stdout(), &doc);
    } else {
        let text = table(&out, &mode);
        crate::output::written_whole(std::io::stdout(), |w| writeln!(w, "{text}"));
    }
    match err {
        None => exit::OK,
        Some(e) => {
            crate::output::run_error(&e, matches!(e, RunError::Interrupted));
            exit::FAILED
        }
    }
}

/// What the test ran: scheme, feedback policy and the file, for the report.
struct Mode {
    scheme: &'static str,
    feedback: &'static str,
    file: Option<String>,
}

/// The figures both ends agree on, as plain numbers.
struct Figures {
    delivered: u64,
    sent: Option<u64>,
    goodput_bps: f64,
    wire_bps: Option<f64>,
    overhead: Option<f64>,
}

fn figures(o: &CodedOutcome) -> Figures {
    let f = &o.figures;
    let secs = f.elapsed_secs.max(1e-9);
    let delivered = f.receiver.map_or(0, |r| r.delivered_bytes);
    Figures {
        delivered,
        sent: f.sender.map(|s| s.data_bytes),
        goodput_bps: delivered as f64 * 8.0 / secs,
        wire_bps: f.sender.map(|s| s.wire_bytes as f64 * 8.0 / secs),
        overhead: f.sender.map(|s| {
            (s.proactive_repair + s.feedback_repair) as f64 / s.source_symbols.max(1) as f64
        }),
    }
}

fn reliability(x: &Figures) -> Option<f64> {
    x.sent.map(|s| {
        if s == 0 {
            0.0
        } else {
            x.delivered as f64 / s as f64 * 100.0
        }
    })
}

fn document(o: &CodedOutcome) -> serde_json::Value {
    let f = &o.figures;
    let x = figures(o);
    json!({
        "protocol": "coded",
        "direction": if o.client_sends { "upload" } else { "reverse" },
        "server": o.server,
        "complete": f.complete,
        "seconds": f.elapsed_secs,
        "delivered_bytes": x.delivered,
        "sent_bytes": x.sent,
        "goodput_bits_per_second": x.goodput_bps,
        "reliability_percent": reliability(&x),
        "mismatched_bytes": f.receiver.map(|r| r.mismatched_bytes),
        "sender": f.sender.map(|s| json!({
            "datagrams": s.datagrams,
            "wire_bytes": s.wire_bytes,
            "wire_bits_per_second": x.wire_bps,
            "blocks": s.blocks,
            "source_symbols": s.source_symbols,
            "proactive_repair": s.proactive_repair,
            "feedback_repair": s.feedback_repair,
            "repair_overhead": x.overhead,
            "feedback_rounds": s.feedback_rounds,
        })),
        "receiver": f.receiver.map(|r| json!({
            "datagrams": r.datagrams_received,
            "useless_symbols": r.useless_symbols,
            "rejected_datagrams": r.rejected,
            "feedback_sent": r.feedback_sent,
            "blocks": r.blocks,
            "decode_delay_p50_ms": r.decode_delay_p50_us as f64 / 1e3,
            "decode_delay_p99_ms": r.decode_delay_p99_us as f64 / 1e3,
        })),
        "path": f.path.map(|(rate, loss, rtt)| json!({
            "rate_bits_per_second": rate,
            "loss_fraction": loss,
            "rtt_ms": rtt,
            "rate_backoffs": f.backoffs,
            "queue_competitions": f.competitions,
        })),
        "cpu_local": o.cpu_local,
        "cpu_remote": o.cpu_remote,
    })
}

/// "never", "once", "3 times".
fn competed(times: u64) -> String {
    match times {
        0 => "never".into(),
        1 => "once".into(),
        n => format!("{n} times"),
    }
}

/// One row of the result table: its label and its text.
type Row = (&'static str, String);

fn table(o: &CodedOutcome, mode: &Mode) -> String {
    let x = figures(o);
    let mut rows = transfer_rows(o, mode, &x);
    receiver_rows(&mut rows, o, mode);
    sender_rows(&mut rows, o, mode, &x);
    if let Some(path) = o.figures.path {
        rows.push(path_row(path, &o.figures));
    }
    let cpu = |c: Option<sonde_stats::model::CpuUsage>| {
        c.map_or("-".into(), |c| format!("{:.1} %", c.total))
    };
    rows.push((
        "cpu",
        format!("local {}, remote {}", cpu(o.cpu_local), cpu(o.cpu_remote)),
    ));
    let mut s = format!("coded transfer with {}\n", o.server);
    for (k, v) in rows {
        s.push_str(&format!("  {k:<22}{v}\n"));
    }
    s.trim_end().to_string()
}

/// A figure only the other end knows, when its figures did not arrive.
fn unknown() -> String {
    "unknown (the other end's figures did not arrive)".to_string()
}

/// What was sent how, whether it arrived whole, and the goodput.
fn transfer_rows(o: &CodedOutcome, mode: &Mode, x: &Figures) -> Vec<Row> {
    let f = &o.figures;
    vec![
        (
            "mode",
            format!("{}, {} feedback", mode.scheme, mode.feedback),
        ),
        (
            "data",
            match &mode.file {
                Some(p) if o.client_sends => format!("the file {p}"),
                Some(p) => format!("the server's test data, written to {p}"),
                None => "sonde's checked test data".into(),
            },
        ),
        (
            "sha-256",
            match f.digest_ok {
                Some(true) => "verified: the receiver's digest equals the sender's".into(),
                Some(false) => "MISMATCH: the delivered bytes differ from the sent ones".into(),
                None => "not compared (the other end's digest did not arrive)".into(),
            },
        ),
        (
            "direction",
            if o.client_sends {
                "upload (this end sends)".into()
            } else {
                "reverse (the server sends)".into()
            },
        ),
        (
            "complete",
            if f.complete {
                "yes, every block decoded".into()
            } else {
                "NO".into()
            },
        ),
        ("time", format!("{:.3} s", f.elapsed_secs)),
        ("goodput", format_mbit(x.goodput_bps)),
        ("delivered", format!("{} bytes", x.delivered)),
        (
            "reliability",
            reliability(x).map_or_else(unknown, |r| {
                format!("{r:.2} % of {} bytes sent", x.sent.unwrap_or(0))
            }),
        ),
    ]
}

/// The receiver's rows, when its figures arrived: the pattern check, the decode delay, what
/// arrived.
fn receiver_rows(rows: &mut Vec<Row>, o: &CodedOutcome, mode: &Mode) {
    let Some(r) = o.figures.receiver else {
        return;
    };
    // A file's bytes are checked by their digest only (the pattern check is for test data).
    if mode.file.is_none() || !o.client_sends {
        rows.push(("checked", format!("{} bytes wrong", r.mismatched_bytes)));
    }
    rows.push((
        "decode delay",
        format!(
            "p50 {:.2} ms, p99 {:.2} ms",
            r.decode_delay_p50_us as f64 / 1e3,
            r.decode_delay_p99_us as f64 / 1e3
        ),
    ));
    rows.push((
        "received",
        format!(
            "{} datagrams ({} useless, {} rejected), {} feedback sent",
            r.datagrams_received, r.useless_symbols, r.rejected, r.feedback_sent
        ),
    ));
}

/// The sender's rows: the wire, the repair (or with ARQ the resends), the feedback rounds;
/// one row saying they are unknown when its figures did not arrive.
fn sender_rows(rows: &mut Vec<Row>, o: &CodedOutcome, mode: &Mode, x: &Figures) {
    let Some(s) = o.figures.sender else {
        rows.push(("sender", unknown()));
        return;
    };
    rows.push((
        "on the wire",
        format!(
            "{} datagrams, {} bytes, {}",
            s.datagrams,
            s.wire_bytes,
            format_mbit(x.wire_bps.unwrap_or(0.0))
        ),
    ));
    rows.push(if mode.scheme == "arq" {
        (
            "resent",
            format!(
                "{} datagrams on feedback = {:.1} % of {} sent once",
                s.feedback_repair,
                x.overhead.unwrap_or(0.0) * 100.0,
                s.source_symbols
            ),
        )
    } else {
        (
            "repair",
            format!(
                "{} proactive + {} on feedback = {:.1} % of {} source symbols",
                s.proactive_repair,
                s.feedback_repair,
                x.overhead.unwrap_or(0.0) * 100.0,
                s.source_symbols
            ),
        )
    });
    rows.push(("feedback rounds", s.feedback_rounds.to_string()));
}

/// The sender's last view of the path: rate, loss, RTT, its rate controller's reactions.
fn path_row((rate, loss, rtt): (f64, f64, Option<f64>), f: &CodedFigures) -> Row {
    let rtt = rtt.map_or("no sample".into(), |r| format!("{r:.2} ms"));
    (
        "path (sender's view)",
        format!(
            "rate {}, loss {:.2} %, rtt {rtt}, {} back-offs, {} competed for a shared queue",
            format_mbit(rate),
            loss * 100.0,
            f.backoffs.unwrap_or(0),
            competed(f.competitions.unwrap_or(0))
        ),
    )
}
