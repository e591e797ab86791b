//! The typed result of a stress run: what the runtime emits and every reporter consumes.
//!
//! Field names are the JSON keys of `sonde stress -J` (serialised as they are), so renaming a
//! field changes the documented output.

use serde::{Deserialize, Serialize};

/// Which of the small services is driven, and so which way the data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StressMode {
    /// RFC 863: this end sends, the device swallows.
    Discard,
    /// RFC 864: the device sends, this end reads.
    Chargen,
    /// RFC 862: this end sends, the device sends it back.
    Echo,
}

impl StressMode {
    /// The service's name as the RFCs spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Discard => "discard",
            Self::Chargen => "chargen",
            Self::Echo => "echo",
        }
    }

    /// The well-known port (RFC 862/863/864).
    pub fn well_known_port(self) -> u16 {
        match self {
            Self::Echo => 7,
            Self::Discard => 9,
            Self::Chargen => 19,
        }
    }

    /// This end sends data.
    pub fn sends(self) -> bool {
        matches!(self, Self::Discard | Self::Echo)
    }

    /// This end receives data.
    pub fn receives(self) -> bool {
        matches!(self, Self::Chargen | Self::Echo)
    }
}

/// TCP connections or UDP flows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Tcp,
    /// One socket per flow, paced datagrams (`-u`).
    Udp,
}

/// What the run is about to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressStart {
    pub remote: String,
    pub port: u16,
    pub mode: StressMode,
    /// Absent in documents from before UDP: TCP.
    #[serde(default)]
    pub transport: Transport,
    /// Connections (UDP: flows) asked for (`-P`).
    pub connections: u32,
    pub duration_secs: f64,
    pub interval_secs: f64,
    pub connect_timeout_secs: f64,
}

/// How opening the connections went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConnectReport {
    pub asked: u32,
    pub connected: u32,
    /// Answered with a reset (RST: nothing listens, or the backlog or a limit refused it).
    pub refused: u32,
    /// No SYN-ACK within the connect timeout.
    pub timed_out: u32,
    /// Any other failure (unreachable, out of local ports or descriptors); see `first_error`.
    pub other_failed: u32,
    /// From the first connect to the last one settled.
    pub seconds: f64,
    /// The first failure other than a refusal or time-out, as the OS said it.
    pub first_error: Option<String>,
}

/// One connection's share of one interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnRate {
    /// 1-based, in the order the connections were opened.
    pub id: u32,
    #[serde(default)]
    pub sent_bytes: u64,
    #[serde(default)]
    pub received_bytes: u64,
    pub sent_bps: f64,
    pub received_bps: f64,
    /// Still open at the interval's end.
    #[serde(default)]
    pub open: bool,
}

/// Every connection's bytes summed, per direction, and how fairly they were shared.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sum {
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub sent_bps: f64,
    pub received_bps: f64,
    /// Jain's index of the bytes sent (modes that send), over every connection opened.
    pub fairness_sent: Option<f64>,
    /// Jain's index of the bytes received (modes that receive).
    pub fairness_received: Option<f64>,
}

/// One report interval: each connection, their sum, and how fairly it was shared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressInterval {
    pub start: f64,
    pub end: f64,
    pub connections: Vec<ConnRate>,
    #[serde(flatten)]
    pub sum: Sum,
    /// Ends within `--warmup`: reported, not counted in the summary's rates, fairness and
    /// zero shares. Absent in older documents: false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CloseOutcome {
    /// This end's FIN was answered by the device's FIN, no reset.
    Clean,
    /// The device reset the connection while it was closed.
    Reset,
    /// The device did not finish closing within the close timeout.
    Timeout,
    /// The connection failed before the run ended (reset, error or early close by the device).
    FailedDuringRun,
    /// A UDP flow: there is no connection to close.
    Udp,
}

/// One connection over the whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnTotal {
    pub id: u32,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub sent_bps: f64,
    pub received_bps: f64,
    pub close: CloseOutcome,
    /// What went wrong, as the OS said it, when the close was not clean.
    pub error: Option<String>,
    /// Bytes read after this end's FIN (an echo that answers only then); not in
    /// `received_bytes` nor the rates, which are of the data phase. Absent in older
    /// documents: 0.
    #[serde(default)]
    pub drained_bytes: u64,
    /// The share (0..1) of the counted intervals in which it moved nothing in the mode's
    /// direction ([`super::steady`]); `None` when no interval was counted or in older documents.
    #[serde(default)]
    pub zero_share: Option<f64>,
}

impl ConnTotal {
    /// Every byte the device sent back on this connection: in the data phase and after
    /// this end's FIN.
    pub fn returned_bytes(&self) -> u64 {
        self.received_bytes + self.drained_bytes
    }
}

/// The run's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StressSummary {
    /// Seconds measured (from the end of the connect phase to the end or Ctrl-C).
    pub seconds: f64,
    pub connect: ConnectReport,
    pub connections: Vec<ConnTotal>,
    #[serde(flatten)]
    pub sum: Sum,
    pub closed_clean: u32,
    pub closed_reset: u32,
    pub closed_timeout: u32,
    pub failed_during_run: u32,
    /// Echo only: bytes that came back different from what was sent (0 for a correct echo),
    /// those read after this end's FIN included.
    pub echo_mismatched_bytes: u64,
    /// Echo only: bytes sent on connections that then closed cleanly which never came back,
    /// not even after this end's FIN (the device lost them). Absent in older documents: 0.
    #[serde(default)]
    pub echo_unreturned_bytes: u64,
    /// The run was cut short (Ctrl-C, or output closed).
    pub partial: bool,
    /// UDP runs only: datagrams, echo loss and round trips, reply caps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp: Option<Box<super::udp::UdpSummary>>,
    /// `--warmup`: seconds at the start whose intervals are not counted in the rates, the
    /// fairness and the zero shares (the bytes are the whole run's). Older documents: 0.
    #[serde(default)]
    pub warmup_secs: f64,
    /// The largest zero share of any connection.
    #[serde(default)]
    pub zero_share_worst: Option<f64>,
}

impl StressSummary {
    /// Every byte the device sent back over all connections, those after this end's FIN
    /// included (`sum.received_bytes` counts the data phase only).
    pub fn returned_bytes(&self) -> u64 {
        let drained: u64 = self.connections.iter().map(|c| c.drained_bytes).sum();
        self.sum.received_bytes + drained
    }
}

/// What a stress run emits, in order: `Start`, `Connected`, any number of `Interval` and
/// `Note`, then `End` (or `Error` when nothing could be measured).
#[derive(Debug, Clone, PartialEq)]
pub enum StressEvent {
    Start(StressStart),
    Connected(ConnectReport),
    Interval(StressInterval),
    Note(String),
    End(StressSummary),
    Error(String),
}
