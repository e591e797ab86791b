//! Pure measurement statistics for sonde, and the typed result model every reporter consumes.
//!
//! Nothing here touches a socket or reads a clock: arrival times, send timestamps and CPU times
//! are arguments, so every figure can be checked with fixed numbers. The runtime feeds these
//! types; the reporters render [`model::Event`]s.
//!
//! ```
//! use sonde_stats::units::parse_rate;
//! assert_eq!(parse_rate("97.2m").unwrap(), 97_200_000);
//! ```

pub mod btc;
pub mod calendar;
pub mod capacity;
pub mod cpu;
pub mod dual_stack;
pub mod interval;
pub mod jitter;
pub mod latency;
pub mod link;
pub mod live_totals;
pub mod markup;
pub mod model;
pub mod sink;
pub mod source_limit;
pub mod stress;
pub mod sum;
pub mod sweep;
pub mod sweep_record;
pub mod tcp_summary;
pub mod udp_rx;
pub mod units;
pub mod verdict;
