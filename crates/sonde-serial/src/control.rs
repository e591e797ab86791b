//! Payloads of the control frames (`Begin`, `End`, `EndAck`): byte layout, `parse`, `emit`.
//!
//! They are the wire's own types (not the reports'), little-endian, fixed-size except the file
//! name, which is bounded.

/// The longest file name a `Begin` carries.
pub const MAX_NAME: usize = 255;

/// `Begin`: `block u16 | total u64 | name (0..=255 bytes, UTF-8)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Begin {
    pub block: u16,
    pub total: u64,
    pub name: String,
}

/// `End`: `total u64 | sha256 [32]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct End {
    pub total: u64,
    pub sha256: [u8; 32],
}

/// The receiver's verdict in an `EndAck`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Verdict {
    /// Length and SHA-256 match.
    Ok = 0,
    /// The receiver got another number of bytes than the `End` says.
    LengthMismatch = 1,
    /// Same length, other SHA-256.
    HashMismatch = 2,
}

/// `EndAck`: `verdict u8 | received u64 | sha256 [32] | crc_errors u32 | duplicates u32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndAck {
    pub verdict: Verdict,
    /// Bytes the receiver delivered.
    pub received: u64,
    /// SHA-256 of what the receiver delivered.
    pub sha256: [u8; 32],
    /// Broken frames the receiver saw during the transfer (each answered with a `Nak`).
    pub crc_errors: u32,
    /// Blocks it got again after its acknowledgement was lost (acknowledged, not delivered).
    pub duplicates: u32,
}

const END_LEN: usize = 8 + 32;
const END_ACK_LEN: usize = 1 + 8 + 32 + 4 + 4;

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let mut a = [0u8; 8];
    a.copy_from_slice(b.get(at..at + 8)?);
    Some(u64::from_le_bytes(a))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let mut a = [0u8; 4];
    a.copy_from_slice(b.get(at..at + 4)?);
    Some(u32::from_le_bytes(a))
}

fn sha_at(b: &[u8], at: usize) -> Option<[u8; 32]> {
    let mut a = [0u8; 32];
    a.copy_from_slice(b.get(at..at + 32)?);
    Some(a)
}

impl Begin {
    /// The payload bytes; a name longer than [`MAX_NAME`] is cut at a character boundary.
    pub fn emit(&self) -> Vec<u8> {
        let mut cut = self.name.len().min(MAX_NAME);
        while !self.name.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut v = Vec::with_capacity(10 + cut);
        v.extend_from_slice(&self.block.to_le_bytes());
        v.extend_from_slice(&self.total.to_le_bytes());
        v.extend_from_slice(&self.name.as_bytes()[..cut]);
        v
    }

    /// `None` when the payload is too short, the name too long or not UTF-8.
    pub fn parse(b: &[u8]) -> Option<Begin> {
        let block = u16::from_le_bytes([*b.first()?, *b.get(1)?]);
        let total = u64_at(b, 2)?;
        let name = b.get(10..)?;
        if name.len() > MAX_NAME {
            return None;
        }
        Some(Begin {
            block,
            total,
            name: String::from_utf8(name.to_vec()).ok()?,
        })
    }
}

impl End {
    pub fn emit(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(END_LEN);
        v.extend_from_slice(&self.total.to_le_bytes());
        v.extend_from_slice(&self.sha256);
        v
    }

    /// `None` unless the payload is exactly 40 bytes.
    pub fn parse(b: &[u8]) -> Option<End> {
        if b.len() != END_LEN {
            return None;
        }
        Some(End {
            total: u64_at(b, 0)?,
            sha256: sha_at(b, 8)?,
        })
    }
}

impl EndAck {
    pub fn emit(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(END_ACK_LEN);
        v.push(self.verdict as u8);
        v.extend_from_slice(&self.received.to_le_bytes());
        v.extend_from_slice(&self.sha256);
        v.extend_from_slice(&self.crc_errors.to_le_bytes());
        v.extend_from_slice(&self.duplicates.to_le_bytes());
        v
    }

    /// `None` unless the payload is exactly 49 bytes with a known verdict.
    pub fn parse(b: &[u8]) -> Option<EndAck> {
        if b.len() != END_ACK_LEN {
            return None;
        }
        let verdict = match b[0] {
            0 => Verdict::Ok,
            1 => Verdict::LengthMismatch,
            2 => Verdict::HashMismatch,
            _ => return None,
        };
        Some(EndAck {
            verdict,
            received: u64_at(b, 1)?,
            sha256: sha_at(b, 9)?,
            crc_errors: u32_at(b, 41)?,
            duplicates: u32_at(b, 45)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn begin_layout_and_round_trip() {
        let b = Begin {
            block: 0x0102,
            total: 5,
            name: "f.bin".into(),
        };
        let bytes = b.emit();
        assert_eq!(&bytes[..10], &[2, 1, 5, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[10..], b"f.bin");
        assert_eq!(Begin::parse(&bytes), Some(b));
        assert_eq!(Begin::parse(&[1, 2, 3]), None);
    }

    #[test]
    fn end_ack_round_trip_and_rejects() {
        let a = EndAck {
            verdict: Verdict::HashMismatch,
            received: 99,
            sha256: [7; 32],
            crc_errors: 3,
            duplicates: 1,
        };
        let bytes = a.emit();
        assert_eq!(bytes.len(), 49);
        assert_eq!(bytes[0], 2);
        assert_eq!(EndAck::parse(&bytes), Some(a));
        let mut bad = bytes.clone();
        bad[0] = 9;
        assert_eq!(EndAck::parse(&bad), None);
        assert_eq!(EndAck::parse(&bytes[..48]), None);
        let e = End {
            total: 1,
            sha256: [1; 32],
        };
        assert_eq!(End::parse(&e.emit()), Some(e));
    }
}
