//! The typed result model: what a measurement produces and every reporter consumes.
//!
//! Engines (the runtime) emit [`Event`]s into a sink; the human table, the iperf3-style `-J`
//! document and the JSON-lines stream are separate consumers of the same values. Keeping the data
//! in one place is what lets a new output format be added without touching measuring code.
//!
//! Times are seconds relative to the test start (after connection set-up), as iperf3 reports
//! them. Byte counts are payload bytes as seen by the application (for UDP they include sonde's
//! datagram header, as iperf3's include its own).

use serde::{Deserialize, Serialize};

/// Transport protocol under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Udp,
}

impl Protocol {
    /// Upper-case name as iperf3 prints it ("TCP", "UDP").
    pub fn as_upper(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
        }
    }
}

/// Which way data flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// The client sends (iperf3's default).
    Upload,
    /// The server sends (`-R`).
    Reverse,
    /// Both send at once (`--bidir`).
    Bidir,
}

/// Which end produced a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Client,
    Server,
}

/// The role a stream plays on the reporting host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamRole {
    /// This host writes data on the stream.
    Sender,
    /// This host reads data from the stream.
    Receiver,
}

/// Everything known at the start of a test, for the `start` section of reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestStart {
    pub role: Role,
    pub version: String,
    pub system_info: String,
    /// Unix time (seconds) at the start of the test.
    pub timestamp_unix: f64,
    pub local: String,
    pub remote: String,
    /// The port of the server (control connection).
    pub server_port: u16,
    pub cookie: String,
    pub protocol: Protocol,
    pub direction: Direction,
    pub num_streams: u32,
    pub blksize: u64,
    pub omit_secs: f64,
    pub duration_secs: f64,
    pub bytes: u64,
    pub blocks: u64,
    /// Target bit/s per stream, 0 = unlimited.
    pub target_bitrate: u64,
    pub tos: u32,
    pub interval_secs: f64,
    /// Congestion control requested (TCP), if any.
    pub congestion: Option<String>,
    pub tcp_mss: Option<u32>,
    pub sock_bufsize: Option<u64>,
    /// Kernel pacing asked per data socket (`--fq-rate`), bit/s; 0 = none.
    #[serde(default)]
    pub fq_rate: u64,
    /// What the kernel made of this host's data sockets.
    #[serde(default)]
    pub sockets: SocketFigures,
    pub connected: Vec<ConnectedStream>,
    /// Both ends' links and TCP settings (a sonde client's tests; `None` elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::link::LinkPair>,
}

/// What the kernel made of this host's data sockets, read back with getsockopt once they are
/// connected (None where the OS would not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SocketFigures {
    /// SO_SNDBUF of the first data socket, bytes (the kernel doubles what was asked).
    pub sndbuf_actual: Option<u64>,
    /// SO_RCVBUF of the first data socket, bytes.
    pub rcvbuf_actual: Option<u64>,
    /// TCP_MAXSEG of the first data socket when the test set no MSS (`-M`), bytes.
    pub tcp_mss_default: Option<u32>,
    /// This host's UDP senders batch datagrams with UDP GSO.
    pub gso: bool,
    /// This host's UDP receivers take coalesced datagrams (UDP GRO).
    pub gro: bool,
}

/// One data connection, as in iperf3's `start.connected[]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectedStream {
    /// Stream id (1-based, unique within the test).
    pub id: u32,
    pub role: StreamRole,
    pub local: String,
    pub remote: String,
}

/// TCP_INFO values for a sending TCP stream at the end of an interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpInfoSample {
    /// Retransmitted segments during the interval (delta of `tcpi_total_retrans`).
    pub retransmits: u64,
    /// Congestion window in bytes (`tcpi_snd_cwnd * tcpi_snd_mss`).
    pub snd_cwnd: u64,
    /// Smoothed RTT in microseconds.
    pub rtt_us: u32,
    /// RTT variance in microseconds.
    pub rttvar_us: u32,
    /// Path MTU in bytes.
    pub pmtu: u32,
    /// The peer's advertised receive window in bytes (`tcpi_snd_wnd`; None where the kernel
    /// does not report it, before Linux 5.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snd_wnd: Option<u64>,
    /// Reordering events the kernel has seen on the connection so far (`tcpi_reord_seen`,
    /// cumulative as iperf3 reports it; None before Linux 4.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
}

