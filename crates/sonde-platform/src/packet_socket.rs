//! A packet socket (AF_PACKET, SOCK_DGRAM) on one interface: every frame of one EtherType
//! that crosses it, from its network header on, with a read timeout. What the benchmarks'
//! departure meter and the tests that check bits on the wire (flow labels) read. Needs root
//! (CAP_NET_RAW).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// EtherType of IPv4.
pub const ETH_P_IP: u16 = 0x0800;
/// EtherType of IPv6.
pub const ETH_P_IPV6: u16 = 0x86DD;

/// Opens a packet socket on `iface` for `ethertype`, reads timing out after `timeout`.
///
/// # Errors
/// The OS error (EPERM without CAP_NET_RAW), or "no interface" for an unknown name.
#[cfg(target_os = "linux")]
pub fn open(iface: &str, ethertype: u16, timeout: Duration) -> io::Result<OwnedFd> {
    let name = std::ffi::CString::new(iface).map_err(io::Error::other)?;
    // SAFETY: socket(2) returns a new descriptor, owned at once by OwnedFd.
    let fd = unsafe {
        let raw = libc::socket(
            libc::AF_PACKET,
            libc::SOCK_DGRAM,
            i32::from(ethertype.to_be()),
        );
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        OwnedFd::from_raw_fd(raw)
    };
    // SAFETY: if_nametoindex reads the C string this function owns.
    let index = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if index == 0 {
        return Err(io::Error::other(format!("no interface {iface}")));
    }
    // SAFETY: sockaddr_ll is plain data; bind reads `size_of` bytes of it.
    let rc = unsafe {
        let mut sll: libc::sockaddr_ll = std::mem::zeroed();
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ethertype.to_be();
        sll.sll_ifindex = index as i32;
        libc::bind(
            std::os::fd::AsRawFd::as_raw_fd(&fd),
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as u32,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let tv = libc::timeval {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: `tv` is alive for the call, which reads its size.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&tv as *const libc::timeval).cast::<u8>(),
            std::mem::size_of::<libc::timeval>(),
        )
    };
    super::sockopt::set_raw(&fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, bytes)?;
    Ok(fd)
}

#[cfg(not(target_os = "linux"))]
pub fn open(_iface: &str, _ethertype: u16, _timeout: Duration) -> io::Result<OwnedFd> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "packet sockets are Linux-only",
    ))
}
