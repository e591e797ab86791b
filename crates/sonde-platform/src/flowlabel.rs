//! The IPv6 flow label of a client's data sockets (`-L`, as iperf3's): Linux hands out labels
//! through a per-socket manager (IPV6_FLOWLABEL_MGR) and puts one on the wire only when the
//! socket asks (IPV6_FLOWINFO_SEND) and the destination address carries it (`sin6_flowinfo`).

use std::io;
use std::net::{SocketAddr, SocketAddrV6};
use std::os::fd::AsRawFd;

/// The 20 bits of a flow label.
pub const MAX_FLOW_LABEL: u32 = 0x000F_FFFF;

// From linux/in6.h; the libc crate does not name them.
const IPV6_FLOWLABEL_MGR: libc::c_int = 32;
const IPV6_FLOWINFO_SEND: libc::c_int = 33;
const IPV6_FL_A_GET: u8 = 0;
const IPV6_FL_F_CREATE: u16 = 1;
const IPV6_FL_S_ANY: u8 = 255;

/// `struct in6_flowlabel_req`.
#[repr(C)]
struct FlowLabelRequest {
    dst: [u8; 16],
    label_be: u32,
    action: u8,
    share: u8,
    flags: u16,
    expires: u16,
    linger: u16,
    pad: u32,
}

/// Reserves `label` for traffic to `dst` on `sock` and has the socket send it; returns the
/// address to connect to (the label in its flow information).
///
/// # Errors
/// `InvalidInput` for a label above 20 bits or an IPv4 destination; the OS error otherwise.
pub fn set_flow_label(sock: &impl AsRawFd, dst: SocketAddr, label: u32) -> io::Result<SocketAddr> {
    let SocketAddr::V6(v6) = dst else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a flow label (-L) needs IPv6: the server was reached over IPv4 (use -6)",
        ));
    };
    if label > MAX_FLOW_LABEL {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("flow label {label} is wider than 20 bits (max {MAX_FLOW_LABEL})"),
        ));
    }
    let req = FlowLabelRequest {
        dst: v6.ip().octets(),
        label_be: label.to_be(),
        action: IPV6_FL_A_GET,
        share: IPV6_FL_S_ANY,
        flags: IPV6_FL_F_CREATE,
        expires: 0,
        linger: 0,
        pad: 0,
    };
    // SAFETY: `req` is a plain repr(C) value alive for the call; the kernel reads its size.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            (&req as *const FlowLabelRequest).cast::<u8>(),
            std::mem::size_of::<FlowLabelRequest>(),
        )
    };
    super::sockopt::set_raw(sock, libc::IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, bytes)?;
    let on = 1 as libc::c_int;
    super::sockopt::set_raw(
        sock,
        libc::IPPROTO_IPV6,
        IPV6_FLOWINFO_SEND,
        &on.to_ne_bytes(),
    )?;
    Ok(SocketAddr::V6(SocketAddrV6::new(
        *v6.ip(),
        v6.port(),
        label.to_be(),
        v6.scope_id(),
    )))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_request_has_the_kernels_layout_and_bad_labels_are_refused() {
        assert_eq!(std::mem::size_of::<FlowLabelRequest>(), 32);
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let v4 = "127.0.0.1:9".parse().unwrap();
        assert!(set_flow_label(&sock, v4, 1).is_err());
        let v6 = "[::1]:9".parse().unwrap();
        let wide = set_flow_label(&sock, v6, MAX_FLOW_LABEL + 1).unwrap_err();
        assert_eq!(wide.kind(), io::ErrorKind::InvalidInput);
    }
}
