//! One UDP flow: a connected socket, its counters, and (echo) the ledger of its requests.

use super::probe::{self, Probe};
use crate::chargen::Pattern;
use mio::net::UdpSocket;
use sonde_stats::stress::model::StressMode;
use sonde_stats::stress::udp::{EchoFigures, EchoLedger, RttAccumulator};
use std::io::{self, ErrorKind};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

/// Datagrams read per flow per readiness, so one busy flow cannot starve the others (mio is
/// edge-triggered: a flow left with datagrams waiting is read again at its next event, and
/// each request brings at most one reply, so it gets one).
const READ_BURST: usize = 256;

pub(super) struct Flow {
    sock: UdpSocket,
    id: u32,
    pub sent_bytes: u64,
    pub received_bytes: u64,
    pub sent_datagrams: u64,
    pub received_datagrams: u64,
    /// Echo: bytes that came back different from what was sent.
    pub mismatched: u64,
    /// The first receive error (an ICMP port unreachable shows here).
    pub error: Option<String>,
    /// Replies longer than the request that asked for them (amplification), and the longest
    /// reply seen.
    pub oversized_replies: u64,
    pub largest_reply: u64,
    /// Payload bytes of each request.
    request_len: usize,
    ledger: EchoLedger,
}

impl Flow {
    /// A non-blocking socket on an ephemeral port, connected to `to` (so only its replies
    /// arrive, and an ICMP port unreachable is reported back), for requests of `request_len`
    /// bytes.
    pub fn open(to: SocketAddr, id: u32, request_len: usize) -> io::Result<Self> {
        let any: SocketAddr = if to.is_ipv4() {
            (Ipv4Addr::UNSPECIFIED, 0).into()
        } else {
            (Ipv6Addr::UNSPECIFIED, 0).into()
        };
        let sock = UdpSocket::bind(any)?;
        sock.connect(to)?;
        Ok(Self {
            sock,
            id,
            sent_bytes: 0,
            received_bytes: 0,
            sent_datagrams: 0,
            received_datagrams: 0,
            mismatched: 0,
            error: None,
            oversized_replies: 0,
            largest_reply: 0,
            request_len,
            ledger: EchoLedger::new(),
        })
    }

    pub fn socket_mut(&mut self) -> &mut UdpSocket {
        &mut self.sock
    }

    /// Sends one request: echo numbers it, the others send the pattern as it is.
    pub fn send(
        &mut self,
        mode: StressMode,
        req: &mut [u8],
        pattern: &Pattern,
        sent_ns: u64,
    ) -> io::Result<()> {
        fill(req, pattern);
        let seq = if mode == StressMode::Echo {
            let seq = self.ledger.sent_count();
            Probe {
                flow: self.id,
                seq,
                sent_ns,
            }
            .emit(req);
            Some(seq)
        } else {
            None
        };
        let n = self.sock.send(req)?;
        if seq.is_some() {
            self.ledger.sent();
        }
        self.sent_datagrams += 1;
        self.sent_bytes += n as u64;
        Ok(())
    }

    /// Reads what is waiting (up to [`READ_BURST`] datagrams).
    pub fn read_all(
        &mut self,
        mode: StressMode,
        buf: &mut [u8],
        pattern: &Pattern,
        now_ns: u64,
        rtt: &mut RttAccumulator,
    ) {
        for _ in 0..READ_BURST {
            let n = match self.sock.recv(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.error.get_or_insert_with(|| e.to_string());
                    return;
                }
            };
            self.received_datagrams += 1;
            self.received_bytes += n as u64;
            self.largest_reply = self.largest_reply.max(n as u64);
            if n > self.request_len {
                self.oversized_replies += 1;
            }
            if mode == StressMode::Echo {
                self.echo_reply(buf.get(..n).unwrap_or(&[]), pattern, now_ns, rtt);
            }
        }
    }

    fn echo_reply(&mut self, d: &[u8], pattern: &Pattern, now_ns: u64, rtt: &mut RttAccumulator) {
        let Some(p) = Probe::parse(d).filter(|p| p.flow == self.id) else {
            self.ledger.received(u64::MAX);
            self.mismatched += d.len() as u64;
            return;
        };
        let reply = self.ledger.received(p.seq);
        if reply.counts() {
            rtt.record(now_ns.saturating_sub(p.sent_ns) as i64);
        }
        let body = d.get(probe::LEN..).unwrap_or(&[]);
        let want = pattern.at(0).get(probe::LEN..).unwrap_or(&[]);
        self.mismatched += differing(body, want);
    }

    pub fn echo_figures(&self) -> EchoFigures {
        self.ledger.summary()
    }
}

/// The request's bytes: the chargen pattern (echo overwrites the start with its header).
fn fill(req: &mut [u8], pattern: &Pattern) {
    let p = pattern.at(0);
    let n = req.len().min(p.len());
    if let (Some(d), Some(s)) = (req.get_mut(..n), p.get(..n)) {
        d.copy_from_slice(s);
    }
}

/// Bytes of `got` that differ from `want`, a length difference counting in full.
fn differing(got: &[u8], want: &[u8]) -> u64 {
    let diff = got.iter().zip(want).filter(|(a, b)| a != b).count();
    (diff + got.len().abs_diff(want.len())) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_counts_changed_and_missing_bytes() {
        assert_eq!(differing(b"abc", b"abc"), 0);
        assert_eq!(differing(b"abx", b"abc"), 1);
        assert_eq!(differing(b"ab", b"abc"), 1);
    }
}
