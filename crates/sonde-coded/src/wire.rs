//! The coded transport's datagrams: byte layouts, checked parsing and emitting.
//!
//! Every datagram starts with a magic byte, a type byte and a CRC-32 (IEEE, `crc32fast`) over
//! the rest of the datagram, so a forged-by-accident or truncated datagram is
//! dropped before it can reach the decoder (the UDP checksum is optional on IPv4 and a lab link
//! may rewrite it). A Reed-Solomon decoder cannot tell a wrong symbol from a right one, so this
//! check is what keeps corrupted bytes out of delivered blocks.
//!
//! ```text
//! common:   0 magic 0xC5 | 1 type | 2 flags | 3 reserved | 4..8 crc32 of bytes 8.. and 0..4
//! symbol:   8..12 block | 12..14 esi | 14..16 k | 16..20 block_len | 20..28 seq | 28.. payload
//! feedback: 8..12 serial | 12..16 cumulative | 16..20 covered | 20..28 highest_seq
//!           28..36 received | 36..40 ack_delay_us | 40..42 n | 42.. n x (block u32, needed u16)
//! done:     8.. nine u64 receiver figures (see [`ReceiverReport`]) | 80..112 SHA-256
//! done-ack: 8.. nine u64 sender figures (the last reserved) (see [`SenderReport`]) | 80..112
//!           SHA-256
//! (the SHA-256 of the transfer's bytes is optional: a report is 80 bytes without it)
//! ```
//!
//! Multi-byte fields are big-endian. `esi` < `k` names a source symbol, `esi` >= `k` the repair
//! symbol `esi - k`. `flags` (byte 2) bit 0 marks a symbol of the last block.

use thiserror::Error;

/// First byte of every coded datagram.
pub const MAGIC: u8 = 0xC5;
/// Bytes before a symbol's payload.
pub const SYMBOL_HEADER_LEN: usize = 28;
/// Bytes of a feedback datagram before its entries.
pub const FEEDBACK_HEADER_LEN: usize = 42;
/// Bytes of one feedback entry.
pub const FEEDBACK_ENTRY_LEN: usize = 6;
/// Most entries one feedback datagram carries (fits a 1200-byte datagram).
pub const MAX_FEEDBACK_ENTRIES: usize = 190;
/// Length of the done and done-ack datagrams without their digest.
pub const REPORT_LEN: usize = 8 + 9 * 8;
/// Length of the done and done-ack datagrams that carry the transfer's SHA-256.
pub const REPORT_DIGEST_LEN: usize = REPORT_LEN + 32;

/// A SHA-256 digest of the transfer's bytes, in order.
pub type Digest = [u8; 32];
/// Flag bit: this symbol belongs to the transfer's last block.
pub const FLAG_LAST: u8 = 1;

/// Named byte ranges of the layouts above.
mod field {
    use std::ops::Range;
    pub const MAGIC: usize = 0;
    pub const TYPE: usize = 1;
    pub const FLAGS: usize = 2;
    pub const CRC: Range<usize> = 4..8;
    pub const BLOCK: Range<usize> = 8..12;
    pub const ESI: Range<usize> = 12..14;
    pub const K: Range<usize> = 14..16;
    pub const BLOCK_LEN: Range<usize> = 16..20;
    pub const SEQ: Range<usize> = 20..28;
    pub const SERIAL: Range<usize> = 8..12;
    pub const CUMULATIVE: Range<usize> = 12..16;
    pub const COVERED: Range<usize> = 16..20;
    pub const HIGHEST_SEQ: Range<usize> = 20..28;
    pub const RECEIVED: Range<usize> = 28..36;
    pub const ACK_DELAY: Range<usize> = 36..40;
    pub const COUNT: Range<usize> = 40..42;
}

/// The datagram types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Symbol = 1,
    Feedback = 2,
    Done = 3,
    DoneAck = 4,
}

