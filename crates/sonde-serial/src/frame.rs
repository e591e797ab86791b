//! Frames on the serial line: RFC 1662 (PPP in HDLC-like framing) byte stuffing around a small
//! header, the payload and a CRC-32.
//!
//! Why byte stuffing rather than a length field alone: a serial line has no packet boundaries,
//! and after a lost or corrupted byte the receiver must find the next frame. With RFC 1662's
//! stuffing the flag byte `0x7E` appears on the line *only* between frames (a payload `0x7E`
//! is sent as `0x7D 0x5E`), so no payload byte can fake a frame start, and resynchronisation
//! is immediate: the next flag ends whatever was broken. A corrupted length field therefore
//! never makes the receiver wait for bytes that will not come.
//!
//! Why CRC-32/ISO-HDLC (the FCS-32 of RFC 1662, as in Ethernet): it detects every burst error
//! of up to 32 bits and all odd bit counts in the frames used here (at most a few kilobytes),
//! where CRC-16 leaves one corrupted frame in 65 536 undetected, too many for a tool whose job
//! is to count errors. Four bytes per frame is the price; the report shows it in bytes/s.
//!
//! Layout of a frame between the flags, before stuffing (all integers little-endian):
//!
//! ```text
//! kind u8 | transfer u16 | seq u32 | len u16 | payload (len bytes) | crc32 of all before
//! ```

/// Marks the start and the end of every frame on the line.
pub const FLAG: u8 = 0x7E;
/// Escapes a `FLAG` or `ESC` byte inside a frame (the next byte is XORed with `0x20`).
pub const ESC: u8 = 0x7D;
const ESC_XOR: u8 = 0x20;
/// The largest payload a frame may carry (blocks are 8..256 bytes in practice).
pub const MAX_PAYLOAD: usize = 4096;

/// Byte ranges of the header fields, before stuffing.
mod field {
    use std::ops::Range;
    pub const KIND: usize = 0;
    pub const TRANSFER: Range<usize> = 1..3;
    pub const SEQ: Range<usize> = 3..7;
    pub const LEN: Range<usize> = 7..9;
    pub const HEADER_LEN: usize = 9;
    pub const CRC_LEN: usize = 4;
}

/// The most bytes an unstuffed frame may hold; a longer run between flags is dropped.
pub const MAX_FRAME: usize = field::HEADER_LEN + MAX_PAYLOAD + field::CRC_LEN;

const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

/// What a frame is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Starts a transfer: block size, file length, file name (seq 0).
    Begin = 1,
    /// One block of the file (seq 1..=blocks).
    Data = 2,
    /// The receiver has the frame with this seq.
    Ack = 3,
    /// The receiver saw a broken frame; it still expects this seq.
    Nak = 4,
    /// Ends a transfer: the whole file's length and SHA-256 (seq blocks + 1).
    End = 5,
    /// The receiver's verdict on an `End`: status, its SHA-256, its error counts.
    EndAck = 6,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Begin,
            2 => Kind::Data,
            3 => Kind::Ack,
            4 => Kind::Nak,
            5 => Kind::End,
            6 => Kind::EndAck,
            _ => return None,
        })
    }
}

/// One validated frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: Kind,
    /// Tells transfers apart, so a stale answer of an earlier one is never taken for this one.
    pub transfer: u16,
    pub seq: u32,
    pub payload: Vec<u8>,
}

/// Why bytes between two flags are not a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {0} bytes is shorter than a header and CRC")]
    Short(usize),
    #[error("CRC mismatch")]
    Crc,
    #[error("unknown frame kind {0}")]
    Kind(u8),
    #[error("length field says {declared} payload bytes, the frame holds {actual}")]
    Length { declared: usize, actual: usize },
    #[error("more than {MAX_FRAME} bytes without a closing flag")]
    TooLong,
    #[error("frame aborted (escape followed by a flag)")]
    Aborted,
}

impl Frame {
    /// A frame without payload (`Ack`, `Nak`).
    pub fn bare(kind: Kind, transfer: u16, seq: u32) -> Frame {
        Frame {
            kind,
            transfer,
            seq,
            payload: Vec::new(),
        }
    }

