//! `--store`: where a lab run's results go besides the local SQLite database.

use clap::Args;

/// The results store option of `sonde lab run`.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// Also write results to PostgreSQL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB, TLS as in
    /// libpq: ?sslmode=verify-full&sslrootcert=CA.pem); the
    /// local --out DIR/results.db stays the buffer, so tests recorded while PostgreSQL is away
    /// are written by the next sync (after the next setting, or the next run with --store).
    /// `sqlite` (the default) writes the local database only. In a mesh every agent writes
    /// to it as it measures (relayed from its node's loopback), checked again at the end
    #[arg(long = "store", value_name = "URL", default_value = "sqlite")]
    pub store: String,
}
