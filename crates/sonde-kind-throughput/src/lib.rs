//! `sonde client`: throughput, the bytes a test's data streams carry each way per interval,
//! driven against a sonde server.
//!
//! Connects, negotiates, opens the data streams (UDP ones with retransmitted hellos), runs the
//! local engine, decides the end (time, bytes or blocks), exchanges results and emits events.
//! Whatever ends the test (Ctrl-C, a dead server, a refused request) the events seen so far and
//! a partial summary are still delivered.
//!
//! [`server`] is the server's side of the same test: the stream workers from the
//! streams-ready message, the test until the client's Stop (live intervals to the client on
//! the way), then results both ways and the summary.
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone, so it cannot reach
//! another kind; the suites that repeat it (btc, sweep, rrul) and the server that admits the
//! test and hands it to [`server::serve`] are in `sonde-runtime`, which re-exports this
//! crate as `sonde_runtime::client`.

mod client;
pub mod server;

pub use client::run;
/// The throughput client's configuration and outcome, and the address family of its
/// configuration: its public face, where callers of [`run`] name them (they live in the
/// core's [`sonde_runtime_core::connect`], shared by every sonde client).
pub use sonde_runtime_core::connect::{ClientConfig, ClientOutcome, Family};
