//! The iperf3 `-J` compatible document writer: collects events, writes one JSON document.
//!
//! iperf3 prints its JSON only when the test is over, and so does this sink: nothing is written
//! until [`Sink::finish`]. A run that dies before its summary still gets a document with the
//! `start` section, the intervals so far, an empty-but-for-`sonde` `end` and the top-level
//! `error`. Section shapes and sonde's extra fields are listed in [`crate::iperf3_json`]; the
//! document is the typed model of [`sonde_schema::throughput`], which `sonde report` reads.

use std::io::{self, Write};

use serde_json::Value;
use sonde_schema::throughput::{self as schema, end::EndSonde, Interval, Start};
use sonde_stats::model::{Direction, Event, Role, TestSummary};

use crate::iperf3_json;
use crate::sink::Sink;

/// Writes one pretty-printed iperf3-style JSON document at [`Sink::finish`].
pub struct JsonReporter<W: Write> {
    out: W,
    start: Option<Start>,
    ctx: Option<(Role, Direction)>,
    intervals: Vec<Interval>,
    peer_intervals: Vec<Interval>,
    summary: Option<TestSummary>,
    notes: Vec<String>,
    errors: Vec<String>,
    finished: bool,
    title: Option<String>,
    extra_data: Option<String>,
    server_output: Option<ServerOutputSlot>,
}

/// Where the caller puts the server's own document once it has it (`--get-server-output`);
/// it is written as iperf3's `server_output_json`.
pub type ServerOutputSlot = std::sync::Arc<std::sync::Mutex<Option<Value>>>;

impl<W: Write> JsonReporter<W> {
    /// Adds iperf3's top-level `"extra_data"` (`--extra-data`) to the document.
    pub fn with_extra_data(mut self, extra: Option<String>) -> Self {
        self.extra_data = extra;
        self
    }

    /// Writes the value put into `slot` (before [`Sink::finish`]) as `"server_output_json"`.
    pub fn with_server_output(mut self, slot: Option<ServerOutputSlot>) -> Self {
        self.server_output = slot;
        self
    }

    /// Adds iperf3's top-level `"title"` (`-T`) to the document.
    pub fn with_title(mut self, title: Option<String>) -> Self {
        self.title = title;
        self
    }

    /// A reporter writing its document to `out`.
    pub fn new(out: W) -> Self {
        JsonReporter {
            out,
            start: None,
            ctx: None,
            intervals: Vec::new(),
            peer_intervals: Vec::new(),
            summary: None,
            notes: Vec::new(),
            errors: Vec::new(),
            finished: false,
            title: None,
            extra_data: None,
            server_output: None,
        }
    }

    /// The document as it would be written now (useful for `--json-stream-full`-like callers).
    pub fn document(&self) -> Value {
        sonde_schema::to_value(&self.model())
    }

