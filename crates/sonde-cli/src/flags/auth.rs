//! Authentication flags: sonde's pre-shared key (both ends) and iperf3's RSA credentials
//! (iperf3's own flag names, so an iperf3 command line works unchanged).

use clap::Args;
use std::path::PathBuf;

/// How a key file is written, for both ends' help.
const PSK_HELP: &str = "Require (server) or answer (client) sonde's pre-shared key, read from \
FILE: the file's bytes less one trailing newline, at least 32 bytes (make one with \
`head -c 32 /dev/urandom | base64 > FILE`). A wrong or missing key is refused before any \
data flows; the server's latency responder then answers only UDP probes tagged with the key \
(others are dropped silently and counted in the log) and tcp-rr serves only clients that \
answer its challenge. A server without this flag ignores a client's key, and one with it \
alone refuses iperf3 clients (they cannot send it)";

/// The server's authentication flags.
#[derive(Debug, Clone, Args)]
pub struct ServerAuthArgs {
    #[arg(long = "psk-file", value_name = "FILE", long_help = PSK_HELP, help = "Require sonde clients to hold the pre-shared key in FILE (at least 32 bytes)")]
    pub psk_file: Option<PathBuf>,
    /// iperf3 clients must send credentials encrypted with this RSA key's public half (PEM;
    /// with --authorized-users-path), as iperf3's server
    #[arg(
        long = "rsa-private-key-path",
        value_name = "FILE",
        requires = "authorized_users_path"
    )]
    pub rsa_private_key_path: Option<PathBuf>,
    /// iperf3's users file: one `user,sha256hex("{user}password")` a line (# comments);
    /// read again for every client
    #[arg(
        long = "authorized-users-path",
        value_name = "FILE",
        requires = "rsa_private_key_path"
    )]
    pub authorized_users_path: Option<PathBuf>,
    /// Refuse iperf3 credentials made more than SECS from this host's clock (iperf3's
    /// default 10)
    #[arg(long = "time-skew-threshold", value_name = "SECS", requires = "rsa_private_key_path", value_parser = clap::value_parser!(u32).range(1..))]
    pub time_skew_threshold: Option<u32>,
    /// RSA PKCS#1 v1.5 padding instead of OAEP for iperf3 credentials: iperf3 before 3.17
    /// (Debian 12's 3.12) uses only this; 3.17+ with its own --use-pkcs1-padding
    #[arg(long = "use-pkcs1-padding", requires = "rsa_private_key_path")]
    pub use_pkcs1_padding: bool,
}

/// What a key does on the client's side, for every command that takes one.
const CLIENT_PSK_HELP: &str = "Answer a sonde server's pre-shared-key challenge with the key in \
FILE, the same file as the server's --psk-file: the file's bytes less one trailing newline, at \
least 32 bytes. It authenticates the control connection of every test this command runs, tags \
each UDP latency probe (HMAC, 16 bytes after the probe header) and answers tcp-rr's challenge; \
a server without a key ignores it. Without it a keyed server refuses the test (code auth) and \
leaves probes unanswered";

/// `--psk-file` of every command that runs tests through a sonde server (`client`,
/// `latency`, `rrul`, `compare-ip`, `btc`, `capacity`, `profile run`, `sweep`,
/// `stress --steps`): one definition, flattened into each.
#[derive(Debug, Clone, Default, Args)]
pub struct PskArgs {
    #[arg(long = "psk-file", value_name = "FILE", long_help = CLIENT_PSK_HELP, help = "Answer a keyed sonde server (--psk-file on it) with the pre-shared key in FILE")]
    pub psk_file: Option<PathBuf>,
}

/// The client's authentication flags.
#[derive(Debug, Clone, Args)]
pub struct ClientAuthArgs {
    #[command(flatten)]
    pub psk: PskArgs,
    /// With --iperf3: authenticate as USER to an iperf3 server that requires it; the
    /// password comes from IPERF3_PASSWORD, or a prompt when run from a terminal
    #[arg(long = "username", value_name = "USER", requires_all = ["iperf3", "rsa_public_key_path"])]
    pub username: Option<String>,
    /// With --username: the iperf3 server's RSA public key (PEM, `openssl rsa -pubout`)
    #[arg(
        long = "rsa-public-key-path",
        value_name = "FILE",
        requires = "username"
    )]
    pub rsa_public_key_path: Option<PathBuf>,
    /// With --username: PKCS#1 v1.5 padding instead of OAEP, for iperf3 servers before 3.17
    /// (Debian 12's 3.12) and 3.17+ run with --use-pkcs1-padding
    #[arg(long = "use-pkcs1-padding", requires = "username")]
    pub use_pkcs1_padding: bool,
}
