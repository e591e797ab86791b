//! Building data sockets with the options a test asks for (`-w`, `-M`, `-N`, `-S`, `-C`).

use crate::error::RunError;
use socket2::{Domain, Protocol as SockProto, SockAddr, Socket, Type};
use sonde_platform::sockopt;
use sonde_proto::message::TestParams;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

/// Default UDP socket buffers when `-w` is not given. A measurement tool must not be the loss
/// it reports: at loopback rates a burst overflows the usual 208 KiB receive queue (iperf3's
/// main source of loopback loss), so sonde asks for a large one, beyond `rmem_max` where it is
/// privileged (SO_RCVBUFFORCE) and up to `rmem_max` otherwise.
const UDP_DEFAULT_RCVBUF: usize = 32 * 1024 * 1024;
const UDP_DEFAULT_SNDBUF: usize = 4 * 1024 * 1024;

fn set_common(sock: &Socket, p: &TestParams) -> std::io::Result<()> {
    if let Some(w) = p.window {
        sock.set_send_buffer_size(w.as_len())?;
        sock.set_recv_buffer_size(w.as_len())?;
    }
    if p.tos != 0 {
        sockopt::set_tos(sock, p.tos)?;
    }
    if !p.fq_rate.is_unlimited() {
        sockopt::set_max_pacing_rate(sock, p.fq_rate.bytes_per_sec())?;
    }
    Ok(())
}

/// Applies the TCP options of `p` to a socket (before connect or on an accepted one).
///
/// # Errors
/// [`RunError::Setup`] naming the option the OS rejected.
pub fn apply_tcp(sock: &Socket, p: &TestParams, side: &'static str) -> Result<(), RunError> {
    set_common(sock, p)
        .map_err(|e| RunError::Setup(format!("setting -w/-S on the {side}: {e}")))?;
    if p.nodelay {
        sock.set_tcp_nodelay(true)
            .map_err(|e| RunError::Setup(format!("setting -N: {e}")))?;
    }
    if let Some(mss) = p.mss {
        sock.set_tcp_mss(mss)
            .map_err(|e| RunError::Setup(format!("setting -M {mss}: {e}")))?;
    }
    if let Some(algo) = &p.congestion {
        sockopt::set_congestion(sock, algo).map_err(|_| RunError::Congestion {
            algo: algo.clone(),
            side,
            available: sockopt::available_congestion().join(", "),
        })?;
    }
    Ok(())
}

/// Connects a TCP data stream to `server` with the test's options.
///
/// # Errors
/// [`RunError`] when an option is refused or the connection fails.
pub fn connect_tcp(
    server: SocketAddr,
    local: &ClientSockets,
    local_port: Option<u16>,
    p: &TestParams,
    timeout: Duration,
) -> Result<TcpStream, RunError> {
    let sock = tcp_socket(server, local.mptcp)
        .map_err(|e| RunError::Setup(format!("creating a TCP socket: {e}")))?;
    apply_tcp(&sock, p, "client")?;
    local.apply(&sock, server, local_port, local_port.is_some())?;
    if let Some(t) = local.tcp_user_timeout {
        set_user_timeout(&sock, t)
            .map_err(|e| RunError::Setup(format!("setting --snd-timeout: {e}")))?;
    }
    let target = local.labelled(&sock, server)?;
    sock.connect_timeout(&SockAddr::from(target), timeout)
        .map_err(|e| RunError::Connect {
            addr: server.to_string(),
            source: e,
        })?;
    Ok(sock.into())
}

/// How a client's sockets are set up on this host: where they leave from (a local address,
/// `-B`, and/or a device, `--bind-dev` or `-B ADDR%DEV`; by default the routing table decides),
/// how long TCP data may stay unacknowledged (`--snd-timeout`), and keepalives on the control
/// connection (`--cntl-ka`), and the pre-shared key the control connection answers a keyed
/// server's challenge with (`--psk-file`). The key lives here because every command that
/// opens a control connection already carries these settings to the one place that opens it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSockets {
    pub addr: Option<IpAddr>,
    pub device: Option<String>,
    /// TCP_USER_TIMEOUT of the data connections.
    pub tcp_user_timeout: Option<Duration>,
    /// Keepalive probes on the control connection: idle time, interval, count.
    pub control_keepalive: Option<(Duration, Duration, u32)>,
    /// Multipath TCP for the control and TCP data connections (`-m`); a server without it
    /// answers as plain TCP (the kernel falls back).
    pub mptcp: bool,
    /// IPv6 flow label of the data connections (`-L`).
    pub flow_label: Option<u32>,
    /// The pre-shared key for a server started with `--psk-file`; a server without one
    /// ignores it.
    pub psk: Option<sonde_proto::psk::Psk>,
}