    /// The document's model ([`sonde_schema::throughput`]) as it would be written now.
    pub fn model(&self) -> schema::ThroughputDocument {
        let mut errors = self.errors.clone();
        if let Some(e) = self.summary.as_ref().and_then(|s| s.error.as_ref()) {
            if !errors.contains(e) {
                errors.push(e.clone());
            }
        }
        let (role, direction) = match self.ctx {
            Some((r, d)) => (
                Some(iperf3_json::role_name(r).to_owned()),
                Some(iperf3_json::direction_name(d).to_owned()),
            ),
            None => (None, None),
        };
        let end = match &self.summary {
            Some(s) => iperf3_json::end_model(s, &self.notes),
            None => schema::End {
                sonde: Some(EndSonde {
                    partial: true,
                    role: role.clone(),
                    direction: direction.clone(),
                    remote_cpu_known: false,
                    error: errors.first().cloned(),
                    notes: self.notes.clone(),
                }),
                ..Default::default()
            },
        };
        let partial = !matches!(&self.summary, Some(s) if !s.partial);
        let kind = match self.ctx {
            Some((Role::Server, _)) => "server",
            _ => "client",
        };
        let error = (!errors.is_empty()).then(|| errors.join("; "));
        schema::ThroughputDocument {
            title: self.title.clone(),
            extra_data: self.extra_data.clone(),
            start: self.start.clone().unwrap_or_default(),
            intervals: self.intervals.clone(),
            end: Some(end),
            server_output_json: self
                .server_output
                .as_ref()
                .and_then(|s| s.lock().ok().and_then(|v| v.clone())),
            sonde: Some(schema::DocSonde {
                role,
                direction,
                partial,
                complete: self.summary.is_some(),
                peer_intervals: Some(self.peer_intervals.clone()),
                notes: self.notes.clone(),
                errors,
            }),
            envelope: schema::Iperf3Envelope::new(kind, partial, error.as_deref()),
        }
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> Sink for JsonReporter<W> {
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        match ev {
            Event::Start(s) => {
                self.ctx = Some((s.role, s.direction));
                self.start = Some(iperf3_json::start_model(s));
            }
            Event::Interval(r) => {
                let (role, dir) = self.ctx.unwrap_or((Role::Client, Direction::Upload));
                self.intervals
                    .push(iperf3_json::interval_model(r, role, dir));
            }
            Event::PeerInterval(r) => {
                let (role, dir) = self.ctx.unwrap_or((Role::Client, Direction::Upload));
                self.peer_intervals.push(iperf3_json::interval_model(
                    r,
                    iperf3_json::peer_role(role),
                    dir,
                ));
            }
            Event::End(s) => {
                self.ctx.get_or_insert((s.role, s.direction));
                self.summary = Some((**s).clone());
            }
            Event::Note(n) => self.notes.push(n.clone()),
            Event::Error(e) => self.errors.push(e.clone()),
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let doc = self.document();
        serde_json::to_writer_pretty(&mut self.out, &doc)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures as fx;
    use serde_json::json;

    fn run(events: &[Event]) -> Value {
        serde_json::from_str(&run_text(events)).unwrap()
    }

    /// The document's bytes as written.
    fn run_text(events: &[Event]) -> String {
        let mut out = Vec::new();
        let mut r = JsonReporter::new(&mut out);
        for e in events {
            r.event(e).unwrap();
        }
        r.finish().unwrap();
        r.finish().unwrap(); // second call writes nothing
        drop(r);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn tcp_upload_two_streams() {
        let d = run(&fx::tcp_upload_2());
        crate::snapshot::check_text("json_1", &run_text(&fx::tcp_upload_2()));
        let st = &d["start"];
        assert_eq!(st["connected"][1]["socket"], 3);
        assert_eq!(st["connected"][0]["local_host"], "10.0.0.1");
        assert_eq!(st["connected"][0]["local_port"], 40001);
        assert_eq!(st["connected"][0]["remote_port"], 5201);
        assert_eq!(st["connecting_to"]["host"], "10.0.0.2");
        assert_eq!(st["connecting_to"]["port"], 5201);
        assert_eq!(st["timestamp"]["time"], "Sat, 21 Nov 2026 23:42:00 GMT");
        assert_eq!(st["timestamp"]["timesecs"], 1_795_304_520);
        assert_eq!(st["test_start"]["protocol"], "TCP");
        assert_eq!(st["test_start"]["num_streams"], 2);
        assert_eq!(st["test_start"]["duration"], 10);
        assert_eq!(st["test_start"]["reverse"], 0);
        assert_eq!(st["test_start"]["bidir"], 0);
        assert_eq!(st["cookie"], fx::COOKIE);
        assert_eq!(st["tcp_mss_default"], 1_448);
        assert!(st.get("tcp_mss").is_none());
        assert_eq!(st["sndbuf_actual"], 16_384);
        assert_eq!(st["rcvbuf_actual"], 131_072);
        assert_eq!(st["fq_rate"], 0);
        assert_eq!(st["test_start"]["fqrate"], 0);
        assert_eq!(st["test_start"]["gso"], 0);
        assert_eq!(st["test_start"]["gro"], 0);

        let iv = &d["intervals"];
        assert_eq!(iv.as_array().unwrap().len(), 2);
        let s0 = &iv[0]["streams"][0];
        assert_eq!(s0["socket"], 1);
        assert_eq!(s0["seconds"], 1.0);
        assert_eq!(s0["bytes"], 125_000_000u64);
        assert_eq!(s0["retransmits"], 2);
        assert_eq!(s0["snd_cwnd"], 1_048_576);
        assert_eq!(s0["rtt"], 250);
        assert_eq!(s0["snd_wnd"], 65_536);
        assert_eq!(s0["reorder"], 3);
        assert_eq!(s0["sender"], true);
        assert_eq!(s0["omitted"], false);
        assert_eq!(iv[0]["sum"]["bytes"], 250_000_000u64);
        assert_eq!(iv[0]["sum"]["retransmits"], 3);
        assert!(iv[0].get("sum_bidir_reverse").is_none());

        let end = &d["end"];
        assert_eq!(end["streams"][0]["sender"]["socket"], 1);
        assert_eq!(end["streams"][0]["sender"]["max_snd_cwnd"], 2_097_152);
        assert_eq!(end["streams"][0]["sender"]["max_snd_wnd"], 131_072);
        assert_eq!(end["streams"][0]["sender"]["reorder"], 4);
        assert!(end["streams"][0]["receiver"].get("max_snd_wnd").is_none());
        assert_eq!(end["streams"][0]["sender"]["sender"], true);
        assert_eq!(end["streams"][0]["receiver"]["sender"], false);
        assert!(end["streams"][0]["receiver"].get("retransmits").is_none());
        assert_eq!(end["sum_sent"]["bytes"], 2_500_000_000u64);
        assert_eq!(end["sum_sent"]["retransmits"], 30);
        assert_eq!(end["sum_sent"]["sender"], true);
        assert_eq!(end["sum_received"]["bytes"], 2_499_000_000u64);
        assert_eq!(end["sum_received"]["sender"], true);
        assert!(end.get("sum").is_none());
        assert_eq!(end["cpu_utilization_percent"]["host_total"], 12.5);
        assert_eq!(end["cpu_utilization_percent"]["remote_total"], 30.0);
        assert_eq!(end["sender_tcp_congestion"], "cubic");
        assert_eq!(end["sonde"]["partial"], false);
        assert_eq!(end["sonde"]["direction"], "upload");
        assert_eq!(end["sonde"]["notes"][0], "using TCP_INFO");
        assert!(d.get("error").is_none());
        assert_eq!(d["sonde"]["complete"], true);
        assert_eq!(d["sonde"]["role"], "client");
    }

    #[test]
    fn udp_reverse_on_client() {
        let d = run(&fx::udp_reverse());
        crate::snapshot::check_text("json_2", &run_text(&fx::udp_reverse()));
        assert_eq!(d["start"]["test_start"]["protocol"], "UDP");
        assert_eq!(d["start"]["test_start"]["reverse"], 1);
        let s0 = &d["intervals"][0]["streams"][0];
        assert_eq!(s0["sender"], false);
        assert_eq!(s0["jitter_ms"], 0.25);
        assert_eq!(s0["lost_packets"], 3);
        assert_eq!(s0["packets"], 100);
        assert_eq!(s0["lost_percent"], 3.0);
        assert_eq!(s0["duplicates"], 1);
        assert!(s0.get("retransmits").is_none());
        assert_eq!(d["intervals"][0]["sum"]["lost_packets"], 3);
        let end = &d["end"];
        let u = &end["streams"][0]["udp"];
        assert_eq!(u["socket"], 1);
        assert_eq!(u["packets"], 1000);
        assert_eq!(u["lost_packets"], 10);
        assert_eq!(u["lost_percent"], 1.0);
        assert_eq!(u["out_of_order"], 2);
        assert_eq!(u["sender"], false);
        assert_eq!(end["sum"]["packets"], 1000);
        assert_eq!(end["sum"]["sender"], false);
        // As iperf3: UDP's sum_sent is the sender's, sum_received the receiver's, on any end.
        assert_eq!(end["sum_sent"]["sender"], true);
        assert_eq!(end["sum_received"]["sender"], false);
        assert_eq!(d["start"]["test_start"]["gso"], 1);
        assert!(d["start"].get("tcp_mss_default").is_none());
        assert_eq!(end["sum_received"]["duplicates"], 1);
        assert_eq!(end["sum_received"]["packets"], 998);
        assert!(end.get("sender_tcp_congestion").is_none());
        assert_eq!(end["sonde"]["direction"], "reverse");
    }

    #[test]
    fn figures_the_kernel_did_not_give_are_left_out() {
        let mut evs = fx::tcp_upload_2();
        if let Event::Start(s) = &mut evs[0] {
            s.sockets = Default::default();
            s.tcp_mss = Some(1_200);
        }
        for e in &mut evs {
            match e {
                Event::Interval(r) => {
                    for st in &mut r.streams {
                        if let Some(t) = &mut st.tcp {
                            (t.snd_wnd, t.reorder) = (None, None);
                        }
                    }
                }
                Event::End(s) => {
                    for st in &mut s.streams {
                        if let Some(t) = st.sender.as_mut().and_then(|v| v.tcp.as_mut()) {
                            (t.max_snd_wnd, t.reorder) = (None, None);
                        }
                    }
                }
                _ => {}
            }
        }
        let d = run(&evs);
        crate::snapshot::check_text("json_3", &run_text(&evs));
        let st = &d["start"];
        assert_eq!(st["tcp_mss"], 1_200);
        for k in ["tcp_mss_default", "sndbuf_actual", "rcvbuf_actual"] {
            assert!(st.get(k).is_none(), "{k}");
        }
        let s0 = &d["intervals"][0]["streams"][0];
        assert!(s0.get("snd_wnd").is_none() && s0.get("reorder").is_none());
        assert_eq!(s0["pmtu"], 1500);
        let sender = &d["end"]["streams"][0]["sender"];
        assert!(sender.get("max_snd_wnd").is_none() && sender.get("reorder").is_none());
        assert_eq!(sender["max_snd_cwnd"], 2_097_152);
    }

    #[test]
    fn bidir_splits_sums_by_direction() {
        let d = run(&fx::tcp_bidir());
        crate::snapshot::check_text("json_4", &run_text(&fx::tcp_bidir()));
        assert_eq!(d["start"]["test_start"]["bidir"], 1);
        let iv = &d["intervals"][0];
        assert_eq!(iv["sum"]["sender"], true);
        assert_eq!(iv["sum"]["bytes"], 100);
        assert_eq!(iv["sum_bidir_reverse"]["sender"], false);
        assert_eq!(iv["sum_bidir_reverse"]["bytes"], 200);
        let end = &d["end"];
        assert_eq!(end["sum_sent"]["bytes"], 1000);
        assert_eq!(end["sum_sent"]["sender"], true);
        assert_eq!(end["sum_sent_bidir_reverse"]["bytes"], 2000);
        assert_eq!(end["sum_sent_bidir_reverse"]["sender"], false);
        assert_eq!(end["sum_received_bidir_reverse"]["bytes"], 1990);
        assert_eq!(end["streams"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn bidir_on_server_keeps_client_to_server_as_sum() {
        let mut evs = fx::tcp_bidir();
        if let Event::Start(s) = &mut evs[0] {
            s.role = Role::Server;
        }
        let d = run(&evs);
        crate::snapshot::check_text("json_5", &run_text(&evs));
        assert_eq!(d["intervals"][0]["sum"]["sender"], false);
        assert_eq!(d["intervals"][0]["sum"]["bytes"], 200);
        assert!(d["start"].get("accepted_connection").is_some());
    }

    #[test]
    fn partial_run_without_summary() {
        let d = run(&fx::partial_no_end());
        crate::snapshot::check_text("json_6", &run_text(&fx::partial_no_end()));
        assert_eq!(d["error"], "control socket has closed unexpectedly");
        assert_eq!(d["intervals"].as_array().unwrap().len(), 1);
        assert_eq!(d["start"]["connected"][0]["socket"], 1);
        assert_eq!(d["end"]["sonde"]["partial"], true);
        assert_eq!(d["sonde"]["partial"], true);
        assert_eq!(d["sonde"]["complete"], false);
    }

    #[test]
    fn partial_summary_error_is_reported_once() {
        let d = run(&fx::partial_with_end());
        crate::snapshot::check_text("json_7", &run_text(&fx::partial_with_end()));
        assert_eq!(d["error"], "interrupted");
        assert_eq!(d["end"]["sonde"]["partial"], true);
        assert_eq!(d["end"]["cpu_utilization_percent"]["remote_total"], 0.0);
        assert_eq!(d["end"]["sonde"]["remote_cpu_known"], false);
        assert!(d["end"]["streams"][0].get("receiver").is_none());
    }

    #[test]
    fn nothing_but_an_error() {
        let d = run(&[Event::Error("connection refused".into())]);
        crate::snapshot::check_text(
            "json_8",
            &run_text(&[Event::Error("connection refused".into())]),
        );
        assert_eq!(d["error"], "connection refused");
        assert_eq!(d["start"], json!({}));
        assert_eq!(d["sonde"]["role"], Value::Null);
    }
}
