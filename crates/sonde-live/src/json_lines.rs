//! The JSON-lines writer: one compact object per event, like iperf3's `--json-stream`.
//!
//! Each line is `{"event": "start"|"interval"|"end"|"error"|"note", "data": ...}`. The `data`
//! of `start`, `interval` and `end` is the same section object the `-J` document holds (built by
//! [`crate::iperf3_json`]); `error` and `note` carry a string. Lines are flushed as written, so a
//! consumer tailing the output sees each interval when it happens.

use std::io::{self, Write};

use serde_json::{json, Value};
use sonde_stats::model::{Direction, Event, Role};

use crate::iperf3_json;
use crate::sink::Sink;

/// Writes one JSON object per line per event, flushing after each.
pub struct JsonLinesReporter<W: Write> {
    out: W,
    ctx: Option<(Role, Direction)>,
    notes: Vec<String>,
}

impl<W: Write> JsonLinesReporter<W> {
    /// A reporter writing lines to `out`.
    pub fn new(out: W) -> Self {
        JsonLinesReporter {
            out,
            ctx: None,
            notes: Vec::new(),
        }
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn line(&mut self, event: &str, data: Value) -> io::Result<()> {
        let obj = json!({"event": event, "data": data});
        serde_json::to_writer(&mut self.out, &obj)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

impl<W: Write> Sink for JsonLinesReporter<W> {
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        match ev {
            Event::Start(s) => {
                self.ctx = Some((s.role, s.direction));
                self.line("start", iperf3_json::start(s))
            }
            Event::Interval(r) => {
                let (role, dir) = self.ctx.unwrap_or((Role::Client, Direction::Upload));
                self.line("interval", iperf3_json::interval(r, role, dir))
            }
            Event::PeerInterval(r) => {
                let (role, dir) = self.ctx.unwrap_or((Role::Client, Direction::Upload));
                let data = iperf3_json::interval(r, iperf3_json::peer_role(role), dir);
                self.line("peer_interval", data)
            }
            Event::End(s) => {
                let data = iperf3_json::end(s, &self.notes);
                self.line("end", data)
            }
            Event::Note(n) => {
                self.notes.push(n.clone());
                self.line("note", json!(n))
            }
            Event::Error(e) => self.line("error", json!(e)),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonReporter;
    use crate::test_fixtures as fx;

    fn lines(events: &[Event]) -> Vec<Value> {
        let mut out = Vec::new();
        let mut r = JsonLinesReporter::new(&mut out);
        for e in events {
            r.event(e).unwrap();
        }
        r.finish().unwrap();
        drop(r);
        let text = String::from_utf8(out).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn one_line_per_event_with_document_sections() {
        let evs = fx::tcp_upload_2();
        let ls = lines(&evs);
        let kinds: Vec<&str> = ls.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["start", "note", "interval", "interval", "end"]);

        let mut out = Vec::new();
        let mut doc = JsonReporter::new(&mut out);
        for e in &evs {
            doc.event(e).unwrap();
        }
        // Compare after the same text round trip (serde_json's float parsing is not exact).
        let doc: Value = serde_json::from_str(&doc.document().to_string()).unwrap();
        assert_eq!(ls[0]["data"], doc["start"]);
        assert_eq!(ls[1]["data"], "using TCP_INFO");
        assert_eq!(ls[2]["data"], doc["intervals"][0]);
        assert_eq!(ls[4]["data"], doc["end"]);
        assert_eq!(ls[4]["data"]["sum_sent"]["bytes"], 2_500_000_000u64);
    }

    #[test]
    fn errors_are_lines_too() {
        let ls = lines(&fx::partial_no_end());
        let last = ls.last().unwrap();
        assert_eq!(last["event"], "error");
        assert_eq!(last["data"], "control socket has closed unexpectedly");
    }

    #[test]
    fn bidir_interval_uses_start_context() {
        let ls = lines(&fx::tcp_bidir());
        assert_eq!(ls[1]["data"]["sum_bidir_reverse"]["bytes"], 200);
    }
}
