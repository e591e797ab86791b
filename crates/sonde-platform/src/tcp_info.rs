//! TCP_INFO: retransmits, congestion window, RTT, path MTU, the peer's receive window and the
//! reordering count of a sending TCP socket.
//!
//! The kernel fills only as much of `struct tcp_info` as it knows; fields past the length it
//! returns (`tcpi_reord_seen` before Linux 4.19, `tcpi_snd_wnd` before 5.4) are reported as
//! absent, not as zero.

use std::os::fd::AsRawFd;

/// Raw, cumulative TCP_INFO figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    pub total_retrans: u64,
    pub snd_cwnd_bytes: u64,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub pmtu: u32,
    /// `tcpi_snd_wnd`: the peer's advertised receive window, bytes.
    pub snd_wnd: Option<u32>,
    /// `tcpi_reord_seen`: reordering events seen, cumulative.
    pub reord_seen: Option<u32>,
}

/// Reads TCP_INFO; None where the OS does not provide it or the call fails.
#[cfg(target_os = "linux")]
pub fn read(sock: &impl AsRawFd) -> Option<TcpInfo> {
    // SAFETY: getsockopt fills at most `len` bytes of the zeroed struct we own.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return None;
    }
    let filled = |end: usize| end <= len as usize;
    let u32_end = std::mem::size_of::<u32>();
    Some(TcpInfo {
        total_retrans: u64::from(info.tcpi_total_retrans),
        snd_cwnd_bytes: u64::from(info.tcpi_snd_cwnd) * u64::from(info.tcpi_snd_mss),
        rtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        pmtu: info.tcpi_pmtu,
        snd_wnd: filled(std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + u32_end)
            .then_some(info.tcpi_snd_wnd),
        reord_seen: filled(std::mem::offset_of!(libc::tcp_info, tcpi_reord_seen) + u32_end)
            .then_some(info.tcpi_reord_seen),
    })
}

#[cfg(not(target_os = "linux"))]
pub fn read(_sock: &impl AsRawFd) -> Option<TcpInfo> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_connected_socket_reports_the_peer_window_and_reordering() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(&[7u8; 100_000]).unwrap();
        let mut buf = vec![0u8; 100_000];
        server.read_exact(&mut buf).unwrap();
        let info = read(&client).unwrap();
        // This kernel (Linux 5.4+) has both fields; loopback advertises a window and does not
        // reorder.
        assert!(info.snd_wnd.is_some_and(|w| w > 0), "{info:?}");
        assert_eq!(info.reord_seen, Some(0), "{info:?}");
        assert!(info.pmtu > 0 && info.snd_cwnd_bytes > 0, "{info:?}");
    }
}
