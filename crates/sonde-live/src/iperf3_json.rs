//! Model → iperf3 `-J` JSON conversions, shared by the document and the JSON-lines writers.
//!
//! Each section (`start`, one element of `intervals[]`, `end`) is built here exactly once, so
//! `sonde -J` and `sonde --json-stream` can never disagree. Field names follow iperf3's `-J`
//! schema wherever the concept exists (iperf3's `iperf_api.c` writes them). Stream `socket` values are
//! sonde's stream ids (1..N in the order the client opened them; in bidir the client's
//! sending streams come first), not file descriptors.
//!
//! # Differences from iperf3
//!
//! - `start.tcp_mss` is present only when an MSS was requested, else (TCP) `tcp_mss_default`,
//!   the MSS the kernel chose for the first data connection (iperf3 reads its control
//!   connection's, and its server writes 0). `sndbuf_actual` and `rcvbuf_actual` are the first
//!   data socket's buffers as the kernel reports them. A figure the OS would not give is left
//!   out rather than written as 0: `tcp_mss_default`, `sndbuf_actual`, `rcvbuf_actual`, the
//!   interval `snd_wnd` (Linux 5.4+) and `reorder` (4.19+), and in `end.streams[].sender`
//!   `max_snd_wnd` and `reorder` (also absent when the sending end was an iperf3, whose
//!   results do not carry them; iperf3 writes 0 there).
//! - `start.test_start.gso` / `gro` are 1 when this host's UDP senders use GSO / its UDP
//!   receivers GRO (sonde's default where the kernel has them; iperf3 only with `--gsro`).
//! - `reorder` is the kernel's cumulative count of reordering events on the connection
//!   (`tcpi_reord_seen`), as iperf3 writes it, not a per-interval figure.
//! - In `end.streams[]`, a TCP `sender` or `receiver` object is left out when that end's view
//!   never arrived (the peer died before the results exchange).
//! - `end.cpu_utilization_percent.remote_*` are 0 when the peer's figures never arrived;
//!   `end.sonde.remote_cpu_known` says so.
//! - In `intervals[].streams[]`, the `sender` flag describes the stream (true when this host
//!   writes it). In the `end` sums it follows iperf3's quirk: it says whether the *reporting
//!   host* sent that direction, except in UDP's `sum_sent` (always true) and `sum_received`
//!   (always false). In `end.streams[]` it is true in the `sender` object and false
//!   in the `receiver` object; for UDP it says whether this host sent the stream.
//! - Interval `sum`: for upload and reverse tests, the one sum this host has. For bidir tests
//!   `sum` is the client-to-server direction and `sum_bidir_reverse` the server-to-client one.
//!
//! # Extra fields (sonde only)
//!
//! Inline, in iperf3 objects:
//! - every UDP receiver object (`intervals[].streams[]`, `intervals[].sum*`, `end.streams[].udp`,
//!   `end.sum_received*`, `end.sum*`): `out_of_order` (also in intervals, where iperf3 has it
//!   only at the end) and `duplicates` (datagrams whose sequence number was already seen;
//!   iperf3 counts them as out-of-order instead);
//! - `start.timestamp.timemillisecs` as in iperf3 3.20;
//! - `start.sonde`: `{"role": "client"|"server", "direction": "upload"|"reverse"|"bidir",
//!   "congestion": string|null, "streams": [{"socket", "role": "sender"|"receiver"}],
//!   "link" (a client's): {"local", "remote"}, each null or one end's link facts
//!   ([`crate::link`])}`;
//! - `end.sonde`: `{"partial": bool, "role", "direction", "remote_cpu_known": bool,
//!   "error": string|null, "notes": [string]}`, where `notes` are the `Note` events seen up to
//!   the end.
//!
//! Top level of the `-J` document only ([`crate::JsonReporter`]):
//! - `sonde`: `{"role", "direction" (null when the test never started), "partial": bool
//!   (true when no complete summary arrived), "complete": bool (an `End` event arrived),
//!   "peer_intervals": [interval objects as in `intervals`, from the other end's point of view:
//!   on a client, the server's live per-interval figures, such as UDP loss and jitter of an
//!   upload], "notes": [string], "errors": [string]}`;
//! - `error` (as iperf3): every error joined with `"; "`, present only when there was one;
//! - `kind` (`"client"` or `"server"`) and `partial` (as `sonde.partial`): the envelope every
//!   sonde `-J` document carries ([`crate::envelope`]).
//!
//! JSON lines ([`crate::JsonLinesReporter`]) use the events `start`, `interval`,
//! `peer_interval` and `end` with the section objects above as `data`, plus `error` and `note`
//! with a string as `data`.
//!
//! The sections are the typed models of [`sonde_schema::throughput`] (which `sonde report`
//! reads); this module maps the result model onto them.