    /// The frame as it goes on the line: flag, stuffed header + payload + CRC, flag.
    ///
    /// The payload must not exceed [`MAX_PAYLOAD`] (callers build frames from bounded blocks);
    /// a longer one is cut there so the length field stays truthful.
    pub fn emit(&self) -> Vec<u8> {
        let payload = &self.payload[..self.payload.len().min(MAX_PAYLOAD)];
        let mut raw = Vec::with_capacity(field::HEADER_LEN + payload.len() + field::CRC_LEN);
        raw.push(self.kind as u8);
        raw.extend_from_slice(&self.transfer.to_le_bytes());
        raw.extend_from_slice(&self.seq.to_le_bytes());
        raw.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        raw.extend_from_slice(payload);
        raw.extend_from_slice(&CRC32.checksum(&raw).to_le_bytes());
        let mut out = Vec::with_capacity(raw.len() + raw.len() / 8 + 2);
        out.push(FLAG);
        for &b in &raw {
            if b == FLAG || b == ESC {
                out.push(ESC);
                out.push(b ^ ESC_XOR);
            } else {
                out.push(b);
            }
        }
        out.push(FLAG);
        out
    }

    /// Parses the unstuffed bytes found between two flags.
    ///
    /// # Errors
    /// A [`FrameError`] saying why the bytes are not a frame; the caller drops them.
    pub fn parse(raw: &[u8]) -> Result<Frame, FrameError> {
        if raw.len() < field::HEADER_LEN + field::CRC_LEN {
            return Err(FrameError::Short(raw.len()));
        }
        let (body, crc) = raw.split_at(raw.len() - field::CRC_LEN);
        let mut crc_bytes = [0u8; 4];
        crc_bytes.copy_from_slice(crc);
        if CRC32.checksum(body) != u32::from_le_bytes(crc_bytes) {
            return Err(FrameError::Crc);
        }
        let kind = Kind::from_byte(body[field::KIND]).ok_or(FrameError::Kind(body[field::KIND]))?;
        let transfer = u16::from_le_bytes([body[field::TRANSFER][0], body[field::TRANSFER][1]]);
        let s = &body[field::SEQ];
        let seq = u32::from_le_bytes([s[0], s[1], s[2], s[3]]);
        let declared = usize::from(u16::from_le_bytes([
            body[field::LEN][0],
            body[field::LEN][1],
        ]));
        let payload = &body[field::HEADER_LEN..];
        if declared != payload.len() || declared > MAX_PAYLOAD {
            return Err(FrameError::Length {
                declared,
                actual: payload.len(),
            });
        }
        Ok(Frame {
            kind,
            transfer,
            seq,
            payload: payload.to_vec(),
        })
    }
}

/// Turns the byte stream of a serial line back into frames, one byte at a time.
///
/// Bytes before the first flag are counted as noise. Two flags in a row (the closing flag of
/// one frame and the opening flag of the next) are one boundary, as RFC 1662 allows.
#[derive(Debug, Default)]
pub struct Deframer {
    buf: Vec<u8>,
    synced: bool,
    escaped: bool,
    overflow: bool,
    /// Bytes seen before the first flag.
    pub noise: u64,
}

impl Deframer {
    /// A deframer hunting for its first flag.
    pub fn new() -> Deframer {
        Deframer::default()
    }

    /// Feeds one byte; at a closing flag returns the frame, or why the bytes were not one.
    pub fn push(&mut self, byte: u8) -> Option<Result<Frame, FrameError>> {
        if !self.synced {
            if byte == FLAG {
                self.synced = true;
            } else {
                self.noise += 1;
            }
            return None;
        }
        if byte == FLAG {
            let aborted = self.escaped;
            let result = if self.buf.is_empty() && !self.overflow && !aborted {
                None
            } else if self.overflow {
                Some(Err(FrameError::TooLong))
            } else if aborted {
                Some(Err(FrameError::Aborted))
            } else {
                Some(Frame::parse(&self.buf))
            };
            self.buf.clear();
            self.escaped = false;
            self.overflow = false;
            return result;
        }
        if byte == ESC {
            self.escaped = true;
            return None;
        }
        let b = if std::mem::take(&mut self.escaped) {
            byte ^ ESC_XOR
        } else {
            byte
        };
        if self.buf.len() >= MAX_FRAME {
            self.overflow = true;
        } else {
            self.buf.push(b);
        }
        None
    }

