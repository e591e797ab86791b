//! Reading the facts of the link a test leaves by ([`LinkFacts`]): which interface holds the
//! local address of a connected socket, then its speed, duplex, MTU and state from
//! `/sys/class/net/IF/`, its driver from the `device/driver` link, auto-negotiation and
//! offloads from the driver ([`crate::ethtool`]), and the TCP settings from
//! `/proc/sys/net/ipv4/`.
//!
//! Each reader says `None` when the OS does not answer: loopback's `speed` file fails with
//! `EINVAL`, a virtio NIC writes `-1`, a veth has no device. Nothing is inferred.

use crate::resolve::{self, Family, ResolveError};
use sonde_stats::link::{LinkFacts, VIRTUAL_DRIVER};
use sonde_stats::units::Rate;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;

const SYS_NET: &str = "/sys/class/net";
const PROC_IPV4: &str = "/proc/sys/net/ipv4";

/// Why the link towards a host could not be named.
#[derive(Debug, thiserror::Error)]
pub enum TowardsError {
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error("no route to {addr}: {source}")]
    Route {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("no interface holds {0}, the address this host would leave by")]
    NoInterface(IpAddr),
}

/// The facts of the link this host would reach `host` by: the first address it resolves to
/// (of `family`), the local address the kernel picks for it (a UDP socket's connect, which
/// sends nothing), and the interface holding that address.
///
/// # Errors
/// [`TowardsError`] when the host does not resolve, has no route, or no interface holds the
/// address chosen.
pub fn towards(host: &str, port: u16, family: Family) -> Result<LinkFacts, TowardsError> {
    let never = std::sync::atomic::AtomicBool::new(false);
    let addrs = resolve::resolve(host, port, family, &never)?;
    let mut last = None;
    for addr in addrs {
        match local_towards(addr) {
            Ok(local) => {
                let ip = addr.ip();
                return of_connection(local, ip).ok_or(TowardsError::NoInterface(local));
            }
            Err(source) => last = Some(TowardsError::Route { addr, source }),
        }
    }
    Err(last.unwrap_or_else(|| {
        let source = std::io::Error::new(std::io::ErrorKind::NotFound, "no address");
        let addr = SocketAddr::new(IpAddr::from([0, 0, 0, 0]), port);
        TowardsError::Route { addr, source }
    }))
}

/// The local address the kernel would send to `addr` from.
fn local_towards(addr: SocketAddr) -> std::io::Result<IpAddr> {
    let any: SocketAddr = match addr {
        SocketAddr::V4(_) => (IpAddr::from([0u8; 4]), 0).into(),
        SocketAddr::V6(_) => (IpAddr::from([0u16; 8]), 0).into(),
    };
    let s = std::net::UdpSocket::bind(any)?;
    s.connect(addr)?;
    Ok(s.local_addr()?.ip())
}

/// The facts of the interface a connection from `local` to `peer` leaves by (see
/// [`interface_for`]); `None` when no interface holds `local`.
pub fn of_connection(local: IpAddr, peer: IpAddr) -> Option<LinkFacts> {
    interface_for(local, peer).map(|name| read(&name))
}

/// The facts of interface `ifname`, each `None` where the OS would not say.
pub fn read(ifname: &str) -> LinkFacts {
    let dir = Path::new(SYS_NET).join(ifname);
    let text = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let proc = |file: &str| std::fs::read_to_string(Path::new(PROC_IPV4).join(file)).ok();
    let (gso, gro, tso) = crate::ethtool::offloads(ifname);
    LinkFacts {
        interface: ifname.to_owned(),
        speed_bps: text("speed").as_deref().and_then(parse_speed),
        duplex: text("duplex").as_deref().and_then(parse_duplex),
        autoneg: crate::ethtool::autoneg(ifname),
        driver: driver(&dir),
        mtu: text("mtu").and_then(|t| t.trim().parse().ok()),
        operstate: text("operstate").as_deref().and_then(parse_operstate),
        gso,
        gro,
        tso,
        tcp_rmem: proc("tcp_rmem").as_deref().and_then(parse_triplet),
        tcp_wmem: proc("tcp_wmem").as_deref().and_then(parse_triplet),
        tcp_congestion_control: proc("tcp_congestion_control")
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.is_empty()),
    }
}