impl ClientSockets {
    /// Where a data socket connects: `server`, with the flow label (`-L`) set up on `sock`
    /// and carried in the address when one is asked for.
    ///
    /// # Errors
    /// [`RunError::Setup`] when the label cannot be used (IPv4, too wide, refused).
    pub fn labelled(&self, sock: &Socket, server: SocketAddr) -> Result<SocketAddr, RunError> {
        match self.flow_label {
            None => Ok(server),
            Some(l) => sonde_platform::flowlabel::set_flow_label(sock, server, l)
                .map_err(|e| RunError::Setup(format!("setting flow label {l} (-L): {e}"))),
        }
    }

    /// Binds `sock` (about to talk to `server`) to the device, then to the local address and
    /// `port` where either is given. `reuse` sets SO_REUSEADDR first (TCP with `--cport`, so
    /// a port in TIME_WAIT can be taken again; never for UDP, where it would let two sockets
    /// share a port).
    ///
    /// # Errors
    /// [`RunError::Setup`] naming the flag whose binding the OS refused.
    pub fn apply(
        &self,
        sock: &Socket,
        server: SocketAddr,
        port: Option<u16>,
        reuse: bool,
    ) -> Result<(), RunError> {
        if let Some(dev) = &self.device {
            bind_device(sock, dev).map_err(|e| {
                RunError::Setup(format!("binding to device {dev} (--bind-dev): {e}"))
            })?;
        }
        if self.addr.is_none() && port.is_none() {
            return Ok(());
        }
        let ip = self.addr.unwrap_or_else(|| unspecified(server));
        let at = SocketAddr::new(ip, port.unwrap_or(0));
        if reuse {
            let _ = sock.set_reuse_address(true);
        }
        sock.bind(&SockAddr::from(at)).map_err(|e| {
            let what = match (self.addr, port) {
                (Some(a), None | Some(0)) => format!("-B {a}"),
                (Some(a), Some(p)) => format!("-B {a} with --cport {p}"),
                (None, Some(0)) => "the UDP socket".into(),
                (None, Some(p)) => format!("--cport {p}"),
                (None, None) => "the local address".into(),
            };
            RunError::Setup(format!("binding {what}: {e}"))
        })
    }
}

#[cfg(target_os = "linux")]
fn set_user_timeout(sock: &Socket, t: Duration) -> std::io::Result<()> {
    sock.set_tcp_user_timeout(Some(t))
}

#[cfg(not(target_os = "linux"))]
fn set_user_timeout(_sock: &Socket, _t: Duration) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "TCP_USER_TIMEOUT is Linux-only",
    ))
}

#[cfg(target_os = "linux")]
fn set_keepalive(
    sock: &Socket,
    idle: Duration,
    interval: Duration,
    count: u32,
) -> std::io::Result<()> {
    let ka = socket2::TcpKeepalive::new()
        .with_time(idle)
        .with_interval(interval)
        .with_retries(count);
    sock.set_tcp_keepalive(&ka)
}

#[cfg(not(target_os = "linux"))]
fn set_keepalive(
    sock: &Socket,
    idle: Duration,
    _interval: Duration,
    _count: u32,
) -> std::io::Result<()> {
    sock.set_tcp_keepalive(&socket2::TcpKeepalive::new().with_time(idle))
}

#[cfg(target_os = "linux")]
fn bind_device(sock: &Socket, dev: &str) -> std::io::Result<()> {
    sock.bind_device(Some(dev.as_bytes()))
}

#[cfg(not(target_os = "linux"))]
fn bind_device(_sock: &Socket, _dev: &str) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "binding to a device is Linux-only",
    ))
}

/// Connects a TCP stream to `server` from `local`, within `timeout` (control connections).
///
/// # Errors
/// The OS error of creating, binding or connecting.
pub fn connect_plain(
    server: SocketAddr,
    local: &ClientSockets,
    timeout: Duration,
) -> Result<TcpStream, std::io::Error> {
    let sock = tcp_socket(server, local.mptcp)?;
    local
        .apply(&sock, server, None, false)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    if let Some((idle, interval, count)) = local.control_keepalive {
        set_keepalive(&sock, idle, interval, count)?;
    }
    sock.connect_timeout(&SockAddr::from(server), timeout)?;
    Ok(sock.into())
}

