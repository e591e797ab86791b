//! Wires reporters to where output goes: standard output or `--logfile`, table or JSON.

use crate::flags::OutputArgs;
use anyhow::Context;
use sonde_live::envelope::Envelope;
use sonde_live::iperf2_csv::Iperf2CsvReporter;
use sonde_live::{JsonLinesReporter, JsonReporter, Sink, TableReporter, Tee};
use sonde_stats::model::Event;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Set when standard output turned out to be closed (`sonde ... | head`).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Set when a write failed for another reason (reported once).
static WRITE_FAILED: AtomicBool = AtomicBool::new(false);
/// The run's stop flag (the one Ctrl-C sets), raised when standard output closes.
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Hands the output layer the flag that stops the running command.
pub fn set_stop_flag(flag: Arc<AtomicBool>) {
    let _ = STOP.set(flag);
}

/// True once standard output was found closed: the command then stops quietly and sonde exits
/// with [`crate::commands::exit::STDOUT_CLOSED`].
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::SeqCst)
}

/// What to do when writing output failed: a closed pipe (the reader went away, as `head` does)
/// stops the command quietly, as Ctrl-C would; any other failure is reported once.
pub fn write_failed(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        STDOUT_CLOSED.store(true, Ordering::SeqCst);
        if let Some(f) = STOP.get() {
            f.store(true, Ordering::SeqCst);
        }
    } else if !WRITE_FAILED.swap(true, Ordering::SeqCst) {
        eprintln!("sonde: cannot write output: {e}");
    }
}

/// Prints a command's final error on standard error, unless standard output was closed by its
/// reader: then the stop was asked for, and sonde ends quietly.
pub fn final_error(msg: std::fmt::Arguments<'_>) {
    if !stdout_closed() {
        eprintln!("{msg}");
    }
}

/// A run's final error, once, on standard error (see [`final_error`]). An `interrupted` run
/// names the signal that stopped it: SIGTERM is not "Ctrl-C".
pub fn run_error(e: &dyn std::fmt::Display, interrupted: bool) {
    run_error_saying(e, interrupted, "the result so far is partial");
}

/// [`run_error`], saying `so_far` of the result when the run was interrupted.
pub fn run_error_saying(e: &dyn std::fmt::Display, interrupted: bool, so_far: &str) {
    match crate::signals::stopped_by().filter(|_| interrupted) {
        Some(sig) => final_error(format_args!("sonde: interrupted by {sig}; {so_far}")),
        None => final_error(format_args!("sonde: error - {e}")),
    }
}

/// With `-J`, the document of a `kind` run that failed before it measured anything: the
/// envelope alone, `partial` and `error` set, so that a reader of the output learns why.
/// It goes to `out`, the run's destination (standard output or the `--logfile`).
pub fn failed_document(o: &OutputArgs, out: &SharedOut, kind: &'static str, error: &str) {
    if o.json {
        let doc = Envelope::new(kind)
            .partial(true)
            .error(Some(error))
            .wrap(&serde_json::json!({}));
        document(LineOut::new(out.clone()), &doc);
    }
}

/// Writes one line to standard output; a failure goes to [`write_failed`] (never a panic,
/// unlike `println!`).
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out
        .write_fmt(args)
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush())
    {
        write_failed(&e);
    }
}

/// `println!` for command output, through [`line`].
macro_rules! outln {
    () => { $crate::output::line(format_args!("")) };
    ($($t:tt)*) => { $crate::output::line(format_args!($($t)*)) };
}
pub(crate) use outln;

/// Where finished lines go; shared by all tests of a server.
pub type SharedOut = Arc<Mutex<Box<dyn Write + Send>>>;

