//! Flags of `sonde capacity` (phase one: parse and validate).

use crate::flags::output::OutputArgs;
use clap::Args;

/// `sonde capacity HOST`: path capacity by packet dispersion against a sonde server.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("One JSON document: host, server, family, layer (\"ip\"), overhead_model, payload_bytes, ip_bytes, short_train_len / long_train_len (datagrams per train), kernel_timestamps, seconds, verdict (host-limited, shaped, link, unmeasured), sustained_ip_bps / sustained_payload_bps / sustained_shaper_bps, \"estimate\" (train counts, short-train rates, histogram with bin width and modes, cov, peak mode, adr_bps, sustained range, bucket_bytes, knees, departure_bps, per-long-train fits), quick, trains_planned, trains_sent (counted from the datagrams), early_stop (enabled, rule, planned_long_trains, stopped, after_long_trains, last: the rule's long_trains, mean_bps, spread, ci_half, same_shape, converged), with --sizes train_sizes (train, payload_bytes, received) and by_size (payload_bytes, ip_bytes, trains, used, estimate_bps, low_bps, high_bps, cov), with --longest-train longest_loss_free_train (length, at_least, shortest_lossy, max_len, limit_secs, time_limited, seconds, tried: len, received, lost), with --tx-timestamps \"departures\" (trains reported, median and largest gap in ns, not_back_to_back train ids, per-train gaps), partial, error")))]
pub struct CapacityArgs {
    /// sonde server host
    pub host: String,
    /// Server port
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    /// UDP payload per datagram (default 1472, or 1452 with -6 or an IPv6 address: 1500-byte
    /// IP packets)
    #[arg(short = 'l', long = "length", value_name = "BYTES")]
    pub length: Option<u32>,
    /// Short trains (they see the peak, link rate)
    #[arg(long = "short-trains", value_name = "N", default_value_t = 40)]
    pub short_trains: u32,
    /// Datagrams per short train
    #[arg(long = "short-len", value_name = "N", default_value_t = 10)]
    pub short_len: u32,
    /// Vary the short trains' probe sizes (UDP payload, each within 64..65507 B and the path
    /// MTU), in turn: an inclusive range `600..1488` (9 sizes), `600..1488:111` (a step), or
    /// a list `600,1000,1472`; the estimate is then given per size too
    #[arg(long, value_name = "SIZES", value_parser = parse_sizes)]
    pub sizes: Option<sonde_proto::capacity::ProbeSizes>,
    /// Long trains (they see the sustained, shaped rate and the bucket)
    #[arg(long = "long-trains", value_name = "N", default_value_t = 5)]
    pub long_trains: u32,
    /// Datagrams per long train (far more than a shaper's bucket holds)
    #[arg(long = "long-len", value_name = "N", default_value_t = 500)]
    pub long_len: u32,
    /// Least idle time between trains, ms (the server also waits as long as the last train took)
    #[arg(long, value_name = "MS", default_value_t = 10)]
    pub spacing: u32,
    /// Send the whole plan: by default the run stops once at least 3 long trains arrived and
    /// the last 3 agree (sustained rates within 2 % of each other, 95 % confidence interval
    /// of their mean within ±1 %, all with a knee or none)
    #[arg(long = "no-early-stop", conflicts_with = "quick")]
    pub no_early_stop: bool,
    /// Stop at the first stable estimate: once 2 long trains arrived and the last 2 agree
    /// (sustained rates within 2 % of each other, the same shape; no confidence interval),
    /// or both arrived at the sender's pace (host-limited)
    #[arg(long)]
    pub quick: bool,
    /// Ask the server for its kernel's software transmit stamps (SO_TIMESTAMPING) and show
    /// the spread of each train's departure gaps, flagging trains that did not leave back
    /// to back
    #[arg(long = "tx-timestamps")]
    pub tx_timestamps: bool,
    /// After the estimate, search for the longest train that arrives without loss:
    /// doubling from 16 datagrams, then bisection, one single-train test per length
    #[arg(long = "longest-train")]
    pub longest_train: bool,
    /// Longest train the search tries (16..=4000 datagrams)
    #[arg(long = "max-train", value_name = "N", default_value_t = 1000, requires = "longest_train",
          value_parser = clap::value_parser!(u32).range(16..=4000))]
    pub max_train: u32,
    /// Time limit of the search, seconds (a train started before it may end after it)
    #[arg(long = "search-time", value_name = "SECS", default_value_t = 30, requires = "longest_train",
          value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub search_time: u32,
    #[command(flatten)]
    pub connect: crate::flags::connection::ConnectTimeoutArgs,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--sizes`: a range, a range with a step, or a list (see [`sonde_proto::capacity::ProbeSizes`]).
fn parse_sizes(s: &str) -> Result<sonde_proto::capacity::ProbeSizes, String> {
    sonde_proto::capacity::ProbeSizes::parse(s).map_err(|e| e.to_string())
}
