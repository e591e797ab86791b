//! The way from the mesh's nodes to PostgreSQL, so that every agent writes to it as it
//! measures (and buffers while it is away), as an agent in a real fleet does.
//!
//! The nodes' namespaces reach each other through the hub, never the host's loopback, where
//! the database usually listens, and a mesh must not reconfigure the host's PostgreSQL to
//! listen elsewhere. So this process, which lives in the host's namespace, opens a listener
//! in the router's namespace on the router's end of each node's link (a socket made by a
//! thread inside a namespace stays there) and carries every connection made to it on to the
//! server the URL names. A node's way to the database thus crosses its own link, as a site's
//! crosses its uplink: an impaired link delays and loses its packets too, and a link set
//! down (an outage) blackholes them, with TCP's and the driver's own time-outs deciding what
//! the agent sees. An agent's URL becomes the same URL at that address (see
//! [`sonde_store::postgres_url_via`]); user, password and database are passed through
//! untouched, as is the protocol (TLS included).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use sonde_lab::Lab;
use sonde_platform::resolve::{resolve, Family};
use sonde_store::PostgresEndpoint;

use crate::error::{io_err, MeshError};

/// How long a connection to the server may take before the node's connection is closed
/// (the agent then keeps its results and tries again at its next copy).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often an idle listener looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);
/// Connections carried at once per node; an agent holds one, so more means something is
/// wrong, and the extra ones are closed.
const MAX_PER_NODE: usize = 8;

/// Where connections are carried to.
#[derive(Debug, Clone)]
enum Upstream {
    Tcp(Vec<SocketAddr>),
    Unix(PathBuf),
}

/// One end of a carried connection, TCP or Unix-domain.
enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    fn try_clone(&self) -> std::io::Result<Conn> {
        Ok(match self {
            Conn::Tcp(s) => Conn::Tcp(s.try_clone()?),
            Conn::Unix(s) => Conn::Unix(s.try_clone()?),
        })
    }

    fn shutdown(&self) {
        // Already shut or reset: nothing more to end.
        let _ = match self {
            Conn::Tcp(s) => s.shutdown(Shutdown::Both),
            Conn::Unix(s) => s.shutdown(Shutdown::Both),
        };
    }
}

