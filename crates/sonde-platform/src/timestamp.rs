//! Packet timestamps for latency probes: the kernel's software receive timestamps
//! (`SO_TIMESTAMPING`, Linux) where available, the wall clock in user space otherwise.
//!
//! A kernel receive timestamp is taken when the packet enters the stack, so the probe's RTT
//! does not include the time the prober thread took to wake up (tens of microseconds on a busy
//! host: the main error source of user-space tools). Times are `CLOCK_REALTIME` nanoseconds,
//! the clock NTP/PTP synchronise, so one-way delays can be measured when the user says the
//! clocks agree (see `sonde_proto::probe`).

use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;

/// Wall-clock nanoseconds since the Unix epoch.
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Asks the kernel for software receive timestamps on `sock`; false when it cannot.
///
/// True does not mean the next datagram is stamped: when no other socket on the host has them
/// on, the kernel turns receive stamps on in the background, a moment later. A datagram read
/// before that has no [`Received::kernel_ns`], and [`Received::best_ns`] is its wall-clock time.
#[cfg(target_os = "linux")]
pub fn enable_rx(sock: &impl AsRawFd) -> bool {
    set_timestamping(
        sock,
        libc::SOF_TIMESTAMPING_RX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE,
    )
}

/// Sets `SO_TIMESTAMPING` to `flags` on `sock`; false when the kernel refuses.
#[cfg(target_os = "linux")]
pub(crate) fn set_timestamping(sock: &impl AsRawFd, flags: libc::c_uint) -> bool {
    // SAFETY: a valid option value of the size given, for the duration of the call.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            (&flags as *const libc::c_uint).cast(),
            std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
        )
    };
    rc == 0
}

#[cfg(not(target_os = "linux"))]
pub fn enable_rx(_sock: &impl AsRawFd) -> bool {
    false
}

/// The kernel receive time of the last datagram read from `sock` (`SIOCGSTAMPNS`), for
/// sockets read with plain `recv_from`. None when the kernel has none.
#[cfg(target_os = "linux")]
pub fn last_rx_ns(sock: &impl AsRawFd) -> Option<u64> {
    const SIOCGSTAMPNS: libc::c_ulong = 0x8907;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: SIOCGSTAMPNS writes one timespec into `ts`.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCGSTAMPNS as _, &mut ts) };
    if rc != 0 || ts.tv_sec <= 0 {
        return None;
    }
    Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(not(target_os = "linux"))]
pub fn last_rx_ns(_sock: &impl AsRawFd) -> Option<u64> {
    None
}

/// One datagram read with [`recv`].
#[derive(Debug, Clone, Copy)]
pub struct Received {
    pub len: usize,
    pub from: Option<SocketAddr>,
    /// Kernel receive time (ns, wall clock) when the kernel gave one.
    pub kernel_ns: Option<u64>,
    /// Wall clock right after the read returned.
    pub user_ns: u64,
}

impl Received {
    /// The best receive time available.
    pub fn best_ns(&self) -> u64 {
        self.kernel_ns.unwrap_or(self.user_ns)
    }
}

fn sockaddr_to_std(ss: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    // SAFETY: the kernel filled `len` bytes of `ss` with a sockaddr of family ss_family.
    unsafe {
        match libc::c_int::from(ss.ss_family) {
            libc::AF_INET if len as usize >= std::mem::size_of::<libc::sockaddr_in>() => {
                let a = &*(ss as *const _ as *const libc::sockaddr_in);
                let ip = std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
                Some(SocketAddr::new(ip.into(), u16::from_be(a.sin_port)))
            }
            libc::AF_INET6 if len as usize >= std::mem::size_of::<libc::sockaddr_in6>() => {
                let a = &*(ss as *const _ as *const libc::sockaddr_in6);
                let ip = std::net::Ipv6Addr::from(a.sin6_addr.s6_addr);
                Some(SocketAddr::new(ip.into(), u16::from_be(a.sin6_port)))
            }
            _ => None,
        }
    }
}

/// Reads one datagram without blocking (`MSG_DONTWAIT`), with its kernel timestamp when
/// [`enable_rx`] succeeded.
///
/// # Errors
/// The OS error (`WouldBlock` when nothing is queued).
pub fn recv(sock: &impl AsRawFd, buf: &mut [u8]) -> io::Result<Received> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut name = MaybeUninit::<libc::sockaddr_storage>::zeroed();
    let mut control = [0u64; 64];
    // SAFETY: msghdr is plain data; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_name = name.as_mut_ptr().cast();
    msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg describes valid buffers for the duration of the call.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_DONTWAIT) };
    let user_ns = realtime_ns();
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: recvmsg initialised `msg_namelen` bytes of the name (zeroed before).
    let from = sockaddr_to_std(unsafe { name.assume_init_ref() }, msg.msg_namelen);
    Ok(Received {
        len: n as usize,
        from,
        kernel_ns: kernel_stamp(&msg),
        user_ns,
    })
}

#[cfg(target_os = "linux")]
fn kernel_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walking the control messages the kernel wrote, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                if ts.tv_sec > 0 {
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

#[cfg(not(target_os = "linux"))]
fn kernel_stamp(_msg: &libc::msghdr) -> Option<u64> {
    None
}

/// Waits until `sock` is readable or `timeout` passes, with nanosecond resolution (`ppoll`,
/// [`crate::poll::readable_precise`]; `poll` counts whole milliseconds, too coarse for a 1 ms
/// schedule).
///
/// # Errors
/// The OS error other than `EINTR` (reported as not readable).
#[cfg(target_os = "linux")]
pub fn wait_readable(sock: &impl AsRawFd, timeout: std::time::Duration) -> io::Result<bool> {
    super::poll::readable_precise(sock, timeout)
}

#[cfg(not(target_os = "linux"))]
pub fn wait_readable(sock: &impl AsRawFd, timeout: std::time::Duration) -> io::Result<bool> {
    super::poll::readable(sock, timeout.max(std::time::Duration::from_millis(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    /// Sends one datagram from `a` to `b` and reads it back.
    fn round(a: &UdpSocket, b: &UdpSocket, buf: &mut [u8]) -> (u64, Received) {
        let before = realtime_ns();
        a.send_to(b"hi", b.local_addr().unwrap()).unwrap();
        assert!(wait_readable(b, std::time::Duration::from_secs(2)).unwrap());
        (before, recv(b, buf).unwrap())
    }

    #[test]
    fn kernel_timestamp_on_loopback() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        let kernel = enable_rx(&b);
        let mut buf = [0u8; 16];
        // The first socket on the host to ask turns the kernel's receive timestamps on in
        // the background (a work item): a datagram that arrives before that has none, and
        // its reader falls back to the wall clock. So datagrams go until one is stamped,
        // within 2 s, and every stamp given must lie between the send and the read.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        let mut stamped = false;
        while !stamped && std::time::Instant::now() < deadline {
            let (before, r) = round(&a, &b, &mut buf);
            assert_eq!(r.len, 2);
            assert_eq!(r.from, Some(a.local_addr().unwrap()));
            if let Some(k) = r.kernel_ns {
                assert!(k >= before && k <= r.user_ns, "{before} {k} {}", r.user_ns);
                assert_eq!(r.best_ns(), k);
                stamped = true;
            } else {
                assert_eq!(r.best_ns(), r.user_ns);
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        assert_eq!(
            stamped, kernel,
            "kernel stamps asked: {kernel}, given: {stamped}"
        );
        assert!(recv(&b, &mut buf).is_err(), "nothing more queued");
    }
}
