//! AF_PACKET sockets bound to one interface, read and written in batches with
//! `recvmmsg`/`sendmmsg`.
//!
//! This is the only place the forwarder touches the OS's packet I/O. A receiving socket is
//! bound with `ETH_P_ALL` and `PACKET_IGNORE_OUTGOING` (so it never reads back the frames the
//! other direction writes on the same interface) and a large receive buffer to absorb bursts
//! while the thread sleeps; a sending socket is bound with protocol 0 (it receives nothing)
//! and `PACKET_QDISC_BYPASS` (the box's own interfaces have no qdisc to go through). Batches
//! Receiving sockets ask for `SO_TIMESTAMPNS`: the time the frame reached the interface,
//! which the forwarder delays from, rather than the (later) time it got round to reading it.
//! Batches of [`BATCH`] frames amortise the system calls: at 250 k frames/s one call per frame would
//! cost more than the impairment chain itself.

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use sonde_emu::Packet;

/// Frames per `recvmmsg`/`sendmmsg` call.
pub const BATCH: usize = 64;

/// Receive buffer of one slot: any frame that fits the interface (64 KiB covers a frame that
/// an offload left aggregated; such frames are counted and dropped, see `IoStats`).
const SLOT: usize = 65_536;

const SOL_PACKET: libc::c_int = 263;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;

/// One AF_PACKET socket bound to one interface.
#[derive(Debug)]
pub struct PacketSocket {
    fd: OwnedFd,
}

fn setopt(
    fd: &OwnedFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: a valid fd and a c_int option value of the right size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl PacketSocket {
    /// A socket on interface `ifname` of the calling thread's namespace: receiving every
    /// incoming frame when `rx`, else sending only.
    ///
    /// # Errors
    /// The OS error of the step that failed.
    pub fn open(ifname: &str, rx: bool) -> io::Result<PacketSocket> {
        let cname = std::ffi::CString::new(ifname)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in interface name"))?;
        // SAFETY: a NUL-terminated string.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        // Protocol 0 until bound: a socket created with ETH_P_ALL would see every interface's
        // frames before bind narrows it to one.
        // SAFETY: plain socket(2).
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let protocol = if rx {
            (libc::ETH_P_ALL as u16).to_be()
        } else {
            0
        };
        if rx {
            setopt(&fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
            setopt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20)
                .or_else(|_| setopt(&fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 16 << 20))?;
            // The kernel's arrival time of each frame; without it, frames simply carry none.
            let _ = setopt(&fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1);
        } else {
            // Best effort: without it frames still go out, through the (empty) qdisc.
            let _ = setopt(&fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1);
            setopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 4 << 20)
                .or_else(|_| setopt(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF, 4 << 20))?;
        }
        // SAFETY: sockaddr_ll is plain data; zero is a valid starting value.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = protocol;
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: a valid fd and a sockaddr_ll of the stated size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(PacketSocket { fd })
    }

    /// The raw fd, for `ppoll`.
    pub fn raw_fd(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }
}

/// Receive buffers for one socket.
pub struct RxBatch {
    bufs: Vec<Vec<u8>>,
    ctrl: Vec<[u64; 8]>,
    iovs: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

impl std::fmt::Debug for RxBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RxBatch")
            .field("slots", &self.bufs.len())
            .finish()
    }
}

impl Default for RxBatch {
    fn default() -> Self {
        RxBatch::new()
    }
}

