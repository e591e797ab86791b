//! iperf3's RSA authentication token (`authtoken`, iperf3 3.2+ built with OpenSSL), both ends.
//!
//! How iperf3 does it (`iperf_auth.c`): the client writes the text
//! `user: <name>\npwd:  <password>\nts:   <unix seconds>`, encrypts it with the server's RSA
//! public key and sends it base64-encoded (standard alphabet, no line breaks) as the
//! parameter `authtoken`. The server decrypts it with its private key, reads the three fields
//! as `sscanf` does (each a run of non-blank characters, so neither name nor password may hold
//! a blank), requires |now − ts| ≤ the skew threshold (10 s by default), and looks for the line
//! `name,sha256hex("{name}password")` in its authorized-users file. Any failure is refused
//! with iperf3's error 142, "test authorization failed", before a data stream is opened.
//!
//! Padding: OAEP (OpenSSL's default: SHA-1 for the hash and MGF1) since iperf3 3.17; PKCS#1
//! v1.5 before it, and with `--use-pkcs1-padding` after it (both ends must agree, as in
//! iperf3). iperf3 3.12, as Debian ships it, speaks only PKCS#1 v1.5.
//!
//! Everything here is pure: the clock is the `now` argument and the users file is its text;
//! reading files and prompting for passwords belong to the runtime and the binary.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, DecodePublicKey};
use rsa::traits::PublicKeyParts;
pub use rsa::{PrivateKey, PublicKey};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use thiserror::Error;

/// iperf3's default `--time-skew-threshold`, in seconds.
pub const DEFAULT_SKEW_SECS: u32 = 10;

/// Longest token accepted: the base64 of one block of a 16384-bit key, with room to spare.
/// A longer one is refused before it is decoded (peer input stays bounded).
pub const MAX_TOKEN_LEN: usize = 4096;

/// The RSA padding of the token. Both ends must use the same one, as in iperf3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Padding {
    /// RSAES-OAEP with SHA-1 (OpenSSL's `RSA_PKCS1_OAEP_PADDING`): iperf3 3.17+'s default.
    #[default]
    Oaep,
    /// RSAES-PKCS1-v1_5: iperf3 before 3.17, and 3.17+ with `--use-pkcs1-padding`.
    Pkcs1,
}

/// The credentials a token carries.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
    /// Unix seconds when the client made the token.
    pub timestamp: i64,
}

impl std::fmt::Debug for Credentials {
    /// Never prints the password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("timestamp", &self.timestamp)
            .finish_non_exhaustive()
    }
}

/// Why a token was not made or not accepted. Messages never include the password.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AuthError {
    #[error("the key is not an RSA {what} in PEM form ({why})")]
    Key { what: &'static str, why: String },
    #[error("the credentials ({len} bytes) do not fit one block of this {bits}-bit key")]
    TooLong { len: usize, bits: usize },
    #[error("a user name or password holds a blank, which iperf3's token cannot carry")]
    Blank,
    #[error("RSA encryption failed: {0}")]
    Encrypt(String),
    #[error("the token is longer than {MAX_TOKEN_LEN} characters")]
    TokenTooLong,
    #[error("the token is not base64")]
    Base64,
    #[error("the token does not decrypt with this server's key and padding ({0:?})")]
    Decrypt(Padding),
    #[error("the decrypted token is not iperf3's \"user/pwd/ts\" text")]
    Format,
    #[error("the token of user \"{user}\" is {age} s old (more than the {skew} s skew allowed)")]
    Skew { user: String, age: i64, skew: u32 },
    #[error("user \"{0}\" with this password is not in the authorized-users file")]
    Denied(String),
}

/// Reads a public key as iperf3 does (`PEM_read_bio_PUBKEY`: "BEGIN PUBLIC KEY").
///
/// # Errors
/// [`AuthError::Key`] when the text is not such a key.
pub fn public_key_from_pem(pem: &str) -> Result<PublicKey, AuthError> {
    PublicKey::from_public_key_pem(pem.trim()).map_err(|e| AuthError::Key {
        what: "public key",
        why: e.to_string(),
    })
}

/// Reads a private key as iperf3 does (`PEM_read_bio_PrivateKey`): PKCS#8 ("BEGIN PRIVATE
/// KEY", OpenSSL 3's `genrsa`) or PKCS#1 ("BEGIN RSA PRIVATE KEY").
///
/// # Errors
/// [`AuthError::Key`] when the text is neither.
pub fn private_key_from_pem(pem: &str) -> Result<PrivateKey, AuthError> {
    let pem = pem.trim();
    PrivateKey::from_pkcs8_pem(pem)
        .or_else(|_| PrivateKey::from_pkcs1_pem(pem))
        .map_err(|e| AuthError::Key {
            what: "private key",
            why: e.to_string(),
        })
}

/// The plaintext iperf3's client encrypts.
pub fn credentials_text(username: &str, password: &str, timestamp: i64) -> String {
    format!("user: {username}\npwd:  {password}\nts:   {timestamp}")
}

