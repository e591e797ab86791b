//! The human-readable table, laid out like iperf3's text output.
//!
//! Rows are written as events arrive: a connection header on `Start`, one row per stream (and a
//! `[SUM]` row per role with several streams) on each `Interval`, and the sender/receiver summary
//! with the CPU line on `End`. Sizes and rates use iperf3's units
//! ([`sonde_stats::units::format_bytes`], [`sonde_stats::units::format_rate_in`], adaptive bits unless `-f`
//! asks for another unit).

use std::io::{self, Write};

use sonde_stats::model::{
    Direction, EndView, Event, IntervalReport, Protocol, Role, StreamRole, StreamSample, SumSample,
    TestStart, TestSummary, UdpReceiveStats,
};
use sonde_stats::units::{format_bytes, format_rate_in, RateUnit};

use crate::iperf3_json::split_host_port;
use crate::sink::Sink;

const SEPARATOR: &str = "- - - - - - - - - - - - - - - - - - - - - - - - -";

/// What the table needs to remember from the start of the test.
#[derive(Clone, Copy)]
struct Ctx {
    role: Role,
    direction: Direction,
    protocol: Protocol,
}

impl Ctx {
    fn local_sends(&self) -> bool {
        match self.direction {
            Direction::Upload => self.role == Role::Client,
            Direction::Reverse => self.role == Role::Server,
            Direction::Bidir => true,
        }
    }

    fn local_receives(&self) -> bool {
        self.direction == Direction::Bidir || !self.local_sends()
    }
}

/// Writes iperf3-style text rows as events arrive.
pub struct TableReporter<W: Write> {
    out: W,
    ctx: Option<Ctx>,
    intervals: usize,
    ended: bool,
    last_error: Option<String>,
    finished: bool,
    rate_unit: RateUnit,
    verbose: bool,
}

/// `[  5]` or `[SUM]`.
fn id_col(id: Option<u32>) -> String {
    match id {
        Some(id) => format!("[{id:>3}]"),
        None => "[SUM]".to_owned(),
    }
}

