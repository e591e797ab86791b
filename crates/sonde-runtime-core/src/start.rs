//! The `start` event of a test: who talks to whom, and the parameters, as every reporter shows
//! them. One constructor for the sonde and iperf3 clients and servers alike.

use crate::engine::DataSocket;
use crate::streams::udp;
use sonde_platform::{host, link_facts, socket_figures};
use sonde_proto::message::TestParams;
use sonde_stats::link::{LinkFacts, LinkPair};
use sonde_stats::model::{ConnectedStream, Role, SocketFigures, StreamRole, TestStart};
use sonde_stats::units::Size;
use std::net::SocketAddr;

/// What differs between the ends and protocols; the rest comes from the [`TestParams`].
pub struct StartContext {
    pub role: Role,
    pub local: String,
    pub remote: String,
    pub server_port: u16,
    pub cookie: String,
    /// Interval of this end's reports (a server may use its own `-i`).
    pub interval_secs: f64,
    pub connected: Vec<ConnectedStream>,
    /// From [`socket_figures()`] over this end's data sockets.
    pub sockets: SocketFigures,
}

/// Reads back what the kernel made of this end's connected data sockets (`streams`, in
/// stream order): buffer sizes and, when the test set no MSS, the MSS of the first one; for
/// UDP, whether its senders use GSO and its receivers GRO.
pub fn socket_figures<'a>(
    p: &TestParams,
    streams: impl IntoIterator<Item = (&'a DataSocket, StreamRole)>,
) -> SocketFigures {
    let mut f = SocketFigures::default();
    for (i, (socket, role)) in streams.into_iter().enumerate() {
        match socket {
            DataSocket::Tcp(t) if i == 0 => {
                f.sndbuf_actual = socket_figures::send_buffer(t).map(u64::from);
                f.rcvbuf_actual = socket_figures::recv_buffer(t).map(u64::from);
                if p.mss.is_none() {
                    f.tcp_mss_default = socket_figures::tcp_mss(t);
                }
            }
            DataSocket::Tcp(_) => {}
            DataSocket::Udp(u) => {
                if i == 0 {
                    f.sndbuf_actual = socket_figures::send_buffer(u).map(u64::from);
                    f.rcvbuf_actual = socket_figures::recv_buffer(u).map(u64::from);
                }
                let (gso, gro) = udp::offloads(u);
                match role {
                    StreamRole::Sender => f.gso |= gso,
                    StreamRole::Receiver => f.gro |= gro,
                }
            }
        }
    }
    f
}

/// Builds the start event for a test run with `p`.
pub fn start_event(p: &TestParams, ctx: StartContext) -> TestStart {
    TestStart {
        role: ctx.role,
        version: host::software(),
        system_info: host::system_info(),
        timestamp_unix: host::unix_now(),
        local: ctx.local,
        remote: ctx.remote,
        server_port: ctx.server_port,
        cookie: ctx.cookie,
        protocol: p.protocol,
        direction: p.direction,
        num_streams: p.parallel,
        blksize: p.length.bytes(),
        omit_secs: p.omit_secs,
        duration_secs: p.duration_secs,
        bytes: p.bytes.bytes(),
        blocks: p.blocks,
        target_bitrate: p.rate.bits_per_sec(),
        tos: u32::from(p.tos),
        interval_secs: ctx.interval_secs,
        congestion: p.congestion.clone(),
        tcp_mss: p.mss,
        sock_bufsize: p.window.map(Size::bytes),
        fq_rate: p.fq_rate.bits_per_sec(),
        sockets: ctx.sockets,
        connected: ctx.connected,
        link: None,
    }
}

/// Both ends' link facts for a client's start: this host's, for the interface its control
/// connection from `local` to `server` leaves by, and the server's as its welcome gave them.
pub fn link_pair(local: &SocketAddr, server: &SocketAddr, remote: Option<LinkFacts>) -> LinkPair {
    LinkPair {
        local: link_facts::of_connection(local.ip(), server.ip()),
        remote,
    }
}

/// The start of a test as its server saw it, rebuilt on the client (`--get-server-output`):
/// the same test, the ends of every connection swapped. What only the server knows (its
/// software, system and socket figures) is left empty rather than guessed.
pub fn as_seen_by_server(client: &TestStart) -> TestStart {
    let mut s = client.clone();
    s.role = sonde_stats::model::Role::Server;
    s.version = String::new();
    s.system_info = String::new();
    s.sockets = Default::default();
    std::mem::swap(&mut s.local, &mut s.remote);
    if let Some(l) = &mut s.link {
        std::mem::swap(&mut l.local, &mut l.remote);
    }
    for c in &mut s.connected {
        std::mem::swap(&mut c.local, &mut c.remote);
        c.role = match c.role {
            sonde_stats::model::StreamRole::Sender => sonde_stats::model::StreamRole::Receiver,
            sonde_stats::model::StreamRole::Receiver => sonde_stats::model::StreamRole::Sender,
        };
    }
    s
}
