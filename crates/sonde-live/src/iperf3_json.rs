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
//!   "congestion": string|null, "streams": [{"socket", "role": "sender"|"receiver"}]}`;
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

use serde_json::{json, Map, Value};
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
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
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

/// Whole seconds as a JSON integer (as iperf3 writes `omit` and `duration`), others as floats.
fn secs_value(v: f64) -> Value {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        json!(v as i64)
    } else {
        json!(v)
    }
}

/// True when the reporting host sends the traffic described by `client_sends`.
fn host_sends(role: Role, client_sends: bool) -> bool {
    client_sends == (role == Role::Client)
}

fn connected_json(c: &ConnectedStream) -> Value {
    let (local_host, local_port) = split_host_port(&c.local);
    let (remote_host, remote_port) = split_host_port(&c.remote);
    json!({
        "socket": c.id,
        "local_host": local_host,
        "local_port": local_port,
        "remote_host": remote_host,
        "remote_port": remote_port,
    })
}

fn stream_role_name(r: StreamRole) -> &'static str {
    match r {
        StreamRole::Sender => "sender",
        StreamRole::Receiver => "receiver",
    }
}

/// The `start` section.
pub fn start(s: &TestStart) -> Value {
    let mut m = Map::new();
    m.insert(
        "connected".into(),
        s.connected.iter().map(connected_json).collect(),
    );
    m.insert("version".into(), json!(s.version));
    m.insert("system_info".into(), json!(s.system_info));
    m.insert("timestamp".into(), timestamp_json(s.timestamp_unix));
    insert_peer(&mut m, s);
    m.insert("cookie".into(), json!(s.cookie));
    insert_mss(&mut m, s);
    m.insert("target_bitrate".into(), json!(s.target_bitrate));
    m.insert("fq_rate".into(), json!(s.fq_rate));
    m.insert("sock_bufsize".into(), json!(s.sock_bufsize.unwrap_or(0)));
    insert_actual_buffers(&mut m, s);
    m.insert("test_start".into(), test_start_json(s));
    m.insert("sonde".into(), start_sonde_json(s));
    Value::Object(m)
}

/// `start.timestamp`: the RFC 2822 date, whole seconds and milliseconds (0 when not finite).
fn timestamp_json(unix: f64) -> Value {
    let secs = unix.floor();
    let secs_i = if secs.is_finite() { secs as i64 } else { 0 };
    json!({
        "time": rfc2822_time(secs_i),
        "timesecs": secs_i,
        "timemillisecs": if unix.is_finite() {
            (unix * 1000.0).floor() as i64
        } else {
            0
        },
    })
}

/// The peer as iperf3 names it: `connecting_to` (the server's port) on a client,
/// `accepted_connection` (the client's own port) on a server.
fn insert_peer(m: &mut Map<String, Value>, s: &TestStart) {
    let (remote_host, remote_port) = split_host_port(&s.remote);
    match s.role {
        Role::Client => {
            m.insert(
                "connecting_to".into(),
                json!({"host": remote_host, "port": s.server_port}),
            );
        }
        Role::Server => {
            m.insert(
                "accepted_connection".into(),
                json!({"host": remote_host, "port": remote_port}),
            );
        }
    }
}

/// `tcp_mss` when one was requested, else (TCP only) the kernel's `tcp_mss_default` if known.
fn insert_mss(m: &mut Map<String, Value>, s: &TestStart) {
    if let Some(mss) = s.tcp_mss {
        m.insert("tcp_mss".into(), json!(mss));
    } else if let Some(mss) = s
        .sockets
        .tcp_mss_default
        .filter(|_| s.protocol == Protocol::Tcp)
    {
        m.insert("tcp_mss_default".into(), json!(mss));
    }
}

/// The first data socket's buffers as the kernel reports them, each only when known.
fn insert_actual_buffers(m: &mut Map<String, Value>, s: &TestStart) {
    if let Some(b) = s.sockets.sndbuf_actual {
        m.insert("sndbuf_actual".into(), json!(b));
    }
    if let Some(b) = s.sockets.rcvbuf_actual {
        m.insert("rcvbuf_actual".into(), json!(b));
    }
}

