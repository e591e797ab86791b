//! sonde's runtime: sockets, threads, pacing and timers around the pure protocol.
//!
//! [`client::run`] drives one test against a server; [`server::Server`] serves many at once.
//! Both run an [`engine::Engine`]: one thread per data stream, counters read by the
//! [`meter::Meter`] at interval boundaries, events delivered to a caller-supplied sink. The
//! protocol state machines and statistics come from `sonde-proto` and `sonde-stats`; every
//! OS-specific call (socket options, TCP_INFO, timestamps, CPU times, name resolution) is in
//! the `sonde-platform` crate.

pub mod auth;
pub mod btc;
pub mod capacity;
pub mod client;
pub mod client_checks;
pub mod clock;
pub mod coded;
pub mod compare_ip;
pub mod connect;
pub mod control_conn;
mod control_wait;
pub mod dual_stack;
pub mod end_condition;
pub mod engine;
pub mod error;
pub mod iperf3;
pub mod latency;
pub mod meter;
mod own_loop;
pub mod pacing;
pub mod peer_rows;
pub mod profile;
pub mod rrul;
pub mod schedule_slips;
pub mod server;
pub mod serving;
pub mod sockets;
pub mod start;
pub mod streams;
pub mod summary;
pub mod sweep;
pub mod test_events;

pub use error::RunError;