/// Why a datagram was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    #[error("datagram of {0} bytes is too short")]
    Truncated(usize),
    #[error("not a coded datagram (first byte {0:#04x})")]
    BadMagic(u8),
    #[error("unknown coded datagram type {0}")]
    UnknownType(u8),
    #[error("checksum mismatch")]
    Checksum,
    #[error("symbol header is inconsistent: {0}")]
    BadSymbol(&'static str),
    #[error("feedback lists {0} entries, more than its length or the limit allows")]
    BadFeedback(usize),
    #[error("buffer of {have} bytes cannot hold a {need}-byte datagram")]
    BufferTooSmall { have: usize, need: usize },
}

fn be_u16(b: &[u8], r: std::ops::Range<usize>) -> u16 {
    let mut a = [0u8; 2];
    a.copy_from_slice(&b[r]);
    u16::from_be_bytes(a)
}
fn be_u32(b: &[u8], r: std::ops::Range<usize>) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[r]);
    u32::from_be_bytes(a)
}
fn be_u64(b: &[u8], r: std::ops::Range<usize>) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[r]);
    u64::from_be_bytes(a)
}

fn checksum(b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&b[0..4]);
    h.update(&b[8..]);
    h.finalize()
}

/// Checks magic, length and checksum and returns the datagram's type.
///
/// # Errors
/// [`WireError`] naming the first check that failed.
pub fn classify(b: &[u8]) -> Result<Kind, WireError> {
    if b.len() < 8 {
        return Err(WireError::Truncated(b.len()));
    }
    if b[field::MAGIC] != MAGIC {
        return Err(WireError::BadMagic(b[field::MAGIC]));
    }
    let kind = match b[field::TYPE] {
        1 => Kind::Symbol,
        2 => Kind::Feedback,
        3 => Kind::Done,
        4 => Kind::DoneAck,
        t => return Err(WireError::UnknownType(t)),
    };
    if be_u32(b, field::CRC) != checksum(b) {
        return Err(WireError::Checksum);
    }
    Ok(kind)
}

fn start(buf: &mut [u8], kind: Kind, len: usize) -> Result<&mut [u8], WireError> {
    if buf.len() < len {
        return Err(WireError::BufferTooSmall {
            have: buf.len(),
            need: len,
        });
    }
    let out = &mut buf[..len];
    out[..8].fill(0);
    out[field::MAGIC] = MAGIC;
    out[field::TYPE] = kind as u8;
    Ok(out)
}

fn seal(out: &mut [u8]) -> usize {
    let c = checksum(out);
    out[field::CRC].copy_from_slice(&c.to_be_bytes());
    out.len()
}

/// One symbol's header; the payload follows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolHeader {
    pub block: u32,
    /// Encoding symbol id: source symbol when below `k`, else repair symbol `esi - k`.
    pub esi: u16,
    /// Source symbols in this block.
    pub k: u16,
    /// Bytes of data the block carries (the last symbol may be partly padding).
    pub block_len: u32,
    /// Datagram sequence number of the sending side (for loss and RTT, not ordering).
    pub seq: u64,
    pub last: bool,
}

/// A parsed symbol datagram, borrowing its payload.
#[derive(Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub header: SymbolHeader,
    pub payload: &'a [u8],
}

