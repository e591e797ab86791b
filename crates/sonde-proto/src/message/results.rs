//! The end of a test: what each sender wrote, each end's final figures, and an abort.

use serde::{Deserialize, Serialize};
use sonde_stats::model::{CpuUsage, EndView, StreamRole};

/// How much a sender wrote on one stream, for exact loss accounting at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentCount {
    pub id: u32,
    pub bytes: u64,
    /// UDP datagrams sent since the start (the last sequence number used).
    pub packets: u64,
}

/// The client's end of the test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    #[serde(default)]
    pub sent: Vec<SentCount>,
    /// When the client told its senders to stop: nanoseconds of its test clock, which starts
    /// at its first data. The server's receivers end their span there (or at their last
    /// arrival, if later) rather than when the server read this message, which on a busy
    /// host comes milliseconds late. Absent from older clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at_ns: Option<u64>,
}

/// One stream as one end saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerStream {
    pub id: u32,
    pub role: StreamRole,
    pub view: EndView,
}

/// One end's final figures; `Default` is an end with nothing to report but what it sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub cpu: CpuUsage,
    #[serde(default)]
    pub congestion: Option<String>,
    pub streams: Vec<PeerStream>,
    /// For streams this end sent: totals, so the receiving end can count tail losses.
    #[serde(default)]
    pub sent: Vec<SentCount>,
    /// What this end has to tell the other's user about its side (a sender that fell behind
    /// its schedule). Bounded when read: see [`MAX_RESULT_NOTES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A profile run: the figures of the streams this end received.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<sonde_profile::result::StreamResult>,
    /// The whole server process's CPU time over the test (`cpu-load`: sent only to a client
    /// that lists it, so an older peer never sees the field). Read through
    /// [`ProcessLoad::checked`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_load: Option<ProcessLoad>,
}

/// A process's CPU time over a span of wall-clock time (`cpu-load`), from `getrusage`.
///
/// Unlike [`CpuUsage`] (the test's own threads, as iperf3 reports), this is every thread of
/// the process: what the machine spent serving, including other sessions and the control
/// connection, which is what a load-against-rate step wants to chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessLoad {
    pub user_secs: f64,
    pub system_secs: f64,
    pub wall_secs: f64,
}

/// Largest span a peer's [`ProcessLoad`] may claim (a day), and so the largest CPU times
/// (times 1024 cores): anything beyond is not a measurement.
const MAX_LOAD_WALL_SECS: f64 = 86_400.0;

impl ProcessLoad {
    /// The figures when they can be a measurement: finite, not negative, a wall time above
    /// zero and under a day, CPU times under 1024 cores' worth of it. `None` otherwise.
    pub fn checked(self) -> Option<Self> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        let cap = self.wall_secs * 1024.0;
        (ok(self.user_secs)
            && ok(self.system_secs)
            && ok(self.wall_secs)
            && self.wall_secs > 0.0
            && self.wall_secs <= MAX_LOAD_WALL_SECS
            && self.user_secs <= cap
            && self.system_secs <= cap)
            .then_some(self)
    }

    /// User plus system time in percent of one core over the wall time.
    pub fn percent(&self) -> f64 {
        (self.user_secs + self.system_secs) / self.wall_secs.max(f64::MIN_POSITIVE) * 100.0
    }
}

/// Most notes a peer's results may carry that a reader shows.
pub const MAX_RESULT_NOTES: usize = 16;

/// Either end giving up, with the reason for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Abort {
    pub reason: String,
}
