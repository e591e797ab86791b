//! The `start` section of a throughput document: the connections, the test's parameters as
//! iperf3 echoes them, and sonde's `start.sonde`.
//!
//! Every field is optional: a test that never started writes `start` as `{}`
//! ([`Start::default`]), and iperf3's versions differ in what they write here. sonde writes
//! every field it always wrote; those it leaves out when the OS would not say
//! (`tcp_mss_default`, `sndbuf_actual`, `rcvbuf_actual`) are `None` then.

use serde::{Deserialize, Serialize, Serializer};

use super::count::opt_count;

/// The `start` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Start {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connected: Option<Vec<Connected>>,
    /// `"sonde 0.1.0"`, or iperf3's `"iperf 3.12"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_info: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    /// A client's peer: the server's host and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connecting_to: Option<Peer>,
    /// A server's peer: the client's host and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_connection: Option<Peer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cookie: Option<String>,
    /// The MSS asked for (`-M`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_mss: Option<u64>,
    /// The kernel's MSS when none was asked for (TCP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_mss_default: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_bitrate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_rate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sock_bufsize: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf_actual: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf_actual: Option<u64>,
    /// The test's parameters; what tells a throughput document from the other kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_start: Option<TestStart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sonde: Option<StartSonde>,
}

/// One element of `start.connected`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connected {
    /// sonde's stream id (iperf3's file descriptor).
    #[serde(default)]
    pub socket: u64,
    #[serde(default)]
    pub local_host: String,
    #[serde(default)]
    pub local_port: u64,
    #[serde(default)]
    pub remote_host: String,
    #[serde(default)]
    pub remote_port: u64,
}

/// `start.timestamp`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timestamp {
    /// RFC 2822, GMT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timesecs: Option<i64>,
    /// iperf3 3.20 and sonde; older iperf3 has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timemillisecs: Option<i64>,
}

/// `start.connecting_to` or `start.accepted_connection`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Peer {
    #[serde(default)]
    pub host: String,
    #[serde(default)]
    pub port: u64,
}

/// `start.test_start`. `omit` and `duration` are written as integers when whole, as iperf3
/// does.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestStart {
    /// `"TCP"` or `"UDP"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_streams: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blksize: Option<u64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "whole_seconds"
    )]
    pub omit: Option<f64>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "whole_seconds"
    )]
    pub duration: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// 1 for `-R`, else 0.
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reverse: Option<u64>,
    /// 1 for `--bidir`, else 0.
    #[serde(default, deserialize_with = "opt_count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bidir: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_bitrate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fqrate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<f64>,
    /// 1 when this host's UDP senders use GSO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gso: Option<i64>,
    /// 1 when this host's UDP receivers use GRO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gro: Option<i64>,
}

/// `start.sonde`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StartSonde {
    /// `"client"` or `"server"`.
    #[serde(default)]
    pub role: Option<String>,
    /// `"upload"`, `"reverse"` or `"bidir"`.
    #[serde(default)]
    pub direction: Option<String>,
    /// The congestion control asked for (TCP); null when none was.
    #[serde(default)]
    pub congestion: Option<String>,
    #[serde(default)]
    pub streams: Vec<StreamRole>,
    /// Both ends' links (a sonde client's documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<super::link::Link>,
}

/// One element of `start.sonde.streams`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamRole {
    #[serde(default)]
    pub socket: u64,
    /// `"sender"` or `"receiver"`.
    #[serde(default)]
    pub role: String,
}

/// Seconds as a JSON integer when whole (as iperf3 writes `omit` and `duration`), else as a
/// float.
fn whole_seconds<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match *v {
        Some(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 => s.serialize_i64(v as i64),
        Some(v) => s.serialize_f64(v),
        None => s.serialize_none(),
    }
}
