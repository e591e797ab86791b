//! The kernel's software transmit stamps (`SO_TIMESTAMPING` with `TX_SOFTWARE`, Linux): the
//! time each datagram was handed to the device, after the socket's qdisc, read back from
//! the socket's error queue. `OPT_ID` numbers the datagrams from 0 in the order they were
//! sent; `OPT_TSONLY` keeps the datagram's bytes out of the error queue. Elsewhere there are
//! none, and the capacity server says so by sending no departure reports.

use std::os::fd::AsRawFd;

/// Asks the kernel for software transmit stamps on `sock`, numbered from 0 from now on;
/// false when it cannot.
#[cfg(target_os = "linux")]
pub fn enable(sock: &impl AsRawFd) -> bool {
    let flags: libc::c_uint = libc::SOF_TIMESTAMPING_TX_SOFTWARE
        | libc::SOF_TIMESTAMPING_SOFTWARE
        | libc::SOF_TIMESTAMPING_OPT_ID
        | libc::SOF_TIMESTAMPING_OPT_TSONLY;
    super::timestamp::set_timestamping(sock, flags)
}

#[cfg(not(target_os = "linux"))]
pub fn enable(_sock: &impl AsRawFd) -> bool {
    false
}

/// Reads every transmit stamp queued on `sock` without blocking: (datagram number, wall-clock
/// ns) pairs appended to `out`, which never grows past `max` entries (the rest are read and
/// dropped, so the queue empties).
#[cfg(target_os = "linux")]
pub fn drain(sock: &impl AsRawFd, out: &mut Vec<(u32, u64)>, max: usize) {
    loop {
        let mut data = [0u8; 64];
        let mut iov = libc::iovec {
            iov_base: data.as_mut_ptr().cast(),
            iov_len: data.len(),
        };
        let mut control = [0u64; 64];
        // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        let flags = libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT;
        // SAFETY: msg describes valid buffers for the duration of the call.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, flags) };
        if n < 0 {
            return;
        }
        if let Some(stamp) = stamp_of(&msg) {
            if out.len() < max {
                out.push(stamp);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn drain(_sock: &impl AsRawFd, _out: &mut Vec<(u32, u64)>, _max: usize) {}

/// The (datagram number, stamp) of one error-queue message: the `SCM_TIMESTAMPING` software
/// stamp and the number from the extended error of origin `SO_EE_ORIGIN_TIMESTAMPING`.
#[cfg(target_os = "linux")]
fn stamp_of(msg: &libc::msghdr) -> Option<(u32, u64)> {
    const SO_EE_ORIGIN_TIMESTAMPING: u8 = 4;
    let (mut id, mut ns) = (None, None);
    // SAFETY: walking the control messages the kernel wrote, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            let h = &*c;
            let data = libc::CMSG_DATA(c);
            if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_TIMESTAMPING {
                let ts = std::ptr::read_unaligned(data as *const libc::timespec);
                if ts.tv_sec > 0 {
                    ns = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
            } else if (h.cmsg_level == libc::SOL_IP && h.cmsg_type == libc::IP_RECVERR)
                || (h.cmsg_level == libc::SOL_IPV6 && h.cmsg_type == libc::IPV6_RECVERR)
            {
                let e = std::ptr::read_unaligned(data as *const libc::sock_extended_err);
                if e.ee_errno == libc::ENOMSG as u32 && e.ee_origin == SO_EE_ORIGIN_TIMESTAMPING {
                    id = Some(e.ee_data);
                }
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    Some((id?, ns?))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn each_datagram_sent_gets_a_numbered_stamp() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        a.connect(b.local_addr().unwrap()).unwrap();
        if !enable(&a) {
            eprintln!("skipping: no SO_TIMESTAMPING transmit stamps here");
            return;
        }
        let before = crate::timestamp::realtime_ns();
        for _ in 0..5 {
            a.send(&[7u8; 100]).unwrap();
        }
        let after = crate::timestamp::realtime_ns();
        let mut got = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while got.len() < 4 && std::time::Instant::now() < deadline {
            drain(&a, &mut got, 4);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // Bounded: four kept of five.
        assert_eq!(got.len(), 4, "{got:?}");
        let ids: Vec<u32> = got.iter().map(|g| g.0).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        assert!(
            got.iter().all(|g| (before..=after).contains(&g.1)),
            "{got:?}"
        );
        // The datagrams themselves arrived unharmed.
        let mut buf = [0u8; 200];
        assert_eq!(b.recv(&mut buf).unwrap(), 100);
    }
}