impl Read for Conn {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(buf),
            Conn::Unix(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Upstream {
    /// Where `endpoint` is; a host name is looked up through sonde-platform's resolver,
    /// bounded in time and left when `interrupt` is raised.
    fn of(endpoint: &PostgresEndpoint, interrupt: &AtomicBool) -> Result<Upstream, MeshError> {
        match endpoint {
            PostgresEndpoint::Unix(path) => Ok(Upstream::Unix(path.clone())),
            PostgresEndpoint::Tcp { host, port } => {
                let addrs =
                    resolve(host, *port, Family::Any, interrupt).map_err(|e| MeshError::Io {
                        what: format!("resolving the PostgreSQL host {host}"),
                        source: std::io::Error::other(e.to_string()),
                    })?;
                Ok(Upstream::Tcp(addrs))
            }
        }
    }

    fn connect(&self) -> std::io::Result<Conn> {
        match self {
            Upstream::Unix(path) => UnixStream::connect(path).map(Conn::Unix),
            Upstream::Tcp(addrs) => {
                let mut last = std::io::Error::other("no address");
                for a in addrs {
                    match TcpStream::connect_timeout(a, CONNECT_TIMEOUT) {
                        Ok(s) => {
                            // The protocol's small messages go out at once.
                            let _ = s.set_nodelay(true);
                            return Ok(Conn::Tcp(s));
                        }
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
        }
    }
}

/// The connections of one node that are being carried, to be ended at the stop.
type Open = Arc<Mutex<Vec<(Conn, Conn)>>>;

/// Listeners at the router's end of every node's link, carrying connections to PostgreSQL
/// until stopped.
pub struct Relay {
    stop: Arc<AtomicBool>,
    listeners: Vec<JoinHandle<()>>,
    open: Vec<Open>,
    /// Per node (in the order given), the address its agent connects to.
    pub addrs: Vec<SocketAddr>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").field("addrs", &self.addrs).finish()
    }
}

impl Relay {
    /// Listens in the namespace `router`, on the router's address on each node's link (the
    /// `nodes` are (node, that address)), and carries what connects there to `endpoint`: on
    /// the endpoint's own port number, unless the agents use it (`taken`), then on any free
    /// one.
    ///
    /// # Errors
    /// [`MeshError::Io`] when the host cannot be resolved or a listener cannot be made;
    /// [`MeshError::Lab`] for a namespace that cannot be entered.
    pub fn start(
        lab: &Lab,
        router: &str,
        nodes: &[(String, std::net::Ipv4Addr)],
        endpoint: &PostgresEndpoint,
        taken: &[u16],
        interrupt: &AtomicBool,
    ) -> Result<Relay, MeshError> {
        let upstream = Upstream::of(endpoint, interrupt)?;
        let port = match endpoint {
            PostgresEndpoint::Tcp { port, .. } => *port,
            PostgresEndpoint::Unix(_) => 5432,
        };
        let port = if taken.contains(&port) { 0 } else { port };
        let mut relay = Relay {
            stop: Arc::new(AtomicBool::new(false)),
            listeners: Vec::new(),
            open: Vec::new(),
            addrs: Vec::new(),
        };
        for (node, at) in nodes {
            let bound = lab.in_node(router, || TcpListener::bind((*at, port)))?;
            let what = format!("listening for PostgreSQL connections from {node} at {at}");
            let listener = bound.map_err(io_err(what.clone()))?;
            listener
                .set_nonblocking(true)
                .map_err(io_err(what.clone()))?;
            relay
                .addrs
                .push(listener.local_addr().map_err(io_err(what))?);
            let open: Open = Arc::default();
            relay.open.push(open.clone());
            let (stop, upstream) = (relay.stop.clone(), upstream.clone());
            relay.listeners.push(std::thread::spawn(move || {
                accept_loop(&listener, &upstream, &open, &stop);
            }));
        }
        Ok(relay)
    }

    /// Ends every listener and every connection still carried.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for open in &self.open {
            for (a, b) in open.lock().unwrap_or_else(PoisonError::into_inner).iter() {
                a.shutdown();
                b.shutdown();
            }
        }
        for l in self.listeners.drain(..) {
            // A listener thread that panicked has nothing left to end.
            let _ = l.join();
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.end();
    }
}

/// The two copying threads of one carried connection.
type Carried = [JoinHandle<()>; 2];

/// Forgets the connections whose copies have both ended (`carried` and `open` are in the
/// same order: this thread alone adds to both).
fn prune(carried: &mut Vec<Carried>, open: &Open) {
    let mut list = open.lock().unwrap_or_else(PoisonError::into_inner);
    let mut i = carried.len();
    while i > 0 {
        i -= 1;
        if carried[i].iter().all(JoinHandle::is_finished) {
            let [a, b] = carried.remove(i);
            let _ = (a.join(), b.join());
            if i < list.len() {
                list.remove(i);
            }
        }
    }
}

/// Accepts on `listener` until `stop`, carrying each connection to `upstream` on two
/// threads of its own, and joins them at the end.
fn accept_loop(listener: &TcpListener, upstream: &Upstream, open: &Open, stop: &AtomicBool) {
    let mut carried: Vec<Carried> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        prune(&mut carried, open);
        let node_side = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                continue;
            }
            // A connection that failed while queued: the next one may not.
            Err(_) => continue,
        };
        if carried.len() >= MAX_PER_NODE || node_side.set_nonblocking(false).is_err() {
            continue;
        }
        // The server away: close the node's connection, its agent keeps the results.
        let Ok(server_side) = upstream.connect() else {
            continue;
        };
        let _ = node_side.set_nodelay(true);
        let node_side = Conn::Tcp(node_side);
        let (Ok(n2), Ok(s2), Ok(n3), Ok(s3)) = (
            node_side.try_clone(),
            server_side.try_clone(),
            node_side.try_clone(),
            server_side.try_clone(),
        ) else {
            continue;
        };
        open.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((n3, s3));
        carried.push([
            std::thread::spawn(move || pipe(node_side, server_side)),
            std::thread::spawn(move || pipe(s2, n2)),
        ]);
    }
    // A connection accepted while the stop was ending the others: end it too.
    for (a, b) in open.lock().unwrap_or_else(PoisonError::into_inner).iter() {
        a.shutdown();
        b.shutdown();
    }
    for [a, b] in carried {
        let _ = (a.join(), b.join());
    }
}

/// Copies `from` to `to` until either ends, then ends both (so the other direction's copy,
/// waiting on its read, ends too).
fn pipe(mut from: Conn, mut to: Conn) {
    let _ = std::io::copy(&mut from, &mut to);
    from.shutdown();
    to.shutdown();
}
