//! The test request an iperf 2 client sends: at the start of its first TCP write on each
//! stream, and after the [`udp`] header of every UDP datagram.
//!
//! Layout (big-endian; offsets from the start of the header, which is offset 16 of a UDP
//! datagram):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | flags ([`flags`]): which parts follow, the connect-back mode, the header length |
//! | 4 | 4 | parallel streams (`-P`) |
//! | 8 | 4 | port the server connects back to for `-d` / `-r` (the client's `-L`) |
//! | 12 | 4 | buffer length (`-l`; 0 when the client left it at its default) |
//! | 16 | 4 | window or legacy rate; 2.1.8 leaves it 0 (even with `-w 256k`) |
//! | 20 | 4 | amount: bytes (`-n`) when positive, minus the duration in 10 ms units (`-t`) |
//! | 24 | 4 | extension type (2.1.8 writes 0) — present when flags have [`flags::EXTEND`] |
//! | 28 | 4 | extension length (2.1.8 writes 0) |
//! | 32 | 2 | extended flags, upper ([`ext_flags`]: reverse, full duplex, trip times, ...) |
//! | 34 | 2 | extended flags, lower |
//! | 36 | 4 | version, major << 16 \| minor (2.1.8: `0x0002_0001`) |
//! | 40 | 4 | version, patch << 16 \| build kind (2.1.8: `0x0008_0003`) |
//! | 44 | 2 | reserved |
//! | 46 | 2 | TOS (`-S`) |
//! | 48 | 4 | rate, low 32 bits (`-b`; UDP's default 1 048 576; `100pps` sends 100 and no unit flag) |
//! | 52 | 4 | rate, the bits above 32 shifted left by 8 (the low byte is unused) |
//! | 56 | 4 | TCP write prefetch (`--tcp-write-prefetch`) |
//! | 60 | 20 | TCP only, when the length says so: reserved, start time (s, us), fq rate low, high |
//!
//! With [`flags::LEN_BIT`] the flags also carry the header's length in bytes, shifted left
//! by one (bits 1-8, so at most 255), counted from the start of the datagram for UDP: 2.1.8
//! declares 60 for TCP, 80 with `--trip-times` (the start-time block) and 76 for UDP. Bytes
//! the length covers beyond the parts known here are kept as they are.

use std::net::{IpAddr, SocketAddr};

use super::udp::{self, UdpDatagram};
use super::{Iperf2Error, Reader, Refusal, Timestamp, MAX_DURATION_CS, MAX_LEN, MAX_THREADS};

/// Bits of the header's first word.
pub mod flags {
    /// The 1.7 fields are meaningful: the server connects back (`-d` or `-r`).
    pub const VERSION1: u32 = 0x8000_0000;
    /// The 2.1 extension follows the base fields.
    pub const EXTEND: u32 = 0x4000_0000;
    /// A UDP test (set by some senders; 2.1.8 leaves it clear).
    pub const UDPTESTS: u32 = 0x2000_0000;
    /// A permit key follows (`--permit-key`).
    pub const KEYCHECK: u32 = 0x1000_0000;
    /// 64-bit UDP sequence numbers.
    pub const SEQNO64B: u32 = 0x0800_0000;
    /// Version-2 features in the extension (set with `-R` and `--full-duplex`).
    pub const VERSION2: u32 = 0x0400_0000;
    /// Peer version detection (`-X`).
    pub const V2PEERDETECT: u32 = 0x0200_0000;
    /// A bounceback test (the [`bounceback`](crate::iperf2::bounceback) header instead).
    pub const BOUNCEBACK: u32 = 0x0080_0000;
    /// Small trip-time headers.
    pub const SMALL_TRIPTIMES: u32 = 0x0002_0000;
    /// The header length is in [`LEN_MASK`].
    pub const LEN_BIT: u32 = 0x0001_0000;
    /// The header length in bytes, shifted left by one.
    pub const LEN_MASK: u32 = 0x0000_01fe;
    /// With [`VERSION1`]: dual test (both directions at once) instead of tradeoff.
    pub const RUN_NOW: u32 = 0x0000_0001;
}

