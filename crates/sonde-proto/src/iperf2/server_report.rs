//! The report a UDP server sends back when the client's final datagrams arrive.
//!
//! The report is one datagram: a [`udp`] header (2.1.8 zeroes it), then:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 16 | 4 | flags: [`VERSION1`] (always), [`EXTEND`] (the server ran `-e`), [`SEQNO64B`] |
//! | 20 | 4 | bytes received, high 32 bits |
//! | 24 | 4 | bytes received, low 32 bits |
//! | 28 | 8 | time of the last datagram since the first (s, us) |
//! | 36 | 4 | datagrams lost (low 32 bits with [`SEQNO64B`]) |
//! | 40 | 4 | datagrams out of order (likewise) |
//! | 44 | 4 | datagrams received, by the highest sequence number (likewise) |
//! | 48 | 8 | jitter (s, us) |
//! | 56 | 60 | transit statistics: min, max, sum, mean, M2 and last transit, each (s, us); transit count, inter-packet gap count and gap sum — 2.1.8 fills these even without [`EXTEND`] |
//! | 116 | 12 | high 32 bits of the lost, out-of-order and received counts |
//!
//! 2.1.8 sends all 128 bytes. Shorter reports from older servers end after the base fields
//! (56 bytes); a report is read as far as its bytes go, but flags that promise the
//! extension or the 64-bit counts must have them.

use super::udp::{self, UdpDatagram};
use super::{Iperf2Error, Reader, Refusal};

/// The base fields are meaningful.
pub const VERSION1: u32 = 0x8000_0000;
/// The transit statistics are meaningful (the server's enhanced reports).
pub const EXTEND: u32 = 0x4000_0000;
/// The counts have high halves at offset 116.
pub const SEQNO64B: u32 = 0x0800_0000;
/// Bytes up to the end of the base fields.
pub const BASE_END: usize = udp::LEN + 40;
/// Bytes up to the end of the transit statistics.
pub const EXT_END: usize = BASE_END + 60;
/// Bytes of a whole 2.1.8 report.
pub const LEN: usize = EXT_END + 12;

/// The base report fields, as they are on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportBase {
    pub flags: u32,
    pub total_len_hi: i32,
    pub total_len_lo: i32,
    pub stop_sec: i32,
    pub stop_usec: i32,
    pub lost: i32,
    pub out_of_order: i32,
    pub datagrams: i32,
    pub jitter_sec: i32,
    pub jitter_usec: i32,
}

/// The 15 words of transit statistics, in wire order (pairs are seconds, microseconds):
/// min, max, sum, mean, M2, last; then transit count, gap count, gap sum.
pub type TransitWords = [i32; 15];

/// High halves of the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CountsHigh {
    pub lost: i32,
    pub out_of_order: i32,
    pub datagrams: i32,
}

/// A UDP server report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerReport {
    pub datagram: UdpDatagram,
    pub base: ReportBase,
    pub transit: Option<TransitWords>,
    /// Only with `transit` (it follows it on the wire).
    pub high: Option<CountsHigh>,
}

/// What a server measured of one UDP test, for the report it sends back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Totals {
    /// Bytes of the datagrams received.
    pub bytes: u64,
    /// From the first datagram to the last, microseconds.
    pub duration_us: u64,
    pub lost: u64,
    pub out_of_order: u64,
    /// Datagrams counted, as iperf 2 counts them: the highest sequence number seen.
    pub datagrams: u64,
    pub jitter_us: u64,
    /// Datagrams actually received (the transit count).
    pub received: u64,
}

/// Splits a count into the 32-bit halves the report carries.
fn halves(v: u64) -> (i32, i32) {
    ((v >> 32) as u32 as i32, v as u32 as i32)
}

/// Splits microseconds into (seconds, microseconds), clamped to what the fields hold.
fn sec_usec(us: u64) -> (i32, i32) {
    let sec = i32::try_from(us / 1_000_000).unwrap_or(i32::MAX);
    (sec, (us % 1_000_000) as i32)
}

