//! The server's iperf 2 side: a TCP and a UDP socket on iperf 2's port, serving `iperf -c`
//! clients under the server's rules.
//!
//! iperf 2 has no control connection, so there is nothing to answer a refusal on: a client
//! beyond `--max-clients`, a per-source limit or the server's `--max-duration` /
//! `--max-bitrate` is logged with the reason and its connection closed (TCP) or its datagrams
//! dropped (UDP), which `iperf -c` reports as a failed write or a missing server report.
//!
//! - [`bounceback`]: `--bounceback`, each request answered with the server's times;
//! - [`header`]: reading and checking a TCP stream's client header, within a deadline;
//! - [`gather`]: the `-P` streams of one TCP test, found by their shared header;
//! - [`tcp_test`]: one TCP test on sonde's engine (upload, `-R`, `--full-duplex`) and the
//!   test back to the client of `-d` and `-r`;
//! - [`udp`]: every UDP test on the one socket, each answered with iperf 2's server report.
//! - [`udp_flow`]: one UDP test's accounting, events and report.

pub mod bounceback;
pub mod gather;
pub mod header;
pub mod tcp_test;
pub mod udp;
pub mod udp_flow;

use sonde_runtime_core::serving::admission::Serving;
use std::net::{SocketAddr, TcpStream};

pub use gather::Hub;

/// Serves one TCP connection accepted on the iperf 2 port, in this thread: reads its header;
/// the first stream of a test gathers the rest and runs it, a later one joins its test.
pub fn serve_tcp(stream: TcpStream, peer: SocketAddr, hub: &Hub, ctx: &Serving<'_>) {
    let request = match header::read(&stream) {
        Ok(header::Opening::Test(r)) => r,
        Ok(header::Opening::Bounceback(first)) => {
            return bounceback::serve(stream, peer, first, ctx);
        }
        Err(e) => {
            ctx.log(&format!(
                "iperf 2 connection from {} closed: {e}",
                sonde_runtime_core::serving::served_test::canonical(peer)
            ));
            return;
        }
    };
    let Some(streams) = hub.gather(stream, peer, &request, &|| ctx.stopping()) else {
        return;
    };
    tcp_test::run(streams, peer, &request, ctx);
}
