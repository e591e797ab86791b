//! The iperf3 control byte stream: state bytes, length-prefixed JSON and error pairs.
//!
//! iperf3 writes state bytes and JSON messages on one TCP connection with no other framing, so
//! a reader has to know what comes next; the session state machines ask this buffer for a
//! state byte, a JSON message or the two big-endian `int32`s after SERVER_ERROR. A JSON message
//! is a 4-byte big-endian length and that many bytes of UTF-8 JSON. The length is checked
//! before anything is buffered (CVE-2023-38403 was an unchecked length): parameters are
//! limited to 8 KiB as in iperf3 3.18+, results to [`MAX_RESULTS_LEN`].

use serde_json::Value;
use thiserror::Error;

/// Largest parameter message accepted (iperf3 3.18+ uses the same limit).
pub const MAX_PARAMS_LEN: usize = 8192;
/// Largest results message accepted (room for `--get-server-output`, still bounded).
pub const MAX_RESULTS_LEN: usize = 1 << 20;
/// Bytes a reader may hold unconsumed before the peer is considered to be flooding it.
pub const MAX_BUFFERED: usize = MAX_RESULTS_LEN + 4096;

/// Why a JSON message or the byte stream is not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CodecError {
    #[error("JSON message of {len} bytes exceeds the limit of {limit} bytes")]
    TooLong { len: usize, limit: usize },
    #[error("JSON message is not valid JSON: {0}")]
    BadJson(String),
    #[error("JSON message is not an object")]
    NotObject,
    #[error("peer sent more than {MAX_BUFFERED} bytes that were not asked for")]
    Flood,
    #[error("JSON message cannot be encoded: {0}")]
    Encode(String),
}

/// Encodes `v` as a length-prefixed JSON message.
///
/// # Errors
/// [`CodecError::Encode`] when `v` cannot be serialised, [`CodecError::TooLong`] past `limit`.
pub fn encode_json(v: &Value, limit: usize) -> Result<Vec<u8>, CodecError> {
    let body = serde_json::to_vec(v).map_err(|e| CodecError::Encode(e.to_string()))?;
    if body.len() > limit {
        return Err(CodecError::TooLong {
            len: body.len(),
            limit,
        });
    }
    let len = u32::try_from(body.len()).map_err(|_| CodecError::TooLong {
        len: body.len(),
        limit,
    })?;
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Bytes received on a control connection and not yet consumed.
#[derive(Debug, Default, Clone)]
pub struct InBuffer {
    buf: Vec<u8>,
}

impl InBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    ///
    /// # Errors
    /// [`CodecError::Flood`] when more than [`MAX_BUFFERED`] bytes would be pending.
    pub fn push(&mut self, data: &[u8]) -> Result<(), CodecError> {
        if self.buf.len() + data.len() > MAX_BUFFERED {
            return Err(CodecError::Flood);
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    /// Bytes pending.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The next byte without consuming it.
    pub fn peek(&self) -> Option<u8> {
        self.buf.first().copied()
    }

    /// Takes one byte, if there is one.
    pub fn take_byte(&mut self) -> Option<u8> {
        if self.buf.is_empty() {
            return None;
        }
        Some(self.buf.remove(0))
    }

    /// Takes the two big-endian `int32`s that follow SERVER_ERROR, once all 8 bytes are here.
    pub fn take_i32_pair(&mut self) -> Option<(i32, i32)> {
        if self.buf.len() < 8 {
            return None;
        }
        let a = i32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        let b = i32::from_be_bytes([self.buf[4], self.buf[5], self.buf[6], self.buf[7]]);
        self.buf.drain(..8);
        Some((a, b))
    }

    /// Takes one big-endian `int32` once its 4 bytes are here (the lone error number iperf3
    /// 3.12 sends after SERVER_ERROR for a failed authentication).
    pub fn take_i32(&mut self) -> Option<i32> {
        let b = self.buf.get(..4)?;
        let v = i32::from_be_bytes([b[0], b[1], b[2], b[3]]);
        self.buf.drain(..4);
        Some(v)
    }

    /// Takes one JSON object message once it is complete.
    ///
    /// # Errors
    /// [`CodecError::TooLong`] as soon as the length prefix exceeds `limit` (nothing more is
    /// read), [`CodecError::BadJson`] / [`CodecError::NotObject`] for a complete bad body.
    pub fn take_json(&mut self, limit: usize) -> Result<Option<Value>, CodecError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]);
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        if len > limit {
            return Err(CodecError::TooLong { len, limit });
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let parsed = serde_json::from_slice::<Value>(&self.buf[4..4 + len]);
        self.buf.drain(..4 + len);
        match parsed {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            Ok(_) => Err(CodecError::NotObject),
            Err(e) => Err(CodecError::BadJson(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_round_trip_with_big_endian_length() {
        let bytes = encode_json(&json!({"tcp": true}), MAX_PARAMS_LEN).unwrap();
        assert_eq!(&bytes[..4], &[0, 0, 0, 12]);
        let mut b = InBuffer::new();
        b.push(&bytes[..7]).unwrap();
        assert_eq!(b.take_json(MAX_PARAMS_LEN), Ok(None));
        b.push(&bytes[7..]).unwrap();
        b.push(&[0x0A]).unwrap();
        assert_eq!(b.take_json(MAX_PARAMS_LEN), Ok(Some(json!({"tcp": true}))));
        assert_eq!(b.take_byte(), Some(0x0A));
    }

    #[test]
    fn oversized_prefix_is_rejected_before_the_body() {
        let mut b = InBuffer::new();
        b.push(&[0xFF, 0xFF, 0xFF, 0xFF]).unwrap();
        assert_eq!(
            b.take_json(MAX_PARAMS_LEN),
            Err(CodecError::TooLong {
                len: 0xFFFF_FFFF,
                limit: MAX_PARAMS_LEN
            })
        );
        let mut b = InBuffer::new();
        b.push(&[0, 0, 0x20, 0x01]).unwrap();
        assert!(matches!(
            b.take_json(MAX_PARAMS_LEN),
            Err(CodecError::TooLong { len: 8193, .. })
        ));
    }

    #[test]
    fn bad_bodies() {
        let mut b = InBuffer::new();
        b.push(&[0, 0, 0, 2, b'[', b']']).unwrap();
        assert_eq!(b.take_json(100), Err(CodecError::NotObject));
        b.push(&[0, 0, 0, 2, b'{', b'x']).unwrap();
        assert!(matches!(b.take_json(100), Err(CodecError::BadJson(_))));
        assert!(encode_json(&json!({"a": "x".repeat(100)}), 50).is_err());
    }

    #[test]
    fn error_pair_and_flood() {
        let mut b = InBuffer::new();
        b.push(&[0, 0, 0, 27, 0, 0, 0]).unwrap();
        assert_eq!(b.take_i32_pair(), None);
        b.push(&[0]).unwrap();
        assert_eq!(b.take_i32_pair(), Some((27, 0)));
        assert_eq!(b.push(&vec![0; MAX_BUFFERED + 1]), Err(CodecError::Flood));
    }
}