use serde_json::Value;
use sonde_schema::throughput::end as send;
use sonde_schema::throughput::interval::{self as sint, Span};
use sonde_schema::throughput::start as sstart;
use sonde_stats::model::{
    ConnectedStream, Direction, DirectionSummary, EndView, IntervalReport, Protocol, Role,
    StreamRole, StreamSample, StreamSummary, SumSample, TestStart, TestSummary, UdpReceiveStats,
};

/// Name of a role as written in the `sonde` objects.
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Client => "client",
        Role::Server => "server",
    }
}

/// Name of a direction as written in the `sonde` objects.
pub fn direction_name(direction: Direction) -> &'static str {
    match direction {
        Direction::Upload => "upload",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    }
}

/// Splits `"host:port"` or `"[v6]:port"` into host and port. Text without a parsable port
/// yields the whole text as host and port 0.
pub fn split_host_port(addr: &str) -> (String, u16) {
    if let Some(rest) = addr.strip_prefix('[') {
        if let Some((host, tail)) = rest.split_once(']') {
            let port = tail
                .strip_prefix(':')
                .and_then(|p| p.parse().ok())
                .unwrap_or(0);
            return (host.to_owned(), port);
        }
    }
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(p) => (host.to_owned(), p),
            Err(_) => (addr.to_owned(), 0),
        },
        _ => (addr.to_owned(), 0),
    }
}

/// Formats Unix seconds as an RFC 2822 date in GMT, as iperf3's `timestamp.time`
/// (`"Sat, 21 Nov 2026 23:42:00 GMT"`).
pub fn rfc2822_time(unix_secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = unix_secs.div_euclid(86_400);
    let secs = unix_secs.rem_euclid(86_400);
    let (year, month, day) = sonde_stats::calendar::civil_from_days(days);
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// True when the reporting host sends the traffic described by `client_sends`.
fn host_sends(role: Role, client_sends: bool) -> bool {
    client_sends == (role == Role::Client)
}

fn connected(c: &ConnectedStream) -> sstart::Connected {
    let (local_host, local_port) = split_host_port(&c.local);
    let (remote_host, remote_port) = split_host_port(&c.remote);
    sstart::Connected {
        socket: u64::from(c.id),
        local_host,
        local_port: u64::from(local_port),
        remote_host,
        remote_port: u64::from(remote_port),
    }
}

fn stream_role_name(r: StreamRole) -> &'static str {
    match r {
        StreamRole::Sender => "sender",
        StreamRole::Receiver => "receiver",
    }
}

/// The `start` section.
pub fn start(s: &TestStart) -> Value {
    sonde_schema::to_value(&start_model(s))
}

