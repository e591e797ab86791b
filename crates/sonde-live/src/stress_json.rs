//! `sonde stress -J` and `--json-stream`: the stress run as one document or one line per event.
//!
//! The document is `{"start", "connect", "intervals": [...], "end", "notes": [...], "error"}`;
//! each section's keys are the field names of `sonde_stats::stress::model` (per interval `connections` with each one's `sent_bytes`, `received_bytes`,
//! `sent_bps`, `received_bps`, `open`, then the sums and `fairness_sent` /
//! `fairness_received`, Jain's index or null). JSON lines are
//! `{"event": "start"|"connect"|"interval"|"end"|"note"|"error", "data": ...}`. Both are
//! spelled by `sonde_schema::stress::run`'s model ([`crate::stress_model`] maps the events
//! onto it), which `sonde report` reads back.

use std::io::{self, Write};

use serde_json::{json, Value};
use sonde_schema::stress::{run, KIND};
use sonde_schema::{to_value, Envelope};
use sonde_stats::stress::model::StressEvent;

use crate::sink::Sink;
use crate::stress_model as model;

/// The event's name and data, as both JSON forms write them.
fn section(ev: &StressEvent) -> (&'static str, Value) {
    match ev {
        StressEvent::Start(s) => ("start", to_value(&model::start(s))),
        StressEvent::Connected(c) => ("connect", to_value(&model::connect(c))),
        StressEvent::Interval(i) => ("interval", to_value(&model::interval(i))),
        StressEvent::End(e) => ("end", to_value(&model::end(e))),
        StressEvent::Note(n) => ("note", json!(n)),
        StressEvent::Error(e) => ("error", json!(e)),
    }
}

/// Collects the run ([`sonde_schema::stress::run`]'s model) and writes one document at
/// [`Sink::finish`].
pub struct StressJsonReporter<W: Write> {
    out: W,
    start: Option<run::Start>,
    connect: Option<run::Connect>,
    intervals: Vec<run::Interval>,
    end: Option<run::End>,
    notes: Vec<String>,
    /// The last error said.
    error: Option<String>,
}

impl<W: Write> StressJsonReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            start: None,
            connect: None,
            intervals: Vec::new(),
            end: None,
            notes: Vec::new(),
            error: None,
        }
    }

    /// The document so far; the run is partial unless its end says it is whole.
    fn document(&mut self) -> run::RunDocument {
        let end = self.end.take();
        let partial = end.as_ref().is_none_or(|e| e.partial);
        let error = self.error.take();
        run::RunDocument {
            start: self.start.take(),
            connect: self.connect.take(),
            intervals: std::mem::take(&mut self.intervals),
            end,
            notes: std::mem::take(&mut self.notes),
            envelope: Envelope::new(KIND, partial, error.as_deref()),
        }
    }
}

impl<W: Write> Sink<StressEvent> for StressJsonReporter<W> {
    fn event(&mut self, ev: &StressEvent) -> io::Result<()> {
        match ev {
            StressEvent::Start(s) => self.start = Some(model::start(s)),
            StressEvent::Connected(c) => self.connect = Some(model::connect(c)),
            StressEvent::Interval(i) => self.intervals.push(model::interval(i)),
            StressEvent::End(e) => self.end = Some(model::end(e)),
            StressEvent::Note(n) => self.notes.push(n.clone()),
            StressEvent::Error(e) => self.error = Some(e.clone()),
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let doc = to_value(&self.document());
        serde_json::to_writer_pretty(&mut self.out, &doc)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// One compact object per event, flushed as written.
pub struct StressJsonLinesReporter<W: Write> {
    out: W,
}

impl<W: Write> StressJsonLinesReporter<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }
}

impl<W: Write> Sink<StressEvent> for StressJsonLinesReporter<W> {
    fn event(&mut self, ev: &StressEvent) -> io::Result<()> {
        let (name, data) = section(ev);
        serde_json::to_writer(&mut self.out, &json!({"event": name, "data": data}))?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress_table::tests::sample_run;

    #[test]
    fn document_has_every_section() {
        let mut out = Vec::new();
        let mut r = StressJsonReporter::new(&mut out);
        for ev in sample_run() {
            r.event(&ev).unwrap();
        }
        r.finish().unwrap();
        let doc: Value = serde_json::from_slice(&out).unwrap();
        crate::snapshot::check_text("stress_json_1", &String::from_utf8_lossy(&out));
        assert_eq!(doc["start"]["mode"], "echo");
        assert_eq!(doc["connect"]["connected"], 2);
        assert_eq!(doc["intervals"].as_array().unwrap().len(), 1);
        assert_eq!(doc["intervals"][0]["connections"][1]["sent_bytes"], 0);
        assert_eq!(doc["intervals"][0]["fairness_sent"], 0.5);
        assert_eq!(doc["end"]["connections"][0]["close"], "clean");
        assert_eq!(doc["end"]["closed_clean"], 1);
        assert!(doc["error"].is_null());
    }

    #[test]
    fn lines_name_each_event() {
        let mut out = Vec::new();
        let mut r = StressJsonLinesReporter::new(&mut out);
        for ev in sample_run() {
            r.event(&ev).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        let names: Vec<String> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["event"]
                    .as_str()
                    .unwrap()
                    .into()
            })
            .collect();
        assert_eq!(names, ["start", "connect", "interval", "end"]);
    }
}
