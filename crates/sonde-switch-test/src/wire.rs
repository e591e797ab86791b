//! The switch test's one message of its own: the server's reply once the client has ended
//! its stream, saying what arrived (its SHA-256 and byte count) and how the switches looked
//! from the receiving end (its switch records, as JSON).
//!
//! ```text
//!  0      4                  36           44          48
//! +------+------------------+------------+-----------+--------------------------+
//! | SWTR | SHA-256 (32)     | bytes (u64)| len (u32) | body: len bytes of JSON  |
//! +------+------------------+------------+-----------+--------------------------+
//! ```
//!
//! Integers are big-endian. The body is [`ServerSide`] (the `server` part of the document),
//! at most [`MAX_BODY`] bytes. The bytes come from the peer: [`Head::parse`] and
//! [`parse_body`] check them and refuse what does not fit, never panic.

use sonde_schema::switch_test::ServerSide;

/// The reply's first four bytes.
pub const MAGIC: &[u8; 4] = b"SWTR";
/// The head's length: magic, SHA-256, byte count, body length.
pub const HEAD_LEN: usize = 48;
/// The largest body accepted (and sent).
pub const MAX_BODY: usize = 16 << 20;

/// Why a reply was refused (or could not be made).
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error("the server's reply is {0} bytes, shorter than its {HEAD_LEN}-byte head")]
    Short(usize),
    #[error("the server's reply does not start with SWTR")]
    Magic,
    #[error("the server's switch records claim {0} bytes")]
    TooLong(usize),
    #[error("the server's switch records are not valid: {0}")]
    Body(serde_json::Error),
    #[error("cannot encode the switch records: {0}")]
    Encode(serde_json::Error),
}

/// The reply's fixed part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The server's SHA-256 of the bytes it received.
    pub sha256: [u8; 32],
    /// Bytes the server received.
    pub bytes: u64,
    /// The body's length that follows.
    pub body_len: usize,
}

impl Head {
    /// The head at the start of `b` (bytes after [`HEAD_LEN`] are not looked at).
    ///
    /// # Errors
    /// [`ReplyError::Short`] when `b` is shorter than the head, [`ReplyError::Magic`] when it
    /// does not start with `SWTR`, [`ReplyError::TooLong`] when the body claims more than
    /// [`MAX_BODY`].
    pub fn parse(b: &[u8]) -> Result<Head, ReplyError> {
        let head = b.get(..HEAD_LEN).ok_or(ReplyError::Short(b.len()))?;
        let (magic, rest) = head.split_at(4);
        if magic != MAGIC {
            return Err(ReplyError::Magic);
        }
        let (sha, rest) = rest.split_at(32);
        let (bytes, len) = rest.split_at(8);
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(sha);
        let mut n = [0u8; 8];
        n.copy_from_slice(bytes);
        let mut l = [0u8; 4];
        l.copy_from_slice(len);
        let body_len = u32::from_be_bytes(l) as usize;
        if body_len > MAX_BODY {
            return Err(ReplyError::TooLong(body_len));
        }
        Ok(Head {
            sha256,
            bytes: u64::from_be_bytes(n),
            body_len,
        })
    }

    /// The head's bytes.
    pub fn emit(&self) -> [u8; HEAD_LEN] {
        let mut b = [0u8; HEAD_LEN];
        let (magic, rest) = b.split_at_mut(4);
        magic.copy_from_slice(MAGIC);
        let (sha, rest) = rest.split_at_mut(32);
        sha.copy_from_slice(&self.sha256);
        let (bytes, len) = rest.split_at_mut(8);
        bytes.copy_from_slice(&self.bytes.to_be_bytes());
        // `emit_reply` keeps bodies within MAX_BODY, which fits a u32.
        len.copy_from_slice(&(self.body_len.min(MAX_BODY) as u32).to_be_bytes());
        b
    }

    /// The whole reply's length: the head and its body.
    pub fn reply_len(&self) -> usize {
        HEAD_LEN + self.body_len
    }
}

/// The server's switch records from a reply's body.
///
/// # Errors
/// [`ReplyError::TooLong`] past [`MAX_BODY`], [`ReplyError::Body`] when it is not the
/// records' JSON.
pub fn parse_body(b: &[u8]) -> Result<ServerSide, ReplyError> {
    if b.len() > MAX_BODY {
        return Err(ReplyError::TooLong(b.len()));
    }
    serde_json::from_slice(b).map_err(ReplyError::Body)
}

