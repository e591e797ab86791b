//! What every test the server serves shares, whichever protocol its client speaks (sonde's
//! sessions in `server`, iperf3's in `iperf3::server`): the server's configuration, the
//! sinks its tests report to, and who is admitted ([`policy`]: the limits on a test and the
//! `--max-clients` slots; [`source_limit`] and [`source_slots`]: per-source rates and
//! connections, which the latency responder applies to probes too).
//!
//! [`served_test`] is one admitted test as the kind that serves it sees it: the server
//! admits and collects the streams, then hands it to the kind's `server::serve`.
//!
//! Core: it imports nothing of a measurement kind or of the server, so both protocols'
//! sessions and the responder stand on it side by side.

pub mod admission;
pub mod policy;
mod served_end;
pub mod served_test;
pub mod source_limit;
pub mod source_slots;

use sonde_stats::model::Event;
use sonde_stats::sink::Sink;
use source_limit::SourceLimits;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// How the server is configured.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub port: u16,
    pub bind: Option<IpAddr>,
    pub max_clients: Option<usize>,
    pub max_duration_secs: Option<f64>,
    pub max_bitrate: Option<sonde_stats::units::Rate>,
    pub one_off: bool,
    /// Interval for the server's own reports; None = use the client's.
    pub interval_secs: Option<f64>,
    /// With no `bind` address: serve IPv6 only (`-6`) instead of both families.
    pub ipv6_only: bool,
    /// A test whose data stops arriving this long while the server receives fails
    /// (`--rcv-timeout`); None waits up to the test's time limit.
    pub rcv_timeout: Option<Duration>,
    /// Listen with Multipath TCP (`-m`); plain TCP clients are served as before.
    pub mptcp: bool,
    /// `--idle-timeout`: with `one_off`, stop when no client came for this long; otherwise
    /// log the idle time and go on.
    pub idle_timeout: Option<Duration>,
    /// Per-source rates of connections, tests and latency probes.
    pub source_limits: SourceLimits,
    /// Who may run tests: sonde's pre-shared key, iperf3's RSA tokens (none by default).
    pub auth: crate::auth::ServerAuth,
}

impl ServerConfig {
    /// The limits this configuration puts on each test (for both protocols).
    pub fn limits(&self) -> policy::Limits {
        policy::Limits {
            max_duration_secs: self.max_duration_secs,
            max_bitrate: self.max_bitrate,
        }
    }
}

/// Creates the event sink for one test, given a label for the client. The server only hands
/// it events (see [`Sink`] for what a failed write does); the sink finishes itself after the
/// test's `End`.
pub type SinkFactory = Arc<dyn Fn(&str) -> Box<dyn Sink<Event> + Send> + Send + Sync>;
