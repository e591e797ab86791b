//! `sonde serial`: phase two (read the file, open the device), then `sonde-serial`'s run
//! (one transfer per block size, or the far end until Ctrl-C), its progress and transfers
//! printed as they come, its report as the table or the `-J` document, and the exit code.

use super::exit;
use crate::flags::serial::SerialArgs;
use crate::output::{self, outln};
use sha2::{Digest, Sha256};
use sonde_live::serial::{document, lines, served_line, SerialRow, SerialRun};
use sonde_serial::control::Verdict;
use sonde_serial::send_run::{self, Ended, SendEvent, SendPlan, TransferReport};
use sonde_serial::serve_run::{self, Served};
use sonde_serial::tty::{Tty, TtyError};
use sonde_serial::AckMode;
use sonde_stats::sink::FnSink;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The largest file `--file` reads (it is held in memory).
const MAX_FILE: u64 = 64 << 20;

/// Runs the serial command.
pub fn run(a: SerialArgs, interrupt: &AtomicBool) -> i32 {
    if a.serve {
        serve(&a, interrupt)
    } else {
        send(&a, interrupt)
    }
}

/// Opens the device; a device that is missing, unusable or not a terminal is a usage error.
fn open(a: &SerialArgs) -> Result<Tty, i32> {
    Tty::open(&a.device, a.baud).map_err(|e| {
        let code = match e {
            TtyError::Open { .. } | TtyError::NotATty { .. } | TtyError::Baud { .. } => exit::USAGE,
            TtyError::Configure { .. } => exit::FAILED,
        };
        let kind = if code == exit::USAGE {
            "usage error"
        } else {
            "error"
        };
        eprintln!("sonde: {kind} - {e}");
        code
    })
}

fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    let f = File::open(path).map_err(|e| format!("cannot read --file {}: {e}", path.display()))?;
    let mut data = Vec::new();
    f.take(MAX_FILE + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("cannot read --file {}: {e}", path.display()))?;
    if data.len() as u64 > MAX_FILE {
        return Err(format!(
            "--file {} is larger than {} MiB; a serial transfer test needs far less",
            path.display(),
            MAX_FILE >> 20
        ));
    }
    Ok(data)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The report row of one transfer.
fn row(t: &TransferReport) -> SerialRow {
    let st = &t.stats;
    SerialRow {
        block: t.block,
        bytes: st.bytes,
        blocks: st.blocks,
        blocks_total: t.blocks_total,
        wire_bytes: st.wire_bytes,
        seconds: t.seconds,
        retries: st.retries,
        timeouts: st.timeouts,
        crc_errors_far: t.crc_errors_far(),
        crc_errors_here: st.crc_errors,
        duplicates: t.duplicates(),
        hash_ok: t.hash_ok,
        error: t.error.clone(),
    }
}

/// A progress line on standard error, once a second, when it is a terminal (a slow line can
/// take minutes per block size).
struct Live {
    on: bool,
    last: Instant,
    shown: bool,
}

impl Live {
    fn new() -> Live {
        use std::io::IsTerminal;
        Live {
            on: std::io::stderr().is_terminal(),
            last: Instant::now(),
            shown: false,
        }
    }

    fn event(&mut self, e: &SendEvent) {
        match *e {
            SendEvent::Progress {
                block,
                blocks,
                blocks_total,
                retries,
            } => {
                if !self.on || self.last.elapsed().as_secs() < 1 {
                    return;
                }
                self.last = Instant::now();
                self.shown = true;
                eprint!(
                    "\r\x1b[Kblock size {block}: {blocks}/{blocks_total} blocks, {retries} retries"
                );
            }
            // The next transfer's line starts afresh, a second in.
            SendEvent::TransferEnded { .. } => {
                if self.shown {
                    eprint!("\r\x1b[K");
                }
                *self = Live::new();
            }
        }
    }
}

