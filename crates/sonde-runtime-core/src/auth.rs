//! What authentication needs from the system: key files, the users file, the clock and
//! fresh randomness. The checks themselves are pure and live in `sonde_proto`
//! (`iperf3::auth` for iperf3's RSA tokens, `psk` for sonde's pre-shared key).
//!
//! The users file is read again for every check, as iperf3 does, so adding or removing a user
//! takes effect without restarting the server.

use sonde_proto::iperf3::auth::{self, Padding, PrivateKey};
use sonde_proto::psk::{KeyError, Nonce, Psk};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// Largest key or users file read (a users file of 10 000 users is under 1 MiB).
const MAX_FILE: u64 = 1 << 20;

/// Why an authentication setting cannot be used (at start-up, before serving anyone).
#[derive(Debug, Error)]
pub enum SetupError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is larger than {MAX_FILE} bytes")]
    TooBig { path: PathBuf },
    #[error("{path}: {source}")]
    Key {
        path: PathBuf,
        source: auth::AuthError,
    },
    #[error("pre-shared key in {path}: {source}")]
    Psk { path: PathBuf, source: KeyError },
    #[error("the system's random generator failed: {0}")]
    Random(String),
}

/// Reads a whole file of at most [`MAX_FILE`] bytes.
fn read_bounded(path: &Path) -> Result<Vec<u8>, SetupError> {
    let read = |source| SetupError::Read {
        path: path.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    f.take(MAX_FILE + 1).read_to_end(&mut bytes).map_err(read)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(SetupError::TooBig {
            path: path.to_path_buf(),
        });
    }
    Ok(bytes)
}

fn read_text(path: &Path) -> Result<String, SetupError> {
    Ok(String::from_utf8_lossy(&read_bounded(path)?).into_owned())
}

/// Loads a pre-shared key file (`--psk-file`; format in [`sonde_proto::psk`]).
///
/// # Errors
/// [`SetupError`] when it cannot be read or is not a key.
pub fn load_psk(path: &Path) -> Result<Psk, SetupError> {
    Psk::from_file_bytes(&read_bounded(path)?).map_err(|source| SetupError::Psk {
        path: path.to_path_buf(),
        source,
    })
}

/// A fresh challenge for one connection, from the kernel's generator (no weaker fallback:
/// a predictable nonce would let a recorded answer be replayed).
///
/// # Errors
/// [`SetupError::Random`] when the generator fails.
pub fn fresh_nonce() -> Result<Nonce, SetupError> {
    let mut n = [0u8; 32];
    getrandom::fill(&mut n).map_err(|e| SetupError::Random(e.to_string()))?;
    Ok(n)
}

/// Unix seconds now (iperf3's token timestamp).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The server's iperf3 RSA authentication (`--rsa-private-key-path`,
/// `--authorized-users-path`, `--time-skew-threshold`, `--use-pkcs1-padding`).
pub struct RsaServer {
    key: PrivateKey,
    users: PathBuf,
    padding: Padding,
    skew_secs: u32,
}

impl std::fmt::Debug for RsaServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaServer")
            .field("users", &self.users)
            .field("padding", &self.padding)
            .field("skew_secs", &self.skew_secs)
            .finish_non_exhaustive()
    }
}

impl RsaServer {
    /// Loads the private key and checks the users file can be read, as iperf3 does at start.
    ///
    /// # Errors
    /// [`SetupError`] for an unreadable file or a key that is not an RSA private key.
    pub fn load(
        key_path: &Path,
        users_path: &Path,
        padding: Padding,
        skew_secs: u32,
    ) -> Result<Self, SetupError> {
        let key = auth::private_key_from_pem(&read_text(key_path)?).map_err(|source| {
            SetupError::Key {
                path: key_path.to_path_buf(),
                source,
            }
        })?;
        read_bounded(users_path)?;
        Ok(Self {
            key,
            users: users_path.to_path_buf(),
            padding,
            skew_secs,
        })
    }

    /// Checks an iperf3 client's token at `now`; the user name when it is allowed, else why
    /// not (for the log; the client only learns iperf3's error 142).
    pub fn check(&self, token: Option<&str>, now: i64) -> Result<String, String> {
        let token = token.ok_or("the client sent no authentication token")?;
        let users = read_text(&self.users).map_err(|e| e.to_string())?;
        auth::check_token(&self.key, self.padding, token, &users, now, self.skew_secs)
            .map_err(|e| e.to_string())
    }
}

/// What a server asks of its clients.
#[derive(Debug, Clone, Default)]
pub struct ServerAuth {
    /// sonde clients must prove they hold this key.
    pub psk: Option<Psk>,
    /// iperf3 clients must send a token this key opens, of a user in the users file.
    pub rsa: Option<Arc<RsaServer>>,
}

/// The iperf3 token of `username`/`password` for the server whose public key is in
/// `key_path`, made now.
///
/// # Errors
/// [`SetupError`] when the key cannot be read or the token not made.
pub fn iperf3_token(
    key_path: &Path,
    padding: Padding,
    username: &str,
    password: &str,
) -> Result<String, SetupError> {
    let key_err = |source| SetupError::Key {
        path: key_path.to_path_buf(),
        source,
    };
    let key = auth::public_key_from_pem(&read_text(key_path)?).map_err(key_err)?;
    auth::encode_token(&key, padding, username, password, unix_now()).map_err(key_err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_fresh() {
        assert_ne!(fresh_nonce().unwrap(), fresh_nonce().unwrap());
    }

    #[test]
    fn missing_and_oversized_files_are_clear_errors() {
        let dir = std::env::temp_dir().join(format!("sonde-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big");
        std::fs::write(&big, vec![b'x'; (MAX_FILE + 1) as usize]).unwrap();
        assert!(matches!(load_psk(&big), Err(SetupError::TooBig { .. })));
        let short = dir.join("short");
        std::fs::write(&short, b"abc\n").unwrap();
        let e = load_psk(&short).unwrap_err().to_string();
        assert!(e.contains("3 bytes") && e.contains("short"), "{e}");
        let e = load_psk(&dir.join("absent")).unwrap_err().to_string();
        assert!(e.contains("cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