/// `start.test_start`: the test's parameters as iperf3 echoes them.
fn test_start_json(s: &TestStart) -> Value {
    json!({
        "protocol": s.protocol.as_upper(),
        "num_streams": s.num_streams,
        "blksize": s.blksize,
        "omit": secs_value(s.omit_secs),
        "duration": secs_value(s.duration_secs),
        "bytes": s.bytes,
        "blocks": s.blocks,
        "reverse": i32::from(s.direction == Direction::Reverse),
        "bidir": i32::from(s.direction == Direction::Bidir),
        "tos": s.tos,
        "target_bitrate": s.target_bitrate,
        "fqrate": s.fq_rate,
        "interval": s.interval_secs,
        "gso": i32::from(s.sockets.gso),
        "gro": i32::from(s.sockets.gro),
    })
}

/// `start.sonde`: role, direction, congestion control and each stream's role.
fn start_sonde_json(s: &TestStart) -> Value {
    let streams: Vec<Value> = s
        .connected
        .iter()
        .map(|c| json!({"socket": c.id, "role": stream_role_name(c.role)}))
        .collect();
    json!({
        "role": role_name(s.role),
        "direction": direction_name(s.direction),
        "congestion": s.congestion,
        "streams": streams,
    })
}

/// Adds the UDP receiver fields (`jitter_ms`, `lost_packets`, `packets`, `lost_percent`,
/// `out_of_order`, `duplicates`).
fn add_udp_rx(m: &mut Map<String, Value>, u: &UdpReceiveStats) {
    m.insert("jitter_ms".into(), json!(u.jitter_ms));
    m.insert("lost_packets".into(), json!(u.lost));
    m.insert("packets".into(), json!(u.packets));
    m.insert("lost_percent".into(), json!(u.lost_percent));
    m.insert("out_of_order".into(), json!(u.out_of_order));
    m.insert("duplicates".into(), json!(u.duplicates));
}

fn span(m: &mut Map<String, Value>, start: f64, end: f64, bytes: u64, bps: f64) {
    m.insert("start".into(), json!(start));
    m.insert("end".into(), json!(end));
    m.insert("seconds".into(), json!(end - start));
    m.insert("bytes".into(), json!(bytes));
    m.insert("bits_per_second".into(), json!(bps));
}

fn interval_stream(s: &StreamSample) -> Value {
    let mut m = Map::new();
    m.insert("socket".into(), json!(s.id));
    span(&mut m, s.start, s.end, s.bytes, s.bits_per_second);
    if let Some(t) = &s.tcp {
        m.insert("retransmits".into(), json!(t.retransmits));
        m.insert("snd_cwnd".into(), json!(t.snd_cwnd));
        if let Some(w) = t.snd_wnd {
            m.insert("snd_wnd".into(), json!(w));
        }
        m.insert("rtt".into(), json!(t.rtt_us));
        m.insert("rttvar".into(), json!(t.rttvar_us));
        m.insert("pmtu".into(), json!(t.pmtu));
        if let Some(r) = t.reorder {
            m.insert("reorder".into(), json!(r));
        }
    }
    if let Some(p) = s.udp_sent_packets {
        m.insert("packets".into(), json!(p));
    }
    if let Some(u) = &s.udp_received {
        add_udp_rx(&mut m, u);
    }
    m.insert("omitted".into(), json!(s.omitted));
    m.insert("sender".into(), json!(s.role == StreamRole::Sender));
    Value::Object(m)
}

fn interval_sum(s: &SumSample) -> Value {
    let mut m = Map::new();
    span(&mut m, s.start, s.end, s.bytes, s.bits_per_second);
    if let Some(r) = s.retransmits {
        m.insert("retransmits".into(), json!(r));
    }
    if let Some(p) = s.udp_sent_packets {
        m.insert("packets".into(), json!(p));
    }
    if let Some(u) = &s.udp_received {
        add_udp_rx(&mut m, u);
    }
    m.insert("omitted".into(), json!(s.omitted));
    m.insert("sender".into(), json!(s.role == StreamRole::Sender));
    Value::Object(m)
}