fn send(a: &SerialArgs, interrupt: &AtomicBool) -> i32 {
    let Some(path) = &a.file else {
        eprintln!("sonde: usage error - give --file FILE to send, or --serve");
        return exit::USAGE;
    };
    let data: Arc<[u8]> = match read_file(path) {
        Ok(d) => d.into(),
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let tty = match open(a) {
        Ok(t) => t,
        Err(code) => return code,
    };
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let (rows, last) = match transfers(a, &tty, &data, &name, interrupt) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    print_run(a, path, &data, &rows, &last);
    match last {
        Ended::Done => exit::OK,
        Ended::Interrupted => {
            let so_far = format!(
                "the report {} shows the transfers done and how far the last one got",
                output::result_place(a.json)
            );
            output::run_error_saying(&"interrupted", true, &so_far);
            exit::FAILED
        }
        Ended::Failed(e) => {
            let block = rows.last().map_or(0, |r| r.block);
            output::final_error(format_args!("sonde: error - block size {block}: {e}"));
            exit::FAILED
        }
    }
}

/// The transfers of `--block` sizes, as far as they got.
///
/// # Errors
/// A sender configuration refused (a usage error).
fn transfers(
    a: &SerialArgs,
    tty: &Tty,
    data: &Arc<[u8]>,
    name: &str,
    interrupt: &AtomicBool,
) -> Result<(Vec<SerialRow>, Ended), sonde_serial::SendError> {
    let plan = SendPlan {
        blocks: a.block.clone(),
        retries: a.retries,
        timeout: a.timeout,
        mode: if a.loopback {
            AckMode::Echo
        } else {
            AckMode::Peer
        },
        name: name.to_owned(),
        first_id: send_run::first_transfer_id(),
    };
    let mut live = Live::new();
    let run = send_run::send_file(
        tty,
        &plan,
        data,
        interrupt,
        &mut FnSink(|e: &SendEvent| live.event(e)),
    )?;
    Ok((run.transfers.iter().map(row).collect(), run.ended))
}

/// The run's report: the table, or with `-J` its document.
fn print_run(a: &SerialArgs, path: &Path, data: &[u8], rows: &[SerialRow], last: &Ended) {
    let device = a.device.display().to_string();
    let file = path.display().to_string();
    let sha = hex(&Sha256::digest(data));
    let run = SerialRun {
        device: &device,
        baud: a.baud,
        far_end: if a.loopback { "echo" } else { "serve" },
        file: &file,
        file_bytes: data.len() as u64,
        sha256: &sha,
        retries: a.retries,
        timeout_ms: a.timeout.as_millis() as u64,
        rows,
        interrupted: matches!(last, Ended::Interrupted),
    };
    if a.json {
        output::document(std::io::stdout(), &document(&run));
    } else {
        for l in lines(&run) {
            outln!("{l}");
        }
    }
}

/// One transfer served, as a JSON line or a line of text.
fn print_served(s: &Served, json: bool) {
    let stored = s.stored.as_ref().map(|p| p.display().to_string());
    if json {
        let v = serde_json::json!({
            "name": s.name, "bytes": s.bytes, "announced_bytes": s.announced_bytes,
            "block": s.block, "blocks": s.blocks, "hash_ok": s.ok(),
            "sha256": hex(&s.sha256), "crc_errors": s.crc_errors,
            "duplicates": s.duplicates, "stored": stored,
        });
        outln!("{v}");
        return;
    }
    let verdict = match s.verdict {
        Verdict::Ok => "length and sha256 ok",
        Verdict::LengthMismatch => "LENGTH MISMATCH",
        Verdict::HashMismatch => "SHA256 MISMATCH",
    };
    outln!(
        "{}",
        served_line(
            &s.name,
            s.bytes,
            s.block,
            s.blocks,
            verdict,
            s.crc_errors,
            s.duplicates,
            stored.as_deref()
        )
    );
}

fn serve(a: &SerialArgs, interrupt: &AtomicBool) -> i32 {
    if let Some(dir) = &a.out {
        if !dir.is_dir() {
            eprintln!(
                "sonde: usage error - --out {} is not a directory",
                dir.display()
            );
            return exit::USAGE;
        }
    }
    let tty = match open(a) {
        Ok(t) => t,
        Err(code) => return code,
    };
    if !a.json {
        outln!(
            "sonde serial: serving on {} at {} baud (Ctrl-C to stop)",
            a.device.display(),
            a.baud
        );
    }
    let started = Instant::now();
    let run = serve_run::serve_files(
        &tty,
        a.out.as_deref(),
        interrupt,
        &mut FnSink(|s: &Served| print_served(s, a.json)),
    );
    if let Some(u) = &run.unfinished {
        output::final_error(format_args!(
            "sonde serial: stopped during the transfer of {:?} in blocks of {}: {} of {} bytes received, not stored",
            u.begin.name, u.begin.block, u.received, u.begin.total
        ));
    }
    match run.error {
        None => {
            output::final_error(format_args!(
                "sonde serial: stopped after {:.1} s: {} transfers served, {} broken frames, {} stray frames",
                started.elapsed().as_secs_f64(),
                run.served,
                run.stats.crc_errors,
                run.stats.stray
            ));
            exit::OK
        }
        Some(e) => {
            output::final_error(format_args!("sonde: error - {e}"));
            exit::FAILED
        }
    }
}
