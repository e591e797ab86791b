//! The latency result model: what `sonde latency`, `rrul` and `compare-ip` produce and the
//! latency reporters consume. Durations are milliseconds (floats) unless the name says
//! otherwise; times are seconds since the start of the run.

use serde::{Deserialize, Serialize};

use crate::btc::{BtcSession, BtcStats};
use crate::capacity::Verdict as CapacityVerdict;

/// How the probes travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyMode {
    /// UDP request/response to a sonde server.
    Udp,
    /// ICMP echo (RFC 792 / RFC 4443) to any host.
    Icmp,
    /// TCP handshake times to any TCP service.
    TcpConnect,
    /// Request/response transactions on one TCP connection to a sonde server.
    TcpRr,
}

impl LatencyMode {
    /// The name as the document spells it (`"udp"`, `"tcp_connect"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            LatencyMode::Udp => "udp",
            LatencyMode::Icmp => "icmp",
            LatencyMode::TcpConnect => "tcp_connect",
            LatencyMode::TcpRr => "tcp_rr",
        }
    }

    /// Short label for tables.
    pub fn label(self) -> &'static str {
        match self {
            LatencyMode::Udp => "UDP probes",
            LatencyMode::Icmp => "ICMP echo",
            LatencyMode::TcpConnect => "TCP connect",
            LatencyMode::TcpRr => "TCP request/response",
        }
    }
}

/// What is known when probing starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyStart {
    pub version: String,
    pub mode: LatencyMode,
    /// The host as the user typed it.
    pub target: String,
    pub remote: String,
    pub local: String,
    /// "IPv4" or "IPv6".
    pub family: String,
    /// Bytes per probe as defined by `size_meaning`.
    pub size: u32,
    /// What `size` counts (for ICMP: the echo payload, without the 8-byte ICMP header).
    pub size_meaning: String,
    /// Seconds between probes (0 with `--flood`).
    pub interval_secs: f64,
    pub flood: bool,
    /// Probes allowed in flight at once.
    pub window: u32,
    pub count: Option<u64>,
    pub duration_secs: Option<f64>,
    pub late_ms: Option<f64>,
    /// How send and receive times were taken (kernel or user space).
    pub timestamping: String,
    pub clock_synced: bool,
    /// Unix time (seconds) at the start.
    pub timestamp_unix: f64,
}

/// A delay distribution.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DelayStats {
    pub samples: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub median_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
    pub stddev_ms: f64,
    #[serde(default)]
    pub variance_ms2: f64,
}

/// Delay variation between consecutive probes (RFC 3393 IPDV), as absolute values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct IpdvStats {
    /// Pairs of consecutive sequence numbers both answered.
    pub pairs: u64,
    pub mean_abs_ms: f64,
    pub max_abs_ms: f64,
}

/// Whether one-way figures were measured, estimated, or cannot be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OneWayBasis {
    /// The user said the clocks are synchronised (`--clock-synced`) and no delay came out
    /// negative.
    Measured,
    /// The clock offset was estimated (fastest third of probes, symmetric-path assumption).
    Estimated,
    /// `--clock-synced` was given but delays came out negative: the clocks are not synchronised.
    Invalid,
}

/// One-way delays, upstream (client to server) and downstream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneWayStats {
    pub basis: OneWayBasis,
    /// Server clock minus client clock, as estimated (None when measured).
    pub clock_offset_ms: Option<f64>,
    #[serde(default)]
    pub method: String,
    pub up: Option<DelayStats>,
    pub down: Option<DelayStats>,
    /// IPDV needs no clock agreement: a constant offset cancels out.
    pub ipdv_up: Option<IpdvStats>,
    pub ipdv_down: Option<IpdvStats>,
    pub note: Option<String>,
}