    /// Feeds a run of bytes; every frame or broken frame found goes to `out`.
    pub fn push_all(&mut self, bytes: &[u8], mut out: impl FnMut(Result<Frame, FrameError>)) {
        for &b in bytes {
            if let Some(r) = self.push(b) {
                out(r);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(bytes: &[u8]) -> Vec<Result<Frame, FrameError>> {
        let mut d = Deframer::new();
        let mut v = Vec::new();
        d.push_all(bytes, |r| v.push(r));
        v
    }

    #[test]
    fn ack_has_this_exact_layout() {
        let f = Frame::bare(Kind::Ack, 0x0102, 7);
        let wire = f.emit();
        let crc = CRC32.checksum(&[3, 2, 1, 7, 0, 0, 0, 0, 0]).to_le_bytes();
        let mut want = vec![FLAG, 3, 2, 1, 7, 0, 0, 0, 0, 0];
        for b in crc {
            if b == FLAG || b == ESC {
                want.extend_from_slice(&[ESC, b ^ 0x20]);
            } else {
                want.push(b);
            }
        }
        want.push(FLAG);
        assert_eq!(wire, want);
        assert_eq!(frames(&wire), vec![Ok(f)]);
    }

    #[test]
    fn payload_flags_are_stuffed_and_never_appear_inside() {
        let f = Frame {
            kind: Kind::Data,
            transfer: 9,
            seq: 1,
            payload: vec![FLAG, ESC, FLAG, 0x20, 0x5E],
        };
        let wire = f.emit();
        assert_eq!(wire.iter().filter(|&&b| b == FLAG).count(), 2);
        assert_eq!(frames(&wire), vec![Ok(f)]);
    }

    #[test]
    fn garbage_before_and_between_frames_resyncs() {
        let a = Frame::bare(Kind::Ack, 1, 1);
        let b = Frame::bare(Kind::Nak, 1, 2);
        let mut line = vec![0x00, 0x41, 0x42];
        line.extend(a.emit());
        line.extend([0x55, 0x66]);
        line.extend(b.emit());
        let got = frames(&line);
        assert_eq!(got[0], Ok(a));
        assert!(got[1].is_err(), "noise between frames is one broken frame");
        assert_eq!(got[2], Ok(b));
    }

    #[test]
    fn every_single_bit_flip_is_caught() {
        let f = Frame {
            kind: Kind::Data,
            transfer: 3,
            seq: 42,
            payload: (0u8..64).collect(),
        };
        let wire = f.emit();
        for i in 1..wire.len() - 1 {
            for bit in 0..8 {
                let mut w = wire.clone();
                w[i] ^= 1 << bit;
                let got = frames(&w);
                assert!(
                    got.iter().all(|r| r.as_ref() != Ok(&f)),
                    "flip of byte {i} bit {bit} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn runaway_frame_is_bounded() {
        let mut line = vec![FLAG];
        line.extend(std::iter::repeat_n(0x11, MAX_FRAME + 100));
        line.push(FLAG);
        line.extend(Frame::bare(Kind::Ack, 1, 5).emit());
        let got = frames(&line);
        assert_eq!(got[0], Err(FrameError::TooLong));
        assert_eq!(got[1], Ok(Frame::bare(Kind::Ack, 1, 5)));
    }

    #[test]
    fn short_and_unknown_frames_are_rejected() {
        assert_eq!(Frame::parse(&[1, 2, 3]), Err(FrameError::Short(3)));
        let mut raw = vec![9, 0, 0, 0, 0, 0, 0, 0, 0];
        raw.extend(CRC32.checksum(&raw).to_le_bytes());
        assert_eq!(Frame::parse(&raw), Err(FrameError::Kind(9)));
        let mut raw = vec![3, 0, 0, 0, 0, 0, 0, 5, 0];
        raw.extend(CRC32.checksum(&raw).to_le_bytes());
        assert_eq!(
            Frame::parse(&raw),
            Err(FrameError::Length {
                declared: 5,
                actual: 0
            })
        );
    }
}