/// A TCP socket for `addr`'s family; with `mptcp`, Multipath TCP (IPPROTO_MPTCP), with an
/// error that says so where the kernel has none.
///
/// # Errors
/// The OS error of `socket(2)`.
pub fn tcp_socket(addr: SocketAddr, mptcp: bool) -> std::io::Result<Socket> {
    if !mptcp {
        return Socket::new(
            Domain::for_address(addr),
            Type::STREAM,
            Some(SockProto::TCP),
        );
    }
    Socket::new(
        Domain::for_address(addr),
        Type::STREAM,
        Some(SockProto::from(sockopt::IPPROTO_MPTCP)),
    )
    .map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!("Multipath TCP (-m) is not available here ({e}); is net.mptcp.enabled = 1?"),
        )
    })
}

fn unspecified(like: SocketAddr) -> IpAddr {
    match like {
        SocketAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        SocketAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
    }
}

fn udp_buffers(sock: &Socket, p: &TestParams) -> std::io::Result<()> {
    set_common(sock, p)?;
    if p.dont_fragment {
        sockopt::set_dont_fragment(sock)?;
    }
    if p.window.is_none() {
        large_udp_receive_buffer(sock);
        let _ = sock.set_send_buffer_size(UDP_DEFAULT_SNDBUF);
    }
    Ok(())
}

/// Gives a receiving UDP socket the buffer sonde's test sockets have (32 MiB), so a receiver
/// its host does not schedule for a moment loses nothing: best effort, forced when
/// privileged, else up to the kernel's `rmem_max`.
pub fn large_udp_receive_buffer(sock: &Socket) {
    if sockopt::force_recv_buffer(sock, UDP_DEFAULT_RCVBUF).is_err() {
        let _ = sock.set_recv_buffer_size(UDP_DEFAULT_RCVBUF);
    }
}

/// A client UDP socket connected to `server`.
///
/// # Errors
/// [`RunError::Setup`] when the socket cannot be created, bound or connected.
pub fn connect_udp(
    server: SocketAddr,
    local: &ClientSockets,
    local_port: Option<u16>,
    p: &TestParams,
) -> Result<UdpSocket, RunError> {
    let setup = |what: &str, e: std::io::Error| RunError::Setup(format!("{what}: {e}"));
    let sock = Socket::new(
        Domain::for_address(server),
        Type::DGRAM,
        Some(SockProto::UDP),
    )
    .map_err(|e| setup("creating a UDP socket", e))?;
    udp_buffers(&sock, p).map_err(|e| setup("setting UDP socket options", e))?;
    local.apply(&sock, server, Some(local_port.unwrap_or(0)), false)?;
    let target = local.labelled(&sock, server)?;
    sock.connect(&target.into())
        .map_err(|e| setup("connecting the UDP socket", e))?;
    Ok(sock.into())
}

/// A server's socket for one UDP stream (`SO_REUSEADDR`), connected to the client at `peer`
/// so the kernel delivers that client's datagrams to it rather than to the listening socket;
/// bound to the listener's port at the address the client's hello was sent to (`dst`, from
/// sonde_platform::pktinfo), so that on a host with several addresses the stream answers from the
/// one the client asked; at the listener's own address where that one cannot be bound (a
/// broadcast address) or the kernel did not say.
///
/// # Errors
/// The OS error when the socket cannot be made.
pub fn server_udp_stream(
    listener: SocketAddr,
    dst: Option<IpAddr>,
    peer: SocketAddr,
    p: &TestParams,
) -> std::io::Result<UdpSocket> {
    let at = stream_local(listener, dst);
    udp_stream_at(at, peer, p).or_else(|e| {
        if at == listener {
            Err(e)
        } else {
            udp_stream_at(listener, peer, p)
        }
    })
}

fn udp_stream_at(
    local: SocketAddr,
    peer: SocketAddr,
    p: &TestParams,
) -> std::io::Result<UdpSocket> {
    let sock = Socket::new(
        Domain::for_address(local),
        Type::DGRAM,
        Some(SockProto::UDP),
    )?;
    sock.set_reuse_address(true)?;
    if local.is_ipv6() {
        sock.set_only_v6(false)?;
    }
    udp_buffers(&sock, p)?;
    sock.bind(&local.into())?;
    sock.connect(&peer.into())?;
    Ok(sock.into())
}