/// UDP statistics of a receiving stream over some span (an interval or the whole test).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UdpReceiveStats {
    /// Datagrams expected in the span (received + lost).
    pub packets: u64,
    /// Datagrams lost in the span.
    pub lost: u64,
    /// 100 * lost / packets (0 when packets is 0).
    pub lost_percent: f64,
    /// RFC 3550 interarrival jitter at the end of the span, in milliseconds.
    pub jitter_ms: f64,
    /// Datagrams that arrived after a higher sequence number (late), excluding duplicates.
    pub out_of_order: u64,
    /// Datagrams whose sequence number had already been received.
    pub duplicates: u64,
}

/// One stream's figures over one interval (or the summary span).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamSample {
    pub id: u32,
    pub role: StreamRole,
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    pub bits_per_second: f64,
    /// True when the span lies inside the `-O` omit period.
    pub omitted: bool,
    /// TCP sender only.
    pub tcp: Option<TcpInfoSample>,
    /// UDP sender only: datagrams sent.
    pub udp_sent_packets: Option<u64>,
    /// UDP receiver only.
    pub udp_received: Option<UdpReceiveStats>,
}

/// A sum over streams of one role (everything this host sent, or received).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SumSample {
    pub role: StreamRole,
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    pub bits_per_second: f64,
    pub omitted: bool,
    /// TCP sender: retransmits summed over streams.
    pub retransmits: Option<u64>,
    /// UDP sender: datagrams sent.
    pub udp_sent_packets: Option<u64>,
    /// UDP receiver: summed counts; jitter is the mean over streams.
    pub udp_received: Option<UdpReceiveStats>,
}

/// One interval report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    pub streams: Vec<StreamSample>,
    /// One entry per role present on this host (sender and/or receiver).
    pub sums: Vec<SumSample>,
}

/// Summary of one stream's TCP sender at the end of the test.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpSenderSummary {
    pub retransmits: u64,
    pub max_snd_cwnd: u64,
    pub max_rtt_us: u32,
    pub min_rtt_us: u32,
    pub mean_rtt_us: u32,
    /// Largest peer receive window seen (None when no sample had one, or the figures came
    /// from a peer that does not send it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_snd_wnd: Option<u64>,
    /// Reordering events seen by the end of the test (the last sample's count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<u64>,
}

/// One end's view of a stream for the whole test (after the omit period).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndView {
    pub start: f64,
    pub end: f64,
    pub bytes: u64,
    pub bits_per_second: f64,
    pub tcp: Option<TcpSenderSummary>,
    pub udp_sent_packets: Option<u64>,
    pub udp_received: Option<UdpReceiveStats>,
}

/// A stream in the final summary: both ends' views where they are known.
///
/// `client_sends` tells the direction: true when the client is the sender of this stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamSummary {
    pub id: u32,
    pub client_sends: bool,
    pub sender: Option<EndView>,
    pub receiver: Option<EndView>,
}

/// CPU utilisation of one end, in percent of one core (user + system = total).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuUsage {
    pub total: f64,
    pub user: f64,
    pub system: f64,
}

/// Sums for one direction of traffic in the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionSummary {
    /// True when the client sends in this direction.
    pub client_sends: bool,
    /// The sender's total; None when that end's figures never arrived (partial run).
    pub sent: Option<EndView>,
    /// The receiver's total; None when that end's figures never arrived (partial run).
    pub received: Option<EndView>,
}

/// The final result of a test, as the reporting host sees it after the results exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestSummary {
    pub role: Role,
    pub protocol: Protocol,
    pub direction: Direction,
    pub streams: Vec<StreamSummary>,
    /// One entry per direction with traffic: client-to-server first, then server-to-client.
    pub directions: Vec<DirectionSummary>,
    pub cpu_local: CpuUsage,
    /// None when the peer's figures never arrived (peer died, Ctrl-C).
    pub cpu_remote: Option<CpuUsage>,
    pub sender_congestion: Option<String>,
    pub receiver_congestion: Option<String>,
    /// True when the test did not run to its end condition.
    pub partial: bool,
    /// Why the test ended early, if it did.
    pub error: Option<String>,
}

/// One event of a test, in the order they happen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum Event {
    Start(Box<TestStart>),
    Interval(IntervalReport),
    /// The peer's own interval report, streamed live (capability `live-intervals`): on a
    /// client, the server's view, e.g. per-interval UDP loss and jitter of an upload test.
    PeerInterval(IntervalReport),
    End(Box<TestSummary>),
    /// A human-readable remark (server accepted a client, a fallback was used, ...).
    Note(String),
    Error(String),
}