/// One element of `intervals[]`. `role` and `direction` come from the test's start; they decide
/// which sum is `sum` and which `sum_bidir_reverse` in bidir tests.
pub fn interval(r: &IntervalReport, role: Role, direction: Direction) -> Value {
    let mut m = Map::new();
    m.insert(
        "streams".into(),
        r.streams.iter().map(interval_stream).collect(),
    );
    if direction == Direction::Bidir {
        // Client-to-server traffic is what the client sends and the server receives.
        let c2s_role = match role {
            Role::Client => StreamRole::Sender,
            Role::Server => StreamRole::Receiver,
        };
        if let Some(s) = r.sums.iter().find(|s| s.role == c2s_role) {
            m.insert("sum".into(), interval_sum(s));
        }
        if let Some(s) = r.sums.iter().find(|s| s.role != c2s_role) {
            m.insert("sum_bidir_reverse".into(), interval_sum(s));
        }
    } else if let Some(s) = r.sums.first() {
        m.insert("sum".into(), interval_sum(s));
    }
    Value::Object(m)
}

fn lost_percent(lost: u64, packets: u64) -> f64 {
    if packets == 0 {
        0.0
    } else {
        100.0 * lost as f64 / packets as f64
    }
}

/// The combined UDP view of a stream or direction: bytes, rate and packet count from the
/// sender's view when known, loss and jitter from the receiver's.
fn udp_combined(m: &mut Map<String, Value>, sent: Option<&EndView>, received: Option<&EndView>) {
    let base = sent.or(received);
    if let Some(v) = base {
        span(m, v.start, v.end, v.bytes, v.bits_per_second);
    }
    let rx = received.and_then(|v| v.udp_received).unwrap_or_default();
    let packets = sent.and_then(|v| v.udp_sent_packets).unwrap_or(rx.packets);
    m.insert("jitter_ms".into(), json!(rx.jitter_ms));
    m.insert("lost_packets".into(), json!(rx.lost));
    m.insert("packets".into(), json!(packets));
    m.insert("lost_percent".into(), json!(lost_percent(rx.lost, packets)));
    m.insert("out_of_order".into(), json!(rx.out_of_order));
    m.insert("duplicates".into(), json!(rx.duplicates));
}

fn tcp_end_side(id: u32, v: &EndView, sender: bool) -> Value {
    let mut m = Map::new();
    m.insert("socket".into(), json!(id));
    span(&mut m, v.start, v.end, v.bytes, v.bits_per_second);
    if sender {
        let t = v.tcp.unwrap_or_default();
        m.insert("retransmits".into(), json!(t.retransmits));
        if let Some(r) = t.reorder {
            m.insert("reorder".into(), json!(r));
        }
        m.insert("max_snd_cwnd".into(), json!(t.max_snd_cwnd));
        if let Some(w) = t.max_snd_wnd {
            m.insert("max_snd_wnd".into(), json!(w));
        }
        m.insert("max_rtt".into(), json!(t.max_rtt_us));
        m.insert("min_rtt".into(), json!(t.min_rtt_us));
        m.insert("mean_rtt".into(), json!(t.mean_rtt_us));
    }
    m.insert("sender".into(), json!(sender));
    Value::Object(m)
}

/// `end.sum_sent` or `end.sum_received` (or a `_bidir_reverse` one) for `udp` or TCP.
fn end_sum(
    view: &EndView,
    other: Option<&EndView>,
    sent: bool,
    udp: bool,
    host_sent: bool,
) -> Value {
    let mut m = Map::new();
    span(
        &mut m,
        view.start,
        view.end,
        view.bytes,
        view.bits_per_second,
    );
    if udp {
        let rx = if sent { other } else { Some(view) };
        let u = rx.and_then(|v| v.udp_received).unwrap_or_default();
        let packets = if sent {
            view.udp_sent_packets.unwrap_or(u.packets)
        } else {
            u.packets
        };
        m.insert("jitter_ms".into(), json!(u.jitter_ms));
        m.insert("lost_packets".into(), json!(u.lost));
        m.insert("packets".into(), json!(packets));
        m.insert("lost_percent".into(), json!(lost_percent(u.lost, packets)));
        if !sent {
            m.insert("out_of_order".into(), json!(u.out_of_order));
            m.insert("duplicates".into(), json!(u.duplicates));
        }
    } else if sent {
        if let Some(t) = view.tcp {
            m.insert("retransmits".into(), json!(t.retransmits));
        }
    }
    // iperf3 marks UDP's sum_sent as the sender's and sum_received as the receiver's on
    // both ends; TCP's say whether the reporting host sent.
    m.insert("sender".into(), json!(if udp { sent } else { host_sent }));
    Value::Object(m)
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
    let udp = s.protocol == Protocol::Udp;
    let mut m = Map::new();
    let streams: Vec<Value> = s
        .streams
        .iter()
        .map(|st| end_stream(st, s.role, udp))
        .collect();
    m.insert("streams".into(), Value::Array(streams));
    insert_end_sums(&mut m, s, udp);
    m.insert("cpu_utilization_percent".into(), cpu_json(s));
    if let Some(c) = &s.sender_congestion {
        m.insert("sender_tcp_congestion".into(), json!(c));
    }
    if let Some(c) = &s.receiver_congestion {
        m.insert("receiver_tcp_congestion".into(), json!(c));
    }
    m.insert("sonde".into(), end_sonde_json(s, notes));
    Value::Object(m)
}

