//! iperf 2's CSV report style (`-y C`), so that a script written for iperf 2's output reads
//! sonde's results. Learnt from Debian's iperf 2.1.8 on loopback (`iperf -s -y C`,
//! `iperf -c 127.0.0.1 -y C`, with `-i 1`, `-P 2`, `-u`, `-R`).
//!
//! One line per stream per interval, a sum line per direction when it has more than one stream,
//! then the same at the end of the test (the summary, spanning the whole test). Columns, comma
//! separated, no header, no spaces:
//!
//! | # | column | sonde fills it with |
//! |---|--------|---------------------|
//! | 1 | timestamp | `YYYYMMDDHHMMSS` of the span's end (test start + span end), in the time zone the reporter is given: the command line passes local time, as iperf 2 prints; [`utc_stamp`] otherwise |
//! | 2, 3 | source address, port | the stream's **sender** (iperf 2's rule: the client's port first on an upload, the server's on `-R`, at both ends) |
//! | 4, 5 | destination address, port | the stream's receiver |
//! | 6 | transfer id | the stream's id (1-based within the test); `-1` on a sum line |
//! | 7 | interval | `start-end` in seconds, one decimal (`0.0-1.0`) |
//! | 8 | bytes | bytes moved in the span |
//! | 9 | bits per second | the measured rate over the span's real length, rounded to an integer |
//!
//! UDP lines add five columns:
//!
//! | # | column | on the receiver's lines | on the sender's lines |
//! |---|--------|-------------------------|-----------------------|
//! | 10 | jitter, ms (3 decimals) | RFC 3550 jitter | `0.000` |
//! | 11 | lost datagrams | lost | `0` |
//! | 12 | total datagrams | expected (received + lost) | datagrams sent |
//! | 13 | lost percent (3 decimals) | lost / total | `0.000` |
//! | 14 | out-of-order datagrams | late arrivals | `0` |
//!
//! The sender's jitter, loss and out-of-order columns are zeros as iperf 2 writes them (it
//! measures none of them). A sum line takes its addresses and ports from the direction's
//! first stream. Each host writes its own view only: the client's lines are its own figures
//! (the server's view of an upload is not added; iperf 2's CSV client does not add it either),
//! a server's lines its own. Omitted (`-O`) intervals, notes and errors are not written: the
//! output stays data lines only, and the command says an error on standard error.
//!
//! Where iperf 2.1.8 is wrong and sonde does not follow it:
//! - the summary of a UDP sender says `-1` total datagrams and `-0.000` percent; sonde writes
//!   the datagrams sent and `0.000`;
//! - with `-P`, no sum (`-1`) line at all, neither per interval nor at the end; sonde writes
//!   them as iperf 2.0 did;
//! - without `-i`, the summary's timestamp is `19700101000000`; sonde's is the real time;
//! - a server numbers transfers across tests (the second test's streams are 3 and 4); sonde
//!   numbers each test's streams from 1;
//! - interval rates are bytes × 8 over the nominal interval, the summary's over the real
//!   length; sonde's are all over the real length of the span.

use std::io::{self, Write};

use sonde_stats::model::{
    EndView, Event, IntervalReport, Protocol, Role, StreamRole, TestStart, TestSummary,
    UdpReceiveStats,
};

use sonde_stats::calendar::civil_from_days;

use crate::iperf3_json::split_host_port;
use crate::sink::Sink;

/// Renders the `YYYYMMDDHHMMSS` timestamp of a time in whole seconds since 1970.
pub type StampFn = fn(i64) -> String;

/// The five UDP columns of a line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UdpCols {
    pub jitter_ms: f64,
    pub lost: u64,
    pub total: u64,
    pub lost_percent: f64,
    pub out_of_order: u64,
}

impl UdpCols {
    /// A receiver's columns.
    pub fn received(u: &UdpReceiveStats) -> Self {
        Self {
            jitter_ms: u.jitter_ms,
            lost: u.lost,
            total: u.packets,
            lost_percent: u.lost_percent,
            out_of_order: u.out_of_order,
        }
    }

    /// A sender's columns: the datagrams it sent, zeros for what only a receiver measures.
    pub fn sent(datagrams: u64) -> Self {
        Self {
            jitter_ms: 0.0,
            lost: 0,
            total: datagrams,
            lost_percent: 0.0,
            out_of_order: 0,
        }
    }
}

/// A host and port, as the address columns take them.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
}

impl Endpoint {
    /// From sonde's `host:port` / `[v6]:port` text.
    pub fn parse(addr: &str) -> Self {
        let (host, port) = split_host_port(addr);
        Self { host, port }
    }
}

