//! The UDP side of the services: one datagram in, at most one datagram out, never larger.

use super::service::{Service, ServicesStats};
use crate::chargen::Pattern;
use mio::net::UdpSocket;
use sonde_platform::pktinfo;
use sonde_stats::source_limit::SourceLimiter;
use std::io::ErrorKind;
use std::sync::OnceLock;
use std::time::Duration;

/// RFC 864: a chargen datagram carries 0 to 512 characters.
const CHARGEN_MAX: usize = 512;
/// Datagrams handled per call, so one busy socket cannot starve the others. mio is
/// edge-triggered, so a socket left with datagrams waiting is marked to be served again.
const BURST: usize = 4096;

/// Answers waiting datagrams on `sock` as `service` asks, within `limiter`'s budget. True
/// when its turn ended with datagrams possibly still waiting.
pub(super) fn serve(
    service: Service,
    sock: &UdpSocket,
    limiter: &mut SourceLimiter,
    now: Duration,
    stats: &mut ServicesStats,
) -> bool {
    static PATTERN: OnceLock<Pattern> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| Pattern::new(CHARGEN_MAX));
    let mut buf = [0u8; 65536];
    for _ in 0..BURST {
        // The destination too: the answer leaves from the address the request came to, on a
        // host with several (sonde_platform::pktinfo).
        let (len, src, dst) = match pktinfo::recv(sock, &mut buf) {
            Ok(r) => r,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return false,
        };
        stats.udp_requests += 1;
        let reply = match service {
            Service::Discard => continue,
            Service::Echo => buf.get(..len),
            // Never more than the request asked with: no amplification.
            Service::Chargen => pattern.at(0).get(..len.min(CHARGEN_MAX)),
        };
        if !limiter.allow(src.ip(), now) {
            stats.udp_rate_limited += 1;
            continue;
        }
        if let Some(r) = reply {
            if pktinfo::send(sock, r, src, dst).is_ok() {
                stats.udp_replies += 1;
            }
        }
    }
    true
}