/// The whole reply: the head for `sha256` and `bytes`, then `server` as JSON.
///
/// # Errors
/// [`ReplyError::Encode`] when the records do not encode, [`ReplyError::TooLong`] when they
/// are longer than [`MAX_BODY`].
pub fn emit_reply(
    sha256: [u8; 32],
    bytes: u64,
    server: &ServerSide,
) -> Result<Vec<u8>, ReplyError> {
    let body = serde_json::to_vec(server).map_err(ReplyError::Encode)?;
    if body.len() > MAX_BODY {
        return Err(ReplyError::TooLong(body.len()));
    }
    let head = Head {
        sha256,
        bytes,
        body_len: body.len(),
    };
    let mut reply = Vec::with_capacity(head.reply_len());
    reply.extend_from_slice(&head.emit());
    reply.extend_from_slice(&body);
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `SWTR`, SHA-256 0x11 * 32, 1000 bytes, a body of 2.
    const HEAD: [u8; HEAD_LEN] = [
        b'S', b'W', b'T', b'R', //
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, //
        0, 0, 0, 0, 0, 0, 0x03, 0xe8, //
        0, 0, 0, 2,
    ];

    #[test]
    fn a_head_parses_from_literal_bytes_and_emits_them_again() {
        let h = Head::parse(&HEAD).unwrap();
        assert_eq!(
            h,
            Head {
                sha256: [0x11; 32],
                bytes: 1000,
                body_len: 2
            }
        );
        assert_eq!(h.reply_len(), 50);
        assert_eq!(h.emit(), HEAD);
    }

    #[test]
    fn a_whole_reply_is_its_head_then_the_records_json() {
        let reply = emit_reply([0x11; 32], 1000, &ServerSide::default()).unwrap();
        let h = Head::parse(&reply).unwrap();
        assert_eq!(&reply[..36], &HEAD[..36]);
        assert_eq!(h.bytes, 1000);
        let body = &reply[HEAD_LEN..];
        assert_eq!(body.len(), h.body_len);
        assert_eq!(body.first(), Some(&b'{'));
        assert_eq!(parse_body(body).unwrap(), ServerSide::default());
    }

    #[test]
    fn a_short_head_or_a_wrong_magic_is_refused() {
        for n in [0, 1, 4, 47] {
            assert!(matches!(Head::parse(&HEAD[..n]), Err(ReplyError::Short(k)) if k == n));
        }
        let mut b = HEAD;
        b[0] = b'X';
        assert!(matches!(Head::parse(&b), Err(ReplyError::Magic)));
        let e = Head::parse(&b).unwrap_err().to_string();
        assert_eq!(e, "the server's reply does not start with SWTR");
    }

    #[test]
    fn a_body_claimed_past_the_limit_is_refused_before_it_is_read() {
        let mut b = HEAD;
        b[44..48].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        let e = Head::parse(&b).unwrap_err();
        assert!(matches!(e, ReplyError::TooLong(0xffff_ffff)), "{e}");
        assert!(e.to_string().contains("4294967295 bytes"), "{e}");
        let mut b = HEAD;
        b[44..48].copy_from_slice(&((MAX_BODY as u32) + 1).to_be_bytes());
        assert!(Head::parse(&b).is_err());
        b[44..48].copy_from_slice(&(MAX_BODY as u32).to_be_bytes());
        assert_eq!(Head::parse(&b).unwrap().body_len, MAX_BODY);
    }

    #[test]
    fn a_hostile_body_is_an_error_not_a_panic() {
        for body in [
            &b""[..],
            b"\xff\xfe",
            b"null",
            b"[1, 2]",
            b"{\"switches\": [{\"at\": \"soon\"}]}",
            b"{\"received\": -1}",
            b"{\"switches\": [{\"at\": 1.0, \"kind\": \"planned\"}]}",
            b"{{{{",
        ] {
            let e = parse_body(body).unwrap_err();
            assert!(matches!(e, ReplyError::Body(_)), "{body:?}: {e}");
        }
        // A body of the records, unknown keys and all, is taken.
        let ok = parse_body(br#"{"received": 5, "new_key": 1}"#).unwrap();
        assert_eq!(ok.received, 5);
    }

    #[test]
    fn every_prefix_and_every_byte_flip_of_a_reply_parses_or_fails_cleanly() {
        let reply = emit_reply([7; 32], 42, &ServerSide::default()).unwrap();
        for n in 0..=reply.len() {
            assert_eq!(
                Head::parse(&reply[..n]).is_ok(),
                n >= HEAD_LEN,
                "prefix {n}"
            );
            let body = parse_body(reply.get(HEAD_LEN..n).unwrap_or(&[]));
            assert_eq!(body.is_ok(), n == reply.len(), "prefix {n}");
        }
        for i in 0..reply.len() {
            let mut b = reply.clone();
            b[i] ^= 0xa5;
            match Head::parse(&b) {
                Ok(h) => {
                    assert!(i >= 4, "a flipped magic byte {i} was taken");
                    let body = b.get(HEAD_LEN..).unwrap_or(&[]);
                    let _ = parse_body(body.get(..h.body_len).unwrap_or(body));
                }
                Err(e) => assert!(!(4..44).contains(&i), "byte {i}: {e}"),
            }
        }
    }
}
