//! Socket options sonde sets on data streams, and the host's congestion-control list.

use std::io;
use std::os::fd::AsRawFd;

/// Linux's protocol number of Multipath TCP, for `socket(2)`'s protocol argument (no libc
/// release names it on every target yet).
pub const IPPROTO_MPTCP: i32 = 262;

/// Sets socket option `name` at `level` to the bytes `val` (`setsockopt`).
///
/// # Errors
/// The kernel's, as `setsockopt` reported it.
pub fn set_raw(
    sock: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    val: &[u8],
) -> io::Result<()> {
    // SAFETY: `val` is valid for its length for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            val.as_ptr().cast(),
            val.len() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// TCP congestion-control algorithms this host offers (empty when unknown).
pub fn available_congestion() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Sets TCP_CONGESTION.
///
/// # Errors
/// The OS error when the algorithm is not available.
#[cfg(target_os = "linux")]
pub fn set_congestion(sock: &impl AsRawFd, algo: &str) -> io::Result<()> {
    set_raw(
        sock,
        libc::IPPROTO_TCP,
        libc::TCP_CONGESTION,
        algo.as_bytes(),
    )
}

#[cfg(not(target_os = "linux"))]
pub fn set_congestion(_sock: &impl AsRawFd, _algo: &str) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "congestion control selection is Linux-only",
    ))
}

/// Reads TCP_CONGESTION.
#[cfg(target_os = "linux")]
pub fn congestion(sock: &impl AsRawFd) -> Option<String> {
    let mut buf = [0u8; 32];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into `buf`.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let s = &buf[..(len as usize).min(buf.len())];
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    std::str::from_utf8(&s[..end]).ok().map(str::to_string)
}

#[cfg(not(target_os = "linux"))]
pub fn congestion(_sock: &impl AsRawFd) -> Option<String> {
    None
}

/// Sets IP_TOS (IPv4) and IPV6_TCLASS (IPv6); the one not matching the family may fail silently.
///
/// # Errors
/// When neither could be set.
pub fn set_tos(sock: &impl AsRawFd, tos: u8) -> io::Result<()> {
    let v = (tos as libc::c_int).to_ne_bytes();
    let a = set_raw(sock, libc::IPPROTO_IP, libc::IP_TOS, &v);
    let b = set_raw(sock, libc::IPPROTO_IPV6, libc::IPV6_TCLASS, &v);
    a.or(b)
}

/// Sets the receive buffer beyond `net.core.rmem_max` (SO_RCVBUFFORCE, needs CAP_NET_ADMIN).
///
/// # Errors
/// The OS error when the process lacks the privilege.
#[cfg(target_os = "linux")]
pub fn force_recv_buffer(sock: &impl AsRawFd, bytes: usize) -> io::Result<()> {
    let v = (bytes.min(i32::MAX as usize) as libc::c_int).to_ne_bytes();
    set_raw(sock, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, &v)
}

#[cfg(not(target_os = "linux"))]
pub fn force_recv_buffer(_sock: &impl AsRawFd, _bytes: usize) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "SO_RCVBUFFORCE is Linux-only",
    ))
}

/// Caps the kernel's pacing of this socket at `bytes_per_sec` (SO_MAX_PACING_RATE): TCP then
/// spreads each write over time instead of sending it at line rate as far as the window allows.
///
/// # Errors
/// The OS error where the kernel has no such option.
#[cfg(target_os = "linux")]
pub fn set_max_pacing_rate(sock: &impl AsRawFd, bytes_per_sec: u64) -> io::Result<()> {
    match u32::try_from(bytes_per_sec) {
        Ok(v) if v != u32::MAX => set_raw(
            sock,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            &v.to_ne_bytes(),
        ),
        _ => set_raw(
            sock,
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            &bytes_per_sec.to_ne_bytes(),
        ),
    }
}

#[cfg(not(target_os = "linux"))]
pub fn set_max_pacing_rate(_sock: &impl AsRawFd, _bytes_per_sec: u64) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "SO_MAX_PACING_RATE is Linux-only",
    ))
}

/// Sets the don't-fragment bit on this socket's IPv4 datagrams (IP_PMTUDISC_DO) and refuses
/// to fragment IPv6 ones: a datagram larger than the path MTU is an error, not fragments.
///
/// # Errors
/// When neither family's option could be set.
#[cfg(target_os = "linux")]
pub fn set_dont_fragment(sock: &impl AsRawFd) -> io::Result<()> {
    let v4 = (libc::IP_PMTUDISC_DO as libc::c_int).to_ne_bytes();
    let v6 = (libc::IPV6_PMTUDISC_DO as libc::c_int).to_ne_bytes();
    let a = set_raw(sock, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, &v4);
    let b = set_raw(sock, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER, &v6);
    a.or(b)
}

#[cfg(not(target_os = "linux"))]
pub fn set_dont_fragment(_sock: &impl AsRawFd) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "--dont-fragment is Linux-only here",
    ))
}

/// True when `e` says the host has no such address family (`EAFNOSUPPORT`): an IPv6 socket
/// on a host built or booted without IPv6, where a listener falls back to IPv4.
pub fn family_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EAFNOSUPPORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_address_family_counts_as_one() {
        assert!(family_unsupported(&io::Error::from_raw_os_error(
            libc::EAFNOSUPPORT
        )));
        assert!(!family_unsupported(&io::Error::from_raw_os_error(
            libc::EADDRINUSE
        )));
        assert!(!family_unsupported(&io::ErrorKind::Other.into()));
    }
}
