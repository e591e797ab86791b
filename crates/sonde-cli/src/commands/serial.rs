//! `sonde serial`: phase two (read the file, open the device), then one transfer per block
//! size and its report, or the far end (`--serve`) until Ctrl-C.

use super::exit;
use crate::flags::serial::SerialArgs;
use crate::output::{self, outln};
use sha2::{Digest, Sha256};
use sonde_live::serial::{document, lines, served_line, SerialRow, SerialRun};
use sonde_serial::driver::{self, DriveError};
use sonde_serial::tty::{Tty, TtyError};
use sonde_serial::{AckMode, Event, Receiver, Sender, SenderConfig, Status};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
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

/// The report row of one transfer, finished or not.
fn row_of(s: &Sender, block: usize, error: Option<String>) -> SerialRow {
    let st = s.stats();
    let (seconds, far, hash_ok) = match s.status() {
        Status::Done(o) => (o.elapsed.as_secs_f64(), o.far, Some(o.hash_ok)),
        _ => (
            s.started().map_or(0.0, |t| t.elapsed().as_secs_f64()),
            None,
            None,
        ),
    };
    SerialRow {
        block,
        bytes: st.bytes,
        blocks: st.blocks,
        blocks_total: s.blocks(),
        wire_bytes: st.wire_bytes,
        seconds,
        retries: st.retries,
        timeouts: st.timeouts,
        crc_errors_far: far.map_or(st.naks, |f| f.crc_errors),
        crc_errors_here: st.crc_errors,
        duplicates: far.map(|f| f.duplicates),
        hash_ok,
        error,
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

    fn show(&mut self, block: usize, s: &Sender) {
        if !self.on || self.last.elapsed().as_secs() < 1 {
            return;
        }
        self.last = Instant::now();
        self.shown = true;
        let st = s.stats();
        eprint!(
            "\r\x1b[Kblock size {block}: {}/{} blocks, {} retries",
            st.blocks,
            s.blocks(),
            st.retries
        );
    }

    fn clear(&self) {
        if self.shown {
            eprint!("\r\x1b[K");
        }
    }
}

/// A transfer id unlikely to match the far end's previous one (it may have served another run).
fn first_transfer_id() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    (std::process::id() as u16) ^ (nanos as u16) ^ ((nanos >> 16) as u16)
}

/// How one transfer ended.
enum Ended {
    Done,
    Failed(String),
    Interrupted,
}

/// Runs one transfer over `tty`; its report row and how it ended.
fn one_transfer(
    tty: &Tty,
    cfg: SenderConfig,
    data: &Arc<[u8]>,
    interrupt: &AtomicBool,
) -> Result<(SerialRow, Ended), sonde_serial::SendError> {
    let block = cfg.block;
    let mut sender = Sender::new(cfg, data.clone())?;
    let mut live = Live::new();
    let result = driver::send(tty, &mut sender, interrupt, |s| live.show(block, s));
    live.clear();
    let ended = match (&result, sender.status()) {
        (Err(DriveError::Interrupted), _) => Ended::Interrupted,
        (Err(e), _) => Ended::Failed(e.to_string()),
        (Ok(()), Status::Failed(e)) => Ended::Failed(e.to_string()),
        (Ok(()), Status::Done(o)) if !o.hash_ok => {
            Ended::Failed("the far end's length or SHA-256 does not match the file".to_string())
        }
        _ => Ended::Done,
    };
    let error = match &ended {
        Ended::Failed(e) => Some(e.clone()),
        _ => None,
    };
    Ok((row_of(&sender, block, error), ended))
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

/// One transfer of `data` per `--block` size, until one does not end done: their rows and
/// how the last ended.
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
    let mode = if a.loopback {
        AckMode::Echo
    } else {
        AckMode::Peer
    };
    let id = first_transfer_id();
    let mut rows = Vec::new();
    let mut last = Ended::Done;
    for (i, &block) in a.block.iter().enumerate() {
        let cfg = SenderConfig {
            block,
            retries: a.retries,
            timeout: a.timeout,
            mode,
            transfer: id.wrapping_add(i as u16),
            name: name.to_owned(),
        };
        let (row, ended) = one_transfer(tty, cfg, data, interrupt)?;
        rows.push(row);
        last = ended;
        if !matches!(last, Ended::Done) {
            break;
        }
    }
    Ok((rows, last))
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

/// The file a transfer is being stored to: written as `NAME.part`, renamed when it checks.
struct Storing {
    file: File,
    part: PathBuf,
    done: PathBuf,
}

/// A file name safe to create in `--out`: the last component, no hidden or empty names.
fn safe_name(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if base.is_empty() || base.starts_with('.') {
        "serial-transfer.bin".into()
    } else {
        base
    }
}

/// Handles the receiver's events: stores the file when asked and reports each transfer.
struct ServeSink<'a> {
    out: Option<&'a Path>,
    json: bool,
    storing: Option<Storing>,
    served: u32,
    /// The transfer under way: its start and the bytes delivered so far.
    open: Option<(sonde_serial::control::Begin, u64)>,
}

