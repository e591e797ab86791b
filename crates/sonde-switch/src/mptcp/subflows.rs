//! The subflows of an MPTCP socket, from its `SOL_MPTCP` socket options: each one's local and
//! remote address (`MPTCP_SUBFLOW_ADDRS`) and TCP counters (`MPTCP_TCPINFO`), in the same
//! order. Both take a `struct mptcp_subflow_data` header followed by an array whose element
//! size the caller states; the kernel says how many subflows there are.

use crate::stats::Family;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::RawFd;

const SOL_MPTCP: libc::c_int = 284;
const MPTCP_TCPINFO: libc::c_int = 2;
const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;
/// `struct mptcp_subflow_data`: size_subflow_data, num_subflows, size_kernel, size_user.
const HEADER: usize = 16;
/// `struct mptcp_subflow_addrs`: two `sockaddr_storage`s.
const ADDRS: usize = 256;
/// More subflows than this are not read (the kernel's own limit is 8).
const MAX_SUBFLOWS: usize = 8;

/// One subflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subflow {
    pub local: IpAddr,
    pub remote: IpAddr,
    /// Bytes this end sent on it that the peer acknowledged.
    pub bytes_acked: u64,
}

impl Subflow {
    /// The family it runs over (an IPv4-mapped IPv6 address counts as IPv4).
    pub fn family(&self) -> Family {
        match self.remote {
            IpAddr::V4(_) => Family::V4,
            IpAddr::V6(_) => Family::V6,
        }
    }
}

/// Runs one array-returning `SOL_MPTCP` option; the element bytes, how many there are, and
/// the size of each (the smaller of the kernel's and the caller's).
fn array(fd: RawFd, opt: libc::c_int, elem: usize) -> std::io::Result<(Vec<u8>, usize, usize)> {
    let mut buf = vec![0u8; HEADER + elem * MAX_SUBFLOWS];
    buf[0..4].copy_from_slice(&(HEADER as u32).to_ne_bytes());
    buf[12..16].copy_from_slice(&(elem as u32).to_ne_bytes());
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf has len writable bytes; the kernel writes at most len and updates it.
    let r = unsafe { libc::getsockopt(fd, SOL_MPTCP, opt, buf.as_mut_ptr().cast(), &mut len) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let word = |i: usize| {
        let mut b = [0u8; 4];
        b.copy_from_slice(buf.get(i..i + 4).unwrap_or(&[0; 4]));
        u32::from_ne_bytes(b) as usize
    };
    let (num, user) = (word(4), word(12));
    let stride = if user == 0 { elem } else { user };
    let n = num
        .min(MAX_SUBFLOWS)
        .min((len as usize).saturating_sub(HEADER) / stride.max(1));
    buf.drain(..HEADER);
    Ok((buf, n, stride))
}

/// The address in a `sockaddr_storage` (IPv4-mapped IPv6 addresses as IPv4).
fn addr(b: &[u8]) -> Option<IpAddr> {
    let family = u16::from_ne_bytes([*b.first()?, *b.get(1)?]);
    match libc::c_int::from(family) {
        libc::AF_INET => {
            let o: [u8; 4] = b.get(4..8)?.try_into().ok()?;
            Some(IpAddr::V4(Ipv4Addr::from(o)))
        }
        libc::AF_INET6 => {
            let o: [u8; 16] = b.get(8..24)?.try_into().ok()?;
            let v6 = Ipv6Addr::from(o);
            Some(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4))
        }
        _ => None,
    }
}

/// The subflows of the MPTCP socket `fd`.
///
/// # Errors
/// The options failed (EOPNOTSUPP: the connection fell back to plain TCP).
pub fn subflows(fd: RawFd) -> std::io::Result<Vec<Subflow>> {
    let (addrs, n, _) = array(fd, MPTCP_SUBFLOW_ADDRS, ADDRS)?;
    let (infos, m, info_len) = array(fd, MPTCP_TCPINFO, std::mem::size_of::<libc::tcp_info>())?;
    let acked_at = std::mem::offset_of!(libc::tcp_info, tcpi_bytes_acked);
    let mut out = Vec::new();
    for i in 0..n {
        let e = addrs.get(i * ADDRS..(i + 1) * ADDRS).unwrap_or(&[]);
        let (Some(local), Some(remote)) = (addr(e), e.get(128..).and_then(addr)) else {
            continue;
        };
        let bytes_acked = (i < m && acked_at + 8 <= info_len)
            .then(|| infos.get(i * info_len + acked_at..i * info_len + acked_at + 8))
            .flatten()
            .and_then(|b| b.try_into().ok())
            .map_or(0, u64::from_ne_bytes);
        out.push(Subflow {
            local,
            remote,
            bytes_acked,
        });
    }
    Ok(out)
}

/// Whether the connection on `fd` still speaks MPTCP (has not fallen back to plain TCP).
pub fn is_mptcp(fd: RawFd) -> bool {
    let mut len: libc::socklen_t = 0;
    // SAFETY: a zero length asks only whether the option applies; nothing is written.
    let r = unsafe { libc::getsockopt(fd, SOL_MPTCP, 1, std::ptr::null_mut(), &mut len) };
    r == 0
}
