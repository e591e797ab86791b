//! iperf 2 interoperability: serving real iperf 2 clients (`iperf -c`) and driving real iperf 2
//! servers (`iperf -s`), the devices and stacks that speak only iperf 2 among them.
//!
//! iperf 2 has no control connection: each TCP stream opens with the client's test header,
//! and every UDP datagram carries it after the sequence and time header. The byte layouts are
//! pure code in `sonde_proto::iperf2`; this crate owns the sockets and threads around them.
//!
//! - [`server`]: the server's iperf 2 listener, on a port of its own (iperf 2's 5001 by
//!   default), TCP and UDP, under the same admission rules as every other test the server
//!   serves (`sonde_runtime_core::serving`).
//! - [`client`]: `sonde client --iperf2`, one test against a real `iperf -s`: the client
//!   header from the test's parameters ([`client_header`]), TCP's acknowledgement
//!   ([`client_ack`]), the streams on sonde's engine, and for UDP the final datagrams and the
//!   server's report as its view ([`client_fin`]); steps and errors in [`client_steps`] and
//!   [`client_error`].
//!
//! This kind stands on the runtime core alone; `sonde-runtime` starts its listener beside the
//! server's main port and re-exports it as `sonde_runtime::iperf2`.

pub mod client;
pub mod client_ack;
pub mod client_error;
pub mod client_fin;
pub mod client_header;
pub mod client_steps;
pub mod server;
