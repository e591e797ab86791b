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
//! The runtime stands in four layers, each a crate or crates, and a layer imports only from
//! the layers below it (the compiler keeps it so: a crate cannot name a crate it does not
//! depend on):
//!
//! - **Core** (`sonde-runtime-core`): what every measurement shares. Sockets and streams
//!   ([`sockets`], [`streams`], [`pacing`], [`schedule_slips`], [`clock`]), the [`engine`]
//!   and its [`meter`], the control connection and its waits ([`control_conn`],
//!   [`control_wait`]), a client's connecting and data streams ([`connect`],
//!   [`client_checks`], [`own_loop`] for the tests that run their own loop on one UDP
//!   stream), a test's events and figures ([`test_events`], [`start`], [`summary`],
//!   [`end_condition`], [`peer_rows`]), the server's configuration and admission
//!   ([`serving`]), [`auth`] and [`error`].
//! - **Kinds**, one crate each, siblings over the core: the throughput client ([`client`],
//!   `sonde-kind-throughput`), the iperf3 dialect ([`iperf3`], `sonde-kind-iperf3`: its
//!   client and its server sessions), [`latency`] (`sonde-kind-latency`: the prober and the
//!   responder), [`capacity`], [`coded`] and [`profile`] (`sonde-kind-capacity`,
//!   `sonde-kind-coded`, `sonde-kind-profile`). A kind's crate depends on the core alone:
//!   it cannot reach another kind's client or server. Each kind's crate holds both its
//!   client and the sonde server's side of it (`server::serve`, handed the core's
//!   [`serving::served_test::ServedTest`] once the server has admitted the test).
//! - **Suites**, in this crate, which run kinds together: [`btc`] and [`sweep`] (series of
//!   throughput tests), [`rrul`] (latency under throughput load), [`profile_run`] (the
//!   latency prober's clock offset, then the profile), [`dual_stack`] (latency, BTC and
//!   capacity per address family, over btc) and [`compare_ip`] (the families compared, over
//!   rrul's runners and dual_stack's modes): a suite imports only the suites listed before
//!   it, never the server.
//! - **The server** ([`server`]), in this crate: one port for both dialects, admitting each
//!   connection and handing it to the kind it asks for (a sonde test, once its streams have
//!   arrived, to the throughput, capacity, coded or profile kind's `server::serve`; iperf3's
//!   sessions; the latency responder and tcp-rr). It imports no suite.
//!
//! The core's modules and the kinds' crates are re-exported here under the names they always
//! had (`sonde_runtime::engine`, `sonde_runtime::latency`), so callers name one crate.

pub mod btc;
pub mod compare_ip;
pub mod dual_stack;
pub mod profile_run;
pub mod rrul;
pub mod server;
pub mod sweep;

// The kinds, one crate each, under the module names they had here.
pub use sonde_kind_capacity as capacity;
pub use sonde_kind_coded as coded;
pub use sonde_kind_iperf2 as iperf2;
pub use sonde_kind_iperf3 as iperf3;
pub use sonde_kind_latency as latency;
pub use sonde_kind_profile as profile;
pub use sonde_kind_throughput as client;

// The core, under the names it always had here: `sonde_runtime::engine` and, inside this
// crate, `crate::engine` are the core's.
pub use sonde_runtime_core::{
    auth, client_checks, clock, connect, control_conn, control_wait, end_condition, engine, error,
    meter, own_loop, pacing, peer_rows, schedule_slips, serving, sockets, start, streams, summary,
    test_events, RunError,
};
