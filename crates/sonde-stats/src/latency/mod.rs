//! Latency statistics: round trips, one-way delays, loss split, duplicates, reordering,
//! lateness, IPDV and schedule error, in constant memory.
//!
//! Everything is pure: probe send and receive times are arguments (ns on each host's clock), so
//! the figures are checked with fixed numbers. The runtime feeds a [`tracker::ProbeTracker`];
//! reporters render the [`model`] types.
//!
//! - [`histogram`]: exact min/mean/max/variance plus HDR-histogram percentiles (flat memory).
//! - [`offset`]: NTP on-wire clock-offset estimation from the fastest third of probes.
//! - [`intervals`]: interval rows by send time, each with its own loss.
//! - [`tracker`]: the probe accountant (RFC 3393 IPDV, RFC 3550 jitter, RFC 4737 reordering).
//! - [`compare`]: significance tests for `sonde compare-ip`.
//! - [`timeline`]: a run's probes cut into spans of time, for a chart along the run.
//!
//! ```
//! use sonde_stats::latency::tracker::{ProbeTracker, Reply, TrackerConfig};
//! let mut t = ProbeTracker::new(TrackerConfig::default());
//! t.on_sent(1);
//! t.on_reply(&Reply { seq: 1, sent_ns: 0, recv_ns: 2_000_000, server: None });
//! assert_eq!(t.rtt().unwrap().median_ms, 2.0);
//! ```

pub mod compare;
pub mod histogram;
pub mod intervals;
pub mod model;
pub mod offset;
pub mod timeline;
pub mod tracker;
