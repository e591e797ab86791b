//! The server's iperf 2 port (`sonde server --iperf2`): a TCP listener and a UDP socket of
//! their own, beside the main port, because iperf 2 clients go to iperf 2's port (5001) and
//! say nothing that a dual-use port could wait for before the first datagram. Connections and
//! datagrams are handed to the iperf 2 kind (`sonde_kind_iperf2::server`) under the same
//! admission rules as the main port's tests.

use super::{bind_tcp, bind_udp, Shared};
use crate::error::RunError;
use sonde_kind_iperf2::server::{serve_tcp, udp, Hub};
use sonde_platform::poll;
use sonde_runtime_core::serving::admission::Serving;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Most iperf 2 TCP connections served at once (each has a thread).
const MAX_CONNECTIONS: usize = 1024;

/// The bound iperf 2 sockets.
pub(super) struct Iperf2Port {
    tcp: TcpListener,
    udp: UdpSocket,
}

impl Iperf2Port {
    /// Binds TCP and UDP `port` on the server's address.
    pub(super) fn bind(addr: SocketAddr, v6_only: bool) -> Result<Self, RunError> {
        let listen_err = |e| RunError::Listen {
            addr: format!("{addr} (--iperf2)"),
            source: e,
        };
        let tcp = bind_tcp(addr, v6_only, false).map_err(listen_err)?;
        let port = tcp.local_addr().map_err(listen_err)?.port();
        let udp = bind_udp(SocketAddr::new(addr.ip(), port), v6_only).map_err(listen_err)?;
        sonde_platform::pktinfo::enable(&udp).map_err(listen_err)?;
        // Every iperf 2 UDP test arrives on this one socket.
        let sock = socket2::Socket::from(udp);
        sonde_runtime_core::sockets::large_udp_receive_buffer(&sock);
        let udp: UdpSocket = sock.into();
        Ok(Self { tcp, udp })
    }

    pub(super) fn local_addr(&self) -> Option<SocketAddr> {
        self.tcp.local_addr().ok()
    }

    /// Starts the accept and UDP threads; they end when the server stops.
    pub(super) fn spawn(self, shared: Arc<Shared>) -> Result<Vec<JoinHandle<()>>, RunError> {
        let spawn_err = |e| RunError::Setup(format!("starting the iperf 2 listener: {e}"));
        let Iperf2Port { tcp, udp } = self;
        let s = shared.clone();
        let udp_thread = std::thread::Builder::new()
            .name("sonde-iperf2-udp".into())
            .spawn(move || with_serving(&s, |ctx| udp::serve(&udp, ctx)))
            .map_err(spawn_err)?;
        let tcp_thread = std::thread::Builder::new()
            .name("sonde-iperf2-tcp".into())
            .spawn(move || accept_loop(&tcp, &shared))
            .map_err(spawn_err)?;
        Ok(vec![udp_thread, tcp_thread])
    }
}

/// Runs `f` with the server as an iperf 2 session sees it.
fn with_serving<R>(s: &Shared, f: impl FnOnce(&Serving<'_>) -> R) -> R {
    let source_refusal = |p| s.test_rate_refusal(p);
    f(&Serving {
        cfg: &s.cfg,
        active: &s.active,
        served: &s.served,
        shutdown: &s.shutdown,
        interrupt: &s.interrupt,
        sinks: &s.sinks,
        log: &*s.log,
        source_refusal: &source_refusal,
        sessions: &s.sessions,
    })
}

fn stopping(s: &Shared) -> bool {
    s.shutdown.load(Ordering::Relaxed) || s.interrupt.load(Ordering::Relaxed)
}

/// Accepts iperf 2 TCP connections, each served in its own thread.
fn accept_loop(tcp: &TcpListener, shared: &Arc<Shared>) {
    let hub = Arc::new(Hub::default());
    let _ = tcp.set_nonblocking(true);
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    while !stopping(shared) {
        if !matches!(poll::readable(tcp, Duration::from_millis(100)), Ok(true)) {
            continue;
        }
        let Ok((stream, peer)) = tcp.accept() else {
            continue;
        };
        threads.retain(|h| !h.is_finished());
        if threads.len() >= MAX_CONNECTIONS {
            (shared.log)(&format!(
                "iperf 2 connection from {peer} closed: {MAX_CONNECTIONS} are being served"
            ));
            continue;
        }
        let _ = stream.set_nonblocking(false);
        let (s, h) = (shared.clone(), hub.clone());
        match std::thread::Builder::new()
            .name("sonde-iperf2-conn".into())
            .spawn(move || with_serving(&s, |ctx| serve_tcp(stream, peer, &h, ctx)))
        {
            Ok(t) => threads.push(t),
            Err(e) => (shared.log)(&format!("cannot spawn a thread for {peer}: {e}")),
        }
    }
    for t in threads {
        let _ = t.join();
    }
}
