//! Length-prefixed, typed control frames.
//!
//! Layout: a 4-byte big-endian length `L` (of everything after it), a 1-byte message type, then
//! `L - 1` bytes of body. `L` must be between 1 and [`MAX_FRAME_LEN`]; a larger prefix is
//! rejected before anything is allocated (iperf3's CVE-2023-38403 was an unchecked length).
//!
//! Type bytes below [`OPTIONAL_TYPE_BASE`] are mandatory: a peer that does not know one must end
//! the session. Types from [`OPTIONAL_TYPE_BASE`] up may be skipped by peers that do not know
//! them, which is how later releases add messages without breaking older peers.

use thiserror::Error;

/// Largest accepted value of the length prefix.
pub const MAX_FRAME_LEN: usize = 256 * 1024;
/// First message type that a peer may ignore when it does not know it.
pub const OPTIONAL_TYPE_BASE: u8 = 0x80;

/// One decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub msg_type: u8,
    pub body: Vec<u8>,
}

/// Why the byte stream is not a valid sequence of frames.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("control frame length {0} is outside 1..={MAX_FRAME_LEN}")]
    BadLength(u32),
}

/// Incremental decoder: push bytes as they arrive, pop complete frames.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buf: Vec<u8>,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes buffered but not yet returned as frames.
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// The bytes buffered but not yet returned as frames: after a [`FrameError`], what the
    /// peer sent instead (for `crate::foreign::recognise`).
    pub fn pending(&self) -> &[u8] {
        &self.buf
    }

    /// Returns the next complete frame, if one is buffered.
    ///
    /// # Errors
    /// [`FrameError::BadLength`] when the length prefix is 0 or over the limit; the stream is
    /// unusable after that.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, FrameError> {
        // The limit is below 2^24, so a valid prefix always starts with a zero byte: reject a
        // foreign byte stream (an iperf3 state byte, say) at once instead of waiting for more.
        if let Some(&first) = self.buf.first() {
            if first != 0 {
                return Err(FrameError::BadLength(u32::from(first) << 24));
            }
        }
        let Some(prefix) = self.buf.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
        if len == 0 || len as usize > MAX_FRAME_LEN {
            return Err(FrameError::BadLength(len));
        }
        let total = 4 + len as usize;
        if self.buf.len() < total {
            return Ok(None);
        }
        let msg_type = self.buf[4];
        let body = self.buf[5..total].to_vec();
        self.buf.drain(..total);
        Ok(Some(Frame { msg_type, body }))
    }
}

/// Encodes one frame.
///
/// # Errors
/// [`FrameError::BadLength`] when the body is too large for a frame.
pub fn encode(msg_type: u8, body: &[u8]) -> Result<Vec<u8>, FrameError> {
    let len = body.len() + 1;
    if len > MAX_FRAME_LEN {
        return Err(FrameError::BadLength(
            u32::try_from(len).unwrap_or(u32::MAX),
        ));
    }
    let mut out = Vec::with_capacity(4 + len);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    out.push(msg_type);
    out.extend_from_slice(body);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_literal_frame_split_across_pushes() {
        let mut d = FrameDecoder::new();
        d.push(&[0, 0, 0, 3, 0x01]);
        assert_eq!(d.next_frame(), Ok(None));
        d.push(&[b'{', b'}', 0, 0]);
        assert_eq!(
            d.next_frame(),
            Ok(Some(Frame {
                msg_type: 1,
                body: b"{}".to_vec()
            }))
        );
        assert_eq!(d.buffered(), 2);
        assert_eq!(d.next_frame(), Ok(None));
    }

    #[test]
    fn two_frames_in_one_segment() {
        let mut bytes = encode(2, b"a").unwrap();
        bytes.extend(encode(0x81, b"").unwrap());
        let mut d = FrameDecoder::new();
        d.push(&bytes);
        assert_eq!(d.next_frame().unwrap().unwrap().body, b"a");
        assert_eq!(d.next_frame().unwrap().unwrap().msg_type, 0x81);
    }

    #[test]
    fn rejects_oversized_and_zero_prefix_without_allocating() {
        let mut d = FrameDecoder::new();
        d.push(&[0xFF, 0xFF, 0xFF, 0xFF]);
        assert_eq!(d.next_frame(), Err(FrameError::BadLength(0xFF00_0000)));
        let mut d = FrameDecoder::new();
        d.push(&[0, 0, 0, 0]);
        assert_eq!(d.next_frame(), Err(FrameError::BadLength(0)));
    }

    #[test]
    fn foreign_first_byte_is_rejected_immediately() {
        let mut d = FrameDecoder::new();
        d.push(&[0x09]);
        assert_eq!(d.next_frame(), Err(FrameError::BadLength(0x0900_0000)));
    }

    #[test]
    fn encode_rejects_huge_body() {
        assert!(encode(1, &vec![0u8; MAX_FRAME_LEN]).is_err());
        assert_eq!(encode(1, b"xy").unwrap(), vec![0, 0, 0, 3, 1, b'x', b'y']);
    }
}
