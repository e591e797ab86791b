//! The core of sonde's runtime: what every measurement kind shares, and nothing that knows a
//! kind.
//!
//! Sockets and their options ([`sockets`]), one thread per data stream ([`streams`]), exact
//! pacing ([`pacing`], [`schedule_slips`], [`clock`]), the [`engine`] that runs the streams
//! and the [`meter`] that reads their counters at interval boundaries; the control
//! connection ([`control_conn`]) and its one wait for the next message ([`control_wait`]); a
//! client's connecting and data streams ([`connect`], [`client_checks`], [`own_loop`] for the
//! tests that run their own loop on one UDP stream); a test's events and figures
//! ([`test_events`], [`start`], [`summary`], [`end_condition`], [`peer_rows`]); the server's
//! configuration and admission, and the admitted test a kind's server side is handed
//! ([`serving`]), [`auth`] and the runtime's [`error`].
//!
//! The measurement kinds stand on this crate, one crate each (`sonde-kind-throughput`,
//! `-iperf3`, `-latency`, `-capacity`, `-coded`, `-profile`); the suites that run kinds
//! together and the server that dispatches to them are in `sonde-runtime`, which re-exports
//! these modules and the kinds under their old names. Being a crate of its own, the core
//! cannot reach up into a kind, and no kind can reach into another: the compiler keeps the
//! layering.
//!
//! ```
//! use sonde_runtime_core::pacing::datagram_gap_ns;
//! // 8 Mbit/s in 1000-byte datagrams: one departure per millisecond.
//! assert_eq!(datagram_gap_ns(1000, 8_000_000), 1_000_000);
//! ```

pub mod auth;
pub mod client_checks;
pub mod clock;
pub mod connect;
pub mod control_conn;
pub mod control_wait;
pub mod end_condition;
pub mod engine;
pub mod error;
pub mod meter;
pub mod own_loop;
pub mod pacing;
pub mod peer_rows;
pub mod schedule_slips;
pub mod serving;
pub mod sockets;
pub mod start;
pub mod streams;
pub mod summary;
pub mod test_events;

pub use error::RunError;