impl<'a> Symbol<'a> {
    /// Parses and checks a symbol datagram (checksum included).
    ///
    /// # Errors
    /// [`WireError`] for a short, foreign, corrupted or self-contradicting datagram.
    pub fn parse(b: &'a [u8]) -> Result<Self, WireError> {
        if classify(b)? != Kind::Symbol {
            return Err(WireError::UnknownType(b[field::TYPE]));
        }
        if b.len() < SYMBOL_HEADER_LEN + 2 {
            return Err(WireError::Truncated(b.len()));
        }
        let payload = &b[SYMBOL_HEADER_LEN..];
        let header = SymbolHeader {
            block: be_u32(b, field::BLOCK),
            esi: be_u16(b, field::ESI),
            k: be_u16(b, field::K),
            block_len: be_u32(b, field::BLOCK_LEN),
            seq: be_u64(b, field::SEQ),
            last: b[field::FLAGS] & FLAG_LAST != 0,
        };
        let h = &header;
        if h.k == 0 {
            return Err(WireError::BadSymbol("k is 0"));
        }
        let cap = u64::from(h.k) * payload.len() as u64;
        let floor = u64::from(h.k - 1) * payload.len() as u64;
        if u64::from(h.block_len) > cap || u64::from(h.block_len) <= floor {
            return Err(WireError::BadSymbol(
                "block length does not match k symbols",
            ));
        }
        if payload.len() & 1 != 0 {
            return Err(WireError::BadSymbol("odd symbol size"));
        }
        Ok(Self { header, payload })
    }

    /// Writes a symbol datagram into `buf`, returning its length.
    ///
    /// # Errors
    /// [`WireError::BufferTooSmall`] when `buf` cannot hold header and payload.
    pub fn emit(h: &SymbolHeader, payload: &[u8], buf: &mut [u8]) -> Result<usize, WireError> {
        let out = start(buf, Kind::Symbol, SYMBOL_HEADER_LEN + payload.len())?;
        out[field::FLAGS] = if h.last { FLAG_LAST } else { 0 };
        out[field::BLOCK].copy_from_slice(&h.block.to_be_bytes());
        out[field::ESI].copy_from_slice(&h.esi.to_be_bytes());
        out[field::K].copy_from_slice(&h.k.to_be_bytes());
        out[field::BLOCK_LEN].copy_from_slice(&h.block_len.to_be_bytes());
        out[field::SEQ].copy_from_slice(&h.seq.to_be_bytes());
        out[SYMBOL_HEADER_LEN..].copy_from_slice(payload);
        Ok(seal(out))
    }
}

/// One block the receiver cannot decode yet, and how many more symbols it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub block: u32,
    pub needed: u16,
}

/// The receiver's state as the sender needs it.
///
/// Every block below `cumulative` is decoded. In `cumulative..=covered` every block is decoded
/// except those listed in `needs`. Blocks above `covered` are unknown to the receiver (or did
/// not fit in this datagram). Feedback is cumulative and idempotent: losing one costs nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Feedback {
    pub serial: u32,
    pub cumulative: u32,
    pub covered: u32,
    /// Highest symbol sequence number received; with `ack_delay_us` gives the sender an RTT.
    pub highest_seq: u64,
    /// Symbol datagrams received in total (duplicates included).
    pub received: u64,
    /// Microseconds the receiver held `highest_seq` before sending this feedback.
    pub ack_delay_us: u32,
    pub needs: Vec<Need>,
}

