//! The first bytes of a TCP connection to a sonde server.
//!
//! One port serves control connections, TCP data streams and (in a later release) iperf3
//! clients, so the server classifies a connection by its first bytes:
//!
//! - control: `SONDE/C1` (8 bytes), then control frames;
//! - data stream: `SONDE/D1`, the 16-byte session cookie, the stream id (u32, big-endian),
//!   then payload;
//! - anything else: an iperf3 client sends a 37-byte cookie of `a-z2-7` characters, which can
//!   never start with `S`; it is reported as [`Preamble::Foreign`].

use thiserror::Error;

/// Magic bytes opening a control connection.
pub const CONTROL_MAGIC: &[u8; 8] = b"SONDE/C1";
/// Magic bytes opening a data stream.
pub const DATA_MAGIC: &[u8; 8] = b"SONDE/D1";
/// Magic bytes opening a TCP request/response (`sonde latency --tcp-rr`) connection.
pub const RR_MAGIC: &[u8; 8] = b"SONDE/R1";
/// Length of a session cookie.
pub const COOKIE_LEN: usize = 16;
/// Bytes a data-stream preamble occupies.
pub const DATA_PREAMBLE_LEN: usize = 8 + COOKIE_LEN + 4;

/// A session cookie: random bytes the server hands out, tying data streams to a test.
pub type Cookie = [u8; COOKIE_LEN];

/// What a connection's first bytes say it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preamble {
    Control,
    Data {
        cookie: Cookie,
        stream_id: u32,
    },
    /// TCP request/response latency transactions (see `crate::probe`).
    Rr,
    /// Not sonde: the bytes read so far, for another protocol handler.
    Foreign(Vec<u8>),
}

/// Why a preamble is not complete yet or not acceptable.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PreambleError {
    #[error("need {0} more bytes")]
    Incomplete(usize),
}

/// Classifies the first bytes of a connection.
///
/// # Errors
/// [`PreambleError::Incomplete`] with how many more bytes are needed before a verdict.
pub fn classify(bytes: &[u8]) -> Result<Preamble, PreambleError> {
    let probe = &bytes[..bytes.len().min(8)];
    let is_prefix = |magic: &[u8; 8]| magic.starts_with(probe);
    if !is_prefix(CONTROL_MAGIC) && !is_prefix(DATA_MAGIC) && !is_prefix(RR_MAGIC) {
        return Ok(Preamble::Foreign(bytes.to_vec()));
    }
    if bytes.len() < 8 {
        return Err(PreambleError::Incomplete(8 - bytes.len()));
    }
    if probe == CONTROL_MAGIC {
        return Ok(Preamble::Control);
    }
    if probe == RR_MAGIC {
        return Ok(Preamble::Rr);
    }
    if bytes.len() < DATA_PREAMBLE_LEN {
        return Err(PreambleError::Incomplete(DATA_PREAMBLE_LEN - bytes.len()));
    }
    let mut cookie = [0u8; COOKIE_LEN];
    cookie.copy_from_slice(&bytes[8..8 + COOKIE_LEN]);
    let mut id = [0u8; 4];
    id.copy_from_slice(&bytes[8 + COOKIE_LEN..DATA_PREAMBLE_LEN]);
    Ok(Preamble::Data {
        cookie,
        stream_id: u32::from_be_bytes(id),
    })
}

/// The preamble a client writes on a new data stream.
pub fn data_preamble(cookie: &Cookie, stream_id: u32) -> [u8; DATA_PREAMBLE_LEN] {
    let mut out = [0u8; DATA_PREAMBLE_LEN];
    out[..8].copy_from_slice(DATA_MAGIC);
    out[8..8 + COOKIE_LEN].copy_from_slice(cookie);
    out[8 + COOKIE_LEN..].copy_from_slice(&stream_id.to_be_bytes());
    out
}

/// Renders a cookie as lower-case hex (for JSON and logs).
pub fn cookie_hex(cookie: &Cookie) -> String {
    cookie.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_needs_all_eight_bytes() {
        assert_eq!(classify(b"SON"), Err(PreambleError::Incomplete(5)));
        assert_eq!(classify(b"SONDE/C1"), Ok(Preamble::Control));
    }

    #[test]
    fn data_round_trip() {
        let cookie = [7u8; COOKIE_LEN];
        let bytes = data_preamble(&cookie, 3);
        assert_eq!(classify(&bytes[..20]), Err(PreambleError::Incomplete(8)));
        assert_eq!(
            classify(&bytes),
            Ok(Preamble::Data {
                cookie,
                stream_id: 3
            })
        );
    }

    #[test]
    fn iperf3_cookie_is_foreign_from_first_byte() {
        assert_eq!(classify(b"a"), Ok(Preamble::Foreign(b"a".to_vec())));
        assert!(matches!(classify(b"SONDX"), Ok(Preamble::Foreign(_))));
        assert!(matches!(classify(b""), Err(PreambleError::Incomplete(8))));
    }

    #[test]
    fn rr_preamble() {
        assert_eq!(classify(b"SONDE/R"), Err(PreambleError::Incomplete(1)));
        assert_eq!(classify(b"SONDE/R1"), Ok(Preamble::Rr));
    }

    #[test]
    fn cookie_hex_is_lowercase() {
        assert_eq!(cookie_hex(&[0xAB; COOKIE_LEN]).len(), 32);
        assert!(cookie_hex(&[0xAB; COOKIE_LEN]).starts_with("abab"));
    }
}
