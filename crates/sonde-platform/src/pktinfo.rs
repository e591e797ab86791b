//! Which of the host's addresses a UDP datagram was sent to, and answering from that address.
//!
//! A server listening on the wildcard address of a host with several addresses (a board with
//! two interfaces, a secondary address, a node behind a headless Service) receives datagrams
//! sent to any of them. A reply sent with plain `send_to` leaves from the address the routing
//! table picks, usually the interface's first one; a client whose UDP socket is connected to
//! the address it asked for drops that reply, and its probes look lost. The listener asks the
//! kernel for each datagram's destination (`IP_PKTINFO` / `IPV6_RECVPKTINFO`) and sends its
//! answers from it; per-stream sockets are bound to it
//! (`sonde_runtime::sockets::server_udp_stream`).
//!
//! On an IPv6 socket that also takes IPv4 (v4-mapped), Linux reports an IPv4 datagram's
//! destination as a v4-mapped IPv6 packet-info and takes one back the same way.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsFd, AsRawFd};

/// Whether `sock` is an IPv6 socket (one that may also take IPv4, v4-mapped).
fn is_ipv6(sock: &impl AsFd) -> io::Result<bool> {
    Ok(socket2::SockRef::from(sock)
        .local_addr()?
        .as_socket()
        .is_some_and(|a| a.is_ipv6()))
}

fn is_v4_broadcast(ip: IpAddr) -> bool {
    match plain(ip) {
        IpAddr::V4(v4) => v4.is_broadcast(),
        IpAddr::V6(_) => false,
    }
}

/// `sendto` without a source: the routing table picks it.
fn send_plain(sock: &impl AsFd, buf: &[u8], peer: SocketAddr) -> io::Result<usize> {
    socket2::SockRef::from(sock).send_to(buf, &peer.into())
}

/// Asks the kernel to report each datagram's destination address on `sock`.
///
/// # Errors
/// The `setsockopt` error.
pub fn enable(sock: &impl AsFd) -> io::Result<()> {
    let v6 = is_ipv6(sock)?;
    let (level, name) = if v6 {
        (libc::IPPROTO_IPV6, libc::IPV6_RECVPKTINFO)
    } else {
        (libc::IPPROTO_IP, libc::IP_PKTINFO)
    };
    let one: libc::c_int = 1;
    // SAFETY: the option value is a live c_int of the stated size.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_fd().as_raw_fd(),
            level,
            name,
            std::ptr::from_ref(&one).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Room for a packet-info control message of either family and any other the socket asks
/// for (a receive timestamp).
const CONTROL_LEN: usize = 256;

#[repr(C, align(8))]
struct Control([u8; CONTROL_LEN]);

fn storage_to_addr(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match i32::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the storage holds a sockaddr_in.
            let sin: &libc::sockaddr_in = unsafe { &*(std::ptr::from_ref(storage).cast()) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::new(IpAddr::V4(ip), u16::from_be(sin.sin_port)))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the storage holds a sockaddr_in6.
            let sin6: &libc::sockaddr_in6 = unsafe { &*(std::ptr::from_ref(storage).cast()) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(std::net::SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// Receives one datagram into `buf`: its length, its sender, and the address it was sent to
/// (None when the kernel did not say: [`enable`] not called).
///
/// # Errors
/// The `recvmsg` error; `InvalidData` for a sender of an unknown family.
pub fn recv(sock: &impl AsFd, buf: &mut [u8]) -> io::Result<(usize, SocketAddr, Option<IpAddr>)> {
    // SAFETY: plain C structures, all-zero is a valid value of each.
    let mut from: libc::sockaddr_storage = unsafe { zeroed() };
    let mut control = Control([0; CONTROL_LEN]);
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: as above.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = std::ptr::from_mut(&mut from).cast();
    msg.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = CONTROL_LEN as _;
    // SAFETY: every pointer in msg points at live storage of the stated length.
    let n = unsafe { libc::recvmsg(sock.as_fd().as_raw_fd(), &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let peer = storage_to_addr(&from)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "sender of unknown family"))?;
    let mut dst = None;
    // SAFETY: the CMSG_* helpers walk the control buffer the kernel filled, within
    // msg_controllen; each payload is read unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::IPPROTO_IP, libc::IP_PKTINFO) => {
                    let info: libc::in_pktinfo = std::ptr::read_unaligned(data.cast());
                    dst = Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        info.ipi_addr.s_addr,
                    ))));
                }
                (libc::IPPROTO_IPV6, libc::IPV6_PKTINFO) => {
                    let info: libc::in6_pktinfo = std::ptr::read_unaligned(data.cast());
                    dst = Some(IpAddr::V6(Ipv6Addr::from(info.ipi6_addr.s6_addr)));
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n as usize, peer, dst))
}

