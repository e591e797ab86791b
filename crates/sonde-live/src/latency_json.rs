//! JSON for latency runs: one document (`-J`) or one line per event (`--json-stream`).
//!
//! The document is sonde's own (iperf3 has no latency mode):
//!
//! - `start`: what was probed and how (`LatencyStart`: mode, target, remote, size and what it
//!   counts, interval or flood, timestamping method, ...).
//! - `intervals`: one row per report interval (`LatencyInterval`: start, end, sent, received,
//!   lost, rtt), counted by send time.
//! - `end`: the summary (`LatencySummary`: seconds, loss, rtt, jitter, ipdv, one_way, schedule,
//!   rate_per_second, partial, error).
//! - `round_trips`: one record per probe, as irtt's round_trips: `seq`, `sent_unix_ns`,
//!   `received_unix_ns` and `rtt_ms` (null when lost), `lost`, and `up_ms` / `down_ms` when
//!   one-way delays are measured (`--clock-synced`). Kept for the first [`ROUND_TRIPS_MAX`]
//!   probes; `round_trips_omitted` counts the probes past that (they are in the summary only,
//!   and a note says so), so memory stays bounded in a long run at a high rate.
//! - `notes`; and the envelope every sonde document has ([`crate::envelope`]): `kind`
//!   (`"latency"`), `partial`, `error` (null, or why the run failed).
//!
//! `start` and `end` appear only when present. The document is the typed model
//! [`sonde_schema::latency`] (mapped from `sonde_stats::latency::model` by
//! [`crate::latency_model`]), the types `sonde report` reads it back with. JSON lines
//! are `{"event": "start"|"interval"|"end"|"note"|"error", "data": ...}`, the same tagging as
//! the throughput stream, plus `"round_trip"` per answered probe when asked for (`-v`). A run
//! interrupted before its end still yields a valid document with what was measured.

use std::io::{self, Write};

use serde_json::Value;
use sonde_schema::latency::{LatencyDocument, LatencyInterval, LatencyStart, LatencySummary};
use sonde_stats::latency::model::{LatencyEvent, ProbeSent, RoundTrip};

use crate::latency_model;
use crate::sink::Sink;

pub use sonde_schema::latency::ProbeRecord;

/// Per-probe records kept in one document (about 9 MB at most).
pub const ROUND_TRIPS_MAX: usize = 100_000;

/// The per-probe records of a run, the first `cap` probes of it.
#[derive(Debug, Clone)]
struct RoundTrips {
    cap: usize,
    /// Record of probe n at index n − 1.
    records: Vec<ProbeRecord>,
    omitted: u64,
}

impl RoundTrips {
    fn sent(&mut self, p: &ProbeSent) {
        if self.records.len() >= self.cap {
            self.omitted += 1;
            return;
        }
        self.records.push(ProbeRecord::sent(p.seq, p.sent_unix_ns));
    }

    fn answered(&mut self, r: &RoundTrip) {
        let i = usize::try_from(r.seq.wrapping_sub(1)).unwrap_or(usize::MAX);
        if let Some(rec) = self.records.get_mut(i).filter(|x| x.seq == r.seq) {
            rec.received_unix_ns = Some(r.received_unix_ns);
            rec.rtt_ms = Some(r.rtt_ms);
            rec.up_ms = r.up_ms;
            rec.down_ms = r.down_ms;
            rec.lost = false;
        }
    }
}

/// Collects events into one document ([`sonde_schema::latency::LatencyDocument`]) written at
/// [`Sink::finish`].
pub struct LatencyJsonReporter<W: Write> {
    out: W,
    start: Option<LatencyStart>,
    end: Option<LatencySummary>,
    error: Option<String>,
    intervals: Vec<LatencyInterval>,
    notes: Vec<String>,
    round_trips: RoundTrips,
}

impl<W: Write> LatencyJsonReporter<W> {
    pub fn new(out: W) -> Self {
        Self::with_cap(out, ROUND_TRIPS_MAX)
    }

    /// Keeps per-probe records for the first `cap` probes only.
    pub fn with_cap(out: W, cap: usize) -> Self {
        Self {
            out,
            start: None,
            end: None,
            error: None,
            intervals: Vec::new(),
            notes: Vec::new(),
            round_trips: RoundTrips {
                cap,
                records: Vec::new(),
                omitted: 0,
            },
        }
    }

    /// The document as it stands.
    pub fn document(&self) -> Value {
        sonde_schema::to_value(&self.model(self.round_trips.records.clone()))
    }