impl Feedback {
    /// Parses and checks a feedback datagram.
    ///
    /// # Errors
    /// [`WireError`] for a short, foreign, corrupted or over-long datagram.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        if classify(b)? != Kind::Feedback {
            return Err(WireError::UnknownType(b[field::TYPE]));
        }
        if b.len() < FEEDBACK_HEADER_LEN {
            return Err(WireError::Truncated(b.len()));
        }
        let n = usize::from(be_u16(b, field::COUNT));
        if n > MAX_FEEDBACK_ENTRIES || b.len() != FEEDBACK_HEADER_LEN + n * FEEDBACK_ENTRY_LEN {
            return Err(WireError::BadFeedback(n));
        }
        let needs = b[FEEDBACK_HEADER_LEN..]
            .chunks_exact(FEEDBACK_ENTRY_LEN)
            .map(|e| Need {
                block: be_u32(e, 0..4),
                needed: be_u16(e, 4..6),
            })
            .collect();
        Ok(Self {
            serial: be_u32(b, field::SERIAL),
            cumulative: be_u32(b, field::CUMULATIVE),
            covered: be_u32(b, field::COVERED),
            highest_seq: be_u64(b, field::HIGHEST_SEQ),
            received: be_u64(b, field::RECEIVED),
            ack_delay_us: be_u32(b, field::ACK_DELAY),
            needs,
        })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn len(&self) -> usize {
        FEEDBACK_HEADER_LEN + self.needs.len().min(MAX_FEEDBACK_ENTRIES) * FEEDBACK_ENTRY_LEN
    }

    /// Never empty: the header alone is a valid feedback.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Writes the feedback (at most [`MAX_FEEDBACK_ENTRIES`] entries) into `buf`.
    ///
    /// # Errors
    /// [`WireError::BufferTooSmall`] when `buf` cannot hold it.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let n = self.needs.len().min(MAX_FEEDBACK_ENTRIES);
        let out = start(buf, Kind::Feedback, self.len())?;
        out[field::SERIAL].copy_from_slice(&self.serial.to_be_bytes());
        out[field::CUMULATIVE].copy_from_slice(&self.cumulative.to_be_bytes());
        out[field::COVERED].copy_from_slice(&self.covered.to_be_bytes());
        out[field::HIGHEST_SEQ].copy_from_slice(&self.highest_seq.to_be_bytes());
        out[field::RECEIVED].copy_from_slice(&self.received.to_be_bytes());
        out[field::ACK_DELAY].copy_from_slice(&self.ack_delay_us.to_be_bytes());
        out[field::COUNT].copy_from_slice(&(n as u16).to_be_bytes());
        for (i, need) in self.needs.iter().take(n).enumerate() {
            let at = FEEDBACK_HEADER_LEN + i * FEEDBACK_ENTRY_LEN;
            out[at..at + 4].copy_from_slice(&need.block.to_be_bytes());
            out[at + 4..at + 6].copy_from_slice(&need.needed.to_be_bytes());
        }
        Ok(seal(out))
    }
}

/// Nine counters after the common header, then an optional digest: the done and done-ack
/// bodies.
fn parse_report(b: &[u8], kind: Kind) -> Result<([u64; 9], Option<Digest>), WireError> {
    if classify(b)? != kind {
        return Err(WireError::UnknownType(b[field::TYPE]));
    }
    let digest = match b.len() {
        REPORT_LEN => None,
        REPORT_DIGEST_LEN => {
            let mut d = [0u8; 32];
            d.copy_from_slice(&b[REPORT_LEN..REPORT_DIGEST_LEN]);
            Some(d)
        }
        n => return Err(WireError::Truncated(n)),
    };
    let mut v = [0u64; 9];
    for (i, x) in v.iter_mut().enumerate() {
        *x = be_u64(b, 8 + i * 8..16 + i * 8);
    }
    Ok((v, digest))
}

fn emit_report(
    v: [u64; 9],
    digest: Option<Digest>,
    kind: Kind,
    buf: &mut [u8],
) -> Result<usize, WireError> {
    let len = if digest.is_some() {
        REPORT_DIGEST_LEN
    } else {
        REPORT_LEN
    };
    let out = start(buf, kind, len)?;
    for (i, x) in v.iter().enumerate() {
        out[8 + i * 8..16 + i * 8].copy_from_slice(&x.to_be_bytes());
    }
    if let Some(d) = digest {
        out[REPORT_LEN..REPORT_DIGEST_LEN].copy_from_slice(&d);
    }
    Ok(seal(out))
}

/// The receiver's final figures, sent in its done datagram once every block decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReceiverReport {
    /// Data bytes decoded and handed on (the transfer's length).
    pub delivered_bytes: u64,
    pub blocks: u64,
    pub datagrams_received: u64,
    /// Symbols that arrived for an already decoded block or twice.
    pub useless_symbols: u64,
    /// Datagrams dropped as corrupted, truncated or inconsistent.
    pub rejected: u64,
    pub feedback_sent: u64,
    pub decode_delay_p50_us: u64,
    pub decode_delay_p99_us: u64,
    /// Delivered bytes the receiving application found wrong (checked data; must be 0).
    pub mismatched_bytes: u64,
    /// SHA-256 of every delivered byte in order, once the transfer is complete.
    pub sha256: Option<Digest>,
}