/// Sends `buf` to `peer` from the local address `src` (the destination [`recv`] reported),
/// or from the address the routing table picks when `src` is None. `peer` is the sender as
/// [`recv`] gave it: its family is the socket's (v4-mapped on an IPv6 socket), which spares
/// every answer a `getsockname`.
///
/// # Errors
/// The `sendmsg` error.
pub fn send(
    sock: &impl AsFd,
    buf: &[u8],
    peer: SocketAddr,
    src: Option<IpAddr>,
) -> io::Result<usize> {
    let Some(src) = src.filter(|ip| !ip.is_multicast() && !is_v4_broadcast(*ip)) else {
        return send_plain(sock, buf, peer);
    };
    let mut control = Control([0; CONTROL_LEN]);
    let Some(control_len) = write_pktinfo(&mut control, peer.is_ipv6(), src) else {
        return send_plain(sock, buf, peer);
    };
    match send_with_control(sock, buf, peer, &mut control, control_len) {
        // A destination that cannot be a source (a subnet's broadcast address, one not this
        // host's): answer as before, from the address the routing table picks.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EINVAL | libc::EADDRNOTAVAIL | libc::ENETUNREACH)
            ) =>
        {
            send_plain(sock, buf, peer)
        }
        sent => sent,
    }
}

/// Writes into `control` the packet-info control message that sends from `src` on a socket
/// of the family `v6_socket` says (an IPv4 `src` v4-mapped on an IPv6 socket): the control
/// length to send with, or None when it cannot be written (an IPv6 `src` on an IPv4 socket).
fn write_pktinfo(control: &mut Control, v6_socket: bool, src: IpAddr) -> Option<usize> {
    let (level, kind, len) = if v6_socket {
        (
            libc::IPPROTO_IPV6,
            libc::IPV6_PKTINFO,
            size_of::<libc::in6_pktinfo>(),
        )
    } else {
        (
            libc::IPPROTO_IP,
            libc::IP_PKTINFO,
            size_of::<libc::in_pktinfo>(),
        )
    };
    // SAFETY: CMSG_SPACE/CMSG_LEN compute sizes only.
    let (space, cmsg_len) = unsafe { (libc::CMSG_SPACE(len as u32), libc::CMSG_LEN(len as u32)) };
    if space as usize > CONTROL_LEN {
        return None;
    }
    // SAFETY: a plain C structure, all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: msg_control points at CONTROL_LEN bytes, at least `space`; the header and its
    // payload are written within them, the payload unaligned.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        if c.is_null() {
            return None;
        }
        (*c).cmsg_level = level;
        (*c).cmsg_type = kind;
        (*c).cmsg_len = cmsg_len as _;
        let data = libc::CMSG_DATA(c);
        if v6_socket {
            let ip = match src {
                IpAddr::V6(ip) => ip,
                IpAddr::V4(ip) => ip.to_ipv6_mapped(),
            };
            let mut info: libc::in6_pktinfo = zeroed();
            info.ipi6_addr.s6_addr = ip.octets();
            std::ptr::write_unaligned(data.cast(), info);
        } else {
            let IpAddr::V4(ip) = src else {
                return None;
            };
            let mut info: libc::in_pktinfo = zeroed();
            info.ipi_spec_dst.s_addr = u32::from(ip).to_be();
            std::ptr::write_unaligned(data.cast(), info);
        }
    }
    Some(space as usize)
}

