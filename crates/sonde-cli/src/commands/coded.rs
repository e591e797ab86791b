//! `sonde client --coded`: checks the coded test's flags, runs it, and hands its result to
//! `sonde-live`'s renderers (the table of `coded_table`, the `-J` document of `coded_json`);
//! picks the exit code.

use super::exit;
use crate::flags::OutputArgs;
use sonde_live::coded_run::{CodedMode, CodedRun};
use sonde_live::{coded_json, coded_table};
use sonde_proto::coded::{CodedData, CodedFeedback, CodedOptions, CodedScheme};
use sonde_proto::message::TestParams;
use sonde_runtime::client::ClientConfig;
use sonde_runtime::coded::client::CodedOutcome;
use sonde_runtime::error::RunError;
use sonde_stats::model::Direction;
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
    if sonde_runtime::coded::symbol_size(p.length_u32()) < 64 {
        return Err(format!(
            "-l {} is too small for --coded (at least 92 bytes)",
            p.length.bytes()
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
    let mode = CodedMode {
        scheme: match opts.scheme {
            CodedScheme::Coded => "coded",
            CodedScheme::Arq => "arq",
        },
        feedback: match opts.feedback {
            CodedFeedback::Unrestricted => "unrestricted",
            CodedFeedback::Restricted => "restricted",
        },
        file: cfg.file.as_ref().map(|f| f.display().to_string()),
        target_bits_per_second: cfg.params.rate.bits_per_sec(),
    };
    let run = coded_run(out);
    if output.json {
        let error = err.as_ref().map(ToString::to_string);
        let doc = coded_json::document(&run, &mode, error.as_deref());
        crate::output::document(std::io::stdout(), &doc);
    } else {
        let text = coded_table::table(&run, &mode);
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

/// The runtime's outcome as the renderers' plain data.
fn coded_run(o: CodedOutcome) -> CodedRun {
    let f = o.figures;
    CodedRun {
        client_sends: o.client_sends,
        server: o.server,
        elapsed_secs: f.elapsed_secs,
        complete: f.complete,
        sender: f.sender,
        receiver: f.receiver,
        path: f.path,
        backoffs: f.backoffs,
        competitions: f.competitions,
        digest_ok: f.digest_ok,
        cpu_local: o.cpu_local,
        cpu_remote: o.cpu_remote,
    }
}