/// The `start` section's model.
pub fn start_model(s: &TestStart) -> sstart::Start {
    let (remote_host, remote_port) = split_host_port(&s.remote);
    let (connecting_to, accepted_connection) = match s.role {
        // The peer as iperf3 names it: the server's port on a client, the client's own
        // port on a server.
        Role::Client => (Some((remote_host, s.server_port)), None),
        Role::Server => (None, Some((remote_host, remote_port))),
    };
    let peer = |p: Option<(String, u16)>| {
        p.map(|(host, port)| sstart::Peer {
            host,
            port: u64::from(port),
        })
    };
    sstart::Start {
        connected: Some(s.connected.iter().map(connected).collect()),
        version: Some(s.version.clone()),
        system_info: Some(s.system_info.clone()),
        timestamp: Some(timestamp(s.timestamp_unix)),
        connecting_to: peer(connecting_to),
        accepted_connection: peer(accepted_connection),
        cookie: Some(s.cookie.clone()),
        // `tcp_mss` when one was requested, else (TCP only) the kernel's default if known.
        tcp_mss: s.tcp_mss.map(u64::from),
        tcp_mss_default: s
            .sockets
            .tcp_mss_default
            .filter(|_| s.tcp_mss.is_none() && s.protocol == Protocol::Tcp)
            .map(u64::from),
        target_bitrate: Some(s.target_bitrate),
        fq_rate: Some(s.fq_rate),
        sock_bufsize: Some(s.sock_bufsize.unwrap_or(0)),
        sndbuf_actual: s.sockets.sndbuf_actual,
        rcvbuf_actual: s.sockets.rcvbuf_actual,
        test_start: Some(test_start(s)),
        sonde: Some(start_sonde(s)),
    }
}

/// `start.timestamp`: the RFC 2822 date, whole seconds and milliseconds (0 when not finite).
fn timestamp(unix: f64) -> sstart::Timestamp {
    let secs = unix.floor();
    let secs_i = if secs.is_finite() { secs as i64 } else { 0 };
    sstart::Timestamp {
        time: Some(rfc2822_time(secs_i)),
        timesecs: Some(secs_i),
        timemillisecs: Some(if unix.is_finite() {
            (unix * 1000.0).floor() as i64
        } else {
            0
        }),
    }
}

/// `start.test_start`: the test's parameters as iperf3 echoes them.
fn test_start(s: &TestStart) -> sstart::TestStart {
    sstart::TestStart {
        protocol: Some(s.protocol.as_upper().into()),
        num_streams: Some(u64::from(s.num_streams)),
        blksize: Some(s.blksize),
        omit: Some(s.omit_secs),
        duration: Some(s.duration_secs),
        bytes: Some(s.bytes),
        blocks: Some(s.blocks),
        reverse: Some(u64::from(s.direction == Direction::Reverse)),
        bidir: Some(u64::from(s.direction == Direction::Bidir)),
        tos: Some(u64::from(s.tos)),
        target_bitrate: Some(s.target_bitrate),
        fqrate: Some(s.fq_rate),
        interval: Some(s.interval_secs),
        gso: Some(i64::from(s.sockets.gso)),
        gro: Some(i64::from(s.sockets.gro)),
    }
}

/// `start.sonde`: role, direction, congestion control and each stream's role.
fn start_sonde(s: &TestStart) -> sstart::StartSonde {
    sstart::StartSonde {
        role: Some(role_name(s.role).into()),
        direction: Some(direction_name(s.direction).into()),
        congestion: s.congestion.clone(),
        streams: s
            .connected
            .iter()
            .map(|c| sstart::StreamRole {
                socket: u64::from(c.id),
                role: stream_role_name(c.role).into(),
            })
            .collect(),
        link: s.link.as_ref().map(crate::link::doc),
    }
}

/// The UDP receiver fields (`jitter_ms`, `lost_packets`, `packets`, `lost_percent`,
/// `out_of_order`, `duplicates`), with `sent_packets` (a sender's) when there are none.
fn udp_figures(sent_packets: Option<u64>, u: Option<&UdpReceiveStats>) -> sint::UdpFigures {
    match u {
        Some(u) => sint::UdpFigures {
            jitter_ms: Some(u.jitter_ms),
            lost_packets: Some(u.lost),
            packets: Some(u.packets),
            lost_percent: Some(u.lost_percent),
            out_of_order: Some(u.out_of_order),
            duplicates: Some(u.duplicates),
        },
        None => sint::UdpFigures {
            packets: sent_packets,
            ..Default::default()
        },
    }
}

