//! TCP_INFO: retransmits, congestion window, RTT and path MTU of a sending TCP socket.

use std::os::fd::AsRawFd;

/// Raw, cumulative TCP_INFO figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpInfo {
    pub total_retrans: u64,
    pub snd_cwnd_bytes: u64,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub pmtu: u32,
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
    Some(TcpInfo {
        total_retrans: u64::from(info.tcpi_total_retrans),
        snd_cwnd_bytes: u64::from(info.tcpi_snd_cwnd) * u64::from(info.tcpi_snd_mss),
        rtt_us: info.tcpi_rtt,
        rttvar_us: info.tcpi_rttvar,
        pmtu: info.tcpi_pmtu,
    })
}

#[cfg(not(target_os = "linux"))]
pub fn read(_sock: &impl AsRawFd) -> Option<TcpInfo> {
    None
}