/// Bits of the extension's upper flags.
pub mod ext_flags {
    pub const ISOCH: u16 = 0x0001;
    pub const L2ETHPIPV6: u16 = 0x0002;
    pub const L2LENCHECK: u16 = 0x0004;
    pub const NOUDPFIN: u16 = 0x0008;
    pub const TRIPTIME: u16 = 0x0010;
    pub const ISOCH_SETTINGS: u16 = 0x0040;
    pub const UNITS_PPS: u16 = 0x0080;
    pub const BWSET: u16 = 0x0100;
    pub const FQRATESET: u16 = 0x0200;
    pub const REVERSE: u16 = 0x0400;
    pub const FULLDUPLEX: u16 = 0x0800;
    pub const EPOCH_START: u16 = 0x1000;
    pub const PERIODICBURST: u16 = 0x2000;
    pub const WRITEPREFETCH: u16 = 0x4000;
    pub const TCPQUICKACK: u16 = 0x8000;
}

/// Bytes of the base (1.7) fields.
pub const BASE_LEN: usize = 24;
/// Bytes of the 2.1 extension.
pub const EXT_LEN: usize = 36;
/// Bytes of the TCP start-time block.
pub const START_LEN: usize = 20;

/// The base fields every iperf 2 client sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BaseHeader {
    pub flags: u32,
    pub threads: i32,
    /// A port only: the connect-back address is never taken from the header (see
    /// [`ClientHeader::connect_back`]).
    pub port: i32,
    pub buf_len: i32,
    pub win_band: i32,
    pub amount: i32,
}

/// The 2.1 extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extension {
    pub kind: i32,
    pub length: i32,
    pub upper_flags: u16,
    pub lower_flags: u16,
    pub version_u: u32,
    pub version_l: u32,
    pub reserved: u16,
    pub tos: u16,
    pub rate_l: u32,
    pub rate_u: u32,
    pub write_prefetch: u32,
}

/// The TCP start-time block (`--trip-times`, `--txstart-time`, `--fq-rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StartFq {
    pub reserved: u32,
    pub start: Timestamp,
    pub fq_rate_l: u32,
    pub fq_rate_u: u32,
}

/// How much a test runs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// `-n`: this many bytes.
    Bytes(u64),
    /// `-t`: this many 10 ms units.
    Centis(i64),
}

/// The server's connection back to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectBack {
    /// `-d`: at once, both directions together.
    Dual,
    /// `-r`: after the client's test ends.
    Tradeoff,
}

/// A client's test request.
///
/// The header names a port for `-d` and `-r` but never an address: the only place the server
/// may connect back to is the address the request came from, which is why
/// [`connect_back`](Self::connect_back) takes that peer address as its argument.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClientHeader {
    pub base: BaseHeader,
    pub ext: Option<Extension>,
    pub start: Option<StartFq>,
    /// Bytes the declared length covers beyond the parts above (at most 255).
    pub rest: Vec<u8>,
}

/// A UDP datagram's header followed by the client's request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UdpClientHeader {
    pub datagram: UdpDatagram,
    pub header: ClientHeader,
}

