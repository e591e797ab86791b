//! Flags of `sonde compare-ip` (phase one: parse and validate, no DNS, no sockets), and the
//! plan they make: which modes run, how many probes per size.

use crate::flags::output::OutputArgs;
use crate::flags::values::parse_duration_arg;
use crate::flags::values::parse_positive_size_arg;
use clap::Args;
use std::time::Duration;

/// `-J` of `sonde compare-ip`.
const COMPARE_JSON_HELP: &str = "One JSON document in sonde's compare-ip schema (not iperf3's): version, target, ipv4 and ipv6 (family, address, rtt, loss_percent, throughput_bps, error), latency and throughput (the comparisons: better = a for IPv4, b for IPv6 or neither, difference_percent, p_value, significant); with --sizes every_secs and sizes (a row per family and size: family, payload_bytes, ip_bytes, sent, received, lost, loss_percent, refused, rtt, error); with --btc btc (per family: sessions, summary min/max/mean/median_bps); with --capacity capacity (per family: verdict, sustained_bps and its range, peak mode, long_trains_used); verdict (schema 1: better = ipv4|ipv6|neither, measure, margin_pct, confidence = 1 - p, per_measure, summary) - the input of switch-test --policy; partial";

/// The probe sizes of the scenario (UDP payload bytes).
pub const DEFAULT_SIZES: [u32; 5] = [56, 200, 500, 1000, 1500];
/// Probes per size and family with `--sizes` and neither `-c` nor `-t`.
pub const DEFAULT_ROUNDS: u64 = 10;
/// Probes per family without `--sizes` and without `-c`.
pub const DEFAULT_COUNT: u64 = 100;
/// Most sizes in a cycle.
pub const MAX_SIZES: usize = 32;

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(COMPARE_JSON_HELP)))]
pub struct CompareIpArgs {
    /// sonde server host with both IPv4 and IPv6 addresses
    pub host: String,
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// Latency probes per family (default 100); with --sizes, probes per size and family
    /// (default 10)
    #[arg(short = 'c', long, value_parser = clap::value_parser!(u64).range(3..), conflicts_with = "time")]
    pub count: Option<u64>,
    /// With --sizes: probe for this long instead of --count (at least one probe per size)
    #[arg(short = 't', long, value_name = "TIME", value_parser = parse_duration_arg)]
    pub time: Option<Duration>,
    /// Time between probes (without --sizes)
    #[arg(short = 'i', long, value_name = "TIME", default_value = "20ms", value_parser = parse_duration_arg)]
    pub interval: Duration,
    /// UDP probe size in bytes (without --sizes)
    #[arg(short = 's', long, default_value_t = 56, value_parser = clap::value_parser!(u32).range(56..=65507))]
    pub size: u32,
    /// Latency over probe sizes: UDP payload bytes, comma-separated (56..65507), probed in
    /// turn one every --every per family; bare --sizes is the scenario's 56,200,500,1000,1500
    #[arg(long, value_name = "LIST", value_delimiter = ',', num_args = 0..=1, default_missing_value = "56,200,500,1000,1500", value_parser = clap::value_parser!(u32).range(56..=65507))]
    pub sizes: Option<Vec<u32>>,
    /// With --sizes: time between two probes of a family
    #[arg(long, value_name = "TIME", default_value = "2s", value_parser = parse_duration_arg)]
    pub every: Duration,
    /// BTC per family: TCP transfers of --btc-sizes, one every --btc-every
    #[arg(long)]
    pub btc: bool,
    /// Sizes of the BTC sessions, comma-separated (6M,12M,24M)
    #[arg(long = "btc-sizes", value_name = "LIST", value_delimiter = ',', default_value = "6M,12M,24M", value_parser = parse_positive_size_arg)]
    pub btc_sizes: Vec<sonde_stats::units::Size>,
    /// From one BTC session's start to the next one's
    #[arg(long = "btc-every", value_name = "TIME", default_value = "10s", value_parser = parse_duration_arg)]
    pub btc_every: Duration,
    /// Path capacity per family by packet-train dispersion (as sonde capacity)
    #[arg(long)]
    pub capacity: bool,
    /// Every mode: --sizes (the scenario's sizes unless given), --btc and --capacity
    #[arg(long)]
    pub all: bool,
    /// Seconds of TCP upload per family (0 = none)
    #[arg(long = "throughput-time", value_name = "SECS", default_value = "3", value_parser = parse_duration_arg)]
    pub throughput_time: Duration,
    /// Use this IPv4 address instead of resolving HOST
    #[arg(long = "ipv4-addr", value_name = "ADDR")]
    pub ipv4_addr: Option<std::net::Ipv4Addr>,
    /// Use this IPv6 address instead of resolving HOST
    #[arg(long = "ipv6-addr", value_name = "ADDR")]
    pub ipv6_addr: Option<std::net::Ipv6Addr>,
    /// How long to wait for a TCP connection: milliseconds as in iperf3, or a time with a
    /// unit (5s); default 30s
    #[arg(long, value_name = "MS|TIME", default_value = crate::flags::values::CONNECT_TIMEOUT_DEFAULT, value_parser = crate::flags::values::parse_connect_timeout)]
    pub connect_timeout: Duration,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl CompareIpArgs {
    /// The sizes cycle, when asked (`--sizes` or `--all`).
    pub fn size_list(&self) -> Option<Vec<u32>> {
        match (&self.sizes, self.all) {
            (Some(s), _) => Some(s.clone()),
            (None, true) => Some(DEFAULT_SIZES.to_vec()),
            (None, false) => None,
        }
    }

    /// Probes per size and family of the sizes mode: `-c`, or as many full cycles as `-t`
    /// holds (at least one), or [`DEFAULT_ROUNDS`].
    pub fn rounds(&self, sizes: usize) -> u64 {
        if let Some(c) = self.count {
            return c;
        }
        let Some(t) = self.time else {
            return DEFAULT_ROUNDS;
        };
        let cycle = self.every.as_secs_f64() * sizes.max(1) as f64;
        if cycle <= 0.0 {
            return 1;
        }
        ((t.as_secs_f64() / cycle).floor() as u64).max(1)
    }

    /// Checks what clap cannot: sizes and steps in range.
    ///
    /// # Errors
    /// The message for a usage error.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(s) = self.size_list() {
            if s.is_empty() || s.len() > MAX_SIZES {
                return Err(format!("--sizes takes 1..{MAX_SIZES} sizes"));
            }
            if self.every < Duration::from_millis(1) {
                return Err("--every must be at least 1ms".into());
            }
        }
        if self.time.is_some() && self.size_list().is_none() {
            return Err("-t goes with --sizes (or --all); without it, give -c".into());
        }
        if (self.btc || self.all) && self.btc_sizes.len() > 64 {
            return Err("--btc-sizes takes at most 64 sizes".into());
        }
        Ok(())
    }
}