    /// The document with these per-probe records (moved in: a long run holds many).
    fn model(&self, round_trips: Vec<ProbeRecord>) -> LatencyDocument {
        let rt = &self.round_trips;
        let mut notes = self.notes.clone();
        if rt.omitted > 0 {
            notes.push(format!(
                "round_trips holds the first {} probes; the {} after them are in the summary only",
                rt.cap, rt.omitted
            ));
        }
        let error = self
            .error
            .clone()
            .or_else(|| self.end.as_ref().and_then(|e| e.error.clone()));
        // No summary, or one that says so: the run did not reach its end.
        let partial = self.end.as_ref().is_none_or(|e| e.partial);
        LatencyDocument {
            start: self.start.clone(),
            intervals: self.intervals.clone(),
            end: self.end.clone(),
            notes,
            round_trips,
            round_trips_omitted: rt.omitted,
            envelope: sonde_schema::Envelope::new("latency", partial, error.as_deref()),
        }
    }
}

impl<W: Write> Sink<LatencyEvent> for LatencyJsonReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Start(s) => self.start = Some(latency_model::start(s)),
            LatencyEvent::Interval(iv) => self.intervals.push(latency_model::interval(iv)),
            LatencyEvent::End(s) => self.end = Some((**s).clone()),
            LatencyEvent::Note(n) => self.notes.push(n.clone()),
            LatencyEvent::Error(e) => self.error = Some(e.clone()),
            LatencyEvent::Sent(p) => self.round_trips.sent(p),
            LatencyEvent::RoundTrip(r) => self.round_trips.answered(r),
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        let records = std::mem::take(&mut self.round_trips.records);
        let doc = self.model(records);
        let written = serde_json::to_writer_pretty(&mut self.out, &doc);
        self.round_trips.records = doc.round_trips;
        written?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// One compact JSON object per event, flushed as written.
pub struct LatencyJsonLinesReporter<W: Write> {
    out: W,
    per_probe: bool,
}

impl<W: Write> LatencyJsonLinesReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            per_probe: false,
        }
    }

    /// A `round_trip` line per answered probe (`-v`).
    pub fn per_probe(mut self, on: bool) -> Self {
        self.per_probe = on;
        self
    }
}

