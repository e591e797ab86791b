//! iperf3 interoperability: serving real iperf3 clients and driving real iperf3 servers, for
//! throughput measured the way iperf3 measures it.
//!
//! The wire formats and state machines are pure (`sonde_proto::iperf3`); this crate owns the
//! sockets and threads around them:
//!
//! - [`accept`] and [`server`]: a connection whose first bytes are not sonde's is read as an
//!   iperf3 cookie; it is either a data connection of a running iperf3 session (routed by
//!   cookie through the [`Hub`]) or a new iperf3 control connection, served in its own thread
//!   like a sonde test, so iperf3 and sonde clients share one port and run at the same time.
//! - [`client`]: `sonde client --iperf3`, one test against a real `iperf3 -s`.
//! - [`engine`]: the data streams, run by sonde's own stream workers: the TCP payload is
//!   opaque, and UDP datagrams carry iperf3's 12/16-byte header through the workers' datagram
//!   format ([`send_config`]). Both feed the same counters and
//!   [`sonde_runtime_core::meter::Meter`], so reports are built exactly as for sonde, and
//!   iperf3 tests get the same exact pacing, GSO and `recvmmsg` as sonde's.
//! - [`convert`]: iperf3 results JSON to and from sonde's result model.
//!
//! UDP streams carry no cookie in iperf3: a 4-byte hello on the server's UDP port belongs to
//! an iperf3 session waiting for UDP streams. When several wait at once, the hello goes to the
//! oldest one whose control connection came from the hello's IP address, else the oldest one.
//! Two iperf3 UDP tests from the same host setting up in the same instant can therefore swap
//! streams; iperf3 itself avoids this only by serving one test at a time.
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone; the server that hands
//! it iperf3 connections is in `sonde-runtime`, which re-exports this crate as
//! `sonde_runtime::iperf3`.

pub mod accept;
pub mod client;
pub mod convert;
pub mod engine;
pub mod server;

use sonde_proto::datagram_format::DatagramFormat;
use sonde_proto::iperf3::params::Iperf3Options;
use sonde_proto::iperf3::udp::HelloForm;
use sonde_proto::iperf3::Cookie;
use sonde_proto::message::TestParams;
use sonde_runtime_core::streams::StreamConfig;
use sonde_stats::model::Protocol;
use std::collections::HashSet;
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// How this host's streams of an iperf3 test send: iperf3's datagram header (32- or 64-bit
/// counters), its payload choice and its burst.
pub fn send_config(p: &TestParams, o: &Iperf3Options) -> StreamConfig {
    StreamConfig {
        burst: p.burst.max(1),
        format: DatagramFormat::Iperf3 {
            wide: o.udp_counters_64bit,
        },
        repeating_payload: o.repeating_payload,
        skip_rx_copy: p.skip_rx_copy,
        fq_rate_set: !p.fq_rate.is_unlimited(),
        ..StreamConfig::new(p.length, p.rate)
    }
}

/// A data connection handed to its iperf3 session.
pub enum Arrival {
    /// A TCP data connection and its accept sequence number (streams are ordered by it).
    Tcp(TcpStream, u64),
    Udp(UdpSocket),
}

/// Where a connection carrying an iperf3 cookie goes.
pub enum Route {
    /// Handed to the session that is collecting its streams.
    Routed,
    /// The session exists but takes no more streams: answer ACCESS_DENIED.
    Denied(TcpStream),
    /// No session has this cookie: it is a new control connection.
    Unknown(TcpStream),
}

/// What the UDP listener should do with an iperf3 hello.
pub enum UdpVerdict {
    /// A stream socket was created, answered and handed to its session.
    Created,
    /// This client's hello was already handled: answer again from the listener.
    Repeat([u8; 4]),
    /// No iperf3 session waits for UDP streams.
    Unclaimed,
}