/// `speed` in Mbit/s as the kernel writes it; `-1`, `0` and anything unparsable are unknown.
pub fn parse_speed(text: &str) -> Option<Rate> {
    let mbps: i64 = text.trim().parse().ok()?;
    // SPEED_UNKNOWN is -1; some drivers print it unsigned.
    if mbps <= 0 || mbps >= i64::from(u32::MAX) {
        return None;
    }
    Some(Rate::from_bits_per_sec(
        (mbps as u64).saturating_mul(1_000_000),
    ))
}

/// `duplex`: `full` or `half`; `unknown` is unknown.
pub fn parse_duplex(text: &str) -> Option<String> {
    match text.trim() {
        t @ ("full" | "half") => Some(t.to_owned()),
        _ => None,
    }
}

/// `operstate` (RFC 2863 words); `unknown`, what loopback says, is unknown.
pub fn parse_operstate(text: &str) -> Option<String> {
    match text.trim() {
        "" | "unknown" => None,
        t => Some(t.to_owned()),
    }
}

/// `tcp_rmem` and `tcp_wmem`: three byte counts.
pub fn parse_triplet(text: &str) -> Option<[u64; 3]> {
    let mut it = text.split_whitespace().map(|w| w.parse::<u64>().ok());
    let v = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(v)
}

/// The driver of the interface at `dir`: [`VIRTUAL_DRIVER`] without a device, `None` when
/// the interface is not there or its device names no driver.
fn driver(dir: &Path) -> Option<String> {
    if !dir.exists() {
        return None;
    }
    let device = dir.join("device");
    if std::fs::symlink_metadata(&device).is_err() {
        return Some(VIRTUAL_DRIVER.to_owned());
    }
    let target = std::fs::read_link(device.join("driver")).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// The interface a connection from `local` to `peer` leaves by: loopback when `peer` is an
/// address of this host (Linux routes every local destination through it, even one held
/// by `eth0`), else the interface holding `local`: the one with that very address, else
/// the first whose subnet contains it. An IPv4-mapped address counts as its IPv4 one.
pub fn interface_for(local: IpAddr, peer: IpAddr) -> Option<String> {
    let (local, peer) = (local.to_canonical(), peer.to_canonical());
    let all = interface_addresses();
    if peer.is_loopback() || all.iter().any(|a| a.addr == peer) {
        if let Some(lo) = all.iter().find(|a| a.loopback) {
            return Some(lo.name.clone());
        }
    }
    let exact = all.iter().find(|a| a.addr == local);
    let subnet = || {
        all.iter()
            .find(|a| a.mask.is_some_and(|m| same_subnet(a.addr, m, local)))
    };
    exact.or_else(subnet).map(|a| a.name.clone())
}

/// One address of one interface.
struct IfAddr {
    name: String,
    addr: IpAddr,
    mask: Option<IpAddr>,
    loopback: bool,
}

/// Whether `a` and `b` agree under `mask` (all three of one family).
fn same_subnet(a: IpAddr, mask: IpAddr, b: IpAddr) -> bool {
    match (a, mask, b) {
        (IpAddr::V4(a), IpAddr::V4(m), IpAddr::V4(b)) => {
            u32::from(m) != 0 && u32::from(a) & u32::from(m) == u32::from(b) & u32::from(m)
        }
        (IpAddr::V6(a), IpAddr::V6(m), IpAddr::V6(b)) => {
            u128::from(m) != 0 && u128::from(a) & u128::from(m) == u128::from(b) & u128::from(m)
        }
        _ => false,
    }
}

/// Every address of every interface of this host, from `getifaddrs`.
fn interface_addresses() -> Vec<IfAddr> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, alive until freeifaddrs.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        // SAFETY: the node's pointers are null or point at sockaddrs and a C string of the list.
        let (addr, mask) = unsafe { (ip_of(ifa.ifa_addr), ip_of(ifa.ifa_netmask)) };
        if let (Some(addr), false) = (addr, ifa.ifa_name.is_null()) {
            // SAFETY: a NUL-terminated name owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(ifa.ifa_name) };
            out.push(IfAddr {
                name: name.to_string_lossy().into_owned(),
                addr,
                mask,
                loopback: ifa.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0,
            });
        }
    }
    // SAFETY: the list getifaddrs gave, freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// The address in `sa`, when it is an IPv4 or IPv6 one.
