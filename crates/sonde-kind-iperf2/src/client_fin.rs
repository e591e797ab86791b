//! The end of an iperf 2 UDP test, as 2.1.8's client ends it: each stream sends its final
//! datagram (the next sequence number, negated), again and with the number one further on
//! every retry, until `iperf -s` answers with its server report (`server_report`), which is
//! the only view of the test the server ever sends. The report becomes that stream's
//! receiver view in the summary, the way the iperf3 server's results do for `--iperf3`.
//!
//! The wait is bounded: a final datagram every [`FIN_EVERY`], [`FIN_TRIES`] of them, then a
//! last period. A stream whose report never comes is [`Ending::Missing`], which the client
//! reports as a note (its own figures stand); only a port the kernel says nobody listens on
//! (ICMP port unreachable, and still no report) fails the test.

use crate::client_error::ClientError;
use sonde_proto::iperf2::server_report::ServerReport;
use sonde_proto::iperf2::udp::UdpDatagram;
use sonde_proto::iperf2::{Refusal, Timestamp};
use sonde_stats::interval::bits_per_second;
use sonde_stats::model::{EndView, UdpReceiveStats};
use sonde_stats::udp_rx::lost_percent;
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Time between two final datagrams of a stream.
pub const FIN_EVERY: Duration = Duration::from_millis(250);
/// Final datagrams a stream sends before it gives up on the report.
pub const FIN_TRIES: u32 = 10;
/// How long one look at a stream's socket waits.
const LOOK: Duration = Duration::from_millis(5);
/// Port-unreachable answers after which a stream stops waiting: one may be left over from
/// the test (a datagram that came before the server's socket was there), not three.
const REFUSALS: u32 = 3;

/// When a stream's final datagrams leave: the first at once, then one every [`FIN_EVERY`],
/// [`FIN_TRIES`] in all; the wait is over a period after the last.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FinSchedule {
    sent: u32,
}

impl FinSchedule {
    /// The try (from 0) due `elapsed` after the first, if one is due and any are left.
    pub fn due(&mut self, elapsed: Duration) -> Option<u32> {
        (self.sent < FIN_TRIES && elapsed >= FIN_EVERY * self.sent).then(|| {
            self.sent += 1;
            self.sent - 1
        })
    }

    /// Whether the wait is over at `elapsed`: every try sent and a period after the last.
    pub fn over(&self, elapsed: Duration) -> bool {
        self.sent >= FIN_TRIES && elapsed >= FIN_EVERY * FIN_TRIES
    }
}

/// The sequence number of try `k` after `last` data datagrams: the next number, negated,
/// one further on each retry.
pub fn fin_seq(last: u64, k: u32) -> i64 {
    let last = i64::try_from(last).unwrap_or(i64::MAX);
    -last.saturating_add(1 + i64::from(k))
}

/// How one stream's end went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The server's report, checked.
    Report(ServerReport),
    /// No report in the whole wait.
    Missing,
    /// A report sonde refuses (negative counts, microseconds of a second or more).
    Refused(Refusal),
}

/// One UDP stream to end: its socket (a clone of the one its worker sent on), the last
/// sequence number it sent, and the length of its datagrams.
pub struct FinStream {
    pub id: u32,
    pub sock: UdpSocket,
    pub last_seq: u64,
    pub len: usize,
}

/// The final datagram of try `k`: iperf 2's header, the client header, padding to `len`.
fn fin_datagram(s: &FinStream, k: u32, prefix: &[u8]) -> Vec<u8> {
    let now = Timestamp::from_ns(sonde_runtime_core::clock::now_ns());
    let mut out = Vec::with_capacity(s.len);
    UdpDatagram::new(fin_seq(s.last_seq, k), now).emit(&mut out);
    out.extend_from_slice(prefix);
    out.resize(out.len().max(s.len), 0);
    out
}

/// What one look at a stream's socket found.
enum Look {
    Nothing,
    Refused,
    Ended(Ending),
}

/// Reads what waits on `sock` (up to [`LOOK`]): a report ends the stream; anything else
/// (a stale datagram, an old server's acknowledgement) is skipped.
fn look(sock: &UdpSocket, id: u32) -> Result<Look, ClientError> {
    let mut buf = [0u8; 2048];
    match sock.recv(&mut buf) {
        Ok(n) => Ok(match ServerReport::parse(&buf[..n]) {
            Ok((r, _)) => Look::Ended(match r.check() {
                Ok(()) => Ending::Report(r),
                Err(why) => Ending::Refused(why),
            }),
            Err(_) => Look::Nothing,
        }),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(Look::Refused),
        Err(e) if sonde_runtime_core::error::is_timeout(&e) => Ok(Look::Nothing),
        Err(source) => Err(ClientError::FinIo { id, source }),
    }
}

