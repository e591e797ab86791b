//! sonde's pre-shared-key authentication: a challenge and an HMAC-SHA256 answer.
//!
//! A server started with a key puts a fresh random nonce in its Welcome (capability
//! `auth-psk`); the client answers with `HMAC-SHA256(key, "sonde-psk-v1" ‖ nonce ‖ request)`
//! inside its test request, where `request` is the request's JSON without the answer itself.
//! The server recomputes the MAC over the request it decoded and compares in constant time
//! before it accepts anything, so a wrong or missing key costs it one decoded message and no
//! traffic. A fresh nonce per connection means a recorded answer cannot be replayed, and the
//! MAC binds the answer to the very test asked for. Like irtt's HMAC, it authenticates; it
//! does not encrypt (data streams carry no secret).
//!
//! Both ends compute over the same canonical JSON (serde's encoding of
//! [`TestParams`](crate::message::TestParams)): clients only send fields a server listed the
//! capability for, so both encodings agree.
//!
//! The key file: the key is the file's bytes, less one trailing line break (LF or CRLF); at
//! least [`MIN_KEY_LEN`] bytes and at most [`MAX_KEY_LEN`]. A random key made with
//! `head -c 32 /dev/urandom | base64 > sonde.key` qualifies.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use thiserror::Error;

/// The capability a server lists when it asks for a key (and a client lists when it can
/// answer).
pub const CAPABILITY: &str = "auth-psk";
/// Shortest key accepted: 32 bytes (256 bits of base64 text hold 192 bits of entropy).
pub const MIN_KEY_LEN: usize = 32;
/// Longest key accepted (HMAC would hash a longer key anyway).
pub const MAX_KEY_LEN: usize = 4096;
/// Bytes of the server's nonce.
pub const NONCE_LEN: usize = 32;
/// Domain separation: a MAC of this scheme cannot be mistaken for any other use of the key.
const CONTEXT: &[u8] = b"sonde-psk-v1";

/// A server's challenge.
pub type Nonce = [u8; NONCE_LEN];

/// A pre-shared key. Its `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct Psk(Vec<u8>);

impl std::fmt::Debug for Psk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Psk({} bytes)", self.0.len())
    }
}

/// Why a key file's content is not a key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KeyError {
    #[error(
        "the key is {0} bytes; at least {MIN_KEY_LEN} are needed \
         (e.g. `head -c 32 /dev/urandom | base64 > FILE`)"
    )]
    TooShort(usize),
    #[error("the key file is over {MAX_KEY_LEN} bytes")]
    TooLong,
}

/// Why an answer was refused. Messages name what is wrong, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error(
        "this server requires a pre-shared key and the client sent none \
         (give the client `--psk-file FILE` with the server's key)"
    )]
    Missing,
    #[error("the client's key does not match the server's (HMAC check failed)")]
    Mismatch,
    #[error("the client's answer is not 64 hex digits")]
    Malformed,
    #[error(
        "this server requires a pre-shared key (--psk-file) and the client is too old \
         to send one (it lacks the auth-psk capability); upgrade the client"
    )]
    OldClient,
}

