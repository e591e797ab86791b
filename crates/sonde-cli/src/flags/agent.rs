//! Flags of `sonde agent` (phase one: parse, no sockets; the file is read and checked by the
//! command).

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `sonde agent --config agent.toml`: serve tests and measure peers on a schedule.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  sonde agent --config examples/agent.toml --metrics 127.0.0.1:9464\n  sonde agent --config agent.toml --store postgres://sonde@db.example.net/sonde\n  sonde agent --config agent.toml --check\n\nWith a PostgreSQL URL, every run is still written to the local SQLite store first and copied to PostgreSQL at most every `sync_every_secs` (10 s by default); while PostgreSQL is away the agent goes on measuring and copies everything when it is back. TLS to PostgreSQL follows libpq's sslmode and sslrootcert (verify-full checks the server's certificate and name). The configuration lists the peers and the schedule (see examples/agent.toml). Ctrl-C or SIGTERM stops the agent; a test in progress is recorded with what it measured. SIGHUP (systemctl reload) reads the configuration again: the peers and the schedules change in place, and the log names any other setting that changed, which waits for the next start; a file that cannot be used changes nothing."
)]
pub struct AgentArgs {
    /// The agent's configuration (TOML: peers; latency, throughput, capacity and profile schedules; store)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Serve Prometheus metrics (OpenMetrics text) at http://ADDR/metrics, e.g. 127.0.0.1:9464,
    /// and the agent's status there too: a page at / and JSON at /api/status (read-only; no
    /// authentication, as for /metrics: bind an address only those who may see it reach)
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// The results: a SQLite file instead of the configuration's `store`, or a postgres:// URL
    /// the local store is copied to (the configuration's `store_url`)
    #[arg(long, value_name = "FILE|URL")]
    pub store: Option<String>,
    /// Check the configuration and the files it names (keys, TLS), print what the agent would
    /// run, and exit: 0 when it would start, 2 when not
    #[arg(long)]
    pub check: bool,
}