impl ServeSink<'_> {
    fn event(&mut self, e: Event) -> Result<(), String> {
        match e {
            Event::Begin(b) => {
                self.open = Some((b.clone(), 0));
                if let Some(old) = self.storing.take() {
                    let _ = std::fs::remove_file(&old.part);
                }
                if let Some(dir) = self.out {
                    let done = dir.join(safe_name(&b.name));
                    let part = done.with_extension("part");
                    let file = File::create(&part)
                        .map_err(|e| format!("cannot create {}: {e}", part.display()))?;
                    self.storing = Some(Storing { file, part, done });
                }
            }
            Event::Data(d) => {
                if let Some((_, got)) = &mut self.open {
                    *got += d.len() as u64;
                }
                if let Some(s) = &mut self.storing {
                    s.file
                        .write_all(&d)
                        .map_err(|e| format!("cannot write {}: {e}", s.part.display()))?;
                }
            }
            Event::End(s) => self.end(s)?,
        }
        Ok(())
    }

    fn end(&mut self, s: sonde_serial::Summary) -> Result<(), String> {
        self.served += 1;
        self.open = None;
        let ok = s.ack.verdict == sonde_serial::control::Verdict::Ok;
        let mut stored = None;
        if let Some(st) = self.storing.take() {
            drop(st.file);
            if ok {
                std::fs::rename(&st.part, &st.done)
                    .map_err(|e| format!("cannot rename to {}: {e}", st.done.display()))?;
                stored = Some(st.done.display().to_string());
            } else {
                let _ = std::fs::remove_file(&st.part);
            }
        }
        let verdict = match s.ack.verdict {
            sonde_serial::control::Verdict::Ok => "length and sha256 ok",
            sonde_serial::control::Verdict::LengthMismatch => "LENGTH MISMATCH",
            sonde_serial::control::Verdict::HashMismatch => "SHA256 MISMATCH",
        };
        if self.json {
            let v = serde_json::json!({
                "name": s.name, "bytes": s.ack.received, "announced_bytes": s.total,
                "block": s.block, "blocks": s.blocks, "hash_ok": ok,
                "sha256": hex(&s.ack.sha256), "crc_errors": s.ack.crc_errors,
                "duplicates": s.ack.duplicates, "stored": stored,
            });
            outln!("{v}");
        } else {
            outln!(
                "{}",
                served_line(
                    &s.name,
                    s.ack.received,
                    s.block,
                    s.blocks,
                    verdict,
                    s.ack.crc_errors,
                    s.ack.duplicates,
                    stored.as_deref()
                )
            );
        }
        Ok(())
    }
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
    let mut rx = Receiver::new();
    let mut sink = ServeSink {
        out: a.out.as_deref(),
        json: a.json,
        storing: None,
        served: 0,
        open: None,
    };
    let result = driver::serve(&tty, &mut rx, interrupt, |e| sink.event(e));
    if let Some(st) = sink.storing.take() {
        let _ = std::fs::remove_file(&st.part);
    }
    if let Some((b, got)) = &sink.open {
        output::final_error(format_args!(
            "sonde serial: stopped during the transfer of {:?} in blocks of {}: {got} of {} bytes received, not stored",
            b.name, b.block, b.total
        ));
    }
    let stats = rx.stats();
    match result {
        Ok(()) => {
            output::final_error(format_args!(
                "sonde serial: stopped after {:.1} s: {} transfers served, {} broken frames, {} stray frames",
                started.elapsed().as_secs_f64(),
                sink.served,
                stats.crc_errors,
                stats.stray
            ));
            exit::OK
        }
        Err(e) => {
            output::final_error(format_args!("sonde: error - {e}"));
            exit::FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::safe_name;

    #[test]
    fn stored_names_stay_inside_the_out_directory() {
        assert_eq!(safe_name("fw.bin"), "fw.bin");
        assert_eq!(safe_name("../../etc/passwd"), "passwd");
        assert_eq!(safe_name("/abs/path/x"), "x");
        assert_eq!(safe_name("a/.."), "serial-transfer.bin");
        assert_eq!(safe_name(".bashrc"), "serial-transfer.bin");
        assert_eq!(safe_name(""), "serial-transfer.bin");
    }
}