/// One element of `end.streams[]`: a combined `udp` object, or TCP's `sender` and `receiver`
/// objects (each only when that end's view arrived).
fn end_stream(st: &StreamSummary, role: Role, udp: bool) -> Value {
    let mut o = Map::new();
    if udp {
        let mut u = Map::new();
        u.insert("socket".into(), json!(st.id));
        udp_combined(&mut u, st.sender.as_ref(), st.receiver.as_ref());
        let local = host_sends(role, st.client_sends);
        u.insert("sender".into(), json!(local));
        o.insert("udp".into(), Value::Object(u));
    } else {
        if let Some(v) = &st.sender {
            o.insert("sender".into(), tcp_end_side(st.id, v, true));
        }
        if let Some(v) = &st.receiver {
            o.insert("receiver".into(), tcp_end_side(st.id, v, false));
        }
    }
    Value::Object(o)
}

/// `sum_sent`, `sum_received` and (UDP) `sum` for the main direction, then the
/// `_bidir_reverse` ones in bidir tests (the main one is client-to-server there).
fn insert_end_sums(m: &mut Map<String, Value>, s: &TestSummary, udp: bool) {
    let c2s = s.directions.iter().find(|d| d.client_sends);
    let s2c = s.directions.iter().find(|d| !d.client_sends);
    let (main, reverse) = match s.direction {
        Direction::Bidir => (c2s, s2c),
        _ => (s.directions.first(), None),
    };
    for (dir, suffix) in [(main, ""), (reverse, "_bidir_reverse")] {
        let Some(d) = dir else { continue };
        insert_direction_sums(m, d, s.role, udp, suffix);
    }
}

/// The sums of one direction, their keys ending in `suffix`.
fn insert_direction_sums(
    m: &mut Map<String, Value>,
    d: &DirectionSummary,
    role: Role,
    udp: bool,
    suffix: &str,
) {
    let host_sent = host_sends(role, d.client_sends);
    if let Some(sent) = &d.sent {
        let v = end_sum(sent, d.received.as_ref(), true, udp, host_sent);
        m.insert(format!("sum_sent{suffix}"), v);
    }
    if let Some(received) = &d.received {
        let v = end_sum(received, d.sent.as_ref(), false, udp, host_sent);
        m.insert(format!("sum_received{suffix}"), v);
    }
    if udp {
        let mut u = Map::new();
        udp_combined(&mut u, d.sent.as_ref(), d.received.as_ref());
        u.insert("sender".into(), json!(host_sent));
        m.insert(format!("sum{suffix}"), Value::Object(u));
    }
}

/// `end.cpu_utilization_percent`; the remote figures are 0 when they never arrived.
fn cpu_json(s: &TestSummary) -> Value {
    let remote = s.cpu_remote.unwrap_or_default();
    json!({
        "host_total": s.cpu_local.total,
        "host_user": s.cpu_local.user,
        "host_system": s.cpu_local.system,
        "remote_total": remote.total,
        "remote_user": remote.user,
        "remote_system": remote.system,
    })
}

/// `end.sonde`: whether the summary is partial, who wrote it, and the notes seen so far.
fn end_sonde_json(s: &TestSummary, notes: &[String]) -> Value {
    json!({
        "partial": s.partial,
        "role": role_name(s.role),
        "direction": direction_name(s.direction),
        "remote_cpu_known": s.cpu_remote.is_some(),
        "error": s.error,
        "notes": notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(secs_value(10.0), json!(10));
        assert_eq!(secs_value(0.5), json!(0.5));
    }
}