impl ReceiverReport {
    /// # Errors
    /// [`WireError`] when `b` is not a valid done datagram.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        let (v, sha256) = parse_report(b, Kind::Done)?;
        Ok(Self {
            sha256,
            delivered_bytes: v[0],
            blocks: v[1],
            datagrams_received: v[2],
            useless_symbols: v[3],
            rejected: v[4],
            feedback_sent: v[5],
            decode_delay_p50_us: v[6],
            decode_delay_p99_us: v[7],
            mismatched_bytes: v[8],
        })
    }

    /// # Errors
    /// [`WireError::BufferTooSmall`] when `buf` is shorter than [`REPORT_LEN`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let v = [
            self.delivered_bytes,
            self.blocks,
            self.datagrams_received,
            self.useless_symbols,
            self.rejected,
            self.feedback_sent,
            self.decode_delay_p50_us,
            self.decode_delay_p99_us,
            self.mismatched_bytes,
        ];
        emit_report(v, self.sha256, Kind::Done, buf)
    }
}

/// The sender's final figures, sent in answer to each done datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SenderReport {
    pub data_bytes: u64,
    pub blocks: u64,
    pub source_symbols: u64,
    /// Repair symbols sent ahead of feedback, sized from the measured loss.
    pub proactive_repair: u64,
    /// Repair symbols sent because feedback or a tail probe asked for them.
    pub feedback_repair: u64,
    /// Datagrams and bytes (UDP payload) of symbols on the wire.
    pub datagrams: u64,
    pub wire_bytes: u64,
    /// Feedback datagrams that changed what the sender sends (repair rounds).
    pub feedback_rounds: u64,
    /// SHA-256 of every byte the sender read from its source, once it read the last.
    pub sha256: Option<Digest>,
}

impl SenderReport {
    /// # Errors
    /// [`WireError`] when `b` is not a valid done-ack datagram.
    pub fn parse(b: &[u8]) -> Result<Self, WireError> {
        let (v, sha256) = parse_report(b, Kind::DoneAck)?;
        Ok(Self {
            sha256,
            data_bytes: v[0],
            blocks: v[1],
            source_symbols: v[2],
            proactive_repair: v[3],
            feedback_repair: v[4],
            datagrams: v[5],
            wire_bytes: v[6],
            feedback_rounds: v[7],
        })
    }

