//! The `start` event of a test: who talks to whom, and the parameters, as every reporter shows
//! them. One constructor for the sonde and iperf3 clients and servers alike.

use crate::os::host;
use sonde_proto::message::TestParams;
use sonde_stats::model::{ConnectedStream, Role, TestStart};

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
        blksize: u64::from(p.length),
        omit_secs: p.omit_secs,
        duration_secs: p.duration_secs,
        bytes: p.bytes,
        blocks: p.blocks,
        target_bitrate: p.bitrate,
        tos: u32::from(p.tos),
        interval_secs: ctx.interval_secs,
        congestion: p.congestion.clone(),
        tcp_mss: p.mss,
        sock_bufsize: p.window.map(u64::from),
        connected: ctx.connected,
    }
}

/// The start of a test as its server saw it, rebuilt on the client (`--get-server-output`):
/// the same test, the ends of every connection swapped. What only the server knows (its
/// software and system) is left empty rather than guessed.
pub fn as_seen_by_server(client: &TestStart) -> TestStart {
    let mut s = client.clone();
    s.role = sonde_stats::model::Role::Server;
    s.version = String::new();
    s.system_info = String::new();
    std::mem::swap(&mut s.local, &mut s.remote);
    for c in &mut s.connected {
        std::mem::swap(&mut c.local, &mut c.remote);
        c.role = match c.role {
            sonde_stats::model::StreamRole::Sender => sonde_stats::model::StreamRole::Receiver,
            sonde_stats::model::StreamRole::Receiver => sonde_stats::model::StreamRole::Sender,
        };
    }
    s
}