/// Everything one CSV line says.
#[derive(Debug, Clone, PartialEq)]
pub struct Line<'a> {
    pub stamp: &'a str,
    pub src: &'a Endpoint,
    pub dst: &'a Endpoint,
    /// The stream's id, or `None` for a sum line (`-1`).
    pub id: Option<u32>,
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    pub bits_per_second: f64,
    pub udp: Option<UdpCols>,
}

/// One line, without its newline, in iperf 2's column order.
pub fn line(l: &Line<'_>) -> String {
    let id = l.id.map_or(-1, i64::from);
    // `as` saturates: a NaN or negative rate (never measured so) becomes 0.
    let bps = l.bits_per_second.round() as u64;
    let mut s = format!(
        "{},{},{},{},{},{id},{:.1}-{:.1},{},{bps}",
        l.stamp, l.src.host, l.src.port, l.dst.host, l.dst.port, l.start, l.end, l.bytes
    );
    if let Some(u) = l.udp {
        s.push_str(&format!(
            ",{:.3},{},{},{:.3},{}",
            u.jitter_ms, u.lost, u.total, u.lost_percent, u.out_of_order
        ));
    }
    s
}

/// `YYYYMMDDHHMMSS` of `unix_secs` in UTC (proleptic Gregorian calendar).
pub fn utc_stamp(unix_secs: i64) -> String {
    let secs = unix_secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(unix_secs.div_euclid(86_400));
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// One stream as the address columns need it.
#[derive(Debug, Clone)]
struct Stream {
    id: u32,
    role: StreamRole,
    sender: Endpoint,
    receiver: Endpoint,
}

/// What the lines need from the start of the test.
struct Ctx {
    t0: f64,
    role: Role,
    protocol: Protocol,
    streams: Vec<Stream>,
}

impl Ctx {
    fn of(s: &TestStart) -> Self {
        let streams = s
            .connected
            .iter()
            .map(|c| {
                let (local, remote) = (Endpoint::parse(&c.local), Endpoint::parse(&c.remote));
                let (sender, receiver) = match c.role {
                    StreamRole::Sender => (local, remote),
                    StreamRole::Receiver => (remote, local),
                };
                Stream {
                    id: c.id,
                    role: c.role,
                    sender,
                    receiver,
                }
            })
            .collect();
        Self {
            t0: s.timestamp_unix,
            role: s.role,
            protocol: s.protocol,
            streams,
        }
    }

    /// The stream `id`, or the first stream of `role` (for a sum line).
    fn stream(&self, id: Option<u32>, role: StreamRole) -> Option<&Stream> {
        match id {
            Some(id) => self.streams.iter().find(|s| s.id == id),
            None => self.streams.iter().find(|s| s.role == role),
        }
    }

    fn count(&self, role: StreamRole) -> usize {
        self.streams.iter().filter(|s| s.role == role).count()
    }

    /// This host's role on a stream the client sends on or not.
    fn host_role(&self, client_sends: bool) -> StreamRole {
        if client_sends == (self.role == Role::Client) {
            StreamRole::Sender
        } else {
            StreamRole::Receiver
        }
    }
}

/// The figures of one span, before the addresses and the timestamp are added.
struct Span {
    id: Option<u32>,
    role: StreamRole,
    start: f64,
    end: f64,
    bytes: u64,
    bits_per_second: f64,
    udp: Option<UdpCols>,
}

/// The [`Span`] of a `StreamSample`, `SumSample` or `EndView` (their figures share names).
macro_rules! span {
    ($id:expr, $role:expr, $protocol:expr, $s:expr) => {{
        let s = $s;
        Span {
            id: $id,
            role: $role,
            start: s.start,
            end: s.end,
            bytes: s.bytes,
            bits_per_second: s.bits_per_second,
            udp: udp_cols(
                $protocol,
                $role,
                s.udp_sent_packets,
                s.udp_received.as_ref(),
            ),
        }
    }};
}

/// The UDP columns of a span, where the protocol has them: the receiver's statistics or the
/// sender's count (`None` on TCP, or when the figures are missing).
fn udp_cols(
    protocol: Protocol,
    role: StreamRole,
    sent: Option<u64>,
    received: Option<&UdpReceiveStats>,
) -> Option<UdpCols> {
    match (protocol, role) {
        (Protocol::Tcp, _) => None,
        (Protocol::Udp, StreamRole::Sender) => Some(UdpCols::sent(sent.unwrap_or(0))),
        (Protocol::Udp, StreamRole::Receiver) => {
            Some(received.map_or(UdpCols::sent(0), UdpCols::received))
        }
    }
}

/// Writes iperf 2 CSV lines as events arrive.
pub struct Iperf2CsvReporter<W: Write> {
    out: W,
    ctx: Option<Ctx>,
    stamp: StampFn,
}

impl<W: Write> Iperf2CsvReporter<W> {
    /// A reporter writing to `out`, timestamps in UTC ([`utc_stamp`]).
    pub fn new(out: W) -> Self {
        Self {
            out,
            ctx: None,
            stamp: utc_stamp,
        }
    }

    /// Timestamps rendered by `stamp` instead (the command line passes local time).
    pub fn with_stamp(mut self, stamp: StampFn) -> Self {
        self.stamp = stamp;
        self
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn write_span(&mut self, s: &Span) -> io::Result<()> {
        let Some(ctx) = &self.ctx else {
            return Ok(());
        };
        let Some(st) = ctx.stream(s.id, s.role) else {
            return Ok(());
        };
        let stamp = (self.stamp)((ctx.t0 + s.end).floor() as i64);
        let text = line(&Line {
            stamp: &stamp,
            src: &st.sender,
            dst: &st.receiver,
            id: s.id,
            start: s.start,
            end: s.end,
            bytes: s.bytes,
            bits_per_second: s.bits_per_second,
            udp: s.udp,
        });
        writeln!(self.out, "{text}")
    }

    fn on_interval(&mut self, r: &IntervalReport) -> io::Result<()> {
        let Some(protocol) = self.ctx.as_ref().map(|c| c.protocol) else {
            return Ok(());
        };
        for s in r.streams.iter().filter(|s| !s.omitted) {
            self.write_span(&span!(Some(s.id), s.role, protocol, s))?;
        }
        for s in r.sums.iter().filter(|s| !s.omitted) {
            if r.streams.iter().filter(|st| st.role == s.role).count() > 1 {
                self.write_span(&span!(None, s.role, protocol, s))?;
            }
        }
        self.out.flush()
    }

    /// The summary line of this host's view `v` of a stream (or a sum, `id` None).
    fn write_view(&mut self, id: Option<u32>, role: StreamRole, v: &EndView) -> io::Result<()> {
        let Some(protocol) = self.ctx.as_ref().map(|c| c.protocol) else {
            return Ok(());
        };
        self.write_span(&span!(id, role, protocol, v))
    }

    fn on_end(&mut self, s: &TestSummary) -> io::Result<()> {
        let Some(ctx) = &self.ctx else {
            return Ok(());
        };
        let mut views = Vec::new();
        for st in &s.streams {
            let role = ctx.host_role(st.client_sends);
            let v = match role {
                StreamRole::Sender => &st.sender,
                StreamRole::Receiver => &st.receiver,
            };
            if let Some(v) = v {
                views.push((Some(st.id), role, v.clone()));
            }
        }
        for d in &s.directions {
            let role = ctx.host_role(d.client_sends);
            let v = match role {
                StreamRole::Sender => &d.sent,
                StreamRole::Receiver => &d.received,
            };
            if let (Some(v), true) = (v, ctx.count(role) > 1) {
                views.push((None, role, v.clone()));
            }
        }
        for (id, role, v) in &views {
            self.write_view(*id, *role, v)?;
        }
        self.out.flush()
    }
}

impl<W: Write> Sink for Iperf2CsvReporter<W> {
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        match ev {
            Event::Start(s) => {
                self.ctx = Some(Ctx::of(s));
                Ok(())
            }
            Event::Interval(r) => self.on_interval(r),
            Event::End(s) => self.on_end(s),
            // The peer's view, notes and errors have no line in iperf 2's CSV.
            Event::PeerInterval(_) | Event::Note(_) | Event::Error(_) => Ok(()),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures as fx;

    fn render(events: &[Event]) -> Vec<String> {
        let mut out = Vec::new();
        let mut r = Iperf2CsvReporter::new(&mut out);
        for e in events {
            r.event(e).unwrap();
        }
        r.finish().unwrap();
        drop(r);
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn utc_stamps_are_iperf2s_fourteen_digits() {
        assert_eq!(utc_stamp(0), "19700101000000");
        assert_eq!(utc_stamp(951_825_599), "20000229115959");
        assert_eq!(utc_stamp(1_795_304_521), "20261121234201");
        assert_eq!(utc_stamp(-1), "19691231235959");
    }

    #[test]
    fn a_tcp_line_has_nine_columns_and_a_sum_says_minus_one() {
        let (a, b) = (
            Endpoint::parse("127.0.0.1:37636"),
            Endpoint::parse("[::1]:25900"),
        );
        let mut l = Line {
            stamp: "20261204185357",
            src: &a,
            dst: &b,
            id: Some(1),
            start: 0.0,
            end: 1.000154,
            bytes: 3_168_796_732,
            bits_per_second: 25_346_462_470.6,
            udp: None,
        };
        assert_eq!(
            line(&l),
            "20261204185357,127.0.0.1,37636,::1,25900,1,0.0-1.0,3168796732,25346462471"
        );
        l.id = None;
        l.bits_per_second = f64::NAN;
        assert_eq!(
            line(&l),
            "20261204185357,127.0.0.1,37636,::1,25900,-1,0.0-1.0,3168796732,0"
        );
    }

    #[test]
    fn a_udp_line_adds_jitter_lost_total_percent_and_out_of_order() {
        let (a, b) = (
            Endpoint::parse("127.0.0.1:43339"),
            Endpoint::parse("127.0.0.1:25902"),
        );
        let rx = UdpReceiveStats {
            packets: 853,
            lost: 1,
            lost_percent: 100.0 / 853.0,
            jitter_ms: 0.0014,
            out_of_order: 2,
            duplicates: 0,
        };
        let mut l = Line {
            stamp: "20261205035431",
            src: &a,
            dst: &b,
            id: Some(3),
            start: 1.0,
            end: 2.0,
            bytes: 1_252_440,
            bits_per_second: 10_019_520.0,
            udp: Some(UdpCols::received(&rx)),
        };
        assert_eq!(
            line(&l),
            "20261205035431,127.0.0.1,43339,127.0.0.1,25902,3,1.0-2.0,1252440,10019520,0.001,1,853,0.117,2"
        );
        l.udp = Some(UdpCols::sent(1704));
        assert!(line(&l).ends_with(",10019520,0.000,0,1704,0.000,0"));
    }

    #[test]
    fn two_streams_get_a_sum_line_per_interval_and_in_the_summary() {
        let lines = render(&fx::tcp_upload_2());
        assert_eq!(
            lines,
            [
                "20261121234201,10.0.0.1,40001,10.0.0.2,5201,1,0.0-1.0,125000000,1000000000",
                "20261121234201,10.0.0.1,40003,10.0.0.2,5201,3,0.0-1.0,125000000,1000000000",
                "20261121234201,10.0.0.1,40001,10.0.0.2,5201,-1,0.0-1.0,250000000,2000000000",
                "20261121234202,10.0.0.1,40001,10.0.0.2,5201,1,1.0-2.0,125000000,1000000000",
                "20261121234202,10.0.0.1,40003,10.0.0.2,5201,3,1.0-2.0,125000000,1000000000",
                "20261121234202,10.0.0.1,40001,10.0.0.2,5201,-1,1.0-2.0,250000000,2000000000",
                "20261121234210,10.0.0.1,40001,10.0.0.2,5201,1,0.0-10.0,1250000000,1000000000",
                "20261121234210,10.0.0.1,40003,10.0.0.2,5201,3,0.0-10.0,1250000000,1000000000",
                "20261121234210,10.0.0.1,40001,10.0.0.2,5201,-1,0.0-10.0,2500000000,2000000000",
            ]
        );
    }

    #[test]
    fn a_udp_receiver_puts_the_sender_first_and_skips_omitted_intervals() {
        let lines = render(&fx::udp_reverse());
        assert_eq!(
            lines,
            [
                "20261121234202,10.0.0.2,5201,10.0.0.1,40001,1,1.0-2.0,131072,1048576,0.250,3,100,3.000,0",
                "20261121234210,10.0.0.2,5201,10.0.0.1,40001,1,0.0-10.0,1297612,1037053,0.300,10,998,1.002,2",
            ]
        );
    }

    #[test]
    fn bidir_lines_follow_each_streams_direction_and_notes_are_not_written() {
        let lines = render(&fx::tcp_bidir());
        assert_eq!(
            lines,
            [
                "20261121234201,10.0.0.1,40001,10.0.0.2,5201,1,0.0-1.0,100,800",
                "20261121234201,10.0.0.2,5201,10.0.0.1,40003,3,0.0-1.0,200,1600",
                "20261121234210,10.0.0.1,40001,10.0.0.2,5201,1,0.0-10.0,1000,800",
                "20261121234210,10.0.0.2,5201,10.0.0.1,40003,3,0.0-10.0,1990,1592",
            ]
        );
        assert!(render(&fx::partial_no_end())
            .iter()
            .all(|l| l.split(',').count() == 9));
    }

    #[test]
    fn a_given_clock_renders_the_timestamps() {
        let mut out = Vec::new();
        let mut r = Iperf2CsvReporter::new(&mut out).with_stamp(|t| format!("T{t}"));
        for e in fx::udp_reverse() {
            r.event(&e).unwrap();
        }
        drop(r);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("T1795304522,"), "{text}");
    }
}