fn interval_stream(s: &StreamSample) -> sint::IntervalStream {
    let tcp = s.tcp.map_or_else(Default::default, |t| sint::TcpFigures {
        retransmits: Some(t.retransmits),
        snd_cwnd: Some(t.snd_cwnd),
        snd_wnd: t.snd_wnd,
        rtt: Some(u64::from(t.rtt_us)),
        rttvar: Some(u64::from(t.rttvar_us)),
        pmtu: Some(u64::from(t.pmtu)),
        reorder: t.reorder,
    });
    sint::IntervalStream {
        socket: u64::from(s.id),
        span: Span::new(s.start, s.end, s.bytes, s.bits_per_second),
        tcp,
        udp: udp_figures(s.udp_sent_packets, s.udp_received.as_ref()),
        omitted: s.omitted,
        sender: s.role == StreamRole::Sender,
    }
}

fn interval_sum(s: &SumSample) -> sint::Sum {
    sint::Sum {
        span: Span::new(s.start, s.end, s.bytes, s.bits_per_second),
        retransmits: s.retransmits,
        udp: udp_figures(s.udp_sent_packets, s.udp_received.as_ref()),
        omitted: Some(s.omitted),
        sender: Some(s.role == StreamRole::Sender),
    }
}

/// One element of `intervals[]`. `role` and `direction` come from the test's start; they decide
/// which sum is `sum` and which `sum_bidir_reverse` in bidir tests.
pub fn interval(r: &IntervalReport, role: Role, direction: Direction) -> Value {
    sonde_schema::to_value(&interval_model(r, role, direction))
}

/// One element of `intervals[]`, as its model (see [`interval`]).
pub fn interval_model(r: &IntervalReport, role: Role, direction: Direction) -> sint::Interval {
    let (sum, sum_bidir_reverse) = if direction == Direction::Bidir {
        // Client-to-server traffic is what the client sends and the server receives.
        let c2s_role = match role {
            Role::Client => StreamRole::Sender,
            Role::Server => StreamRole::Receiver,
        };
        (
            r.sums.iter().find(|s| s.role == c2s_role),
            r.sums.iter().find(|s| s.role != c2s_role),
        )
    } else {
        (r.sums.first(), None)
    };
    sint::Interval {
        streams: r.streams.iter().map(interval_stream).collect(),
        sum: sum.map(interval_sum),
        sum_bidir_reverse: sum_bidir_reverse.map(interval_sum),
    }
}

fn lost_percent(lost: u64, packets: u64) -> f64 {
    if packets == 0 {
        0.0
    } else {
        100.0 * lost as f64 / packets as f64
    }
}

fn span_of(v: &EndView) -> Span {
    Span::new(v.start, v.end, v.bytes, v.bits_per_second)
}

/// The combined UDP view of a stream or direction: bytes, rate and packet count from the
/// sender's view when known, loss and jitter from the receiver's.
fn udp_combined(
    sent: Option<&EndView>,
    received: Option<&EndView>,
    sender: bool,
) -> send::UdpTotals {
    let rx = received.and_then(|v| v.udp_received).unwrap_or_default();
    let packets = sent.and_then(|v| v.udp_sent_packets).unwrap_or(rx.packets);
    send::UdpTotals {
        socket: None,
        span: sent.or(received).map(span_of),
        jitter_ms: rx.jitter_ms,
        lost_packets: rx.lost,
        packets,
        lost_percent: lost_percent(rx.lost, packets),
        out_of_order: rx.out_of_order,
        duplicates: rx.duplicates,
        sender,
    }
}

