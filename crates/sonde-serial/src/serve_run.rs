//! The serving side of `sonde serial --serve` over a [`Tty`]: transfers received one after
//! another until the interrupt, each file stored in a directory when asked (written as
//! `NAME.part`, renamed once its length and SHA-256 check), each transfer told to a [`Sink`]
//! of [`Served`] as it ends.
//!
//! The receiving is the sans-IO [`Receiver`] run by [`driver::serve`]; this module handles
//! its events: the file being stored, the transfer under way, the count served.

use crate::control::{Begin, Verdict};
use crate::driver::{self, DriveError};
use crate::receiver::{Event, Receiver, ReceiverStats, Summary};
use crate::tty::Tty;
use sonde_stats::sink::{deliver, Sink};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// One transfer received to its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// The name the sender gave.
    pub name: String,
    /// Bytes delivered.
    pub bytes: u64,
    /// Bytes the sender announced in its end frame.
    pub announced_bytes: u64,
    pub block: u16,
    pub blocks: u32,
    /// The length and SHA-256 check.
    pub verdict: Verdict,
    /// SHA-256 of what was delivered.
    pub sha256: [u8; 32],
    pub crc_errors: u32,
    pub duplicates: u32,
    /// Where the file was stored (None: no directory given, or it failed its check).
    pub stored: Option<PathBuf>,
}

impl Served {
    /// Length and SHA-256 matched.
    pub fn ok(&self) -> bool {
        self.verdict == Verdict::Ok
    }
}

/// A transfer the interrupt stopped: what it was and how far it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unfinished {
    pub begin: Begin,
    /// Bytes delivered so far (not stored).
    pub received: u64,
}

/// How the service ended.
#[derive(Debug)]
pub struct ServeRun {
    /// Transfers received to their end.
    pub served: u32,
    /// The receiver's counters over all of them.
    pub stats: ReceiverStats,
    /// The transfer under way when it stopped.
    pub unfinished: Option<Unfinished>,
    /// What ended it otherwise than the interrupt: the device, or a file that could not be
    /// stored.
    pub error: Option<DriveError>,
}

/// A file name safe to create in the directory: the last component, no hidden or empty
/// names.
pub fn safe_name(name: &str) -> String {
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

/// The file a transfer is being stored to.
struct Storing {
    file: File,
    part: PathBuf,
    done: PathBuf,
}

/// Handles the receiver's events: stores the file when asked and tells each transfer.
struct Service<'a> {
    out: Option<&'a Path>,
    storing: Option<Storing>,
    served: u32,
    open: Option<Unfinished>,
    events: &'a mut dyn Sink<Served>,
}

impl Service<'_> {
    fn event(&mut self, e: Event) -> Result<(), String> {
        match e {
            Event::Begin(b) => self.begin(b)?,
            Event::Data(d) => {
                if let Some(u) = &mut self.open {
                    u.received += d.len() as u64;
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

    fn begin(&mut self, b: Begin) -> Result<(), String> {
        self.open = Some(Unfinished {
            begin: b.clone(),
            received: 0,
        });
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
        Ok(())
    }

    fn end(&mut self, s: Summary) -> Result<(), String> {
        self.served += 1;
        self.open = None;
        let ok = s.ack.verdict == Verdict::Ok;
        let mut stored = None;
        if let Some(st) = self.storing.take() {
            drop(st.file);
            if ok {
                std::fs::rename(&st.part, &st.done)
                    .map_err(|e| format!("cannot rename to {}: {e}", st.done.display()))?;
                stored = Some(st.done);
            } else {
                let _ = std::fs::remove_file(&st.part);
            }
        }
        let served = Served {
            name: s.name,
            bytes: s.ack.received,
            announced_bytes: s.total,
            block: s.block,
            blocks: s.blocks,
            verdict: s.ack.verdict,
            sha256: s.ack.sha256,
            crc_errors: s.ack.crc_errors,
            duplicates: s.ack.duplicates,
            stored,
        };
        deliver(self.events, &served);
        Ok(())
    }
}

/// Serves transfers over `tty` until `interrupt` is raised, storing each intact file in
/// `out` when given (a directory); each transfer goes to `events` as it ends.
///
/// A part file left by a transfer that did not end is removed.
pub fn serve_files(
    tty: &Tty,
    out: Option<&Path>,
    interrupt: &AtomicBool,
    events: &mut dyn Sink<Served>,
) -> ServeRun {
    let mut rx = Receiver::new();
    let mut service = Service {
        out,
        storing: None,
        served: 0,
        open: None,
        events,
    };
    let result = driver::serve(tty, &mut rx, interrupt, |e| service.event(e));
    if let Some(st) = service.storing.take() {
        let _ = std::fs::remove_file(&st.part);
    }
    ServeRun {
        served: service.served,
        stats: rx.stats(),
        unfinished: service.open,
        error: result.err(),
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
