//! The server's per-source limits (`--max-conn-rate`, `--max-test-rate`, `--max-probe-rate`):
//! which are set, and a limiter on the server's clock for each. The token buckets themselves
//! are pure code in `sonde_stats::source_limit`.

pub use super::source_slots::DEFAULT_SESSIONS_PER_SOURCE;
pub use sonde_stats::source_limit::RateCap;
use sonde_stats::source_limit::{SourceLimiter as Buckets, WhenFull};
use std::net::IpAddr;
use std::time::Instant;

/// Sources remembered at once per limit.
pub const MAX_SOURCES: usize = 8192;

/// The server's per-source limits; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SourceLimits {
    /// TCP connections accepted per source (`--max-conn-rate`, per second).
    pub connections: Option<RateCap>,
    /// Tests started per source, any kind (`--max-test-rate`, per minute).
    pub tests: Option<RateCap>,
    /// Latency probes answered per source (`--max-probe-rate`, per second).
    pub probes: Option<RateCap>,
    /// Control connections (tests running or waiting to start) held at once per source
    /// (`--max-sessions-per-source`).
    pub sessions: Option<usize>,
}

impl Default for SourceLimits {
    /// No rate limits; [`DEFAULT_SESSIONS_PER_SOURCE`] control connections per source, so a
    /// server nobody configured still cannot be made to hold a thread per connection of one
    /// address.
    fn default() -> Self {
        Self {
            connections: None,
            tests: None,
            probes: None,
            sessions: Some(DEFAULT_SESSIONS_PER_SOURCE),
        }
    }
}

/// One limit's buckets, timed from when the limiter was made. A full table forgets the source
/// seen longest ago, so a flood from many addresses only resets its own members.
#[derive(Debug)]
pub struct SourceLimiter {
    buckets: Buckets,
    origin: Instant,
}

impl SourceLimiter {
    pub fn new(rate: RateCap) -> Self {
        Self {
            buckets: Buckets::new(rate, MAX_SOURCES, WhenFull::EvictOldest),
            origin: Instant::now(),
        }
    }

    /// The limit it applies.
    pub fn rate(&self) -> RateCap {
        self.buckets.rate()
    }

    /// Takes one token for `source` at `now`; false when it has none (refuse or ignore it).
    pub fn allow(&mut self, source: IpAddr, now: Instant) -> bool {
        let since = now.saturating_duration_since(self.origin);
        self.buckets.allow(source, since)
    }
}