fn tcp_end_side(id: u32, v: &EndView, sender: bool) -> send::EndSide {
    let mut side = send::EndSide {
        socket: u64::from(id),
        span: span_of(v),
        sender,
        ..Default::default()
    };
    if sender {
        let t = v.tcp.unwrap_or_default();
        side.retransmits = Some(t.retransmits);
        side.reorder = t.reorder;
        side.max_snd_cwnd = Some(t.max_snd_cwnd);
        side.max_snd_wnd = t.max_snd_wnd;
        side.max_rtt = Some(u64::from(t.max_rtt_us));
        side.min_rtt = Some(u64::from(t.min_rtt_us));
        side.mean_rtt = Some(u64::from(t.mean_rtt_us));
    }
    side
}

/// `end.sum_sent` or `end.sum_received` (or a `_bidir_reverse` one) for `udp` or TCP.
fn end_sum(
    view: &EndView,
    other: Option<&EndView>,
    sent: bool,
    udp: bool,
    host_sent: bool,
) -> sint::Sum {
    let mut sum = sint::Sum {
        span: span_of(view),
        // iperf3 marks UDP's sum_sent as the sender's and sum_received as the receiver's on
        // both ends; TCP's say whether the reporting host sent.
        sender: Some(if udp { sent } else { host_sent }),
        ..Default::default()
    };
    if udp {
        let rx = if sent { other } else { Some(view) };
        let u = rx.and_then(|v| v.udp_received).unwrap_or_default();
        let packets = if sent {
            view.udp_sent_packets.unwrap_or(u.packets)
        } else {
            u.packets
        };
        sum.udp = sint::UdpFigures {
            jitter_ms: Some(u.jitter_ms),
            lost_packets: Some(u.lost),
            packets: Some(packets),
            lost_percent: Some(lost_percent(u.lost, packets)),
            out_of_order: (!sent).then_some(u.out_of_order),
            duplicates: (!sent).then_some(u.duplicates),
        };
    } else if sent {
        sum.retransmits = view.tcp.map(|t| t.retransmits);
    }
    sum
}

/// The other end's role (whose live intervals a host receives).
pub fn peer_role(role: Role) -> Role {
    match role {
        Role::Client => Role::Server,
        Role::Server => Role::Client,
    }
}

/// The `end` section. `notes` are the `Note` texts seen so far (written to `end.sonde.notes`).
pub fn end(s: &TestSummary, notes: &[String]) -> Value {
    sonde_schema::to_value(&end_model(s, notes))
}

/// The `end` section's model (see [`end`]).
pub fn end_model(s: &TestSummary, notes: &[String]) -> send::End {
    let udp = s.protocol == Protocol::Udp;
    let mut end = send::End {
        streams: Some(
            s.streams
                .iter()
                .map(|st| end_stream(st, s.role, udp))
                .collect(),
        ),
        cpu_utilization_percent: Some(cpu(s)),
        sender_tcp_congestion: s.sender_congestion.clone(),
        receiver_tcp_congestion: s.receiver_congestion.clone(),
        sonde: Some(end_sonde(s, notes)),
        ..Default::default()
    };
    insert_end_sums(&mut end, s, udp);
    end
}

/// One element of `end.streams[]`: a combined `udp` object, or TCP's `sender` and `receiver`
/// objects (each only when that end's view arrived).
fn end_stream(st: &StreamSummary, role: Role, udp: bool) -> send::EndStream {
    if udp {
        let local = host_sends(role, st.client_sends);
        let u = udp_combined(st.sender.as_ref(), st.receiver.as_ref(), local);
        return send::EndStream {
            udp: Some(send::UdpTotals {
                socket: Some(u64::from(st.id)),
                ..u
            }),
            ..Default::default()
        };
    }
    send::EndStream {
        sender: st.sender.as_ref().map(|v| tcp_end_side(st.id, v, true)),
        receiver: st.receiver.as_ref().map(|v| tcp_end_side(st.id, v, false)),
        udp: None,
    }
}