/// The client's token for `username`/`password` at `now` (unix seconds).
///
/// # Errors
/// [`AuthError::Blank`] for a blank in either, [`AuthError::TooLong`] when the text does not
/// fit the key (iperf3 would truncate it silently), [`AuthError::Encrypt`] otherwise.
pub fn encode_token(
    key: &PublicKey,
    padding: Padding,
    username: &str,
    password: &str,
    now: i64,
) -> Result<String, AuthError> {
    let blank = |s: &str| s.is_empty() || s.bytes().any(|b| b.is_ascii_whitespace());
    if blank(username) || blank(password) {
        return Err(AuthError::Blank);
    }
    let text = credentials_text(username, password, now);
    let k = key.size();
    let overhead = match padding {
        Padding::Oaep => 2 * 20 + 2,
        Padding::Pkcs1 => 11,
    };
    if text.len() + overhead > k {
        return Err(AuthError::TooLong {
            len: text.len(),
            bits: k * 8,
        });
    }
    let sealed = match padding {
        Padding::Oaep => key.oaep_encrypt::<sha1::Sha1>(text.as_bytes()),
        Padding::Pkcs1 => key.pkcs1v15_encrypt(text.as_bytes()),
    }
    .map_err(|e| AuthError::Encrypt(e.to_string()))?;
    Ok(STANDARD.encode(sealed))
}

/// Decrypts and reads a token (no skew or user check: see [`check_token`]).
///
/// # Errors
/// [`AuthError::TokenTooLong`], [`AuthError::Base64`], [`AuthError::Decrypt`] or
/// [`AuthError::Format`].
pub fn decode_token(
    key: &PrivateKey,
    padding: Padding,
    token: &str,
) -> Result<Credentials, AuthError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(AuthError::TokenTooLong);
    }
    let sealed = STANDARD.decode(token).map_err(|_| AuthError::Base64)?;
    let plain = match padding {
        Padding::Oaep => key.oaep_decrypt::<sha1::Sha1>(&sealed),
        Padding::Pkcs1 => key.pkcs1v15_decrypt(&sealed),
    }
    .map_err(|_| AuthError::Decrypt(padding))?;
    parse_credentials(&plain).ok_or(AuthError::Format)
}

/// Reads the decrypted text as iperf3's `sscanf(text, "user: %s\npwd:  %s\nts:   %" PRId64)`:
/// literals match exactly, a blank in the format matches any run of blanks (or none), `%s`
/// takes a run of non-blanks, the number may have a sign. Text after the number is ignored.
pub fn parse_credentials(text: &[u8]) -> Option<Credentials> {
    let mut s = Scanner { rest: text };
    s.literal(b"user:")?;
    let username = s.word()?;
    s.literal(b"pwd:")?;
    let password = s.word()?;
    s.literal(b"ts:")?;
    let timestamp = s.number()?;
    Some(Credentials {
        username: String::from_utf8(username.to_vec()).ok()?,
        password: String::from_utf8(password.to_vec()).ok()?,
        timestamp,
    })
}

struct Scanner<'a> {
    rest: &'a [u8],
}

impl<'a> Scanner<'a> {
    fn blanks(&mut self) {
        let n = self
            .rest
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        self.rest = &self.rest[n..];
    }
    /// A literal after any blanks (the format's blanks before it; none before the first).
    fn literal(&mut self, lit: &[u8]) -> Option<()> {
        self.blanks();
        self.rest = self.rest.strip_prefix(lit)?;
        Some(())
    }
    fn word(&mut self) -> Option<&'a [u8]> {
        self.blanks();
        let n = self
            .rest
            .iter()
            .take_while(|b| !b.is_ascii_whitespace() && **b != 0)
            .count();
        let (w, rest) = self.rest.split_at(n);
        self.rest = rest;
        (n > 0).then_some(w)
    }
    fn number(&mut self) -> Option<i64> {
        self.blanks();
        let sign = usize::from(matches!(self.rest.first(), Some(b'-' | b'+')));
        let digits = self.rest[sign..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let text = std::str::from_utf8(self.rest.get(..sign + digits)?).ok()?;
        text.parse().ok()
    }
}

/// iperf3's stored password: `sha256hex("{user}password")`, lower-case hex.
pub fn password_hash(username: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("{{{username}}}{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether iperf3's authorized-users file allows `username` with `password`.
///
/// The format, as iperf3 reads it: one `name,hash` per line; a line that is empty, starts
/// with `#` or has no comma is skipped; fields are split at commas as `strtok` does (empty
/// fields vanish), and only the first two count. The hash is compared in constant time.
pub fn users_file_allows(file: &str, username: &str, password: &str) -> bool {
    let want = password_hash(username, password);
    let mut allowed = false;
    for line in file.split('\n') {
        let line = line.split('\r').next().unwrap_or("");
        if line.is_empty() || line.starts_with('#') || !line.contains(',') {
            continue;
        }
        let mut fields = line.split(',').filter(|f| !f.is_empty());
        let (Some(name), Some(hash)) = (fields.next(), fields.next()) else {
            continue;
        };
        let same_hash: bool = hash.as_bytes().ct_eq(want.as_bytes()).into();
        allowed |= name == username && same_hash;
    }
    allowed
}

/// The whole server check, as iperf3's `test_is_authorized`: decrypt, skew, users file.
/// Returns the user name on success.
///
/// # Errors
/// The [`AuthError`] that refused the token; the server answers it with error 142.
pub fn check_token(
    key: &PrivateKey,
    padding: Padding,
    token: &str,
    users_file: &str,
    now: i64,
    skew_secs: u32,
) -> Result<String, AuthError> {
    let c = decode_token(key, padding, token)?;
    let age = now.saturating_sub(c.timestamp);
    if age.unsigned_abs() > u64::from(skew_secs) {
        return Err(AuthError::Skew {
            user: c.username,
            age,
            skew: skew_secs,
        });
    }
    if !users_file_allows(users_file, &c.username, &c.password) {
        return Err(AuthError::Denied(c.username));
    }
    Ok(c.username)
}

#[cfg(test)]
mod tests;
