//! How every sonde-protocol client reaches its server, whatever it measures (throughput,
//! `--coded`, `capacity`, `profile`, and the suites that run them; the iperf3 client shares
//! the connecting and the data streams): its configuration, the control connection, the
//! data streams and their announcement, the UDP hello handshake.
//!
//! Core: it knows nothing of what a test measures once its streams are open.

use crate::control_conn::ControlConn;
use crate::engine::{DataSocket, Engine};
use crate::error::RunError;
use crate::sockets;
use sonde_platform::host::software;
use sonde_platform::resolve::resolve;
use sonde_proto::message::{ProcessLoad, TestParams};
use sonde_proto::preamble::{Cookie, CONTROL_MAGIC};
use sonde_proto::session::{ClientEvent, ClientSession};
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_stats::model::{Event, Protocol, StreamRole, TestSummary};
use std::io::Write;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The address family of [`ClientConfig::family`], re-exported where the configuration is.
pub use sonde_platform::resolve::Family;

/// What a sonde client was asked to do: where the server is, the test, its sockets.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub host: String,
    pub port: u16,
    pub family: Family,
    pub cport: Option<u16>,
    pub params: TestParams,
    pub connect_timeout: Duration,
    /// Where this client's sockets leave from (`-B`, `--bind-dev`).
    pub local: sockets::ClientSockets,
    /// A test whose data stops arriving this long while this end receives fails
    /// (`--rcv-timeout`); None waits as long as the test lasts.
    pub rcv_timeout: Option<Duration>,
    /// TCP (`-F`): this end's senders send the file, its receivers write into it.
    pub file: Option<std::path::PathBuf>,
}

/// How a client run ended: the summary when the test got far enough to have one, and the
/// error when it did not complete.
pub struct ClientOutcome {
    pub summary: Option<TestSummary>,
    pub error: Option<RunError>,
    /// The test as the server reported it (start, its intervals, its summary), rebuilt from
    /// what it sent: for `--get-server-output`. Complete tests only.
    pub server_view: Option<Vec<Event>>,
    /// The server process's CPU time over the test, when the server has `cpu-load` and its
    /// figures pass [`ProcessLoad::checked`]; `None` from any other server.
    pub server_load: Option<ProcessLoad>,
}

const HELLO_RETRY: Duration = Duration::from_millis(100);
/// How long a UDP stream's hello is repeated (every [`HELLO_RETRY`]) before set-up fails: at
/// 30 % loss each way half the round trips fail, so 300 attempts leave no realistic doubt
/// that the port is really blocked.
const HELLO_DEADLINE: Duration = Duration::from_secs(30);

