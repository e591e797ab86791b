//! Turns the authentication flags into what the runtime needs: keys read from their files,
//! and the iperf3 password from `IPERF3_PASSWORD` or a prompt (as iperf3 does).

use crate::flags::auth::{ClientAuthArgs, PskArgs, ServerAuthArgs};
use sonde_proto::iperf3::auth::{Padding, DEFAULT_SKEW_SECS};
use sonde_proto::psk::Psk;
use sonde_runtime::auth::{self, RsaServer, ServerAuth};
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The environment variable iperf3's client reads the password from.
const PASSWORD_VAR: &str = "IPERF3_PASSWORD";

fn padding(pkcs1: bool) -> Padding {
    if pkcs1 {
        Padding::Pkcs1
    } else {
        Padding::Oaep
    }
}

/// What the server asks of its clients, with every file read now (a bad one stops the
/// server before it listens).
///
/// # Errors
/// A message naming the file and what is wrong with it.
pub fn server(a: &ServerAuthArgs) -> Result<ServerAuth, String> {
    let psk = a
        .psk_file
        .as_deref()
        .map(auth::load_psk)
        .transpose()
        .map_err(|e| e.to_string())?;
    let rsa = match (&a.rsa_private_key_path, &a.authorized_users_path) {
        (Some(key), Some(users)) => Some(Arc::new(
            RsaServer::load(
                key,
                users,
                padding(a.use_pkcs1_padding),
                a.time_skew_threshold.unwrap_or(DEFAULT_SKEW_SECS),
            )
            .map_err(|e| e.to_string())?,
        )),
        _ => None,
    };
    Ok(ServerAuth { psk, rsa })
}

/// The client's pre-shared key, if `--psk-file` was given.
///
/// # Errors
/// A message naming the file and what is wrong with it.
pub fn client_psk(a: &PskArgs) -> Result<Option<Psk>, String> {
    a.psk_file
        .as_deref()
        .map(auth::load_psk)
        .transpose()
        .map_err(|e| e.to_string())
}

/// The sockets of a command whose only socket flag is `--psk-file`: default ones holding
/// the key.
///
/// # Errors
/// A message naming the key file and what is wrong with it.
pub fn keyed_sockets(a: &PskArgs) -> Result<sonde_runtime::sockets::ClientSockets, String> {
    Ok(sonde_runtime::sockets::ClientSockets {
        psk: client_psk(a)?,
        ..Default::default()
    })
}

/// Prints why a key or credentials file named on the command line cannot be used, and gives
/// the exit code. The one rule for every command's `--psk-file` and the iperf3 RSA files:
/// a file that cannot be read or holds no valid key is a flag with a bad value, a usage
/// error (exit 2), as clap's own. Commands that load the key in their configuration step
/// report it the same way with their other usage errors.
pub fn unusable_file(e: &str) -> i32 {
    eprintln!("sonde: usage error - {e}");
    super::exit::USAGE
}

/// The iperf3 password: `IPERF3_PASSWORD`, else a prompt without echo on the terminal.
fn password(interrupt: &AtomicBool) -> Result<String, String> {
    if let Ok(p) = std::env::var(PASSWORD_VAR) {
        return Ok(p);
    }
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "--username needs a password: set {PASSWORD_VAR} or run from a terminal to be asked"
        ));
    }
    sonde_platform::password::read_password("Password: ", interrupt)
}

/// Credentials for an iperf3 server, read before the test (the prompt, if any, comes first).
pub struct Iperf3Credentials {
    user: String,
    password: String,
    key: std::path::PathBuf,
    padding: Padding,
}

impl Iperf3Credentials {
    /// From `--username` and `--rsa-public-key-path`; `None` without them.
    ///
    /// # Errors
    /// When no password can be had (no terminal, or Ctrl-C at the prompt).
    pub fn from_args(a: &ClientAuthArgs, interrupt: &AtomicBool) -> Result<Option<Self>, String> {
        let (Some(user), Some(key)) = (&a.username, &a.rsa_public_key_path) else {
            return Ok(None);
        };
        Ok(Some(Self {
            user: user.clone(),
            password: password(interrupt)?,
            key: key.clone(),
            padding: padding(a.use_pkcs1_padding),
        }))
    }

    /// iperf3's `authtoken`, stamped now.
    ///
    /// # Errors
    /// When the key cannot be read or the credentials do not fit iperf3's token.
    pub fn token(&self) -> Result<String, String> {
        auth::iperf3_token(&self.key, self.padding, &self.user, &self.password)
            .map_err(|e| e.to_string())
    }
}