impl ServerReport {
    /// Reads a report; returns it and the bytes it takes (56, 116 or 128).
    ///
    /// # Errors
    /// [`Iperf2Error::Short`] below 56 bytes, or when the flags promise parts the bytes do
    /// not hold.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        let (datagram, _) = UdpDatagram::parse(buf)?;
        let mut r = Reader::new(buf, "iperf2 server report");
        r.need(BASE_END)?;
        r.bytes(udp::LEN)?;
        let mut w = [0i32; 10];
        for v in &mut w {
            *v = r.i32()?;
        }
        let base = ReportBase {
            flags: w[0] as u32,
            total_len_hi: w[1],
            total_len_lo: w[2],
            stop_sec: w[3],
            stop_usec: w[4],
            lost: w[5],
            out_of_order: w[6],
            datagrams: w[7],
            jitter_sec: w[8],
            jitter_usec: w[9],
        };
        if base.flags & SEQNO64B != 0 {
            r.need(LEN - BASE_END)?;
        } else if base.flags & EXTEND != 0 {
            r.need(EXT_END - BASE_END)?;
        }
        let mut report = ServerReport {
            datagram,
            base,
            transit: None,
            high: None,
        };
        if r.remaining() >= EXT_END - BASE_END {
            let mut t = [0i32; 15];
            for v in &mut t {
                *v = r.i32()?;
            }
            report.transit = Some(t);
            if r.remaining() >= LEN - EXT_END {
                report.high = Some(CountsHigh {
                    lost: r.i32()?,
                    out_of_order: r.i32()?,
                    datagrams: r.i32()?,
                });
            }
        }
        Ok((report, r.at()))
    }

    /// The whole (128-byte, 64-bit) report of `t`, as a 2.1.8 server without `-e` sends it:
    /// the transit statistics are left zero but for their count.
    pub fn from_totals(t: &Totals) -> Self {
        let (len_hi, len_lo) = halves(t.bytes);
        let (stop_sec, stop_usec) = sec_usec(t.duration_us);
        let (jitter_sec, jitter_usec) = sec_usec(t.jitter_us);
        let (lost_hi, lost_lo) = halves(t.lost);
        let (ooo_hi, ooo_lo) = halves(t.out_of_order);
        let (dg_hi, dg_lo) = halves(t.datagrams);
        let mut transit = [0i32; 15];
        transit[12] = t.received.min(i32::MAX as u64) as i32;
        ServerReport {
            datagram: UdpDatagram::default(),
            base: ReportBase {
                flags: VERSION1 | SEQNO64B,
                total_len_hi: len_hi,
                total_len_lo: len_lo,
                stop_sec,
                stop_usec,
                lost: lost_lo,
                out_of_order: ooo_lo,
                datagrams: dg_lo,
                jitter_sec,
                jitter_usec,
            },
            transit: Some(transit),
            high: Some(CountsHigh {
                lost: lost_hi,
                out_of_order: ooo_hi,
                datagrams: dg_hi,
            }),
        }
    }

    /// Appends the report to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        self.datagram.emit(out);
        let b = &self.base;
        out.extend_from_slice(&b.flags.to_be_bytes());
        for v in [
            b.total_len_hi,
            b.total_len_lo,
            b.stop_sec,
            b.stop_usec,
            b.lost,
            b.out_of_order,
            b.datagrams,
            b.jitter_sec,
            b.jitter_usec,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        if self.transit.is_some() || self.high.is_some() {
            for v in self.transit.unwrap_or_default() {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
        if let Some(h) = &self.high {
            for v in [h.lost, h.out_of_order, h.datagrams] {
                out.extend_from_slice(&v.to_be_bytes());
            }
        }
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        match (self.transit, self.high) {
            (_, Some(_)) => LEN,
            (Some(_), None) => EXT_END,
            (None, None) => BASE_END,
        }
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn wide(&self, lo: i32, hi: fn(&CountsHigh) -> i32) -> i64 {
        match self.high.filter(|_| self.base.flags & SEQNO64B != 0) {
            Some(h) => ((u64::from(hi(&h) as u32) << 32) | u64::from(lo as u32)) as i64,
            None => i64::from(lo),
        }
    }

    /// Bytes the server received.
    pub fn total_len(&self) -> u64 {
        (u64::from(self.base.total_len_hi as u32) << 32) | u64::from(self.base.total_len_lo as u32)
    }

    /// Datagrams lost (64-bit where the report has the high halves).
    pub fn lost(&self) -> i64 {
        self.wide(self.base.lost, |h| h.lost)
    }

    /// Datagrams that arrived out of order.
    pub fn out_of_order(&self) -> i64 {
        self.wide(self.base.out_of_order, |h| h.out_of_order)
    }

    /// Datagrams counted (the highest sequence number seen).
    pub fn datagrams(&self) -> i64 {
        self.wide(self.base.datagrams, |h| h.datagrams)
    }

    /// The test's duration at the server, microseconds.
    pub fn stop_us(&self) -> i64 {
        i64::from(self.base.stop_sec) * 1_000_000 + i64::from(self.base.stop_usec)
    }

    /// The jitter, microseconds.
    pub fn jitter_us(&self) -> i64 {
        i64::from(self.base.jitter_sec) * 1_000_000 + i64::from(self.base.jitter_usec)
    }

    /// Refuses reports no server should send: negative times, jitter or counts, and
    /// microsecond halves of a second or more.
    pub fn check(&self) -> Result<(), Refusal> {
        let b = &self.base;
        for usec in [b.stop_usec, b.jitter_usec] {
            if !(0..1_000_000).contains(&usec) {
                return Err(Refusal::Micros(usec as u32));
            }
        }
        if b.stop_sec < 0 {
            return Err(Refusal::Negative("stop time"));
        }
        if b.jitter_sec < 0 {
            return Err(Refusal::Negative("jitter"));
        }
        for (v, what) in [
            (self.lost(), "lost count"),
            (self.out_of_order(), "out-of-order count"),
            (self.datagrams(), "datagram count"),
        ] {
            if v < 0 {
                return Err(Refusal::Negative(what));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::captures::{self, hex};
    use super::*;

    #[test]
    fn captured_reports() {
        for (s, stop, jitter) in [
            (captures::SERVER_REPORT, 1_022_431, 58),
            (captures::SERVER_REPORT_E, 1_023_061, 40),
        ] {
            let b = hex(s);
            let (r, n) = ServerReport::parse(&b).unwrap();
            assert_eq!((n, r.len()), (LEN, LEN));
            assert_eq!(r.total_len(), 89 * 1470);
            assert_eq!((r.lost(), r.out_of_order(), r.datagrams()), (0, 0, 89));
            assert_eq!((r.stop_us(), r.jitter_us()), (stop, jitter));
            assert_eq!(r.transit.unwrap()[12], 89);
            r.check().unwrap();
            let mut out = Vec::new();
            r.emit(&mut out);
            assert_eq!(out, b);
        }
        let (l, _) = ServerReport::parse(&hex(captures::SERVER_REPORT_LEN64)).unwrap();
        assert_eq!(
            (l.datagrams(), l.jitter_us(), l.total_len()),
            (1956, 8, 0x1e90c)
        );
        let (e, _) = ServerReport::parse(&hex(captures::SERVER_REPORT_E)).unwrap();
        assert_ne!(e.base.flags & EXTEND, 0);
    }

    #[test]
    fn a_report_from_totals_reads_back_as_them() {
        let t = Totals {
            bytes: (5 << 32) + 1470,
            duration_us: 1_022_431,
            lost: 3,
            out_of_order: 2,
            datagrams: (1 << 32) + 89,
            jitter_us: 58,
            received: 86,
        };
        let r = ServerReport::from_totals(&t);
        r.check().unwrap();
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out.len(), LEN);
        let (back, n) = ServerReport::parse(&out).unwrap();
        assert_eq!(n, LEN);
        assert_eq!(back.total_len(), t.bytes);
        assert_eq!((back.stop_us(), back.jitter_us()), (1_022_431, 58));
        assert_eq!((back.lost(), back.out_of_order()), (3, 2));
        assert_eq!(back.datagrams(), (1 << 32) + 89);
        // The same flags and layout as the captured 2.1.8 report.
        assert_eq!(out[16..20], hex(captures::SERVER_REPORT)[16..20]);
    }

    #[test]
    fn short_reports_and_promises() {
        let b = hex(captures::SERVER_REPORT);
        for cut in 0..BASE_END {
            assert!(ServerReport::parse(&b[..cut]).is_err());
        }
        // The 64-bit flag promises the high halves.
        for cut in BASE_END..LEN {
            assert!(ServerReport::parse(&b[..cut]).is_err());
        }
        // Without it the base alone is a report.
        let mut old = b[..BASE_END].to_vec();
        old[16] = 0x80;
        let (r, n) = ServerReport::parse(&old).unwrap();
        assert_eq!((n, r.transit, r.len()), (BASE_END, None, BASE_END));
        let mut out = Vec::new();
        r.emit(&mut out);
        assert_eq!(out, old);
    }

    #[test]
    fn wide_counts_and_refusals() {
        let (mut r, _) = ServerReport::parse(&hex(captures::SERVER_REPORT)).unwrap();
        r.high = Some(CountsHigh {
            lost: 1,
            out_of_order: 0,
            datagrams: 2,
        });
        assert_eq!(r.lost(), 1 << 32);
        assert_eq!(r.datagrams(), (2 << 32) + 89);
        r.base.jitter_usec = 1_000_000;
        assert_eq!(r.check(), Err(Refusal::Micros(1_000_000)));
        r.base.jitter_usec = 0;
        r.base.stop_sec = -1;
        assert_eq!(r.check(), Err(Refusal::Negative("stop time")));
        r.base.stop_sec = 0;
        r.high = Some(CountsHigh {
            lost: -1,
            out_of_order: 0,
            datagrams: 0,
        });
        assert_eq!(r.check(), Err(Refusal::Negative("lost count")));
    }
}