impl<W: Write> Sink<LatencyEvent> for LatencyJsonLinesReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Sent(_) => return Ok(()),
            LatencyEvent::RoundTrip(_) if !self.per_probe => return Ok(()),
            _ => {}
        }
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

    /// A run of four probes, the third lost, with the per-probe events the runtime emits.
    fn events() -> Vec<LatencyEvent> {
        let mut t = ProbeTracker::new(TrackerConfig::default());
        let mut probes = Vec::new();
        for seq in 1..=4 {
            t.on_sent(seq);
            probes.push(LatencyEvent::Sent(ProbeSent {
                seq,
                sent_unix_ns: seq * 10,
            }));
            if seq != 3 {
                t.on_reply(&Reply {
                    seq,
                    sent_ns: seq * 10,
                    recv_ns: seq * 10 + seq * 1_000_000,
                    server: None,
                });
                probes.push(LatencyEvent::RoundTrip(*t.last_round_trip().unwrap()));
            }
        }
        t.close_interval(1.0);
        let iv = t.pop_interval(1.0, 0.0, true).unwrap();
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
            rtt_histogram: t.rtt_histogram(),
            jitter_ms: t.jitter_ms(),
            ipdv: t.ipdv(),
            one_way: None,
            server_turnaround_us: None,
            schedule: None,
            rate_per_second: 3.0,
            partial: false,
            error: None,
        };
        let mut evs = vec![LatencyEvent::Start(Box::new(start))];
        evs.extend(probes);
        evs.push(LatencyEvent::Interval(iv));
        evs.push(LatencyEvent::End(Box::new(end)));
        evs
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
        crate::snapshot::check("latency_json_1", &d);
        assert_eq!(d["start"]["mode"], "icmp");
        assert_eq!(d["end"]["loss"]["lost"], 1);
        assert_eq!(d["end"]["rtt"]["max_ms"], 4.0);
        assert_eq!(d["intervals"][0]["received"], 3);
        assert_eq!(d["intervals"][0]["lost"], 1);
        let text = String::from_utf8(lines.out).unwrap();
        let ls: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(ls.len(), 3, "no per-probe lines unless asked: {text}");
        assert_eq!(ls[2]["event"], "end");
        assert_eq!(ls[2]["data"]["loss"], d["end"]["loss"]);
    }

    #[test]
    fn each_part_of_the_document_is_the_event_key_for_key() {
        let mut doc = LatencyJsonReporter::new(Vec::new());
        let evs = events();
        for e in &evs {
            doc.event(e).unwrap();
        }
        let d = doc.document();
        // The summary (`end`) is the stats type as it is: the snapshot holds its bytes.
        crate::snapshot::check("latency_json_2", &d);
        for e in &evs {
            let (key, want) = match e {
                LatencyEvent::Start(s) => (&d["start"], serde_json::to_value(s).unwrap()),
                LatencyEvent::Interval(iv) => {
                    (&d["intervals"][0], serde_json::to_value(iv).unwrap())
                }
                _ => continue,
            };
            assert_eq!(key, &want);
        }
        assert_eq!(
            (&d["kind"], &d["partial"], &d["error"]),
            (&"latency".into(), &false.into(), &Value::Null)
        );
        let back: LatencyDocument = sonde_schema::from_value("latency", d).unwrap();
        assert_eq!(back.round_trips.len(), 4);
    }

    #[test]
    fn round_trips_record_every_probe_and_flag_the_lost_one() {
        let mut doc = LatencyJsonReporter::new(Vec::new());
        for e in events() {
            doc.event(&e).unwrap();
        }
        let d = doc.document();
        crate::snapshot::check("latency_json_3", &d);
        let rts = d["round_trips"].as_array().unwrap();
        assert_eq!(rts.len(), 4);
        assert_eq!(d["round_trips_omitted"], 0);
        for (i, r) in rts.iter().enumerate() {
            let seq = i as u64 + 1;
            assert_eq!(r["seq"], seq);
            assert_eq!(r["sent_unix_ns"], seq * 10);
            assert_eq!(r["lost"], seq == 3, "{r}");
            if seq == 3 {
                assert!(r["rtt_ms"].is_null() && r["received_unix_ns"].is_null());
            } else {
                assert_eq!(r["rtt_ms"], seq as f64);
                assert_eq!(r["received_unix_ns"], seq * 10 + seq * 1_000_000);
            }
            assert!(r.get("up_ms").is_none(), "one-way only when measured");
        }
    }

    #[test]
    fn round_trips_are_capped_with_a_note() {
        let mut doc = LatencyJsonReporter::with_cap(Vec::new(), 2);
        for e in events() {
            doc.event(&e).unwrap();
        }
        let d = doc.document();
        crate::snapshot::check("latency_json_4", &d);
        assert_eq!(d["round_trips"].as_array().unwrap().len(), 2);
        assert_eq!(d["round_trips"][1]["rtt_ms"], 2.0);
        assert_eq!(d["round_trips_omitted"], 2);
        let notes = d["notes"].to_string();
        assert!(notes.contains("first 2 probes"), "{notes}");
    }

    #[test]
    fn per_probe_lines_when_asked() {
        let mut lines = LatencyJsonLinesReporter::new(Vec::new()).per_probe(true);
        let mut table = LatencyTableReporter::new(Vec::new()).verbose(true);
        for e in events() {
            lines.event(&e).unwrap();
            table.event(&e).unwrap();
        }
        let text = String::from_utf8(lines.out).unwrap();
        let rts: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["event"] == "round_trip")
            .collect();
        let seqs: Vec<u64> = rts
            .iter()
            .map(|v| v["data"]["seq"].as_u64().unwrap())
            .collect();
        assert_eq!(seqs, [1, 2, 4]);
        let out = String::from_utf8(table.into_inner()).unwrap();
        assert!(
            out.contains("56 bytes from 192.0.2.1: seq=2 rtt=2.000 ms\n"),
            "{out}"
        );
        assert_eq!(out.matches("bytes from").count(), 3, "{out}");
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
            out.contains("Summary over 1.00 s: 4 sent, 3 answered, 1 lost (25.00 %)"),
            "{out}"
        );
        assert!(
            !out.contains("bytes from"),
            "per-probe lines only with -v: {out}"
        );
        // The summary is a table: a header and rows whose columns line up under it.
        let lines: Vec<&str> = out.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.starts_with("delay ms"))
            .unwrap();
        let rtt = lines[head + 1];
        assert!(rtt.starts_with("RTT "), "{out}");
        let cols: Vec<&str> = rtt.split_whitespace().collect();
        assert_eq!(
            cols,
            ["RTT", "3", "1.000", "2.333", "2.001", "4.000", "4.000", "4.000", "4.000", "1.528"]
        );
        for name in ["min", "median", "p99.9", "stddev"] {
            let h = lines[head].find(name).unwrap() + name.len();
            assert!(
                rtt.as_bytes()[h - 1].is_ascii_digit(),
                "{name} column: {out}"
            );
            assert!(
                h == rtt.len() || rtt.as_bytes()[h] == b' ',
                "{name} column: {out}"
            );
        }
        let counts = lines.iter().position(|l| l.starts_with("probes")).unwrap();
        let c: Vec<&str> = lines[counts + 1].split_whitespace().collect();
        assert_eq!(
            c,
            ["4", "3", "1", "25.00", "-", "-", "0", "0", "0"],
            "{out}"
        );
        assert!(out.contains("0.00-1.00 s"), "{out}");
    }

    #[test]
    fn interrupted_document_is_still_valid() {
        let mut doc = LatencyJsonReporter::new(Vec::new());
        doc.event(&LatencyEvent::Error("cannot open an ICMP socket".into()))
            .unwrap();
        doc.finish().unwrap();
        let v: Value = serde_json::from_slice(&doc.out).unwrap();
        assert_eq!(v["error"], "cannot open an ICMP socket");
        assert_eq!(v["partial"], true);
        assert!(v.get("start").is_none() && v.get("end").is_none(), "{v}");
    }
}