impl ClientHeader {
    /// Reads a TCP stream's header; returns it and the bytes it takes (the rest is payload).
    ///
    /// # Errors
    /// [`Iperf2Error::Short`] when the bytes end before the parts the flags promise,
    /// [`Iperf2Error::BadLength`] when the declared length is shorter than those parts.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        Self::parse_after(buf, 0)
    }

    /// Reads the header at the start of `buf`, which sits `prefix` bytes into what the
    /// declared length counts (16 for UDP, where only TCP's start-time block is not known).
    fn parse_after(buf: &[u8], prefix: usize) -> Result<(Self, usize), Iperf2Error> {
        let mut r = Reader::new(buf, "iperf2 client header");
        r.need(BASE_LEN)?;
        let base = BaseHeader {
            flags: r.u32()?,
            threads: r.i32()?,
            port: r.i32()?,
            buf_len: r.i32()?,
            win_band: r.i32()?,
            amount: r.i32()?,
        };
        let ext = if base.flags & flags::EXTEND != 0 {
            r.need(EXT_LEN)?;
            Some(read_ext(&mut r)?)
        } else {
            None
        };
        let mut h = ClientHeader {
            base,
            ext,
            start: None,
            rest: Vec::new(),
        };
        if let Some(declared) = h.declared_len() {
            let min = prefix + r.at();
            if declared < min {
                return Err(Iperf2Error::BadLength {
                    what: "iperf2 client header",
                    claimed: declared,
                    min,
                });
            }
            let mut more = declared - min;
            r.need(more)?;
            if prefix == 0 && h.ext.is_some() && more >= START_LEN {
                h.start = Some(StartFq {
                    reserved: r.u32()?,
                    start: r.ts()?,
                    fq_rate_l: r.u32()?,
                    fq_rate_u: r.u32()?,
                });
                more -= START_LEN;
            }
            h.rest = r.bytes(more)?.to_vec();
        }
        Ok((h, r.at()))
    }

    /// The length the flags declare (counted from the datagram's start for UDP), if any.
    pub fn declared_len(&self) -> Option<usize> {
        (self.base.flags & flags::LEN_BIT != 0)
            .then_some(((self.base.flags & flags::LEN_MASK) >> 1) as usize)
    }

    /// Appends the header to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let b = &self.base;
        out.extend_from_slice(&b.flags.to_be_bytes());
        for v in [b.threads, b.port, b.buf_len, b.win_band, b.amount] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        if let Some(e) = &self.ext {
            write_ext(out, e);
        }
        if let Some(s) = &self.start {
            out.extend_from_slice(&s.reserved.to_be_bytes());
            super::put_ts(out, s.start);
            out.extend_from_slice(&s.fq_rate_l.to_be_bytes());
            out.extend_from_slice(&s.fq_rate_u.to_be_bytes());
        }
        out.extend_from_slice(&self.rest);
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        BASE_LEN
            + self.ext.map_or(0, |_| EXT_LEN)
            + self.start.map_or(0, |_| START_LEN)
            + self.rest.len()
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Whether the client sent 64-bit UDP sequence numbers.
    pub fn wide_seq(&self) -> bool {
        self.base.flags & flags::SEQNO64B != 0
    }

    /// What the test runs for.
    pub fn amount(&self) -> Amount {
        if self.base.amount >= 0 {
            Amount::Bytes(self.base.amount as u64)
        } else {
            Amount::Centis(-i64::from(self.base.amount))
        }
    }

    /// The connect-back the client asked for (`-d` or `-r`), if any.
    pub fn connect_back_mode(&self) -> Option<ConnectBack> {
        (self.base.flags & flags::VERSION1 != 0).then_some(
            if self.base.flags & flags::RUN_NOW != 0 {
                ConnectBack::Dual
            } else {
                ConnectBack::Tradeoff
            },
        )
    }

    /// Where the server connects back to: always `peer`, the address the request came from,
    /// at the port the header names. `None` without a connect-back or with no usable port.
    pub fn connect_back(&self, peer: IpAddr) -> Option<SocketAddr> {
        self.connect_back_mode()?;
        let port = u16::try_from(self.base.port).ok().filter(|&p| p != 0)?;
        Some(SocketAddr::new(peer, port))
    }

    /// The extended flags, or 0 without the extension.
    pub fn upper_flags(&self) -> u16 {
        self.ext.map_or(0, |e| e.upper_flags)
    }

    /// The sender's version as (major, minor, patch, kind).
    pub fn version(&self) -> Option<(u16, u16, u16, u16)> {
        self.ext.map(|e| {
            let hi = |v: u32| (v >> 16) as u16;
            let lo = |v: u32| v as u16;
            (
                hi(e.version_u),
                lo(e.version_u),
                hi(e.version_l),
                lo(e.version_l),
            )
        })
    }

    /// The `-b` rate (bits per second, or packets per second with
    /// [`ext_flags::UNITS_PPS`]), when the extension carries one.
    pub fn rate(&self) -> Option<u64> {
        self.ext
            .map(|e| u64::from(e.rate_l) | (u64::from(e.rate_u >> 8) << 32))
            .filter(|&r| r != 0)
    }

    /// Refuses values no test should have: more than [`MAX_THREADS`] streams (or fewer than
    /// one), lengths outside 0..=[`MAX_LEN`], negative windows, durations beyond
    /// [`MAX_DURATION_CS`], a connect-back without a usable port, bad start times.
    pub fn check(&self) -> Result<(), Refusal> {
        let b = &self.base;
        if !(1..=MAX_THREADS).contains(&b.threads) {
            return Err(Refusal::Threads(b.threads));
        }
        if !(0..=MAX_LEN).contains(&i64::from(b.buf_len)) {
            return Err(Refusal::Length(i64::from(b.buf_len)));
        }
        if b.win_band < 0 {
            return Err(Refusal::Window(b.win_band));
        }
        if let Amount::Centis(c) = self.amount() {
            if c > MAX_DURATION_CS {
                return Err(Refusal::Duration(c));
            }
        }
        if self.connect_back_mode().is_some() && !(1..=65535).contains(&b.port) {
            return Err(Refusal::Port(b.port));
        }
        if let Some(s) = &self.start {
            s.start.check()?;
        }
        Ok(())
    }
}