impl Psk {
    /// The key in a key file's content (see the module docs for the format).
    ///
    /// # Errors
    /// [`KeyError`] when it is too short or too long.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, KeyError> {
        if bytes.len() > MAX_KEY_LEN + 2 {
            return Err(KeyError::TooLong);
        }
        let key = bytes
            .strip_suffix(b"\r\n")
            .or_else(|| bytes.strip_suffix(b"\n"))
            .unwrap_or(bytes);
        if key.len() < MIN_KEY_LEN {
            return Err(KeyError::TooShort(key.len()));
        }
        if key.len() > MAX_KEY_LEN {
            return Err(KeyError::TooLong);
        }
        Ok(Self(key.to_vec()))
    }

    /// HMAC-SHA256 keyed with this key, nothing fed yet (other uses add their own context).
    pub(crate) fn hmac(&self) -> Hmac<Sha256> {
        // HMAC takes keys of any length; the error arm cannot happen but is not unwrapped.
        match <Hmac<Sha256> as KeyInit>::new_from_slice(&self.0) {
            Ok(m) => m,
            Err(_) => <Hmac<Sha256> as KeyInit>::new(&Default::default()),
        }
    }

    fn mac(&self, nonce: &Nonce, request: &[u8]) -> Hmac<Sha256> {
        let mut m = self.hmac();
        m.update(CONTEXT);
        m.update(nonce);
        m.update(request);
        m
    }

    /// The client's answer to `nonce` for the canonical `request` bytes, as 64 hex digits.
    pub fn answer(&self, nonce: &Nonce, request: &[u8]) -> String {
        hex(&self.mac(nonce, request).finalize().into_bytes())
    }

    /// Checks a client's answer in constant time.
    ///
    /// # Errors
    /// [`AuthError::Missing`], [`AuthError::Malformed`] or [`AuthError::Mismatch`].
    pub fn verify(
        &self,
        nonce: &Nonce,
        request: &[u8],
        answer: Option<&str>,
    ) -> Result<(), AuthError> {
        let answer = answer.ok_or(AuthError::Missing)?;
        let tag = unhex::<32>(answer).ok_or(AuthError::Malformed)?;
        self.mac(nonce, request)
            .verify_slice(&tag)
            .map_err(|_| AuthError::Mismatch)
    }
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Exactly `N` bytes from `2N` hex digits, or `None`.
pub fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let t = text.as_bytes();
    if t.len() != 2 * N {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    let mut out = [0u8; N];
    for (o, pair) in out.iter_mut().zip(t.chunks_exact(2)) {
        let v = digit(pair[0])? * 16 + digit(pair[1])?;
        *o = u8::try_from(v).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Psk {
        Psk::from_file_bytes(s.as_bytes()).unwrap()
    }

    const K: &str = "0123456789abcdef0123456789abcdef";

    #[test]
    fn key_file_format() {
        assert_eq!(key(&format!("{K}\n")), key(K));
        assert_eq!(key(&format!("{K}\r\n")), key(K));
        // Only one line break goes; inner and leading bytes are the key's.
        assert_ne!(key(&format!("{K}\n\n")), key(K));
        assert_eq!(Psk::from_file_bytes(b"short\n"), Err(KeyError::TooShort(5)));
        assert_eq!(
            Psk::from_file_bytes(&[b'x'; MAX_KEY_LEN + 3]),
            Err(KeyError::TooLong)
        );
        assert!(!format!("{:?}", key(K)).contains("0123"));
    }

    /// Checked against an independent computation: `(printf sonde-psk-v1; head -c 32
    /// /dev/zero; printf '{}') | openssl dgst -sha256 -hmac K`.
    #[test]
    fn answer_is_hmac_sha256_of_context_nonce_request() {
        assert_eq!(
            key(K).answer(&[0u8; 32], b"{}"),
            "6817e1cc8738d85bc4ff9afab892fc210daeab92e7e36afe72245c9850630782"
        );
    }

    #[test]
    fn verify_accepts_the_right_key_only() {
        let n = [7u8; 32];
        let a = key(K).answer(&n, b"req");
        assert_eq!(key(K).verify(&n, b"req", Some(&a)), Ok(()));
        let other = key("fedcba9876543210fedcba9876543210");
        assert_eq!(other.verify(&n, b"req", Some(&a)), Err(AuthError::Mismatch));
        // Bound to the nonce and to the request.
        assert_eq!(
            key(K).verify(&[8u8; 32], b"req", Some(&a)),
            Err(AuthError::Mismatch)
        );
        assert_eq!(
            key(K).verify(&n, b"req2", Some(&a)),
            Err(AuthError::Mismatch)
        );
        assert_eq!(key(K).verify(&n, b"req", None), Err(AuthError::Missing));
        assert_eq!(
            key(K).verify(&n, b"req", Some("zz")),
            Err(AuthError::Malformed)
        );
        assert_eq!(
            key(K).verify(&n, b"req", Some(&"g".repeat(64))),
            Err(AuthError::Malformed)
        );
    }

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(&[0, 0xab, 0xff]), "00abff");
        assert_eq!(unhex::<3>("00abff"), Some([0, 0xab, 0xff]));
        assert_eq!(unhex::<3>("00ABFF"), Some([0, 0xab, 0xff]));
        assert_eq!(unhex::<3>("00abf"), None);
        assert_eq!(unhex::<2>("+1ab"), None);
    }
}
