//! Flags of `sonde btc` (phase one: parse and validate).

use crate::flags::output::OutputArgs;
use crate::flags::values::parse_positive_size_arg;
use clap::Args;
use sonde_stats::units::Size;

/// `sonde btc HOST`: bulk transfer capacity, one TCP transfer per session.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("One JSON document: \"sessions\" (per session: index, family, size, bytes, seconds, goodput_bps, retransmits, max_cwnd, mean_rtt_us, congestion, start_unix_s), \"failed\" (index, family, size, start_unix_s, error), \"summary\" per family (sessions, min/max/mean/median/stddev_bps, variance), \"reverse\", \"layer\", \"partial\", \"error\"")))]
pub struct BtcArgs {
    /// sonde server host
    pub host: String,
    /// Server port
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// Session sizes in bytes, comma-separated (e.g. 6M,12M,24M); default 6M doubling up to
    /// --max-size
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_positive_size_arg)]
    pub sizes: Vec<Size>,
    /// Largest session of the default doubling series
    #[arg(long = "max-size", value_name = "SIZE", default_value = "96M", value_parser = parse_positive_size_arg)]
    pub max_size: Size,
    /// From one session's start to the next one's
    #[arg(long, value_name = "TIME", default_value = "10s", value_parser = crate::flags::values::parse_duration_arg)]
    pub every: std::time::Duration,
    /// Rounds of sessions (every size on every family each); with -t, whichever ends first
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub count: Option<u32>,
    /// Start sessions for this long (the study: a session every 10 s for hours)
    #[arg(short = 't', long = "time", value_name = "TIME", value_parser = crate::flags::values::parse_duration_arg)]
    pub time: Option<std::time::Duration>,
    /// The server sends (reverse), as the study's sessions ran
    #[arg(short = 'R', long = "reverse")]
    pub reverse: bool,
    /// IPv4 only
    #[arg(short = '4', long = "version4", conflicts_with_all = ["ipv6", "both"])]
    pub ipv4: bool,
    /// IPv6 only
    #[arg(short = '6', long = "version6", conflicts_with = "both")]
    pub ipv6: bool,
    /// Each size on IPv4, then on IPv6 (the statistics per family)
    #[arg(long)]
    pub both: bool,
    /// TCP write length
    #[arg(short = 'l', long = "length", value_name = "LENGTH", default_value = "128K", value_parser = parse_positive_size_arg)]
    pub length: Size,
    /// Congestion control of the sessions
    #[arg(short = 'C', long = "congestion", value_name = "ALGO")]
    pub congestion: Option<String>,
    #[command(flatten)]
    pub connect: crate::flags::connection::ConnectTimeoutArgs,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