impl RxBatch {
    /// [`BATCH`] slots of 64 KiB.
    pub fn new() -> RxBatch {
        let mut bufs: Vec<Vec<u8>> = (0..BATCH).map(|_| vec![0u8; SLOT]).collect();
        let iovs: Vec<libc::iovec> = bufs
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr().cast(),
                iov_len: b.len(),
            })
            .collect();
        // SAFETY: mmsghdr is plain data; the pointers are set in `recv` before each use.
        let msgs = (0..BATCH)
            .map(|_| unsafe { zeroed::<libc::mmsghdr>() })
            .collect();
        RxBatch {
            bufs,
            ctrl: vec![[0; 8]; BATCH],
            iovs,
            msgs,
        }
    }

    /// Reads up to [`BATCH`] frames without blocking; calls `each(frame, truncated, arrival)`
    /// per frame, `arrival` being the kernel's `CLOCK_REALTIME` receive time in ns when it
    /// gave one. Returns how many were read (0 when none was waiting).
    ///
    /// # Errors
    /// A receive error other than "nothing waiting".
    pub fn recv(
        &mut self,
        sock: &PacketSocket,
        mut each: impl FnMut(&[u8], bool, Option<u64>),
    ) -> io::Result<usize> {
        for ((m, iov), ctrl) in self
            .msgs
            .iter_mut()
            .zip(self.iovs.iter_mut())
            .zip(self.ctrl.iter_mut())
        {
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            m.msg_hdr.msg_name = std::ptr::null_mut();
            m.msg_hdr.msg_namelen = 0;
            m.msg_hdr.msg_control = ctrl.as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = size_of::<[u64; 8]>();
            m.msg_hdr.msg_flags = 0;
            m.msg_len = 0;
        }
        // SAFETY: every header points at a live iovec over a live buffer of its stated size.
        let n = unsafe {
            libc::recvmmsg(
                sock.raw_fd(),
                self.msgs.as_mut_ptr(),
                BATCH as libc::c_uint,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let n = n as usize;
        for (m, buf) in self.msgs.iter().zip(&self.bufs).take(n) {
            let len = m.msg_len as usize;
            let truncated = len > buf.len() || m.msg_hdr.msg_flags & libc::MSG_TRUNC != 0;
            each(
                &buf[..len.min(buf.len())],
                truncated,
                rx_timestamp(&m.msg_hdr),
            );
        }
        Ok(n)
    }
}

/// The `SCM_TIMESTAMPNS` of a received message, in ns.
fn rx_timestamp(hdr: &libc::msghdr) -> Option<u64> {
    // SAFETY: the kernel filled msg_control up to msg_controllen; CMSG_FIRSTHDR/NXTHDR stay
    // within it and CMSG_DATA of a timestamp message holds a timespec (read unaligned).
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                return Some((ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
    }
    None
}

/// Writes `pkts` to `sock`, in batches. Returns (frames sent, frames the kernel refused).
pub fn send_all(sock: &PacketSocket, pkts: &[Packet]) -> (usize, usize) {
    let (mut sent, mut refused) = (0, 0);
    let mut rest = pkts;
    while !rest.is_empty() {
        let chunk = &rest[..rest.len().min(BATCH)];
        let mut iovs: Vec<libc::iovec> = chunk
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.data.as_ptr() as *mut libc::c_void,
                iov_len: p.data.len(),
            })
            .collect();
        let mut msgs: Vec<libc::mmsghdr> = iovs
            .iter_mut()
            .map(|iov| {
                // SAFETY: mmsghdr is plain data; zero means no name, no control.
                let mut m: libc::mmsghdr = unsafe { zeroed() };
                m.msg_hdr.msg_iov = iov;
                m.msg_hdr.msg_iovlen = 1;
                m
            })
            .collect();
        // SAFETY: each header points at an iovec over a live packet buffer; the kernel only
        // reads through iov_base for a send.
        let n = unsafe {
            libc::sendmmsg(
                sock.raw_fd(),
                msgs.as_mut_ptr(),
                msgs.len() as libc::c_uint,
                0,
            )
        };
        if n <= 0 {
            let e = io::Error::last_os_error();
            if n < 0 && e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            // The first frame was refused (ENOBUFS, ENETDOWN, too large): drop it, go on.
            refused += 1;
            rest = &rest[1..];
        } else {
            sent += n as usize;
            rest = &rest[n as usize..];
        }
    }
    (sent, refused)
}