/// Where a UDP stream's socket binds: the listener's port at the address the hello came to
/// (v4-mapped on a dual-stack listener), so that the stream answers from the address the
/// client asked for on a host with several; the listener's own address when the kernel did
/// not say, or for an IPv6 link-local address (which would need its interface).
fn stream_local(udp_local: SocketAddr, dst: Option<IpAddr>) -> SocketAddr {
    let ip = match (dst, udp_local.is_ipv6()) {
        (None, _) => return udp_local,
        (Some(IpAddr::V6(v6)), _)
            if v6.to_ipv4_mapped().is_none() && v6.is_unicast_link_local() =>
        {
            return udp_local
        }
        (Some(IpAddr::V4(v4)), true) => IpAddr::V6(v4.to_ipv6_mapped()),
        (Some(ip), _) => ip,
    };
    SocketAddr::new(ip, udp_local.port())
}

/// Turns an accepted std socket into a socket2 view for option setting.
pub fn as_socket2(s: &TcpStream) -> socket2::SockRef<'_> {
    socket2::SockRef::from(s)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_stream_binds_where_its_hello_came() {
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        let ip = |s: &str| Some(s.parse::<IpAddr>().unwrap());
        assert_eq!(stream_local(at("[::]:5201"), None), at("[::]:5201"));
        assert_eq!(
            stream_local(at("[::]:5201"), ip("10.0.0.3")),
            at("[::ffff:10.0.0.3]:5201")
        );
        assert_eq!(
            stream_local(at("[::]:5201"), ip("::ffff:10.0.0.3")),
            at("[::ffff:10.0.0.3]:5201")
        );
        assert_eq!(
            stream_local(at("0.0.0.0:5201"), ip("10.0.0.3")),
            at("10.0.0.3:5201")
        );
        assert_eq!(
            stream_local(at("[::]:5201"), ip("fd00::3")),
            at("[fd00::3]:5201")
        );
        assert_eq!(
            stream_local(at("[::]:5201"), ip("fe80::3")),
            at("[::]:5201")
        );
    }

    fn get_int(sock: &Socket, level: libc::c_int, name: libc::c_int) -> libc::c_int {
        let v = sonde_platform::socket_figures::get_int(sock, level, name);
        assert!(v.is_ok(), "{v:?}");
        v.unwrap_or(-1)
    }

    #[test]
    fn snd_timeout_and_control_keepalive_reach_the_socket() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let server = listener.local_addr().unwrap();
        let opts = ClientSockets {
            tcp_user_timeout: Some(Duration::from_millis(1500)),
            control_keepalive: Some((Duration::from_secs(20), Duration::from_secs(4), 6)),
            ..ClientSockets::default()
        };
        let data = connect_tcp(
            server,
            &opts,
            None,
            &TestParams::default(),
            Duration::from_secs(5),
        )
        .unwrap();
        let data = Socket::from(data);
        assert_eq!(
            get_int(&data, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT),
            1500
        );
        let control = Socket::from(connect_plain(server, &opts, Duration::from_secs(5)).unwrap());
        assert_eq!(get_int(&control, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(get_int(&control, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 20);
        assert_eq!(get_int(&control, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 4);
        assert_eq!(get_int(&control, libc::IPPROTO_TCP, libc::TCP_KEEPCNT), 6);
        let plain = Socket::from(
            connect_plain(server, &ClientSockets::default(), Duration::from_secs(5)).unwrap(),
        );
        assert_eq!(get_int(&plain, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
    }

    #[test]
    fn fq_rate_and_dont_fragment_reach_the_socket() {
        let p = TestParams {
            fq_rate: sonde_stats::units::Rate::from_bits_per_sec(80_000_000),
            dont_fragment: true,
            ..TestParams::default()
        };
        let sock = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        udp_buffers(&sock, &p).unwrap();
        assert_eq!(
            get_int(&sock, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE),
            10_000_000,
            "80 Mbit/s is 10 MB/s"
        );
        assert_eq!(
            get_int(&sock, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER),
            libc::IP_PMTUDISC_DO
        );
        let plain = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
        udp_buffers(&plain, &TestParams::default()).unwrap();
        assert_ne!(
            get_int(&plain, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER),
            libc::IP_PMTUDISC_DO
        );
    }
}
