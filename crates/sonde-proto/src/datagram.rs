//! The header at the start of every sonde UDP test datagram.
//!
//! Layout (network byte order), 16 bytes, the rest of the datagram is payload:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | sequence number, starting at 1 (u64: no wrap in any realistic test, unlike iperf3's u32) |
//! | 8 | 8 | sender's monotonic clock at send time, nanoseconds |
//!
//! A sequence number of 0 never appears in data; the receiver rejects it. The jitter estimate
//! (RFC 3550) only needs send-time differences, so the two ends' clocks need not agree.

use thiserror::Error;

/// Size of the header in bytes, also the smallest allowed datagram (`-l 16`).
pub const HEADER_LEN: usize = 16;

/// A parsed datagram header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DatagramHeader {
    pub seq: u64,
    pub send_ns: u64,
}

/// Why a datagram header could not be parsed or written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DatagramError {
    #[error("datagram of {0} bytes is shorter than the {HEADER_LEN}-byte sonde header")]
    TooShort(usize),
    #[error("datagram has sequence number 0, which sonde never sends")]
    ZeroSequence,
}

impl DatagramHeader {
    /// Parses the header at the start of `buf`.
    ///
    /// # Errors
    /// [`DatagramError`] when `buf` is too short or the sequence number is 0.
    pub fn parse(buf: &[u8]) -> Result<Self, DatagramError> {
        let (seq, send) = match (buf.get(0..8), buf.get(8..16)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(DatagramError::TooShort(buf.len())),
        };
        let seq = u64::from_be_bytes(
            seq.try_into()
                .map_err(|_| DatagramError::TooShort(buf.len()))?,
        );
        let send_ns = u64::from_be_bytes(
            send.try_into()
                .map_err(|_| DatagramError::TooShort(buf.len()))?,
        );
        if seq == 0 {
            return Err(DatagramError::ZeroSequence);
        }
        Ok(Self { seq, send_ns })
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`.
    ///
    /// # Errors
    /// [`DatagramError::TooShort`] when `buf` cannot hold it.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), DatagramError> {
        let len = buf.len();
        let dst = buf
            .get_mut(..HEADER_LEN)
            .ok_or(DatagramError::TooShort(len))?;
        dst[..8].copy_from_slice(&self.seq.to_be_bytes());
        dst[8..].copy_from_slice(&self.send_ns.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_literal_bytes() {
        let bytes = [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 9, 0xAA];
        let h = DatagramHeader::parse(&bytes).unwrap();
        assert_eq!(
            h,
            DatagramHeader {
                seq: 0x0102,
                send_ns: 9
            }
        );
    }

    #[test]
    fn round_trips_large_values() {
        let mut buf = [0u8; 64];
        let h = DatagramHeader {
            seq: u64::MAX,
            send_ns: 1 << 62,
        };
        h.emit(&mut buf).unwrap();
        assert_eq!(DatagramHeader::parse(&buf).unwrap(), h);
    }

    #[test]
    fn rejects_short_and_zero() {
        assert_eq!(
            DatagramHeader::parse(&[0; 15]),
            Err(DatagramError::TooShort(15))
        );
        assert_eq!(
            DatagramHeader::parse(&[0; 16]),
            Err(DatagramError::ZeroSequence)
        );
        assert!(DatagramHeader { seq: 1, send_ns: 0 }
            .emit(&mut [0; 8])
            .is_err());
    }
}