/// Opens the destination named by the flags.
///
/// # Errors
/// When the log file cannot be created.
pub fn destination(o: &OutputArgs) -> anyhow::Result<SharedOut> {
    let w: Box<dyn Write + Send> = match &o.logfile {
        Some(p) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("cannot open log file {}", p.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    Ok(Arc::new(Mutex::new(w)))
}

/// True when the output is the human table on standard output: an error then goes to standard
/// error only, not a second time into the table (on a pipe too: the reader of both streams
/// would see it twice). A document (`-J`, `--json-stream`) and a `--logfile` keep their own
/// copy, so the saved result says why it ended.
pub fn errors_only_on_stderr(o: &OutputArgs) -> bool {
    !o.json && !o.json_stream && o.logfile.is_none()
}

/// Buffers a reporter's writes and hands complete lines to the shared destination, so that
/// several tests' output interleaves by whole lines only.
pub struct LineOut {
    buf: Vec<u8>,
    out: SharedOut,
    /// What goes before every line (`-T`, `--timestamps`); table output only.
    prefix: LinePrefix,
}

/// iperf3's line prefixes: `--timestamps[=FORMAT]` then `-T TITLE`; on a server, the client's
/// address while several tests run at once (their lines interleave).
#[derive(Debug, Clone, Default)]
pub struct LinePrefix {
    pub title: Option<String>,
    pub timestamps: Option<String>,
    pub client: Option<ClientLabel>,
}

/// A server test's label and the count of tests whose output is open right now. Once a test
/// shared the output with another, all its later lines carry the label.
#[derive(Debug, Clone)]
pub struct ClientLabel {
    pub label: String,
    pub open: Arc<AtomicUsize>,
    pub shared_once: Arc<AtomicBool>,
}

impl ClientLabel {
    pub fn new(label: &str, open: &Arc<AtomicUsize>) -> Self {
        Self {
            label: label.to_owned(),
            open: open.clone(),
            shared_once: Arc::new(AtomicBool::new(false)),
        }
    }

    fn shown(&self) -> bool {
        if self.open.load(Ordering::SeqCst) > 1 {
            self.shared_once.store(true, Ordering::SeqCst);
        }
        self.shared_once.load(Ordering::SeqCst)
    }
}

/// Counts one open test output in [`ClientLabel::open`] while it lives.
pub struct OpenOutput(Arc<AtomicUsize>);

impl OpenOutput {
    pub fn new(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        Self(open.clone())
    }
}

impl Drop for OpenOutput {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl LinePrefix {
    /// The prefixes the flags ask for.
    pub fn of(o: &OutputArgs) -> Self {
        Self {
            title: o.title.clone(),
            timestamps: o.timestamps.clone(),
            client: None,
        }
    }

    fn is_empty(&self) -> bool {
        self.title.is_none() && self.timestamps.is_none() && self.client.is_none()
    }

    fn render(&self) -> String {
        let mut p = String::new();
        if let Some(c) = self.client.as_ref().filter(|c| c.shown()) {
            p.push('[');
            p.push_str(&c.label);
            p.push_str("] ");
        }
        if let Some(f) = &self.timestamps {
            p.push_str(&sonde_platform::local_time::local_strftime(f));
        }
        if let Some(t) = &self.title {
            p.push_str(t);
            p.push_str(":  ");
        }
        p
    }
}

impl LineOut {
    pub fn new(out: SharedOut) -> Self {
        Self {
            buf: Vec::new(),
            out,
            prefix: LinePrefix::default(),
        }
    }

    /// The same, with `prefix` before every line.
    pub fn with_prefix(out: SharedOut, prefix: LinePrefix) -> Self {
        Self {
            buf: Vec::new(),
            out,
            prefix,
        }
    }

    fn push_lines(&mut self, all: bool) -> std::io::Result<()> {
        let cut = if all {
            self.buf.len()
        } else {
            self.buf
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
        };
        if cut == 0 {
            return Ok(());
        }
        let mut out = self
            .out
            .lock()
            .map_err(|_| std::io::Error::other("output lock poisoned"))?;
        if self.prefix.is_empty() {
            out.write_all(&self.buf[..cut])?;
        } else {
            let prefix = self.prefix.render();
            for line in self.buf[..cut].split_inclusive(|&b| b == b'\n') {
                out.write_all(prefix.as_bytes())?;
                out.write_all(line)?;
            }
        }
        out.flush()?;
        self.buf.drain(..cut);
        Ok(())
    }
}

impl Write for LineOut {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        self.push_lines(false)?;
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.push_lines(true)
    }
}

/// The client's reporter: [`reporter`], with iperf3's `extra_data` in a `-J` document.
pub fn client_reporter(
    o: &OutputArgs,
    out: SharedOut,
    extra_data: Option<String>,
    server_output: Option<sonde_live::ServerOutputSlot>,
) -> Box<dyn Sink + Send> {
    if o.json {
        Whole::boxed(Box::new(
            JsonReporter::new(LineOut::new(out))
                .with_title(o.title.clone())
                .with_extra_data(extra_data)
                .with_server_output(server_output),
        ))
    } else {
        reporter(o, out)
    }
}

/// The reporter the flags ask for, writing to `out`.
pub fn reporter(o: &OutputArgs, out: SharedOut) -> Box<dyn Sink + Send> {
    reporter_with_prefix(o, out, LinePrefix::of(o))
}

/// [`reporter`] with the table's lines prefixed by `prefix`.
pub fn reporter_with_prefix(
    o: &OutputArgs,
    out: SharedOut,
    prefix: LinePrefix,
) -> Box<dyn Sink + Send> {
    Whole::boxed(bare_reporter(o, out, prefix))
}

/// The reporter itself, without [`Whole`]'s guard.
fn bare_reporter(o: &OutputArgs, out: SharedOut, prefix: LinePrefix) -> Box<dyn Sink + Send> {
    if o.json {
        Box::new(JsonReporter::new(LineOut::new(out)).with_title(o.title.clone()))
    } else if o.json_stream && o.json_stream_full_output {
        // The events as they happen, then the whole document after the last of them.
        Box::new(Tee::new(vec![
            Box::new(JsonLinesReporter::new(LineOut::new(out.clone()))),
            Box::new(JsonReporter::new(LineOut::new(out)).with_title(o.title.clone())),
        ]))
    } else if o.json_stream {
        Box::new(JsonLinesReporter::new(LineOut::new(out)))
    } else if o.report_style.is_some() {
        // Data lines only: no -T or --timestamps prefix, which a CSV reader would not expect.
        Box::new(Iperf2CsvReporter::new(LineOut::new(out)).with_stamp(local_stamp))
    } else {
        Box::new(
            TableReporter::new(LineOut::with_prefix(out, prefix))
                .with_rate_unit(o.rate_unit.unwrap_or_default())
                .with_verbose(o.verbose),
        )
    }
}

/// iperf 2's CSV timestamp (`YYYYMMDDHHMMSS`) of `unix_secs` in local time, as iperf 2 writes
/// it.
fn local_stamp(unix_secs: i64) -> String {
    sonde_platform::local_time::local_strftime_at(unix_secs, "%Y%m%d%H%M%S")
}

/// Hands `ev` to `sink`; a failed write goes to [`write_failed`].
pub fn send<E>(sink: &mut (impl Sink<E> + ?Sized), ev: &E) {
    if let Err(e) = sink.event(ev) {
        write_failed(&e);
    }
}

/// Finishes `sink` (a `-J` document is written here).
pub fn finish(sink: &mut (impl Sink + ?Sized)) {
    if let Err(e) = sink.finish() {
        write_failed(&e);
    }
}

/// A reporter whose result is written whole even when signals ask sonde to leave meanwhile:
/// ONE write guard ([`crate::signals::writing`]) is held from the summary (`End`) until
/// `finish` returned, since a `-J` document is buffered at `End` and written in `finish`,
/// and the notes and errors sent between them belong to it.
struct Whole {
    sink: Box<dyn Sink + Send>,
    held: Option<crate::signals::Writing>,
}

impl Whole {
    fn boxed(sink: Box<dyn Sink + Send>) -> Box<dyn Sink + Send> {
        Box::new(Self { sink, held: None })
    }
}

impl Sink for Whole {
    fn event(&mut self, ev: &Event) -> std::io::Result<()> {
        if matches!(ev, Event::End(_)) && self.held.is_none() {
            self.held = Some(crate::signals::writing());
        }
        self.sink.event(ev)
    }

    fn finish(&mut self) -> std::io::Result<()> {
        // Without an End (a run that failed before it), finish alone writes the document.
        let _whole = self.held.take().unwrap_or_else(crate::signals::writing);
        self.sink.finish()
    }
}

/// Writes a command's result whole ([`crate::signals::writing`] held throughout): its `-J`
/// document, its `--json-stream` line or its table, as `write` renders it to `out`, then
/// flushed. A failed write goes to [`write_failed`]. See [`document`] for a JSON document.
pub fn written_whole(
    mut out: impl Write,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) {
    let _whole = crate::signals::writing();
    if let Err(e) = write(&mut out).and_then(|()| out.flush()) {
        write_failed(&e);
    }
}

/// Writes a command's `-J` document (pretty JSON and a newline) to `out`, whole even when
/// signals ask sonde to leave meanwhile. Every command writes its document through here
/// (or through a reporter, which holds the same guard): `std::io::stdout()` or a
/// [`LineOut`] on the `--logfile` destination.
pub fn document(out: impl Write, doc: &serde_json::Value) {
    written_whole(out, |w| {
        serde_json::to_writer_pretty(&mut *w, doc).map_err(std::io::Error::from)?;
        w.write_all(b"\n")
    });
}

/// A result that is one value, written whole to `out`: with `-J` its document (`env` stamped
/// on `data`), with `--json-stream` its one `end` line, else its table as `table` writes it.
pub fn one_result(
    out: &SharedOut,
    o: &OutputArgs,
    env: &Envelope,
    data: serde_json::Value,
    table: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) {
    let w = LineOut::new(out.clone());
    if o.json {
        let mut doc = data;
        env.stamp(&mut doc);
        document(w, &doc);
    } else if o.json_stream {
        let line = serde_json::json!({"event": "end", "data": data});
        written_whole(w, |w| {
            serde_json::to_writer(&mut *w, &line).map_err(std::io::Error::from)?;
            w.write_all(b"\n")
        });
    } else {
        written_whole(w, table);
    }
}

/// Where the result a final message speaks of is: "in the document" when the output is a
/// `document` (`-J`, `--json-stream`), else "above" (the table, printed before the message).
pub fn result_place(document: bool) -> &'static str {
    if document {
        "in the document"
    } else {
        "above"
    }
}

/// A reporter as the runtime's sink: a failed write goes to [`write_failed`] here (reported
/// once; a closed pipe raises the stop flag, so the run ends as after Ctrl-C) and is not
/// passed on, since the runtime does not act on a sink's failure (`sonde_live::Sink`).
pub struct Reported<S>(pub S);

impl<E, S: Sink<E>> Sink<E> for Reported<S> {
    fn event(&mut self, ev: &E) -> std::io::Result<()> {
        if let Err(e) = self.0.event(ev) {
            write_failed(&e);
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        if let Err(e) = self.0.finish() {
            write_failed(&e);
        }
        Ok(())
    }
}

/// One server test's reporter as the runtime's sink: [`Reported`], finished right after the
/// test's End (the server never calls `finish`, so this sink's own `finish` does nothing);
/// `open` counts its output as open while it lives.
pub fn test_sink(sink: Box<dyn Sink + Send>, open: OpenOutput) -> Box<dyn Sink + Send> {
    Box::new(TestSink {
        sink: Reported(sink),
        _open: open,
    })
}

/// See [`test_sink`].
struct TestSink {
    sink: Reported<Box<dyn Sink + Send>>,
    _open: OpenOutput,
}

impl Sink for TestSink {
    fn event(&mut self, ev: &Event) -> std::io::Result<()> {
        self.sink.event(ev)?;
        if matches!(ev, Event::End(_)) {
            self.sink.finish()?;
        }
        Ok(())
    }

    fn finish(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::model::{CpuUsage, Direction, Protocol, Role, TestSummary};

    /// Records, at each call, whether the calling thread held a write guard.
    struct Spy(Arc<Mutex<Vec<(&'static str, bool)>>>);

    impl Sink for Spy {
        fn event(&mut self, ev: &Event) -> std::io::Result<()> {
            let what = if matches!(ev, Event::End(_)) {
                "end"
            } else {
                "note"
            };
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .push((what, crate::signals::held_here()));
            Ok(())
        }
        fn finish(&mut self) -> std::io::Result<()> {
            self.0
                .lock()
                .map_err(|_| std::io::Error::other("poisoned"))?
                .push(("finish", crate::signals::held_here()));
            Ok(())
        }
    }

    fn end() -> Event {
        Event::End(Box::new(TestSummary {
            role: Role::Client,
            protocol: Protocol::Tcp,
            direction: Direction::Upload,
            streams: Vec::new(),
            directions: Vec::new(),
            cpu_local: CpuUsage::default(),
            cpu_remote: None,
            sender_congestion: None,
            receiver_congestion: None,
            partial: false,
            error: None,
        }))
    }

    #[test]
    fn one_write_guard_spans_a_reporters_end_its_notes_and_its_finish() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut sink = Whole::boxed(Box::new(Spy(seen.clone())));
        send(&mut *sink, &Event::Note("before".into()));
        send(&mut *sink, &end());
        // Between End and finish the guard holds: an exit waits for the document.
        assert!(crate::signals::held_here());
        send(&mut *sink, &Event::Note("server output".into()));
        finish(&mut *sink);
        assert!(
            !crate::signals::held_here(),
            "released once finish returned"
        );
        let seen = seen.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(
            seen,
            vec![
                ("note", false),
                ("end", true),
                ("note", true),
                ("finish", true)
            ]
        );
    }

    #[test]
    fn a_final_message_never_says_above_of_a_document() {
        assert_eq!(result_place(true), "in the document");
        assert_eq!(result_place(false), "above");
    }

    #[test]
    fn a_document_is_written_under_the_guard_and_whole() {
        struct Probe(Vec<u8>, bool);
        impl Write for Probe {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.1 &= crate::signals::held_here();
                self.0.extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut p = Probe(Vec::new(), true);
        document(&mut p, &serde_json::json!({"kind": "sweep"}));
        assert!(p.1, "every byte was written while the guard was held");
        let text = String::from_utf8(p.0).unwrap_or_default();
        assert_eq!(text, "{\n  \"kind\": \"sweep\"\n}\n");
        assert!(!crate::signals::held_here());
    }
}