/// `sendmsg` of `buf` to `peer` with the first `control_len` bytes of `control` (what
/// [`write_pktinfo`] wrote).
fn send_with_control(
    sock: &impl AsFd,
    buf: &[u8],
    peer: SocketAddr,
    control: &mut Control,
    control_len: usize,
) -> io::Result<usize> {
    let to: socket2::SockAddr = peer.into();
    let mut iov = libc::iovec {
        iov_base: buf.as_ptr().cast_mut().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: a plain C structure, all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { zeroed() };
    msg.msg_name = to.as_ptr().cast_mut().cast();
    msg.msg_namelen = to.len();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.0.as_mut_ptr().cast();
    msg.msg_controllen = control_len.min(CONTROL_LEN) as _;
    // SAFETY: every pointer in msg points at live storage of the stated length.
    let n = unsafe { libc::sendmsg(sock.as_fd().as_raw_fd(), &msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// A datagram's destination as a socket's local address would show it: an IPv4 address
/// reported v4-mapped on an IPv6 socket, back to IPv4.
pub fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    /// Two loopback addresses (127.0.0.1 and 127.0.0.2): the listener on the wildcard hears
    /// a datagram to each, knows which it was, and answers from it, so a client connected to
    /// that address takes the answer.
    #[test]
    fn the_answer_leaves_from_the_address_that_was_asked() {
        let listener = UdpSocket::bind("0.0.0.0:0").unwrap();
        enable(&listener).unwrap();
        let port = listener.local_addr().unwrap().port();
        listener
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        for asked in ["127.0.0.1", "127.0.0.2"] {
            let ip: IpAddr = asked.parse().unwrap();
            let client = UdpSocket::bind("127.0.0.1:0").unwrap();
            client.connect((ip, port)).unwrap();
            client
                .set_read_timeout(Some(std::time::Duration::from_secs(2)))
                .unwrap();
            client.send(b"ping").unwrap();
            let mut buf = [0u8; 16];
            let (n, from, dst) = recv(&listener, &mut buf).unwrap();
            assert_eq!(&buf[..n], b"ping");
            assert_eq!(from, client.local_addr().unwrap());
            assert_eq!(dst.map(plain), Some(ip), "{asked}");
            send(&listener, b"pong", from, dst).unwrap();
            let n = client.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"pong", "{asked}");
        }
    }

    /// A destination that cannot be a source (a broadcast, a multicast group, an address not
    /// this host's) is answered as before, from the routing table's choice.
    #[test]
    fn a_destination_that_cannot_be_a_source_is_answered_from_the_routes_choice() {
        let listener = UdpSocket::bind("0.0.0.0:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .connect(("127.0.0.1", listener.local_addr().unwrap().port()))
            .unwrap();
        client
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let to = client.local_addr().unwrap();
        for odd in ["255.255.255.255", "224.0.0.1", "192.0.2.1"] {
            send(&listener, b"pong", to, Some(odd.parse().unwrap())).unwrap();
            let mut buf = [0u8; 16];
            let n = client.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], b"pong", "{odd}");
        }
    }

    #[test]
    fn a_dual_stack_listener_reports_ipv4_destinations_v4_mapped_and_answers_from_them() {
        let Ok(listener) = UdpSocket::bind("[::]:0") else {
            eprintln!("skipped: no IPv6 on this host");
            return;
        };
        enable(&listener).unwrap();
        let port = listener.local_addr().unwrap().port();
        listener
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.connect(("127.0.0.2", port)).unwrap();
        client
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        client.send(b"ping").unwrap();
        let mut buf = [0u8; 16];
        let (_, from, dst) = recv(&listener, &mut buf).unwrap();
        assert_eq!(dst.map(plain), Some("127.0.0.2".parse().unwrap()));
        send(&listener, b"pong", from, dst).unwrap();
        let n = client.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"pong");
    }
}