/// `sum_sent`, `sum_received` and (UDP) `sum` for the main direction, then the
/// `_bidir_reverse` ones in bidir tests (the main one is client-to-server there).
fn insert_end_sums(end: &mut send::End, s: &TestSummary, udp: bool) {
    let c2s = s.directions.iter().find(|d| d.client_sends);
    let s2c = s.directions.iter().find(|d| !d.client_sends);
    let (main, reverse) = match s.direction {
        Direction::Bidir => (c2s, s2c),
        _ => (s.directions.first(), None),
    };
    if let Some(d) = main {
        let (sent, received, sum) = direction_sums(d, s.role, udp);
        (end.sum_sent, end.sum_received, end.sum) = (sent, received, sum);
    }
    if let Some(d) = reverse {
        let (sent, received, sum) = direction_sums(d, s.role, udp);
        end.sum_sent_bidir_reverse = sent;
        end.sum_received_bidir_reverse = received;
        end.sum_bidir_reverse = sum;
    }
}

/// The sums of one direction: sent, received and (UDP) the combined one.
fn direction_sums(
    d: &DirectionSummary,
    role: Role,
    udp: bool,
) -> (
    Option<sint::Sum>,
    Option<sint::Sum>,
    Option<send::UdpTotals>,
) {
    let host_sent = host_sends(role, d.client_sends);
    let sent = d
        .sent
        .as_ref()
        .map(|v| end_sum(v, d.received.as_ref(), true, udp, host_sent));
    let received = d
        .received
        .as_ref()
        .map(|v| end_sum(v, d.sent.as_ref(), false, udp, host_sent));
    let sum = udp.then(|| udp_combined(d.sent.as_ref(), d.received.as_ref(), host_sent));
    (sent, received, sum)
}

/// `end.cpu_utilization_percent`; the remote figures are 0 when they never arrived.
fn cpu(s: &TestSummary) -> send::Cpu {
    let remote = s.cpu_remote.unwrap_or_default();
    send::Cpu {
        host_total: s.cpu_local.total,
        host_user: s.cpu_local.user,
        host_system: s.cpu_local.system,
        remote_total: remote.total,
        remote_user: remote.user,
        remote_system: remote.system,
    }
}

/// `end.sonde`: whether the summary is partial, who wrote it, and the notes seen so far.
fn end_sonde(s: &TestSummary, notes: &[String]) -> send::EndSonde {
    send::EndSonde {
        partial: s.partial,
        role: Some(role_name(s.role).into()),
        direction: Some(direction_name(s.direction).into()),
        remote_cpu_known: s.cpu_remote.is_some(),
        error: s.error.clone(),
        notes: notes.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn host_port_forms() {
        assert_eq!(split_host_port("10.0.0.1:5201"), ("10.0.0.1".into(), 5201));
        assert_eq!(split_host_port("[::1]:40000"), ("::1".into(), 40000));
        assert_eq!(
            split_host_port("[fe80::1%eth0]"),
            ("fe80::1%eth0".into(), 0)
        );
        assert_eq!(split_host_port("::1"), ("::1".into(), 0));
        assert_eq!(split_host_port("example.org"), ("example.org".into(), 0));
        assert_eq!(split_host_port("host:http"), ("host:http".into(), 0));
        assert_eq!(split_host_port(""), (String::new(), 0));
    }

    #[test]
    fn rfc2822_dates() {
        assert_eq!(rfc2822_time(0), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(rfc2822_time(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
        assert_eq!(rfc2822_time(1_795_304_520), "Sat, 21 Nov 2026 23:42:00 GMT");
        assert_eq!(rfc2822_time(-1), "Wed, 31 Dec 1969 23:59:59 GMT");
    }

    #[test]
    fn whole_seconds_are_integers() {
        let mut s = sstart::TestStart {
            duration: Some(10.0),
            omit: Some(0.5),
            ..Default::default()
        };
        let v = sonde_schema::to_value(&s);
        assert_eq!((&v["duration"], &v["omit"]), (&json!(10), &json!(0.5)));
        s.duration = Some(f64::INFINITY);
        assert!(sonde_schema::to_value(&s)["duration"].is_null());
    }
}
