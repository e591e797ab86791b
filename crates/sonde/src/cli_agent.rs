//! Flags of `sonde agent` (phase one: parse, no sockets; the file is read and checked by the
//! command).

use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;

/// `sonde agent --config agent.toml`: serve tests and measure peers on a schedule.
#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  sonde agent --config examples/agent.toml --metrics 127.0.0.1:9464\n\nThe configuration lists the peers and the schedule (see examples/agent.toml). Ctrl-C or SIGTERM stops the agent; a test in progress is recorded with what it measured."
)]
pub struct AgentArgs {
    /// The agent's configuration (TOML: peers; latency, throughput, capacity and profile schedules; store)
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// Serve Prometheus metrics (OpenMetrics text) at http://ADDR/metrics, e.g. 127.0.0.1:9464
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// The SQLite results database, instead of the configuration's `store`
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
}