/// Ends every stream and waits (bounded) for each one's report. Ctrl-C ends the wait; the
/// streams still waiting are then [`Ending::Missing`].
///
/// # Errors
/// [`ClientError::UdpRefused`] when a stream got no report and the kernel said nothing
/// listens on the server's port; [`ClientError::FinIo`] on another socket error.
pub fn exchange(
    streams: &[FinStream],
    prefix: &[u8],
    interrupt: &AtomicBool,
) -> Result<Vec<(u32, Ending)>, ClientError> {
    let io = |id| move |source| ClientError::FinIo { id, source };
    for s in streams {
        s.sock.set_read_timeout(Some(LOOK)).map_err(io(s.id))?;
    }
    let mut schedules = vec![FinSchedule::default(); streams.len()];
    let mut endings: Vec<Option<Ending>> = vec![None; streams.len()];
    let mut refused = vec![0u32; streams.len()];
    let t0 = Instant::now();
    while endings.iter().any(Option::is_none) && !interrupt.load(Ordering::Relaxed) {
        let elapsed = t0.elapsed();
        for (i, s) in streams.iter().enumerate() {
            if endings[i].is_some() {
                continue;
            }
            if let Some(k) = schedules[i].due(elapsed) {
                match s.sock.send(&fin_datagram(s, k, prefix)) {
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::ConnectionRefused => refused[i] += 1,
                    Err(e) => return Err(io(s.id)(e)),
                }
            }
            match look(&s.sock, s.id)? {
                Look::Ended(e) => endings[i] = Some(e),
                Look::Refused => refused[i] += 1,
                Look::Nothing if schedules[i].over(elapsed) => endings[i] = Some(Ending::Missing),
                Look::Nothing if refused[i] >= REFUSALS => endings[i] = Some(Ending::Missing),
                Look::Nothing => {}
            }
        }
    }
    let mut out = Vec::with_capacity(streams.len());
    for (i, s) in streams.iter().enumerate() {
        let ending = endings[i].take().unwrap_or(Ending::Missing);
        if ending == Ending::Missing && refused[i] > 0 && !interrupt.load(Ordering::Relaxed) {
            return Err(ClientError::UdpRefused {
                id: s.id,
                server: s
                    .sock
                    .peer_addr()
                    .map_or_else(|_| "?".into(), |a| a.to_string()),
            });
        }
        out.push((s.id, ending));
    }
    Ok(out)
}

/// A server report as the receiving end's view of its stream: the bytes and datagrams
/// `iperf -s` counted, its loss, reordering and jitter, over its own span (first datagram to
/// last).
pub fn server_view(r: &ServerReport) -> EndView {
    let secs = r.stop_us() as f64 / 1e6;
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    let (packets, lost) = (count(r.datagrams()), count(r.lost()));
    EndView {
        start: 0.0,
        end: secs,
        bytes: r.total_len(),
        bits_per_second: bits_per_second(r.total_len(), secs),
        tcp: None,
        udp_sent_packets: None,
        udp_received: Some(UdpReceiveStats {
            packets,
            lost,
            lost_percent: lost_percent(lost, packets),
            jitter_ms: r.jitter_us() as f64 / 1000.0,
            out_of_order: count(r.out_of_order()),
            duplicates: 0,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::iperf2::captures::{self, hex};

    #[test]
    fn finals_leave_every_250_ms_ten_times_then_the_wait_ends() {
        let mut s = FinSchedule::default();
        let ms = Duration::from_millis;
        assert_eq!(s.due(ms(0)), Some(0));
        assert_eq!(s.due(ms(10)), None);
        assert_eq!(s.due(ms(249)), None);
        assert_eq!(s.due(ms(250)), Some(1));
        let mut sent = 2;
        let mut t = 250;
        while t < 5000 {
            t += 10;
            if s.due(ms(t)).is_some() {
                sent += 1;
            }
        }
        assert_eq!(sent, FIN_TRIES);
        assert!(!s.over(ms(2499)));
        assert!(s.over(ms(2500)));
        assert!(!FinSchedule::default().over(ms(60_000)));
    }

    #[test]
    fn final_sequence_numbers_follow_iperf_2() {
        // 88 data datagrams: 2.1.8's first final datagram is -89 (captures::UDP_FINAL).
        assert_eq!(fin_seq(88, 0), -89);
        let (d, _) = UdpDatagram::parse(&hex(captures::UDP_FINAL)).unwrap();
        assert_eq!(d.seq(true), fin_seq(88, 0));
        assert_eq!(fin_seq(88, 3), -92);
        assert!(fin_seq(u64::MAX, FIN_TRIES) < 0);
    }

    #[test]
    fn a_report_is_the_servers_view() {
        let (r, _) = ServerReport::parse(&hex(captures::SERVER_REPORT)).unwrap();
        let v = server_view(&r);
        assert_eq!(v.bytes, 89 * 1470);
        assert!((v.end - 1.022_431).abs() < 1e-9);
        assert!((v.bits_per_second - 89.0 * 1470.0 * 8.0 / 1.022_431).abs() < 1e-6);
        let u = v.udp_received.unwrap();
        assert_eq!((u.packets, u.lost, u.out_of_order), (89, 0, 0));
        assert!((u.jitter_ms - 0.058).abs() < 1e-12);
        let (small, _) = ServerReport::parse(&hex(captures::SERVER_REPORT_LEN64)).unwrap();
        let u = server_view(&small).udp_received.unwrap();
        assert_eq!((u.packets, u.jitter_ms), (1956, 0.008));
    }

    #[test]
    fn a_datagram_carries_the_negated_number_and_the_request() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let s = FinStream {
            id: 1,
            sock,
            last_seq: 88,
            len: 100,
        };
        let d = fin_datagram(&s, 1, &[7; 60]);
        assert_eq!(d.len(), 100);
        assert_eq!(UdpDatagram::parse(&d).unwrap().0.seq(true), -90);
        assert_eq!(&d[16..76], &[7; 60]);
        let short = FinStream { len: 20, ..s };
        assert_eq!(fin_datagram(&short, 0, &[7; 60]).len(), 76);
    }
}