///
/// # Safety
/// `sa` is null or points at a sockaddr whose family says its size.
unsafe fn ip_of(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let sin = &*(sa as *const libc::sockaddr_in);
            Some(IpAddr::from(
                u32::from_be(sin.sin_addr.s_addr).to_be_bytes(),
            ))
        }
        libc::AF_INET6 => {
            let sin6 = &*(sa as *const libc::sockaddr_in6);
            Some(IpAddr::from(sin6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_read_in_mbit_and_unknowns_stay_unknown() {
        assert_eq!(
            parse_speed("1000\n").map(Rate::bits_per_sec),
            Some(1_000_000_000)
        );
        assert_eq!(
            parse_speed("10000").map(Rate::bits_per_sec),
            Some(10_000_000_000)
        );
        for unknown in ["-1\n", "0", "4294967295", "", "fast"] {
            assert_eq!(parse_speed(unknown), None, "{unknown:?}");
        }
    }

    #[test]
    fn duplex_state_and_buffers_parse() {
        assert_eq!(parse_duplex("full\n").as_deref(), Some("full"));
        assert_eq!(parse_duplex("half").as_deref(), Some("half"));
        assert_eq!(parse_duplex("unknown\n"), None);
        assert_eq!(parse_operstate("up\n").as_deref(), Some("up"));
        assert_eq!(parse_operstate("unknown\n"), None);
        assert_eq!(
            parse_triplet("4096\t131072\t33554432\n"),
            Some([4096, 131_072, 33_554_432])
        );
        for bad in ["", "1 2", "1 2 3 4", "1 x 3"] {
            assert_eq!(parse_triplet(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn subnets_match_within_a_family() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert!(same_subnet(
            ip("10.1.2.3"),
            ip("255.255.255.0"),
            ip("10.1.2.200")
        ));
        assert!(!same_subnet(
            ip("10.1.2.3"),
            ip("255.255.255.0"),
            ip("10.1.3.1")
        ));
        assert!(!same_subnet(ip("10.1.2.3"), ip("0.0.0.0"), ip("9.9.9.9")));
        assert!(!same_subnet(ip("10.1.2.3"), ip("255.0.0.0"), ip("::1")));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn loopback_reads_as_the_kernel_says() {
        let lo = "127.0.0.1".parse().unwrap();
        assert_eq!(interface_for(lo, lo).as_deref(), Some("lo"));
        // An IPv4-mapped address, as a dual-stack socket reports it, is the same one.
        let mapped = "::ffff:127.0.0.1".parse().unwrap();
        assert_eq!(interface_for(mapped, mapped).as_deref(), Some("lo"));
        // Nothing holds a documentation address of another net, so nothing is named.
        let elsewhere = "203.0.113.7".parse().unwrap();
        assert_eq!(
            interface_for(elsewhere, "198.51.100.1".parse().unwrap()),
            None
        );
        let f = of_connection(lo, lo).expect("lo holds 127.0.0.1");
        let mtu = std::fs::read_to_string("/sys/class/net/lo/mtu").unwrap();
        assert_eq!(f.mtu, Some(mtu.trim().parse().unwrap()));
        // Loopback has no device and no link speed: both read as such, not as a figure.
        assert_eq!(f.driver.as_deref(), Some(VIRTUAL_DRIVER));
        assert_eq!(f.speed_bps, None);
        assert_eq!(f.autoneg, None);
        let cc = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control").unwrap();
        assert_eq!(f.tcp_congestion_control.as_deref(), Some(cc.trim()));
        // Offloads: whatever the driver answers, or None; reading them twice agrees.
        assert_eq!((f.gso, f.gro, f.tso), crate::ethtool::offloads("lo"));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_way_to_loopback_is_lo() {
        let f = towards("127.0.0.1", 9, Family::Any).expect("a route to 127.0.0.1");
        assert_eq!(f.interface, "lo");
        assert!(matches!(
            // A literal of the other family resolves to nothing, without a lookup.
            towards("127.0.0.1", 9, Family::V6),
            Err(TowardsError::Resolve(_))
        ));
    }
}