/// Loss, duplicates, reordering and lateness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LossStats {
    pub sent: u64,
    /// Distinct probes answered.
    pub received: u64,
    #[serde(default)]
    pub lost: u64,
    pub loss_percent: f64,
    /// Requests that never reached the server (needs the server's count).
    pub lost_up: Option<u64>,
    /// Replies lost on the way back (needs the server's count).
    pub lost_down: Option<u64>,
    /// Requests the server says it received.
    pub server_received: Option<u64>,
    #[serde(default)]
    pub duplicates: u64,
    /// Replies that arrived after a reply with a higher sequence number.
    #[serde(default)]
    pub reordered: u64,
    /// Replies later than `--late` (they are counted as received and in the RTT statistics).
    #[serde(default)]
    pub late: u64,
    #[serde(default)]
    pub late_percent: f64,
    /// "Port unreachable" answers from the peer's host: no server listened for the probes
    /// (one not yet started, restarting or stopped; or a firewall rejecting them). Probes
    /// so refused count as lost, yet they say nothing of the path. Each answer stands for
    /// at least one datagram: the kernel reports one per error it holds, and hosts
    /// rate-limit them. At most `sent` (a refused count query is not counted). Absent in documents of older
    /// sondes (read as 0).
    #[serde(default)]
    pub refused: u64,
}

/// How well the sender kept its schedule: send time minus scheduled time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleStats {
    pub interval_ms: f64,
    pub mean_error_us: f64,
    pub p99_error_us: f64,
    pub max_error_us: f64,
    /// Mean error as a percentage of the interval (irtt's "timer error").
    pub error_percent: f64,
}

/// One interval line: the probes sent in `start..end` (seconds since the start), how many of
/// them were answered by the time the line was written and the RTTs of those answers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyInterval {
    pub start: f64,
    pub end: f64,
    pub sent: u64,
    pub received: u64,
    /// Probes of this interval still unanswered when the line was written (every probe was
    /// answered, or the wait for replies had passed).
    #[serde(default)]
    pub lost: u64,
    pub rtt: Option<DelayStats>,
}

/// A probe left (the start of its per-probe record).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeSent {
    pub seq: u64,
    /// Wall clock at the send, Unix time in nanoseconds.
    pub sent_unix_ns: u64,
}

/// The first reply to a probe, as ping prints it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundTrip {
    pub seq: u64,
    /// Wall clock at the send, Unix time in nanoseconds.
    pub sent_unix_ns: u64,
    /// Wall clock at the receive (the kernel's timestamp where available), Unix ns.
    pub received_unix_ns: u64,
    /// Round-trip time; for UDP probes without the server's turnaround, so it can be less
    /// than received minus sent.
    pub rtt_ms: f64,
    /// Measured one-way delay client to server (only with `--clock-synced`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up_ms: Option<f64>,
    /// Measured one-way delay server to client (only with `--clock-synced`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub down_ms: Option<f64>,
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Length of the probing (the last replies may have been waited for a little longer).
    #[serde(default)]
    pub seconds: f64,
    pub loss: LossStats,
    /// Round-trip time (for UDP probes without the server's turnaround; for tcp-connect the
    /// handshake time).
    pub rtt: Option<DelayStats>,
    /// Every round trip, binned (for a distribution plot drawn from all samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_histogram: Option<Histogram>,
    /// RFC 3550 smoothed jitter of the RTT.
    pub jitter_ms: f64,
    pub ipdv: Option<IpdvStats>,
    pub one_way: Option<OneWayStats>,
    /// Mean time the server held a probe.
    pub server_turnaround_us: Option<f64>,
    pub schedule: Option<ScheduleStats>,
    /// Answered probes per second of probing (tcp-rr: transactions per second).
    #[serde(default)]
    pub rate_per_second: f64,
    /// True when the run did not reach its end (Ctrl-C, error).
    #[serde(default)]
    pub partial: bool,
    pub error: Option<String>,
}

/// A distribution in bins: `(low, high, count)` per non-empty bin, ascending, each sample
/// counted in the bin with `low <= value <= high`. The bins are the HDR histogram's (3
/// significant digits: each bin is at most 0.1 % of its values wide).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    /// Unit of `low` and `high`: "ms".
    pub unit: String,
    pub bins: Vec<(f64, f64, u64)>,
}

/// One event of a latency run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum LatencyEvent {
    Start(Box<LatencyStart>),
    Interval(LatencyInterval),
    End(Box<LatencySummary>),
    Note(String),
    Error(String),
    /// A probe left; for per-probe records (`-J`), ignored by summaries.
    Sent(ProbeSent),
    /// A probe's first reply; for per-probe lines (`-v`) and records.
    RoundTrip(RoundTrip),
}

