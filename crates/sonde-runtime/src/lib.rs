//! sonde's runtime: sockets, threads, pacing and timers around the pure protocol.
//!
//! [`client::run`] drives one test against a server; [`server::Server`] serves many at once.
//! Both run an [`engine::Engine`]: one thread per data stream, counters read by the
//! [`meter::Meter`] at interval boundaries, events delivered to a caller-supplied sink. The
//! protocol state machines and statistics come from `sonde-proto` and `sonde-stats`; every
//! OS-specific call (socket options, TCP_INFO, timestamps, CPU times, name resolution) is in
//! the `sonde-platform` crate.
//!
//! # Layers
//!
//! The modules stand in four layers, and a module imports only from its own layer's core or
//! from layers below it:
//!
//! - **Core**: what every measurement shares. Sockets and streams ([`sockets`], [`streams`],
//!   [`pacing`], [`schedule_slips`], [`clock`]), the [`engine`] and its [`meter`], the
//!   control connection and its waits ([`control_conn`], `control_wait`), a client's
//!   connecting and data streams ([`connect`], [`client_checks`], `own_loop` for the tests
//!   that run their own loop on one UDP stream), a test's events and figures
//!   ([`test_events`], [`start`], [`summary`], [`end_condition`], [`peer_rows`]), the
//!   server's configuration and admission ([`serving`]), [`auth`] and [`error`].
//! - **Kinds**, siblings over the core: the throughput client ([`client`]), the iperf3
//!   dialect ([`iperf3`]: its client and its server sessions), [`latency`] (the prober and
//!   the responder), [`capacity`], [`coded`] and [`profile`]. A kind imports only the core:
//!   never another kind's client or server. The sonde server's side of a kind lives with the
//!   server's sessions, over the kind's public parts.
//! - **Suites**, which run kinds together: [`btc`] and [`sweep`] (series of throughput
//!   tests), [`rrul`] (latency under throughput load), [`dual_stack`] (latency, BTC and
//!   capacity per address family), [`compare_ip`] (the families compared, over rrul's
//!   runners and dual_stack's modes) and [`profile_run`] (the latency prober's clock offset,
//!   then the profile).
//! - **The server** ([`server`]): one port for both dialects, dispatching each connection to
//!   the kind it asks for (sonde's sessions for throughput, capacity, coded and profile
//!   tests; iperf3's sessions; the latency responder and tcp-rr).

pub mod btc;
pub mod capacity;
pub mod client;
pub mod coded;
pub mod compare_ip;
pub mod dual_stack;
pub mod iperf3;
pub mod latency;
pub mod profile;
pub mod profile_run;
pub mod rrul;
pub mod server;
pub mod sweep;

// The core, under the names it always had here: `sonde_runtime::engine` and, inside this
// crate, `crate::engine` are the core's.
pub use sonde_runtime_core::{
    auth, client_checks, clock, connect, control_conn, control_wait, end_condition, engine, error,
    meter, own_loop, pacing, peer_rows, schedule_slips, serving, sockets, start, streams, summary,
    test_events, RunError,
};
