//! Flags of `sonde profile` (phase one: parse and validate, no DNS, no sockets).

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// List the built-in traffic profiles
    List,
    /// Print a profile's TOML (a built-in name or a file): a starting point for your own
    Show {
        /// Built-in profile name (see `sonde profile list`) or a profile TOML file
        #[arg(value_name = "NAME|FILE")]
        profile: String,
    },
    /// Run a profile's streams against a sonde server (which runs the from-server streams)
    Run(ProfileRunArgs),
}

#[derive(Debug, Args)]
pub struct ProfileRunArgs {
    /// A sonde server
    pub host: String,
    /// Built-in profile name or a profile TOML file
    #[arg(value_name = "NAME|FILE", default_value = "monitoring")]
    pub profile: String,
    /// Server port
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// Run this many seconds instead of the profile's duration (streams keep their plans)
    #[arg(short = 't', long = "time", value_name = "SECS", value_parser = parse_secs)]
    pub time: Option<f64>,
    /// Both hosts' clocks are synchronised (NTP/PTP): one-way delays are measured, not
    /// estimated from each stream's fastest datagram
    #[arg(long = "clock-synced")]
    pub clock_synced: bool,
    /// One JSON document: the profile's figures per stream (sent, received, lost, late,
    /// out_of_order, duplicates, foreign, delay with its basis and percentiles 0..100,
    /// gap_ms and the measured burst_spacing_ms, bursts_sent, bursts_complete, bursts_late,
    /// exceptions = the incomplete or late bursts), ran_s, planned_s, clock_synced,
    /// ended_early, error
    #[arg(short = 'J', long = "json", conflicts_with = "json_stream")]
    pub json: bool,
    /// JSON lines: a "note" line per progress note as it happens, then a "stream" line per
    /// stream (the -J figures without the burst list), a "burst" line per incomplete or late
    /// burst, and an "end" line (ran_s, planned_s, clock_synced, ended_early, error)
    #[arg(long = "json-stream")]
    pub json_stream: bool,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    /// Seconds to wait for the control connection
    #[arg(long = "connect-timeout", value_name = "SECS", default_value = "10", value_parser = parse_secs)]
    pub connect_timeout: f64,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
}

fn parse_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v <= 86_400.0 => Ok(v),
        _ => Err(format!(
            "expected seconds, more than 0 and at most 86400, got \"{s}\""
        )),
    }
}