/// One phase of `sonde rrul`: latency probes while TCP streams load the path (or not).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrulPhase {
    /// "idle", "download", "upload" or "bidirectional".
    pub name: String,
    /// Received goodput of the download streams (server to client), bit/s.
    pub download_bps: Option<f64>,
    /// Received goodput of the upload streams, bit/s.
    pub upload_bps: Option<f64>,
    pub latency: LatencySummary,
    /// Median RTT minus the idle median, ms.
    pub median_inflation_ms: Option<f64>,
    /// p99 RTT minus the idle p99, ms.
    pub p99_inflation_ms: Option<f64>,
    /// Why the load of this phase failed, if it did.
    pub load_error: Option<String>,
}

/// The result of `sonde rrul`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RrulResult {
    pub version: String,
    pub target: String,
    pub remote: String,
    /// TCP streams per loaded direction.
    pub streams: u32,
    pub phase_secs: f64,
    pub step_secs: f64,
    pub phases: Vec<RrulPhase>,
    pub partial: bool,
    pub error: Option<String>,
}

/// One address family's figures in `sonde compare-ip`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyResult {
    /// "IPv4" or "IPv6".
    pub family: String,
    pub address: Option<String>,
    pub rtt: Option<DelayStats>,
    pub loss_percent: Option<f64>,
    /// TCP upload goodput (received), bit/s.
    pub throughput_bps: Option<f64>,
    pub error: Option<String>,
}

/// Latency of one probe size over one family (`sonde compare-ip --sizes`; how it becomes a
/// measure of the verdict is [`crate::dual_stack`]'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// "IPv4" or "IPv6".
    pub family: String,
    /// UDP payload bytes of each probe.
    pub payload_bytes: u32,
    /// IP packet bytes of each probe (payload + UDP + IP header).
    pub ip_bytes: u32,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    pub loss_percent: f64,
    /// Probes the peer's host refused ("port unreachable": nothing listened); lost too.
    #[serde(default)]
    pub refused: u64,
    /// min/mean/median/max/stddev/variance of the RTT, ms; None when nothing was answered.
    pub rtt: Option<DelayStats>,
    pub error: Option<String>,
}

/// One family's BTC sessions and their running statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcFamily {
    pub family: String,
    pub address: Option<String>,
    pub sessions: Vec<BtcSession>,
    /// min/max/mean/median goodput over the sessions, TCP payload bit/s.
    pub summary: Option<BtcStats>,
    pub error: Option<String>,
}

/// One family's path capacity, in short (the full estimate is `sonde capacity`'s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityFamily {
    pub family: String,
    pub address: Option<String>,
    /// What limits the path: link, shaped, host-limited or unmeasured.
    pub verdict: Option<CapacityVerdict>,
    /// Sustained rate of the long trains and its range, IP bit/s.
    pub sustained_bps: Option<f64>,
    pub sustained_min_bps: Option<f64>,
    pub sustained_max_bps: Option<f64>,
    /// The peak mode's bin of the short trains, IP bit/s.
    pub peak_low_bps: Option<f64>,
    pub peak_high_bps: Option<f64>,
    /// Long trains that gave a rate.
    pub long_trains_used: u32,
    /// UDP payload bytes of each train datagram (chosen so the IP packet is 1500 B in both
    /// families unless set).
    pub payload_bytes: u32,
    pub seconds: f64,
    pub error: Option<String>,
}

/// The result of `sonde compare-ip`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareIpResult {
    pub version: String,
    pub target: String,
    pub ipv4: FamilyResult,
    pub ipv6: FamilyResult,
    /// Median RTT; A = IPv4, B = IPv6.
    pub latency: Option<super::compare::Comparison>,
    /// Mean interval throughput; A = IPv4, B = IPv6.
    pub throughput: Option<super::compare::Comparison>,
    /// With `--sizes`: seconds between probes, and a row per family and size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_secs: Option<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<SizeRow>,
    /// Each family's probes along the run, binned (see [`super::timeline`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_over_time: Vec<super::timeline::LatencyBin>,
    /// With `--btc`: each family's BTC sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub btc: Option<[BtcFamily; 2]>,
    /// With `--capacity`: each family's path capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<[CapacityFamily; 2]>,
    /// Which family is better, on which measure, by how much and how sure.
    pub verdict: crate::verdict::Verdict,
    /// The run was interrupted: the figures are of what ran.
    #[serde(default)]
    pub partial: bool,
}
