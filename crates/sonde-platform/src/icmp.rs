//! Opening ICMP echo sockets: unprivileged ICMP datagram ("ping") sockets where the system
//! allows them (Linux `net.ipv4.ping_group_range`, macOS), raw sockets otherwise (root or
//! `CAP_NET_RAW`). The echo messages themselves are built and parsed in `sonde_proto::icmp`.

use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use std::net::SocketAddr;

/// Which kind of socket carries the echoes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcmpSocketKind {
    /// `SOCK_DGRAM` + `IPPROTO_ICMP`: the kernel sets the identifier and checksum and delivers
    /// only our replies, without the IP header.
    Datagram,
    /// `SOCK_RAW`: we set identifier and checksum, and see every ICMP message (IPv4 with its IP
    /// header).
    Raw,
}

impl IcmpSocketKind {
    /// For reports.
    pub fn describe(self) -> &'static str {
        match self {
            IcmpSocketKind::Datagram => "unprivileged ICMP datagram socket",
            IcmpSocketKind::Raw => "raw socket",
        }
    }
}

/// Opens an ICMP socket for `peer`'s family, connected to it, trying the unprivileged kind
/// first.
///
/// # Errors
/// A sentence saying why neither kind could be opened.
pub fn open(peer: SocketAddr) -> Result<(Socket, IcmpSocketKind), String> {
    let (domain, proto) = if peer.is_ipv4() {
        (Domain::IPV4, Protocol::ICMPV4)
    } else {
        (Domain::IPV6, Protocol::ICMPV6)
    };
    let target = SockAddr::from(SocketAddr::new(peer.ip(), 0));
    let attempt = |ty: Type| -> std::io::Result<Socket> {
        let s = Socket::new(domain, ty, Some(proto))?;
        s.connect(&target)?;
        Ok(s)
    };
    let dgram_err = match attempt(Type::DGRAM) {
        Ok(s) => return Ok((s, IcmpSocketKind::Datagram)),
        Err(e) => e,
    };
    match attempt(Type::RAW) {
        Ok(s) => Ok((s, IcmpSocketKind::Raw)),
        Err(raw_err) => Err(format!(
            "cannot open an ICMP socket: unprivileged ICMP datagram socket: {dgram_err} (on Linux, allow your group with sysctl net.ipv4.ping_group_range); raw socket: {raw_err} (needs root or CAP_NET_RAW)"
        )),
    }
}