/// Renders a percentage the way C's `%.2g` does for the values loss takes (0, 0.012, 1.5, 33).
fn percent(p: f64) -> String {
    if !p.is_finite() || p <= 0.0 {
        return "0".to_owned();
    }
    let decimals = (1 - p.log10().floor() as i32).max(0) as usize;
    let s = format!("{p:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

fn udp_rx_cols(u: &UdpReceiveStats) -> String {
    format!(
        "  {:>9}  {}/{} ({}%)",
        format!("{:.3} ms", u.jitter_ms),
        u.lost,
        u.packets,
        percent(u.lost_percent)
    )
}

fn tcp_sender_cols(retransmits: u64, cwnd: u64, rtt_us: u32) -> String {
    format!(
        "  {:>4}  {:>11}  {:>7.2}",
        retransmits,
        format_bytes(cwnd),
        f64::from(rtt_us) / 1000.0
    )
}

impl<W: Write> TableReporter<W> {
    /// A reporter writing text to `out`.
    pub fn new(out: W) -> Self {
        TableReporter {
            out,
            ctx: None,
            intervals: 0,
            ended: false,
            last_error: None,
            finished: false,
            rate_unit: RateUnit::default(),
            verbose: false,
        }
    }

    /// iperf3's `-V`: the version, host, time, cookie and MSS before the test, and "Test
    /// Complete" before the summary.
    pub fn with_verbose(mut self, verbose: bool) -> Self {
        self.verbose = verbose;
        self
    }

    /// Rates in `unit` (iperf3's `-f`); transfers stay in adaptive bytes.
    pub fn with_rate_unit(mut self, unit: RateUnit) -> Self {
        self.rate_unit = unit;
        self
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn bidir(&self) -> bool {
        self.ctx.is_some_and(|c| c.direction == Direction::Bidir)
    }

    /// `[TX-C]`-style tag in bidir tests, empty otherwise.
    fn tag(&self, role: StreamRole) -> &'static str {
        match self.ctx {
            Some(c) if c.direction == Direction::Bidir => match (role, c.role) {
                (StreamRole::Sender, Role::Client) => "[TX-C]",
                (StreamRole::Receiver, Role::Client) => "[RX-C]",
                (StreamRole::Sender, Role::Server) => "[TX-S]",
                (StreamRole::Receiver, Role::Server) => "[RX-S]",
            },
            _ => "",
        }
    }

    /// The role this host plays for traffic the client does (or does not) send.
    fn host_role(&self, client_sends: bool) -> StreamRole {
        let client = !matches!(self.ctx, Some(c) if c.role == Role::Server);
        if client == client_sends {
            StreamRole::Sender
        } else {
            StreamRole::Receiver
        }
    }

    /// `[  5][TX-C]   0.00-1.00   sec  1.10 GBytes   942 Mbits/sec`
    fn row(
        &self,
        id: Option<u32>,
        role: StreamRole,
        start: f64,
        end: f64,
        bytes: u64,
        bps: f64,
    ) -> String {
        format!(
            "{}{} {:6.2}-{:<6.2} sec  {:>11}  {:>14}",
            id_col(id),
            self.tag(role),
            start,
            end,
            format_bytes(bytes),
            format_rate_in(bps, self.rate_unit)
        )
    }

    fn header(&mut self, summary: bool) -> io::Result<()> {
        let mut h = format!(
            "[ ID]{} {:<17}  {:<11}  {:<14}",
            if self.bidir() { "[Role]" } else { "" },
            "Interval",
            "Transfer",
            "Bitrate"
        );
        if let Some(c) = self.ctx {
            match c.protocol {
                Protocol::Tcp if c.local_sends() && summary => {
                    h.push_str(&format!("  {:>4}", "Retr"))
                }
                Protocol::Tcp if c.local_sends() => h.push_str(&format!(
                    "  {:>4}  {:<11}  {:>7}",
                    "Retr", "Cwnd", "RTT(ms)"
                )),
                Protocol::Tcp => {}
                // The summary always has a receiver row (jitter, lost/total).
                Protocol::Udp if c.local_receives() || summary => {
                    h.push_str(&format!("  {:<9}  {}", "Jitter", "Lost/Total Datagrams"))
                }
                Protocol::Udp => h.push_str("  Total Datagrams"),
            }
        }
        writeln!(self.out, "{}", h.trim_end())
    }

    fn on_start(&mut self, s: &TestStart) -> io::Result<()> {
        self.ctx = Some(Ctx {
            role: s.role,
            direction: s.direction,
            protocol: s.protocol,
        });
        let (host, port) = split_host_port(&s.remote);
        if self.verbose {
            writeln!(self.out, "{}", s.version)?;
            writeln!(self.out, "{}", s.system_info)?;
            let secs = s.timestamp_unix.floor() as i64;
            writeln!(self.out, "Time: {}", crate::iperf3_json::rfc2822_time(secs))?;
        }
        match s.role {
            Role::Client => {
                writeln!(
                    self.out,
                    "Connecting to host {host}, port {}",
                    s.server_port
                )?;
                if self.verbose {
                    writeln!(self.out, "      Cookie: {}", s.cookie)?;
                    if s.protocol == Protocol::Tcp {
                        match (s.tcp_mss, s.sockets.tcp_mss_default) {
                            (Some(mss), _) => writeln!(self.out, "      TCP MSS: {mss}")?,
                            (None, Some(mss)) => {
                                writeln!(self.out, "      TCP MSS: {mss} (default)")?
                            }
                            (None, None) => {}
                        }
                    }
                }
                if s.direction == Direction::Reverse {
                    writeln!(self.out, "Reverse mode, remote host {host} is sending")?;
                }
            }
            Role::Server => writeln!(self.out, "Accepted connection from {host}, port {port}")?,
        }
        if let (true, Some(link)) = (self.verbose, &s.link) {
            for line in crate::link::verbose_lines(link) {
                writeln!(self.out, "{line}")?;
            }
        }
        for c in &s.connected {
            let (lh, lp) = split_host_port(&c.local);
            let (rh, rp) = split_host_port(&c.remote);
            writeln!(
                self.out,
                "{}{} local {lh} port {lp} connected to {rh} port {rp}",
                id_col(Some(c.id)),
                self.tag(c.role)
            )?;
        }
        let amount = if s.bytes > 0 {
            format!("{} bytes to send", s.bytes)
        } else if s.blocks > 0 {
            format!("{} blocks to send", s.blocks)
        } else {
            format!("{} second test", s.duration_secs)
        };
        writeln!(
            self.out,
            "Starting Test: protocol: {}, {} streams, {} byte blocks, omitting {} seconds, {amount}, tos {}",
            s.protocol.as_upper(),
            s.num_streams,
            s.blksize,
            s.omit_secs,
            s.tos
        )
    }

    fn stream_line(&self, s: &StreamSample) -> String {
        let mut l = self.row(
            Some(s.id),
            s.role,
            s.start,
            s.end,
            s.bytes,
            s.bits_per_second,
        );
        if let Some(t) = &s.tcp {
            l.push_str(&tcp_sender_cols(t.retransmits, t.snd_cwnd, t.rtt_us));
        }
        if let Some(p) = s.udp_sent_packets {
            l.push_str(&format!("  {p:>8}"));
        }
        if let Some(u) = &s.udp_received {
            l.push_str(&udp_rx_cols(u));
        }
        if s.omitted {
            l.push_str("  (omitted)");
        }
        l
    }

    fn sum_line(&self, s: &SumSample) -> String {
        let mut l = self.row(None, s.role, s.start, s.end, s.bytes, s.bits_per_second);
        if let Some(r) = s.retransmits {
            l.push_str(&format!("  {r:>4}"));
        }
        if let Some(p) = s.udp_sent_packets {
            l.push_str(&format!("  {p:>8}"));
        }
        if let Some(u) = &s.udp_received {
            l.push_str(&udp_rx_cols(u));
        }
        if s.omitted {
            l.push_str("  (omitted)");
        }
        l
    }

    fn on_interval(&mut self, r: &IntervalReport) -> io::Result<()> {
        // The interval header comes with the first interval, so `-i 0` prints none.
        if self.intervals == 0 {
            self.header(false)?;
        }
        if self.intervals > 0 && r.streams.len() > 1 {
            writeln!(self.out, "{SEPARATOR}")?;
        }
        self.intervals += 1;
        for s in &r.streams {
            let l = self.stream_line(s);
            writeln!(self.out, "{l}")?;
        }
        for sum in &r.sums {
            if r.streams.iter().filter(|s| s.role == sum.role).count() > 1 {
                let l = self.sum_line(sum);
                writeln!(self.out, "{l}")?;
            }
        }
        Ok(())
    }

    /// The peer's live UDP receiver figures (loss, jitter per interval of an upload), which
    /// the sending host cannot see itself. Other peer figures would repeat this host's rows.
    fn on_peer_interval(&mut self, r: &IntervalReport) -> io::Result<()> {
        let peer = match self.ctx.map(|c| c.role) {
            Some(Role::Server) => "client",
            _ => "server",
        };
        // The far end's TCP senders (-R, --bidir): what its TCP_INFO said, per stream, so a
        // reverse test shows whether TCP or the wire is the limit, as an upload's rows do.
        for st in r.streams.iter().filter(|s| s.role == StreamRole::Sender) {
            if let Some(t) = st.tcp {
                writeln!(
                    self.out,
                    "      {peer} sent     {:6.2}-{:<6.2} sec  {}  retr {}  cwnd {}  rtt {:.2} ms",
                    st.start,
                    st.end,
                    id_col(Some(st.id)),
                    t.retransmits,
                    format_bytes(t.snd_cwnd),
                    f64::from(t.rtt_us) / 1000.0
                )?;
            }
        }
        for sum in r.sums.iter().filter(|s| s.role == StreamRole::Receiver) {
            if let Some(u) = sum.udp_received {
                writeln!(
                    self.out,
                    "      {peer} received {:6.2}-{:<6.2} sec  lost {}/{} ({:.3}%)  jitter {:.3} ms  out-of-order {}",
                    sum.start, sum.end, u.lost, u.packets, u.lost_percent, u.jitter_ms, u.out_of_order
                )?;
            }
        }
        Ok(())
    }

    /// One summary line (`sender` or `receiver`) plus UDP out-of-order/duplicate lines.
    fn end_lines(
        &mut self,
        id: Option<u32>,
        role: StreamRole,
        v: &EndView,
        sender: bool,
    ) -> io::Result<()> {
        let mut l = self.row(id, role, v.start, v.end, v.bytes, v.bits_per_second);
        let tcp = self.ctx.is_some_and(|c| c.protocol == Protocol::Tcp);
        if tcp {
            match v.tcp {
                Some(t) if sender => l.push_str(&format!("  {:>4}", t.retransmits)),
                _ => l.push_str(&format!("  {:>4}", "")),
            }
        }
        if sender {
            if let Some(p) = v.udp_sent_packets {
                // Under "Lost/Total Datagrams" (the receiver's row fills "Jitter" too): the
                // sender knows the total, not the loss or the jitter.
                l.push_str(&format!("  {:>9}  {p} datagrams", ""));
            }
        } else if let Some(u) = &v.udp_received {
            l.push_str(&udp_rx_cols(u));
        }
        l.push_str(if sender { "  sender" } else { "  receiver" });
        writeln!(self.out, "{l}")?;
        if let (false, Some(u)) = (sender, &v.udp_received) {
            let head = format!(
                "{}{} {:6.2}-{:<6.2} sec",
                id_col(id),
                self.tag(role),
                v.start,
                v.end
            );
            if u.out_of_order > 0 {
                writeln!(
                    self.out,
                    "{head}  {} datagrams received out-of-order",
                    u.out_of_order
                )?;
            }
            if u.duplicates > 0 {
                writeln!(
                    self.out,
                    "{head}  {} duplicate datagrams received",
                    u.duplicates
                )?;
            }
        }
        Ok(())
    }

    fn on_end(&mut self, s: &TestSummary) -> io::Result<()> {
        self.ended = true;
        self.ctx.get_or_insert(Ctx {
            role: s.role,
            direction: s.direction,
            protocol: s.protocol,
        });
        writeln!(self.out, "{SEPARATOR}")?;
        if self.verbose && !s.partial {
            writeln!(self.out, "Test Complete. Summary Results:")?;
        }
        self.header(true)?;
        for st in &s.streams {
            let role = self.host_role(st.client_sends);
            if let Some(v) = &st.sender {
                self.end_lines(Some(st.id), role, v, true)?;
            }
            if let Some(v) = &st.receiver {
                self.end_lines(Some(st.id), role, v, false)?;
            }
        }
        for d in &s.directions {
            let n = s
                .streams
                .iter()
                .filter(|st| st.client_sends == d.client_sends)
                .count();
            if n > 1 {
                let role = self.host_role(d.client_sends);
                if let Some(v) = &d.sent {
                    self.end_lines(None, role, v, true)?;
                }
                if let Some(v) = &d.received {
                    self.end_lines(None, role, v, false)?;
                }
            }
        }
        let (local, remote) = match self.ctx.map(|c| (c.local_sends(), c.local_receives())) {
            Some((true, false)) => ("local/sender", "remote/receiver"),
            Some((false, true)) => ("local/receiver", "remote/sender"),
            _ => ("local", "remote"),
        };
        let cpu = |c: &sonde_stats::model::CpuUsage| {
            format!("{:.1}% ({:.1}%u/{:.1}%s)", c.total, c.user, c.system)
        };
        let remote_cpu = s.cpu_remote.as_ref().map_or_else(|| "n/a".to_owned(), cpu);
        writeln!(
            self.out,
            "CPU Utilization: {local} {}, {remote} {remote_cpu}",
            cpu(&s.cpu_local)
        )?;
        if let Some(c) = &s.sender_congestion {
            writeln!(self.out, "snd_tcp_congestion {c}")?;
        }
        if let Some(c) = &s.receiver_congestion {
            writeln!(self.out, "rcv_tcp_congestion {c}")?;
        }
        // One line: the reason is said again on standard error, by the command.
        if s.partial {
            match s.error.as_ref().or(self.last_error.as_ref()) {
                Some(e) => writeln!(self.out, "Test ended early: {e} (partial result)")?,
                None => writeln!(self.out, "Test ended early (partial result)")?,
            }
        }
        Ok(())
    }
}

impl<W: Write> Sink for TableReporter<W> {
    fn event(&mut self, ev: &Event) -> io::Result<()> {
        match ev {
            Event::Start(s) => self.on_start(s),
            Event::Interval(r) => self.on_interval(r),
            Event::PeerInterval(r) => self.on_peer_interval(r),
            Event::End(s) => self.on_end(s),
            Event::Note(n) => writeln!(self.out, "{n}"),
            Event::Error(e) => {
                self.last_error = Some(e.clone());
                writeln!(self.out, "sonde: error - {e}")
            }
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.finished && self.ctx.is_some() && !self.ended {
            writeln!(self.out, "{SEPARATOR}")?;
            match &self.last_error {
                Some(e) => writeln!(
                    self.out,
                    "Test ended early: {e} (partial result, no summary)"
                )?,
                None => writeln!(self.out, "Test ended early (partial result, no summary)")?,
            }
        }
        self.finished = true;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_fixtures as fx;

    fn render(events: &[Event]) -> String {
        let mut out = Vec::new();
        let mut t = TableReporter::new(&mut out);
        for e in events {
            t.event(e).unwrap();
        }
        t.finish().unwrap();
        drop(t);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn percent_like_c_g() {
        assert_eq!(percent(0.0), "0");
        assert_eq!(percent(3.0), "3");
        assert_eq!(percent(1.5), "1.5");
        assert_eq!(percent(0.0123), "0.012");
        assert_eq!(percent(33.33), "33");
        assert_eq!(percent(100.0), "100");
    }

    #[test]
    fn a_reverse_tcp_test_shows_the_servers_sender_figures_per_interval() {
        let mut sent = fx::sample(1, StreamRole::Sender, 1.0, 1_000_000);
        sent.tcp = Some(sonde_stats::model::TcpInfoSample {
            retransmits: 7,
            snd_cwnd: 2 * 1024 * 1024,
            rtt_us: 1500,
            rttvar_us: 100,
            pmtu: 1500,
            ..Default::default()
        });
        let events = vec![
            fx::start(
                Protocol::Tcp,
                Direction::Reverse,
                vec![fx::conn(1, StreamRole::Receiver)],
            ),
            Event::PeerInterval(IntervalReport {
                streams: vec![sent],
                sums: Vec::new(),
            }),
        ];
        let text = render(&events);
        let line = text
            .lines()
            .find(|l| l.contains("server sent"))
            .unwrap_or_else(|| panic!("no server sender line:\n{text}"));
        assert!(line.contains("retr 7"), "{line}");
        assert!(line.contains("cwnd 2.00 MBytes"), "{line}");
        assert!(line.contains("rtt 1.50 ms"), "{line}");
        assert!(line.contains("1.00-2.00"), "{line}");
    }

    #[test]
    fn without_intervals_only_the_summary_has_a_header() {
        // `-i 0`: no interval arrives, so no interval header stands alone over nothing.
        let events: Vec<Event> = fx::tcp_upload_2()
            .into_iter()
            .filter(|e| !matches!(e, Event::Interval(_)))
            .collect();
        let text = render(&events);
        assert_eq!(text.matches("[ ID] Interval").count(), 1, "{text}");
        let sep = text.find(SEPARATOR).unwrap();
        assert!(text.find("[ ID] Interval").unwrap() > sep, "{text}");
    }

    #[test]
    fn udp_upload_summary_header_names_the_receiver_columns() {
        // The sender's interval rows have only a datagram count, but the summary has the
        // receiver's row with jitter and lost/total, as iperf3's header says.
        let events: Vec<Event> = fx::udp_reverse()
            .into_iter()
            .map(|e| match e {
                Event::Start(mut s) => {
                    s.direction = Direction::Upload;
                    Event::Start(s)
                }
                Event::End(mut s) => {
                    s.direction = Direction::Upload;
                    for st in &mut s.streams {
                        st.client_sends = true;
                    }
                    Event::End(s)
                }
                other => other,
            })
            .collect();
        let text = render(&events);
        let summary = &text[text.rfind(SEPARATOR).unwrap()..];
        let header = summary.lines().nth(1).unwrap();
        assert!(
            header.ends_with("Jitter     Lost/Total Datagrams"),
            "{text}"
        );
    }

    #[test]
    fn rates_follow_the_format_letter_and_transfers_stay_adaptive() {
        let mut out = Vec::new();
        let mut t = TableReporter::new(&mut out).with_rate_unit(RateUnit::Bytes(1));
        for e in &fx::tcp_upload_2() {
            t.event(e).unwrap();
        }
        drop(t);
        let text = String::from_utf8(out).unwrap();
        // 1 Gbit/s is 122070 KBytes/sec (1024-based); the transfer column keeps MBytes.
        assert!(text.contains("   119 MBytes  122070 KBytes/sec"), "{text}");
        assert!(!text.contains("bits/sec"), "{text}");
    }

    #[test]
    fn verbose_adds_the_version_host_time_cookie_and_completion_lines() {
        let mut out = Vec::new();
        let mut t = TableReporter::new(&mut out).with_verbose(true);
        let events = fx::tcp_upload_2();
        for e in &events {
            t.event(e).unwrap();
        }
        drop(t);
        let text = String::from_utf8(out).unwrap();
        let Event::Start(start) = &events[0] else {
            panic!("fixture starts with Start")
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], start.version, "{text}");
        assert_eq!(lines[1], start.system_info, "{text}");
        assert!(
            lines[2].starts_with("Time: ") && lines[2].ends_with(" GMT"),
            "{text}"
        );
        assert_eq!(
            lines[4],
            format!("      Cookie: {}", start.cookie),
            "{text}"
        );
        assert!(
            text.contains(&format!("{SEPARATOR}\nTest Complete. Summary Results:\n")),
            "{text}"
        );
        // Without -V none of it.
        let plain = render(&events);
        assert!(
            !plain.contains("Cookie") && !plain.contains("Test Complete"),
            "{plain}"
        );
    }

    #[test]
    fn tcp_upload_golden() {
        let text = render(&fx::tcp_upload_2());
        let want = "\
Connecting to host 10.0.0.2, port 5201
[  1] local 10.0.0.1 port 40001 connected to 10.0.0.2 port 5201
[  3] local 10.0.0.1 port 40003 connected to 10.0.0.2 port 5201
Starting Test: protocol: TCP, 2 streams, 131072 byte blocks, omitting 0 seconds, 10 second test, tos 0
using TCP_INFO
[ ID] Interval           Transfer     Bitrate         Retr  Cwnd         RTT(ms)
[  1]   0.00-1.00   sec   119 MBytes  1.00 Gbits/sec     2  1.00 MBytes     0.25
[  3]   0.00-1.00   sec   119 MBytes  1.00 Gbits/sec     1  1.00 MBytes     0.25
[SUM]   0.00-1.00   sec   238 MBytes  2.00 Gbits/sec     3
- - - - - - - - - - - - - - - - - - - - - - - - -
[  1]   1.00-2.00   sec   119 MBytes  1.00 Gbits/sec     2  1.00 MBytes     0.25
[  3]   1.00-2.00   sec   119 MBytes  1.00 Gbits/sec     1  1.00 MBytes     0.25
[SUM]   1.00-2.00   sec   238 MBytes  2.00 Gbits/sec     3
- - - - - - - - - - - - - - - - - - - - - - - - -
[ ID] Interval           Transfer     Bitrate         Retr
[  1]   0.00-10.00  sec  1.16 GBytes  1.00 Gbits/sec    15  sender
[  1]   0.00-10.04  sec  1.16 GBytes   996 Mbits/sec        receiver
[  3]   0.00-10.00  sec  1.16 GBytes  1.00 Gbits/sec    15  sender
[  3]   0.00-10.04  sec  1.16 GBytes   996 Mbits/sec        receiver
[SUM]   0.00-10.00  sec  2.33 GBytes  2.00 Gbits/sec    30  sender
[SUM]   0.00-10.04  sec  2.33 GBytes  1.99 Gbits/sec        receiver
CPU Utilization: local/sender 12.5% (1.5%u/11.0%s), remote/receiver 30.0% (5.0%u/25.0%s)
snd_tcp_congestion cubic
rcv_tcp_congestion cubic
";
        assert_eq!(text, want, "\n{text}");
    }

    #[test]
    fn udp_reverse_rows() {
        let text = render(&fx::udp_reverse());
        assert!(text.contains("Reverse mode, remote host 10.0.0.2 is sending"));
        assert!(text.contains("Jitter     Lost/Total Datagrams"), "{text}");
        assert!(
            text.contains("[  1]   0.00-1.00   sec   128 KBytes  1.05 Mbits/sec   0.250 ms  3/100 (3%)  (omitted)"),
            "{text}"
        );
        assert!(text.contains(
            "[  1]   0.00-10.00  sec  1.25 MBytes  1.05 Mbits/sec             1000 datagrams  sender"
        ), "{text}");
        assert!(text.contains("0.300 ms  10/998 (1%)  receiver"), "{text}");
        assert!(text.contains("[  1]   0.00-10.01  sec  2 datagrams received out-of-order"));
        assert!(text.contains("[  1]   0.00-10.01  sec  1 duplicate datagrams received"));
        assert!(!text.contains("[SUM]"));
        assert!(text.contains("CPU Utilization: local/receiver 12.5%"));
    }

    /// The column where `what` starts in `line`, in characters.
    fn column(line: &str, what: &str) -> usize {
        let at = line
            .find(what)
            .unwrap_or_else(|| panic!("{what:?} not in {line:?}"));
        line[..at].chars().count()
    }

    #[test]
    fn the_udp_senders_datagram_count_is_under_its_own_header_not_under_jitter() {
        let text = render(&fx::udp_reverse());
        let lines: Vec<&str> = text.lines().collect();
        let sender = lines
            .iter()
            .position(|l| l.ends_with("  sender"))
            .unwrap_or_else(|| panic!("no sender row\n{text}"));
        let header = lines[..sender]
            .iter()
            .rev()
            .find(|l| l.starts_with("[ ID]"))
            .unwrap_or_else(|| panic!("no header above the sender row\n{text}"));
        let receiver = lines[sender + 1];
        let (row, total) = (lines[sender], column(header, "Lost/Total Datagrams"));
        assert_eq!(column(row, "1000 datagrams"), total, "\n{header}\n{row}");
        assert_eq!(column(receiver, "10/998"), total, "\n{header}\n{receiver}");
        // Nothing of the sender's under "Jitter".
        let jitter = column(header, "Jitter");
        let under: String = row.chars().skip(jitter).take(total - jitter).collect();
        assert!(
            under.trim().is_empty(),
            "{under:?} under Jitter\n{header}\n{row}"
        );
    }

    #[test]
    fn bidir_rows_are_tagged() {
        let text = render(&fx::tcp_bidir());
        assert!(text.contains("[ ID][Role] Interval"), "{text}");
        assert!(text.contains("[  1][TX-C] local 10.0.0.1 port 40001"));
        assert!(
            text.contains("[  3][RX-C]   0.00-1.00   sec    200 Bytes"),
            "{text}"
        );
        assert!(
            text.contains("[  3][RX-C]   0.00-10.00  sec  1.95 KBytes"),
            "{text}"
        );
        assert!(text.contains("CPU Utilization: local 12.5%"));
    }

    #[test]
    fn partial_runs_say_so() {
        let text = render(&fx::partial_no_end());
        assert!(text.contains("sonde: error - control socket has closed unexpectedly\n"));
        assert!(text.ends_with(
            "Test ended early: control socket has closed unexpectedly (partial result, no summary)\n"
        ));
        let text = render(&fx::partial_with_end());
        assert!(text.contains("remote/receiver n/a\n"), "{text}");
        assert!(
            text.ends_with("Test ended early: interrupted (partial result)\n"),
            "{text}"
        );
    }
}
