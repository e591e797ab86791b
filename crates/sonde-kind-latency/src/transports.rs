//! The two datagram transports of the prober: UDP probes to a sonde server and ICMP echo.

use super::{LatencyConfig, LatencyError};
use socket2::Socket;
use sonde_platform::{icmp as os_icmp, timestamp};
use sonde_proto::icmp::{self, Family as IcmpFamily};
use sonde_proto::probe::{Probe, ProbeKind, HEADER_LEN, MAX_PROBE_LEN};
use sonde_proto::probe_tag::{ProbeKey, TAGGED_LEN};
use sonde_stats::latency::tracker::{Reply, ServerStamps};
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

/// What a read produced.
pub(crate) enum Incoming {
    Reply(Reply, Option<u64>),
    Count(u64),
    /// The peer's host answered "port unreachable": no server listens (a connected UDP
    /// socket reports it as `ECONNREFUSED`).
    Refused,
    Ignored,
}

/// A datagram transport: sends probe `seq` stamped `wall_ns`, reads whatever came back.
pub(crate) trait Transport {
    fn send(&mut self, seq: u64, wall_ns: u64) -> std::io::Result<()>;
    fn wait(&self, timeout: Duration) -> std::io::Result<bool>;
    /// One queued datagram, None when nothing is queued.
    fn recv(&mut self) -> std::io::Result<Option<Incoming>>;
    /// Sends a count query (UDP only).
    fn send_count_query(&mut self) -> std::io::Result<bool> {
        Ok(false)
    }
    fn local(&self) -> String;
    fn timestamping(&self) -> String;
    fn size_meaning(&self) -> String;
    fn wire_size(&self) -> usize;
}

fn rx_method(kernel: bool) -> &'static str {
    if kernel {
        "receive: kernel software timestamp (SO_TIMESTAMPING); send: user-space wall clock just before the send call"
    } else {
        "receive and send: user-space wall clock (kernel timestamps unavailable)"
    }
}

fn would_block(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
    )
}

/// UDP probes to a sonde server's responder.
pub(crate) struct UdpProbes {
    sock: UdpSocket,
    token: u64,
    out: Vec<u8>,
    inbuf: Vec<u8>,
    kernel_rx: bool,
    /// Tags every probe for a keyed server (`--psk-file`).
    key: Option<ProbeKey>,
}

/// The smallest UDP probe: the header, and the tag when probes carry one.
pub(crate) fn min_probe_len(cfg: &LatencyConfig) -> usize {
    probe_len(cfg.psk.is_some())
}

fn probe_len(keyed: bool) -> usize {
    if keyed {
        TAGGED_LEN
    } else {
        HEADER_LEN
    }
}

/// A per-run token: time and pid mixed, so a late reply from an earlier run is not ours.
fn token() -> u64 {
    let mut x = timestamp::realtime_ns() ^ (u64::from(std::process::id()) << 32);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

impl UdpProbes {
    pub(crate) fn open(peer: SocketAddr, cfg: &LatencyConfig) -> Result<Self, LatencyError> {
        let local: SocketAddr = if peer.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let sock =
            UdpSocket::bind(local).map_err(|e| LatencyError::io("binding a UDP socket", e))?;
        sock.connect(peer)
            .map_err(|e| LatencyError::io(format!("connecting to {peer}"), e))?;
        let kernel_rx = timestamp::enable_rx(&sock);
        let size = cfg.size.clamp(min_probe_len(cfg), MAX_PROBE_LEN);
        Ok(Self {
            sock,
            token: token(),
            out: vec![0u8; size],
            inbuf: vec![0u8; MAX_PROBE_LEN + 1],
            kernel_rx,
            key: cfg.psk.as_ref().map(ProbeKey::new),
        })
    }

    /// Tags the probe in `buf` when this run has a key.
    fn seal(key: Option<&ProbeKey>, buf: &mut [u8]) -> std::io::Result<()> {
        match key {
            Some(k) => k.seal(buf).map_err(std::io::Error::other),
            None => Ok(()),
        }
    }
}

impl Transport for UdpProbes {
    fn send(&mut self, seq: u64, wall_ns: u64) -> std::io::Result<()> {
        let p = Probe::request(self.token, seq, wall_ns);
        p.emit(&mut self.out).map_err(std::io::Error::other)?;
        Self::seal(self.key.as_ref(), &mut self.out)?;
        self.sock.send(&self.out).map(|_| ())
    }

    fn send_count_query(&mut self) -> std::io::Result<bool> {
        let mut p = Probe::request(self.token, 0, timestamp::realtime_ns());
        p.kind = ProbeKind::CountQuery;
        let mut b = [0u8; TAGGED_LEN];
        let b = &mut b[..probe_len(self.key.is_some())];
        p.emit(b).map_err(std::io::Error::other)?;
        Self::seal(self.key.as_ref(), b)?;
        self.sock.send(b).map(|_| true)
    }

    fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        timestamp::wait_readable(&self.sock, timeout)
    }

    fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        let r = match timestamp::recv(&self.sock, &mut self.inbuf) {
            Ok(r) => r,
            Err(e) if would_block(&e) => return Ok(None),
            // ICMP port unreachable surfaces as ECONNREFUSED on a connected socket: the
            // request reached a host with no server; counted, and probing goes on.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Ok(Some(Incoming::Refused))
            }
            Err(e) => return Err(e),
        };
        let Some(bytes) = self.inbuf.get(..r.len) else {
            return Ok(Some(Incoming::Ignored));
        };
        let Ok(p) = Probe::parse(bytes) else {
            return Ok(Some(Incoming::Ignored));
        };
        if p.token != self.token {
            return Ok(Some(Incoming::Ignored));
        }
        Ok(Some(match p.kind {
            ProbeKind::Reply => Incoming::Reply(
                Reply {
                    seq: p.seq,
                    sent_ns: p.client_send_ns,
                    recv_ns: r.best_ns(),
                    server: Some(ServerStamps {
                        recv_ns: p.server_recv_ns,
                        send_ns: p.server_send_ns,
                    }),
                },
                Some(p.server_count),
            ),
            ProbeKind::CountReply => Incoming::Count(p.server_count),
            _ => Incoming::Ignored,
        }))
    }

    fn local(&self) -> String {
        self.sock
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default()
    }

    fn timestamping(&self) -> String {
        format!(
            "{}; server: kernel receive timestamp (SIOCGSTAMPNS) where available",
            rx_method(self.kernel_rx)
        )
    }

    fn size_meaning(&self) -> String {
        format!(
            "UDP payload bytes per probe (sonde probe header {HEADER_LEN} B + padding; + 8 B UDP and 20/40 B IP header on the wire)"
        )
    }

    fn wire_size(&self) -> usize {
        self.out.len()
    }
}