fn read_ext(r: &mut Reader<'_>) -> Result<Extension, Iperf2Error> {
    Ok(Extension {
        kind: r.i32()?,
        length: r.i32()?,
        upper_flags: r.u16()?,
        lower_flags: r.u16()?,
        version_u: r.u32()?,
        version_l: r.u32()?,
        reserved: r.u16()?,
        tos: r.u16()?,
        rate_l: r.u32()?,
        rate_u: r.u32()?,
        write_prefetch: r.u32()?,
    })
}

fn write_ext(out: &mut Vec<u8>, e: &Extension) {
    out.extend_from_slice(&e.kind.to_be_bytes());
    out.extend_from_slice(&e.length.to_be_bytes());
    out.extend_from_slice(&e.upper_flags.to_be_bytes());
    out.extend_from_slice(&e.lower_flags.to_be_bytes());
    out.extend_from_slice(&e.version_u.to_be_bytes());
    out.extend_from_slice(&e.version_l.to_be_bytes());
    out.extend_from_slice(&e.reserved.to_be_bytes());
    out.extend_from_slice(&e.tos.to_be_bytes());
    out.extend_from_slice(&e.rate_l.to_be_bytes());
    out.extend_from_slice(&e.rate_u.to_be_bytes());
    out.extend_from_slice(&e.write_prefetch.to_be_bytes());
}

impl UdpClientHeader {
    /// Reads a UDP datagram's header and the request after it; returns both and the bytes
    /// they take (the rest is payload).
    ///
    /// # Errors
    /// As [`ClientHeader::parse`], and [`Iperf2Error::Short`] below 16 bytes.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        let (datagram, n) = UdpDatagram::parse(buf)?;
        let (header, m) = ClientHeader::parse_after(buf.get(n..).unwrap_or_default(), udp::LEN)?;
        Ok((UdpClientHeader { datagram, header }, n + m))
    }

    /// Appends both headers to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        self.datagram.emit(out);
        self.header.emit(out);
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        udp::LEN + self.header.len()
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
#[path = "client_hdr_tests.rs"]
mod tests;
