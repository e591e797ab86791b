//! Measures how evenly a sender spaces its UDP datagrams, from the receive timestamps the
//! kernel puts on every frame of one interface (a packet socket, so it sees the traffic of
//! any tool without taking its port). Used by `bench/pacing.sh` inside a network namespace:
//! on a veth pair the peer's receive timestamp is taken while the sender's system call runs,
//! so receive gaps are departure gaps.
//!
//! ```text
//! departure_gaps IFACE PORT SECS PPS [LEN]
//! ```
//! Counts IPv4 UDP datagrams to PORT (with LEN bytes of UDP payload, when given) for SECS
//! seconds and prints one JSON line: datagrams, rate, and the error of each gap against the
//! ideal 1/PPS (p50, p99, max, in µs), plus the share of gaps under a quarter of the ideal
//! (back-to-back departures).

use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: departure_gaps IFACE PORT SECS PPS [LEN]";
    let (Some(iface), Some(port), Some(secs), Some(pps)) = (
        args.get(1),
        args.get(2).and_then(|p| p.parse::<u16>().ok()),
        args.get(3).and_then(|s| s.parse::<f64>().ok()),
        args.get(4).and_then(|s| s.parse::<f64>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let len = args.get(5).and_then(|l| l.parse::<usize>().ok());
    match capture(iface, port, len, Duration::from_secs_f64(secs)) {
        Ok(stamps) => println!("{}", summary(&stamps, pps)),
        Err(e) => {
            eprintln!("departure_gaps: {e}");
            std::process::exit(1);
        }
    }
}

/// Receive times (ns) of the matching datagrams.
fn capture(iface: &str, port: u16, len: Option<usize>, dur: Duration) -> std::io::Result<Vec<u64>> {
    let fd = open(iface)?;
    let mut stamps = Vec::new();
    let mut buf = vec![0u8; 65_536];
    let mut ctrl = [0u64; 16];
    let end = Instant::now() + dur;
    while Instant::now() < end {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        // SAFETY: msghdr is plain data; zeroed then pointed at buffers we own.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = ctrl.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&ctrl);
        // SAFETY: fd is an open socket and msg points at live buffers.
        let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
            ) {
                continue;
            }
            return Err(e);
        }
        let pkt = &buf[..n as usize];
        let count = datagrams(pkt, port, len);
        if let Some(t) = timestamp(&msg).filter(|_| count > 0) {
            stamps.extend(std::iter::repeat_n(t, count));
        }
    }
    // SAFETY: fd is ours.
    unsafe { libc::close(fd) };
    Ok(stamps)
}

fn open(iface: &str) -> std::io::Result<i32> {
    use std::os::fd::IntoRawFd;
    let fd = sonde_platform::packet_socket::open(
        iface,
        sonde_platform::packet_socket::ETH_P_IP,
        Duration::from_millis(200),
    )?
    .into_raw_fd();
    // SAFETY: options on the descriptor just opened (closed by the caller).
    unsafe {
        let on: libc::c_int = 1;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            4,
        );
        let big: libc::c_int = 64 << 20;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&big as *const libc::c_int).cast(),
            4,
        );
    }
    Ok(fd)
}

/// How many datagrams to `port` (each with `len` bytes of payload, when given) an IPv4 packet
/// carries: one, or several when it is a UDP GSO super-packet that crossed the veth whole
/// (its datagrams then left back to back, in one system call).
fn datagrams(ip: &[u8], port: u16, len: Option<usize>) -> usize {
    let Some(&vihl) = ip.first() else {
        return 0;
    };
    let ihl = usize::from(vihl & 0x0f) * 4;
    if vihl >> 4 != 4 || ip.get(9) != Some(&17) || ip.len() < ihl + 8 {
        return 0;
    }
    let udp = &ip[ihl..];
    let dport = u16::from_be_bytes([udp[2], udp[3]]);
    let ulen = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
    match len {
        _ if dport != port => 0,
        None => 1,
        // A GSO super-packet's UDP length is either the first datagram's or the whole.
        Some(l) if l > 0 && ulen > 8 && (ulen - 8) % l == 0 => (udp.len() - 8).div_ceil(l),
        Some(_) => 0,
    }
}

fn timestamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walking the control messages the kernel wrote into our buffer.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// JSON summary of the gaps between `stamps` against an ideal of 1/`pps`.
fn summary(stamps: &[u64], pps: f64) -> String {
    let ideal = 1e9 / pps;
    let mut errs: Vec<f64> = stamps
        .windows(2)
        .map(|w| (w[1].saturating_sub(w[0]) as f64 - ideal).abs() / 1000.0)
        .collect();
    let bunched = stamps
        .windows(2)
        .filter(|w| (w[1].saturating_sub(w[0]) as f64) < ideal / 4.0)
        .count();
    errs.sort_by(f64::total_cmp);
    let q = |p: f64| {
        errs.get(((errs.len().saturating_sub(1)) as f64 * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let span = match (stamps.first(), stamps.last()) {
        (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
        _ => f64::NAN,
    };
    format!(
        "{{\"datagrams\": {}, \"pps\": {:.0}, \"ideal_gap_us\": {:.2}, \"err_p50_us\": {:.2}, \"err_p99_us\": {:.2}, \"err_max_us\": {:.1}, \"back_to_back_pct\": {:.2}}}",
        stamps.len(),
        stamps.len().saturating_sub(1) as f64 / span,
        ideal / 1000.0,
        q(0.5),
        q(0.99),
        q(1.0),
        100.0 * bunched as f64 / errs.len().max(1) as f64
    )
}
