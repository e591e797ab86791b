//! Flags of `sonde latency` and `sonde rrul` (phase one: parse and
//! validate, no DNS, no sockets).

use crate::flags::output::OutputArgs;
pub use crate::flags::values::parse_duration_arg;
use clap::Args;

/// `-J` of `sonde latency`: sonde's own document, not iperf3's.
const LATENCY_JSON_HELP: &str = "One JSON document in sonde's latency schema (not iperf3's): start (what was probed and how), intervals (a row per report interval: start, end, sent, received, lost, rtt), end (the summary: seconds, loss, rtt, jitter_ms, ipdv, one_way, schedule, rate_per_second, partial), round_trips (a record per probe: seq, sent_unix_ns, received_unix_ns, rtt_ms, lost; up_ms/down_ms with --clock-synced; the first 100000 probes, round_trips_omitted counts the rest), notes, error";
/// `-J` of `sonde rrul`.
const RRUL_JSON_HELP: &str = "One JSON document in sonde's RRUL schema (not iperf3's): version, target, remote, streams, phase_secs, step_secs, phases (one per phase: name, download_bps, upload_bps, latency = the summary of `sonde latency -J`'s end, median_inflation_ms, p99_inflation_ms, load_error), partial, error";

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(LATENCY_JSON_HELP)))]
#[command(mut_arg("verbose", |a| a.short_alias('v').help(LATENCY_VERBOSE_HELP)))]
#[command(mut_arg("psk_file", |a| a.conflicts_with_all(["icmp", "tcp_connect"])))]
pub struct LatencyArgs {
    /// Host (a sonde server; any host with --icmp; HOST:PORT with --tcp-connect)
    pub host: String,
    /// Server port (UDP probes and --tcp-rr)
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// ICMP echo to any host (unprivileged ICMP socket, or raw socket as root)
    #[arg(long, group = "mode")]
    pub icmp: bool,
    /// TCP handshake times to HOST:PORT (any TCP service)
    #[arg(long = "tcp-connect", group = "mode")]
    pub tcp_connect: bool,
    /// Request/response transactions on one TCP connection to a sonde server
    #[arg(long = "tcp-rr", group = "mode")]
    pub tcp_rr: bool,
    /// Time between probes: seconds, or with a unit (10ms, 500us); default 1 s, except
    /// --tcp-rr, which runs transactions back to back unless -i is given
    #[arg(short = 'i', long, value_name = "TIME", value_parser = parse_duration_arg)]
    pub interval: Option<std::time::Duration>,
    /// Bytes per probe, 16..65507 (UDP payload; ICMP echo data like ping -s; tcp-rr transaction)
    #[arg(short = 's', long, value_name = "BYTES", default_value_t = 56, value_parser = clap::value_parser!(u32).range(16..=65507))]
    pub size: u32,
    /// Seconds to probe (default 10 unless --count is given)
    #[arg(short = 't', long, value_name = "SECS", value_parser = parse_duration_arg)]
    pub time: Option<std::time::Duration>,
    /// Number of probes
    #[arg(short = 'c', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Next probe as soon as a reply returns (or with --window N in flight)
    #[arg(long)]
    pub flood: bool,
    /// Probes in flight at once with --flood (UDP and ICMP), 1..1024
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub window: u32,
    /// Count replies later than this many milliseconds as late
    #[arg(long, value_name = "MS", value_parser = parse_ms)]
    pub late: Option<f64>,
    /// The clocks of both hosts are synchronised (NTP/PTP): report measured one-way delays
    #[arg(long = "clock-synced")]
    pub clock_synced: bool,
    /// Time to wait for the last replies (default 3 x the largest RTT, 0.1..3 s)
    #[arg(long, value_name = "TIME", value_parser = parse_duration_arg)]
    pub wait: Option<std::time::Duration>,
    /// Per-connection timeout of --tcp-connect and --tcp-rr
    #[arg(long, value_name = "TIME", default_value = "2", value_parser = parse_duration_arg)]
    pub timeout: std::time::Duration,
    /// Seconds between interval lines (0 = summary only)
    #[arg(long = "report-interval", value_name = "SECS", default_value = "1", value_parser = parse_duration_arg)]
    pub report_interval: std::time::Duration,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `-V` / `-v` / `--verbose` of `sonde latency` (the shared output flag, meaning per-probe
/// lines here).
const LATENCY_VERBOSE_HELP: &str = "A line per answered probe, as ping (sequence, size, RTT; one-way delays with --clock-synced); with --json-stream a \"round_trip\" event per answered probe (-v works too)";

#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(RRUL_JSON_HELP)))]
pub struct RrulArgs {
    /// sonde server host
    pub host: String,
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// TCP streams per loaded direction (flent's RRUL uses 4)
    #[arg(short = 'P', long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub streams: u32,
    /// Length of each phase (idle, download, upload, both)
    #[arg(long, value_name = "TIME", default_value = "10", value_parser = parse_duration_arg)]
    pub phase: std::time::Duration,
    /// Sample step: time between latency probes and throughput samples
    #[arg(long, value_name = "TIME", default_value = "0.2", value_parser = parse_duration_arg)]
    pub step: std::time::Duration,
    /// UDP probe size in bytes
    #[arg(short = 's', long, default_value_t = 56, value_parser = clap::value_parser!(u32).range(16..=65507))]
    pub size: u32,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    /// How long to wait for a TCP connection: milliseconds as in iperf3, or a time with a
    /// unit (5s); default 30s
    #[arg(long, value_name = "MS|TIME", default_value = crate::flags::values::CONNECT_TIMEOUT_DEFAULT, value_parser = crate::flags::values::parse_connect_timeout)]
    pub connect_timeout: std::time::Duration,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_ms(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v <= 3_600_000.0 => Ok(v),
        _ => Err(format!("\"{s}\" is not a number of milliseconds above 0")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration_arg("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_duration_arg("500us"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_duration_arg("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration_arg("2s"), Ok(Duration::from_secs(2)));
        assert!(parse_duration_arg("-1").is_err());
        assert!(parse_duration_arg("fast").is_err());
        assert!(parse_ms("0").is_err());
    }
}
