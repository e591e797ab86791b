//! JSON for latency runs: one document (`-J`) or one line per event (`--json-stream`).
//!
//! The document is `{"start": LatencyStart, "intervals": [LatencyInterval...], "end":
//! LatencySummary, "notes": [...], "error": "..."}` (`end` and `error` only when present); the
//! field names are those of `sonde_stats::latency::model`, serialised by serde, so the schema
//! is the type. JSON lines are `{"event": "start"|"interval"|"end"|"note"|"error", "data":
//! ...}`, the same tagging as the throughput stream. A run interrupted before its end still
//! yields a valid document with what was measured.

use std::io::{self, Write};

use serde_json::{json, Map, Value};
use sonde_stats::latency::model::LatencyEvent;

/// A consumer of latency events (the latency counterpart of [`crate::Sink`]).
///
/// Calling order: [`LatencySink::event`] for each event, then [`LatencySink::finish`] once,
/// also when the run failed before its `End`.
pub trait LatencySink {
    /// Consume one event.
    ///
    /// # Errors
    /// When the writer fails.
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()>;
    /// Finish the output.
    ///
    /// # Errors
    /// When the writer fails.
    fn finish(&mut self) -> io::Result<()>;
}

impl<S: LatencySink + ?Sized> LatencySink for Box<S> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        (**self).event(ev)
    }
    fn finish(&mut self) -> io::Result<()> {
        (**self).finish()
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// Collects events into one document written at [`LatencySink::finish`].
pub struct LatencyJsonReporter<W: Write> {
    out: W,
    doc: Map<String, Value>,
    intervals: Vec<Value>,
    notes: Vec<Value>,
}

impl<W: Write> LatencyJsonReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            doc: Map::new(),
            intervals: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The document as it stands.
    pub fn document(&self) -> Value {
        let mut d = self.doc.clone();
        d.insert("intervals".into(), Value::Array(self.intervals.clone()));
        d.insert("notes".into(), Value::Array(self.notes.clone()));
        Value::Object(d)
    }
}

impl<W: Write> LatencySink for LatencyJsonReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Start(s) => {
                self.doc.insert("start".into(), to_value(s));
            }
            LatencyEvent::Interval(iv) => self.intervals.push(to_value(iv)),
            LatencyEvent::End(s) => {
                self.doc.insert("end".into(), to_value(s));
            }
            LatencyEvent::Note(n) => self.notes.push(json!(n)),
            LatencyEvent::Error(e) => {
                self.doc.insert("error".into(), json!(e));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let doc = self.document();
        serde_json::to_writer_pretty(&mut self.out, &doc)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// One compact JSON object per event, flushed as written.
pub struct LatencyJsonLinesReporter<W: Write> {
    out: W,
}

impl<W: Write> LatencyJsonLinesReporter<W> {
    pub fn new(out: W) -> Self {
        Self { out }
    }
}

impl<W: Write> LatencySink for LatencyJsonLinesReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, ev)?;
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
    use crate::latency_table::LatencyTableReporter;
    use sonde_stats::latency::model::{LatencyMode, LatencyStart, LatencySummary};
    use sonde_stats::latency::tracker::{ProbeTracker, Reply, TrackerConfig};

    fn events() -> Vec<LatencyEvent> {
        let mut t = ProbeTracker::new(TrackerConfig::default());
        for seq in 1..=4 {
            t.on_sent(seq);
            if seq != 3 {
                t.on_reply(&Reply {
                    seq,
                    sent_ns: 0,
                    recv_ns: seq * 1_000_000,
                    server: None,
                });
            }
        }
        let iv = t.take_interval(0.0, 1.0);
        let start = LatencyStart {
            version: "sonde test".into(),
            mode: LatencyMode::Icmp,
            target: "h".into(),
            remote: "192.0.2.1".into(),
            local: String::new(),
            family: "IPv4".into(),
            size: 56,
            size_meaning: "ICMP echo data bytes".into(),
            interval_secs: 0.01,
            flood: false,
            window: 1,
            count: Some(4),
            duration_secs: None,
            late_ms: None,
            timestamping: "kernel".into(),
            clock_synced: false,
            timestamp_unix: 0.0,
        };
        let end = LatencySummary {
            seconds: 1.0,
            loss: t.loss(),
            rtt: t.rtt(),
            jitter_ms: t.jitter_ms(),
            ipdv: t.ipdv(),
            one_way: None,
            server_turnaround_us: None,
            schedule: None,
            rate_per_second: 3.0,
            partial: false,
            error: None,
        };
        vec![
            LatencyEvent::Start(Box::new(start)),
            LatencyEvent::Interval(iv),
            LatencyEvent::End(Box::new(end)),
        ]
    }

    #[test]
    fn document_and_lines_carry_the_same_figures() {
        let mut doc = LatencyJsonReporter::new(Vec::new());
        let mut lines = LatencyJsonLinesReporter::new(Vec::new());
        for e in events() {
            doc.event(&e).unwrap();
            lines.event(&e).unwrap();
        }
        let d = doc.document();
        assert_eq!(d["start"]["mode"], "icmp");
        assert_eq!(d["end"]["loss"]["lost"], 1);
        assert_eq!(d["end"]["rtt"]["max_ms"], 4.0);
        assert_eq!(d["intervals"][0]["received"], 3);
        let text = String::from_utf8(lines.out).unwrap();
        let ls: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ls.len(), 3);
        assert_eq!(ls[2]["event"], "end");
        assert_eq!(ls[2]["data"]["loss"], d["end"]["loss"]);
    }

    #[test]
    fn table_says_what_the_size_means_and_prints_the_summary() {
        let mut t = LatencyTableReporter::new(Vec::new());
        for e in events() {
            t.event(&e).unwrap();
        }
        t.finish().unwrap();
        let out = String::from_utf8(t.into_inner()).unwrap();
        assert!(
            out.contains("ICMP echo to h (192.0.2.1, IPv4), every 10 ms"),
            "{out}"
        );
        assert!(out.contains("size: 56 B = ICMP echo data bytes"), "{out}");
        assert!(
            out.contains("4 sent, 3 answered, 1 lost (25.00 %)"),
            "{out}"
        );
        assert!(out.contains("RTT ms: min 1.000"), "{out}");
    }

    #[test]
    fn interrupted_document_is_still_valid() {
        let mut doc = LatencyJsonReporter::new(Vec::new());
        doc.event(&LatencyEvent::Error("cannot open an ICMP socket".into()))
            .unwrap();
        doc.finish().unwrap();
        let v: Value = serde_json::from_slice(&doc.out).unwrap();
        assert_eq!(v["error"], "cannot open an ICMP socket");
    }
}