/// Connects to the first of `addrs` that answers within `timeout` (the sonde and iperf3
/// clients' control connection); the error is the last address's.
pub fn connect_control(
    addrs: &[SocketAddr],
    local: &sockets::ClientSockets,
    timeout: Duration,
) -> Result<TcpStream, RunError> {
    let mut last = None;
    for a in addrs {
        match sockets::connect_plain(*a, local, timeout) {
            Ok(s) => return Ok(s),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = Some(RunError::Refused {
                    addr: a.to_string(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                last = Some(RunError::ConnectTimeout {
                    addr: a.to_string(),
                    secs: timeout.as_secs(),
                })
            }
            Err(e) => {
                last = Some(RunError::Connect {
                    addr: a.to_string(),
                    source: e,
                })
            }
        }
    }
    Err(last.unwrap_or(RunError::Setup("no address to connect to".into())))
}

/// A sonde control connection, just opened: the magic sent, the session ready to send its
/// hello.
pub struct OpenControl {
    pub conn: ControlConn,
    pub session: ClientSession,
    pub server: SocketAddr,
    pub local: SocketAddr,
}

/// Opens the control connection of every sonde-protocol client (`sonde client`, `--coded`,
/// `capacity`, `profile` and all that run them): connects to the first of `cfg.host`'s
/// addresses that answers, sends the magic and makes the session for `cfg.params`, holding
/// the pre-shared key of `cfg.local` (`--psk-file`) to answer a keyed server's challenge.
/// The one place a client's key reaches its session.
pub fn open_control(cfg: &ClientConfig, interrupt: &AtomicBool) -> Result<OpenControl, RunError> {
    let addrs = resolve(&cfg.host, cfg.port, cfg.family, interrupt)?;
    let mut tcp = connect_control(&addrs, &cfg.local, cfg.connect_timeout)?;
    let server = tcp.peer_addr().map_err(RunError::ControlIo)?;
    let local_addr = tcp.local_addr().map_err(RunError::ControlIo)?;
    tcp.write_all(CONTROL_MAGIC).map_err(RunError::ControlIo)?;
    let mut conn = ControlConn::new(tcp).map_err(RunError::ControlIo)?;
    conn.opened_with(CONTROL_MAGIC);
    let mut session = ClientSession::new(cfg.params.clone(), &software());
    if let Some(k) = &cfg.local.psk {
        session.set_psk(k.clone());
    }
    Ok(OpenControl {
        conn,
        session,
        server,
        local: local_addr,
    })
}

/// A data stream just opened by [`open_streams`]: its id, this end's role on it, the socket
/// and its local address.
pub struct OpenedStream {
    pub id: u32,
    pub role: StreamRole,
    pub socket: DataSocket,
    pub local: SocketAddr,
}

/// Opens the test's data streams in id order with `open` (a stream the client sends on is a
/// sender here); Ctrl-C ends it between two streams. The sonde and iperf3 clients differ only
/// in `open`, the announcement of each stream.
pub fn open_streams(
    p: &TestParams,
    interrupt: &AtomicBool,
    mut open: impl FnMut(u32) -> Result<(DataSocket, SocketAddr), RunError>,
) -> Result<Vec<OpenedStream>, RunError> {
    let mut out = Vec::new();
    for id in 1..=p.stream_count() {
        if interrupt.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let role = if p.client_sends(id) {
            StreamRole::Sender
        } else {
            StreamRole::Receiver
        };
        let (socket, local) = open(id)?;
        out.push(OpenedStream {
            id,
            role,
            socket,
            local,
        });
    }
    Ok(out)
}

/// Connects data stream `id` of a client test to `server` with the test's socket options, and
/// announces it (the sonde and iperf3 clients differ only there): `tcp_announce` is written
/// on a TCP stream, `udp_announce` runs on a UDP one. Returns the socket and its local address.
pub fn open_data_stream(
    cfg: &ClientConfig,
    server: SocketAddr,
    id: u32,
    tcp_announce: &[u8],
    udp_announce: impl FnOnce(&UdpSocket) -> Result<(), RunError>,
) -> Result<(DataSocket, SocketAddr), RunError> {
    let p = &cfg.params;
    let cport = cfg.cport.map(|c| c.saturating_add((id - 1) as u16));
    let stream_err = |e| RunError::Stream { id, source: e };
    match p.protocol {
        Protocol::Tcp => {
            let mut s = sockets::connect_tcp(server, &cfg.local, cport, p, cfg.connect_timeout)?;
            s.write_all(tcp_announce).map_err(stream_err)?;
            let local = s.local_addr().map_err(stream_err)?;
            Ok((DataSocket::Tcp(s), local))
        }
        Protocol::Udp => {
            let s = sockets::connect_udp(server, &cfg.local, cport, p)?;
            udp_announce(&s)?;
            let local = s.local_addr().map_err(stream_err)?;
            Ok((DataSocket::Udp(s), local))
        }
    }
}

/// Sends the stream's hello until the server acknowledges it (survives loss of either).
pub fn udp_handshake(
    sock: &UdpSocket,
    cookie: &Cookie,
    id: u32,
    interrupt: &AtomicBool,
) -> Result<(), RunError> {
    let hello = Hello {
        cookie: *cookie,
        stream_id: id,
    }
    .emit();
    let want = HelloAck {
        cookie: *cookie,
        stream_id: id,
    };
    let deadline = Instant::now() + HELLO_DEADLINE;
    let _ = sock.set_read_timeout(Some(HELLO_RETRY));
    let mut buf = [0u8; 2048];
    let mut attempts = 0u32;
    while Instant::now() < deadline {
        if interrupt.load(Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let _ = sock.send(&hello);
        attempts += 1;
        let wait_until = Instant::now() + HELLO_RETRY;
        while Instant::now() < wait_until {
            match sock.recv(&mut buf) {
                Ok(n) if HelloAck::parse(&buf[..n]) == Ok(want) => {
                    let _ = sock.set_read_timeout(None);
                    return Ok(());
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
    Err(RunError::Setup(format!(
        "UDP stream {id}: no acknowledgement from the server after {attempts} hellos in {} s (is UDP port blocked?)",
        HELLO_DEADLINE.as_secs()
    )))
}

/// The engine of a running test; an error if there is none (a bug, not a peer's doing).
pub fn running(engine: &mut Option<Engine>) -> Result<&mut Engine, RunError> {
    engine
        .as_mut()
        .ok_or(RunError::Setup("engine missing".into()))
}

/// A session event that is not the one a step waits for, as the error it means: the
/// server's refusal or abort, else a protocol error.
pub fn unexpected(ev: ClientEvent) -> RunError {
    match ev {
        ClientEvent::Refused(r) => RunError::ServerRefused {
            code: format!("{:?}", r.code).to_lowercase(),
            message: r.message,
        },
        ClientEvent::Aborted(reason) => RunError::PeerAborted(reason),
        other => RunError::Protocol(format!("unexpected event {other:?}")),
    }
}