    /// # Errors
    /// [`WireError::BufferTooSmall`] when `buf` is shorter than [`REPORT_LEN`].
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let v = [
            self.data_bytes,
            self.blocks,
            self.source_symbols,
            self.proactive_repair,
            self.feedback_repair,
            self.datagrams,
            self.wire_bytes,
            self.feedback_rounds,
            0,
        ];
        emit_report(v, self.sha256, Kind::DoneAck, buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> SymbolHeader {
        SymbolHeader {
            block: 7,
            esi: 3,
            k: 2,
            block_len: 6,
            seq: 0x0102,
            last: true,
        }
    }

    #[test]
    fn symbol_bytes_are_as_documented() {
        let mut buf = [0u8; 64];
        let n = Symbol::emit(&header(), &[9, 8, 7, 6], &mut buf).unwrap();
        let b = &buf[..n];
        assert_eq!(n, 32);
        assert_eq!(&b[0..4], &[0xC5, 1, 1, 0]);
        assert_eq!(
            &b[8..28],
            &[0, 0, 0, 7, 0, 3, 0, 2, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 1, 2]
        );
        assert_eq!(&b[28..], &[9, 8, 7, 6]);
        let s = Symbol::parse(b).unwrap();
        assert_eq!(s.header, header());
        assert_eq!(s.payload, &[9, 8, 7, 6]);
    }

    #[test]
    fn any_flipped_bit_or_truncation_is_rejected() {
        let mut buf = [0u8; 64];
        let n = Symbol::emit(&header(), &[9, 8, 7, 6], &mut buf).unwrap();
        for i in 0..n {
            for bit in 0..8 {
                let mut b = buf[..n].to_vec();
                b[i] ^= 1 << bit;
                assert!(Symbol::parse(&b).is_err(), "byte {i} bit {bit}");
            }
        }
        for len in 0..n {
            assert!(Symbol::parse(&buf[..len]).is_err(), "length {len}");
        }
    }

    #[test]
    fn inconsistent_block_length_is_rejected() {
        let mut buf = [0u8; 64];
        let mut h = header();
        h.block_len = 4; // two 4-byte symbols cannot carry only 4 bytes
        let n = Symbol::emit(&h, &[0; 4], &mut buf).unwrap();
        assert!(matches!(
            Symbol::parse(&buf[..n]),
            Err(WireError::BadSymbol(_))
        ));
        h.block_len = 9;
        let n = Symbol::emit(&h, &[0; 4], &mut buf).unwrap();
        assert!(Symbol::parse(&buf[..n]).is_err());
        h.k = 0;
        let n = Symbol::emit(&h, &[0; 4], &mut buf).unwrap();
        assert!(Symbol::parse(&buf[..n]).is_err());
    }

    #[test]
    fn feedback_round_trips_and_bounds_entries() {
        let fb = Feedback {
            serial: 1,
            cumulative: 2,
            covered: 5,
            highest_seq: 99,
            received: 80,
            ack_delay_us: 300,
            needs: vec![Need {
                block: 3,
                needed: 4,
            }],
        };
        let mut buf = [0u8; 1500];
        let n = fb.emit(&mut buf).unwrap();
        assert_eq!(n, 48);
        assert_eq!(&buf[42..48], &[0, 0, 0, 3, 0, 4]);
        assert_eq!(Feedback::parse(&buf[..n]).unwrap(), fb);
        // A count that claims more entries than the datagram holds.
        let mut b = buf[..n].to_vec();
        b[41] = 2;
        let c = checksum(&b);
        b[4..8].copy_from_slice(&c.to_be_bytes());
        assert_eq!(Feedback::parse(&b), Err(WireError::BadFeedback(2)));
    }

    #[test]
    fn reports_round_trip() {
        let mut buf = [0u8; 128];
        let r = ReceiverReport {
            delivered_bytes: 1,
            blocks: 2,
            datagrams_received: 3,
            useless_symbols: 4,
            rejected: 5,
            feedback_sent: 6,
            decode_delay_p50_us: 7,
            decode_delay_p99_us: 8,
            mismatched_bytes: 9,
            sha256: Some([3; 32]),
        };
        let n = r.emit(&mut buf).unwrap();
        assert_eq!(ReceiverReport::parse(&buf[..n]).unwrap(), r);
        assert!(SenderReport::parse(&buf[..n]).is_err());
        let s = SenderReport {
            data_bytes: 10,
            ..SenderReport::default()
        };
        let n = s.emit(&mut buf).unwrap();
        assert_eq!(n, REPORT_LEN);
        assert_eq!(SenderReport::parse(&buf[..n]).unwrap(), s);
        let n = r.emit(&mut buf).unwrap();
        assert_eq!(n, REPORT_DIGEST_LEN);
        assert!(ReceiverReport::parse(&buf[..n - 1]).is_err());
    }

    #[test]
    fn garbage_never_panics() {
        let mut x: u32 = 12345;
        for len in 0..200 {
            let b: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = Symbol::parse(&b);
            let _ = Feedback::parse(&b);
            let _ = ReceiverReport::parse(&b);
            let _ = SenderReport::parse(&b);
        }
    }
}
