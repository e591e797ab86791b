//! `sonde stress -J` and `--json-stream`: the stress run as one document or one line per event.
//!
//! The document is `{"start", "connect", "intervals": [...], "end", "notes": [...], "error"}`;
//! each section is the `sonde_stats::stress::model` value serialised as it is (its field names
//! are the keys: per interval `connections` with each one's `sent_bytes`, `received_bytes`,
//! `sent_bps`, `received_bps`, `open`, then the sums and `fairness_sent` /
//! `fairness_received`, Jain's index or null). JSON lines are
//! `{"event": "start"|"connect"|"interval"|"end"|"note"|"error", "data": ...}`.

use crate::envelope::Envelope;
use std::io::{self, Write};

use serde_json::{json, Value};
use sonde_stats::stress::model::StressEvent;

use crate::sink::Sink;

/// The event's name and data, as both JSON forms write them.
fn section(ev: &StressEvent) -> (&'static str, Value) {
    let v = |r: Result<Value, serde_json::Error>| r.unwrap_or(Value::Null);
    match ev {
        StressEvent::Start(s) => ("start", v(serde_json::to_value(s))),
        StressEvent::Connected(c) => ("connect", v(serde_json::to_value(c))),
        StressEvent::Interval(i) => ("interval", v(serde_json::to_value(i))),
        StressEvent::End(e) => ("end", v(serde_json::to_value(e))),
        StressEvent::Note(n) => ("note", json!(n)),
        StressEvent::Error(e) => ("error", json!(e)),
    }
}

/// Collects the run and writes one document at [`Sink::finish`].
pub struct StressJsonReporter<W: Write> {
    out: W,
    doc: serde_json::Map<String, Value>,
    intervals: Vec<Value>,
    notes: Vec<Value>,
}

impl<W: Write> StressJsonReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            doc: serde_json::Map::new(),
            intervals: Vec::new(),
            notes: Vec::new(),
        }
    }
}

impl<W: Write> Sink<StressEvent> for StressJsonReporter<W> {
    fn event(&mut self, ev: &StressEvent) -> io::Result<()> {
        let (name, data) = section(ev);
        match name {
            "interval" => self.intervals.push(data),
            "note" => self.notes.push(data),
            _ => {
                self.doc.insert(name.into(), data);
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let mut doc = std::mem::take(&mut self.doc);
        doc.insert(
            "intervals".into(),
            Value::Array(std::mem::take(&mut self.intervals)),
        );
        doc.insert(
            "notes".into(),
            Value::Array(std::mem::take(&mut self.notes)),
        );
        let error = doc.get("error").and_then(Value::as_str).map(str::to_owned);
        let partial = doc
            .get("end")
            .is_none_or(|e| e.get("partial").and_then(Value::as_bool) == Some(true));
        Envelope::new("stress")
            .partial(partial)
            .error(error.as_deref())
            .stamp_map(&mut doc);
        serde_json::to_writer_pretty(&mut self.out, &Value::Object(doc))?;
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