/// ICMP echo to any host.
pub(crate) struct IcmpEcho {
    sock: Socket,
    kind: os_icmp::IcmpSocketKind,
    family: IcmpFamily,
    ident: u16,
    data_len: usize,
    inbuf: Vec<u8>,
    kernel_rx: bool,
}

impl IcmpEcho {
    pub(crate) fn open(peer: SocketAddr, cfg: &LatencyConfig) -> Result<Self, LatencyError> {
        let (sock, kind) = os_icmp::open(peer).map_err(LatencyError::IcmpUnavailable)?;
        let kernel_rx = timestamp::enable_rx(&sock);
        Ok(Self {
            sock,
            kind,
            family: if peer.is_ipv4() {
                IcmpFamily::V4
            } else {
                IcmpFamily::V6
            },
            ident: (token() & 0xFFFF) as u16,
            data_len: cfg
                .size
                .clamp(icmp::MIN_DATA_LEN, MAX_PROBE_LEN - icmp::ICMP_HEADER_LEN),
            inbuf: vec![0u8; MAX_PROBE_LEN + 64],
            kernel_rx,
        })
    }
}

impl Transport for IcmpEcho {
    fn send(&mut self, seq: u64, wall_ns: u64) -> std::io::Result<()> {
        let m = icmp::echo_request(self.family, self.ident, seq, wall_ns, self.data_len);
        self.sock.send(&m).map(|_| ())
    }

    fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        timestamp::wait_readable(&self.sock, timeout)
    }

    fn recv(&mut self) -> std::io::Result<Option<Incoming>> {
        let r = match timestamp::recv(&self.sock, &mut self.inbuf) {
            Ok(r) => r,
            Err(e) if would_block(&e) => return Ok(None),
            Err(e) => return Err(e),
        };
        let Some(mut m) = self.inbuf.get(..r.len) else {
            return Ok(Some(Incoming::Ignored));
        };
        if self.kind == os_icmp::IcmpSocketKind::Raw && self.family == IcmpFamily::V4 {
            match icmp::strip_ipv4_header(m) {
                Ok(inner) => m = inner,
                Err(_) => return Ok(Some(Incoming::Ignored)),
            }
        }
        let Ok(e) = icmp::parse_reply(self.family, m) else {
            return Ok(Some(Incoming::Ignored));
        };
        // Datagram sockets deliver only our replies (the kernel owns the identifier).
        if self.kind == os_icmp::IcmpSocketKind::Raw && e.ident != self.ident {
            return Ok(Some(Incoming::Ignored));
        }
        Ok(Some(Incoming::Reply(
            Reply {
                seq: e.seq,
                sent_ns: e.send_ns,
                recv_ns: r.best_ns(),
                server: None,
            },
            None,
        )))
    }

    fn local(&self) -> String {
        self.sock
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .map(|a| a.ip().to_string())
            .unwrap_or_default()
    }

    fn timestamping(&self) -> String {
        format!("{} ({})", rx_method(self.kernel_rx), self.kind.describe())
    }

    fn size_meaning(&self) -> String {
        let ip = if self.family == IcmpFamily::V4 {
            20
        } else {
            40
        };
        format!(
            "ICMP echo data bytes, like ping -s (the ICMP message is {} B with its 8-byte header, the IP packet {} B)",
            self.data_len + icmp::ICMP_HEADER_LEN,
            self.data_len + icmp::ICMP_HEADER_LEN + ip
        )
    }

    fn wire_size(&self) -> usize {
        self.data_len
    }
}