struct Entry {
    cookie: Cookie,
    order: u64,
    peer_ip: IpAddr,
    params: Arc<TestParams>,
    accepting: bool,
    udp_left: u32,
    udp_peers: HashSet<SocketAddr>,
    tx: Sender<Arrival>,
}

/// The iperf3 sessions of one server, found by cookie (TCP) or by waiting order (UDP).
#[derive(Default)]
pub struct Hub {
    inner: Mutex<(u64, Vec<Entry>)>,
}

fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl Hub {
    /// Registers a session that is about to send CREATE_STREAMS.
    pub fn register(
        &self,
        cookie: Cookie,
        peer_ip: IpAddr,
        params: Arc<TestParams>,
        tx: Sender<Arrival>,
    ) {
        if let Ok(mut g) = self.inner.lock() {
            g.0 += 1;
            let order = g.0;
            let udp_left = if params.protocol == Protocol::Udp {
                params.stream_count()
            } else {
                0
            };
            g.1.push(Entry {
                cookie,
                order,
                peer_ip: canonical(peer_ip),
                params,
                accepting: true,
                udp_left,
                udp_peers: HashSet::new(),
                tx,
            });
        }
    }

    /// The session has all its streams: further connections with its cookie are denied.
    pub fn stop_accepting(&self, cookie: &Cookie) {
        if let Ok(mut g) = self.inner.lock() {
            for e in g.1.iter_mut().filter(|e| &e.cookie == cookie) {
                e.accepting = false;
            }
        }
    }

    pub fn remove(&self, cookie: &Cookie) {
        if let Ok(mut g) = self.inner.lock() {
            g.1.retain(|e| &e.cookie != cookie);
        }
    }

    /// Routes a TCP connection that sent `cookie`.
    pub fn route_tcp(&self, cookie: &Cookie, s: TcpStream, seq: u64) -> Route {
        let Ok(g) = self.inner.lock() else {
            return Route::Unknown(s);
        };
        match g.1.iter().find(|e| &e.cookie == cookie) {
            None => Route::Unknown(s),
            Some(e) if e.accepting && e.params.protocol == Protocol::Tcp => {
                match e.tx.send(Arrival::Tcp(s, seq)) {
                    Ok(()) => Route::Routed,
                    Err(std::sync::mpsc::SendError(Arrival::Tcp(s, _))) => Route::Denied(s),
                    Err(_) => Route::Routed,
                }
            }
            Some(_) => Route::Denied(s),
        }
    }

    /// Handles an iperf3 UDP hello from `peer` that reached the listening socket bound to
    /// `listener`, sent to this host's address `dst` when known: creates a socket connected
    /// to the client (see sonde_runtime_core::sockets::server_udp_stream), answers on it, hands it over.
    ///
    /// # Errors
    /// The OS error when the stream socket cannot be created.
    pub fn udp_hello(
        &self,
        peer: SocketAddr,
        form: HelloForm,
        listener: SocketAddr,
        dst: Option<std::net::IpAddr>,
    ) -> std::io::Result<UdpVerdict> {
        let Ok(mut g) = self.inner.lock() else {
            return Ok(UdpVerdict::Unclaimed);
        };
        if g.1.iter().any(|e| e.udp_peers.contains(&peer)) {
            return Ok(UdpVerdict::Repeat(form.reply()));
        }
        let ip = canonical(peer.ip());
        let waiting = |e: &&mut Entry| e.accepting && e.udp_left > 0;
        let pick =
            g.1.iter_mut()
                .filter(waiting)
                .min_by_key(|e| (e.peer_ip != ip, e.order));
        let Some(e) = pick else {
            return Ok(UdpVerdict::Unclaimed);
        };
        let sock = sonde_runtime_core::sockets::server_udp_stream(listener, dst, peer, &e.params)?;
        sock.send(&form.reply())?;
        e.udp_left -= 1;
        e.udp_peers.insert(peer);
        let _ = e.tx.send(Arrival::Udp(sock));
        Ok(UdpVerdict::Created)
    }
}
