//! Flags of `sonde stress` and `sonde services` (phase one: parse and validate, no DNS, no
//! sockets).

use crate::flags::output::OutputArgs;
use crate::flags::values::parse_duration_arg;
use clap::Args;
use sonde_stats::units::{Rate, Size};

/// `-J` of `sonde stress`: sonde's own document.
const STRESS_JSON_HELP: &str = "One JSON document in sonde's stress schema (not iperf3's): start, connect (asked, connected, refused, timed_out, other_failed, seconds, first_error), intervals (start, end, connections: id, sent_bytes, received_bytes, sent_bps, received_bps, open; the sums; fairness_sent, fairness_received = Jain's index or null; warmup: true within --warmup), end (per connection totals, zero_share (the share of counted intervals it moved nothing) and close: clean, reset, timeout, failed_during_run, udp; the sums, fairness, close counts, echo_mismatched_bytes, partial, warmup_secs, zero_share_worst; with -u a udp section: datagram_bytes, offered_bps, datagrams_sent, datagrams_received, send_errors, echo (sent, received, lost, duplicates, reordered, unknown, rtt), reply_cap_per_sec, replies_stopped_at, largest_reply_bytes, oversized_replies), notes, error. --ramp: mode, transport, layer, repeat, ramp (the mean of each count's runs: connections, opened, sent_bps, received_bps, fairness_sent, fairness_received, closed_clean (TCP) or udp (requests, replies, loss_percent or null, send_errors), zero_share_worst; max: the same keys, each the runs' largest; runs: every run's), best_sent, best_received, partial, error. --steps: host, protocol, load_probe (the command, with --load-probe), steps (offered_bps, achieved_bps, loss_percent, retransmits, server_cpu_percent or null, client_cpu_percent, seconds, error, device_load: value (the probe's last number) or null, exit_status, error; null without --load-probe), error";

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("service").required(true).multiple(true).args(["discard", "chargen", "echo", "steps"])))]
#[command(mut_arg("json", |a| a.help(STRESS_JSON_HELP)))]
#[command(mut_arg("psk_file", |a| a.requires("steps")))]
pub struct StressArgs {
    /// The device (or host) running the echo, discard or chargen server
    pub host: String,
    /// Send to its discard server (RFC 863): the device receives
    #[arg(long, conflicts_with_all = ["chargen", "echo"])]
    pub discard: bool,
    /// Read from its chargen server (RFC 864): the device sends
    #[arg(long, conflicts_with = "echo")]
    pub chargen: bool,
    /// Send to its echo server (RFC 862) and check what comes back: both directions
    #[arg(long)]
    pub echo: bool,
    /// Server port (default: the service's well-known port, 9, 19 or 7)
    #[arg(short = 'p', long)]
    pub port: Option<u16>,
    /// Concurrent TCP connections, all opened at once (1..100000)
    #[arg(short = 'P', long = "parallel", value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub parallel: u32,
    /// Seconds of data after the connections are open
    #[arg(short = 't', long = "time", value_name = "TIME", default_value = "25", value_parser = parse_duration_arg)]
    pub time: std::time::Duration,
    /// Seconds at the start not counted: intervals that end by then are reported, marked
    /// warm-up, and left out of the summary's rates, fairness and zero-traffic shares
    #[arg(long = "warmup", value_name = "SECS", default_value = "0", value_parser = parse_duration_arg)]
    pub warmup: std::time::Duration,
    /// Seconds between interval reports (each connection's speed, the sum, the fairness)
    #[arg(short = 'i', long = "interval", value_name = "TIME", default_value = "0.5", value_parser = parse_duration_arg)]
    pub interval: std::time::Duration,
    /// How long a connection may take to open before it counts as timed out
    #[arg(long = "connect-timeout", value_name = "TIME", default_value = "5", value_parser = parse_duration_arg)]
    pub connect_timeout: std::time::Duration,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    /// How long, after this end's FIN, the device may take to close each connection
    #[arg(long = "close-timeout", value_name = "TIME", default_value = "5", value_parser = parse_duration_arg)]
    pub close_timeout: std::time::Duration,
    /// Bytes per write (e.g. 1K, 128K; default 128K); with -u bytes per datagram (default
    /// 512, the most an RFC 864 chargen reply carries; echo needs at least 24)
    #[arg(short = 'l', long = "length", value_name = "BYTES", value_parser = parse_block)]
    pub length: Option<Size>,
    /// UDP flows instead of TCP connections: -P sockets, requests paced at -b over all of them
    /// (discard: counts what was sent; chargen: one request per reply; echo: numbered requests,
    /// loss, duplicates, reordering and round trips). Loss is reported, not a failure. With
    /// --ramp the counts are flows sharing the same -b. Not with --storm or --overload, which
    /// measure TCP connection set-up
    #[arg(short = 'u', long = "udp")]
    pub udp: bool,
    /// -u: offered rate over all flows together, paced (e.g. 1m, 100m; default 1m; never
    /// unpaced). TCP (discard, echo): each connection's sending rate at most, paced (default:
    /// as fast as the device takes it)
    #[arg(short = 'b', long = "bitrate", value_name = "RATE", value_parser = crate::flags::values::parse_rate_flag)]
    pub bitrate: Option<Rate>,
    /// CPU load against offered rate: a paced test per rate (e.g. 10m,20m,50m,100m, over all
    /// -P streams) against a sonde server (port 5201 unless -p), each -step-time long; a row
    /// per step with offered, achieved, loss (-u) or retransmits, the server process's CPU as
    /// it reports it ("not reported" by servers without it) and this client's CPU. The data
    /// goes to the server unless --chargen (the server sends) or --echo (both ways)
    #[arg(long, value_name = "RATES", value_delimiter = ',', value_parser = crate::flags::values::parse_rate_flag, conflicts_with_all = ["ramp", "storm", "overload"])]
    pub steps: Option<Vec<Rate>>,
    /// --steps against an iperf3 server (its protocol; it reports no process CPU, so the
    /// server column says "not reported")
    #[arg(long, requires = "steps", conflicts_with = "psk_file")]
    pub iperf3: bool,
    /// --steps: a shell command (run with `sh -c`) that reads the device's own load at each
    /// step's end, e.g. a counter of its background loop; the last number it prints on stdout
    /// is the step's "Device load". One that fails, times out or prints no number leaves the
    /// step without a value and with a note; the steps go on
    #[arg(long = "load-probe", value_name = "CMD", requires = "steps", value_parser = parse_command)]
    pub load_probe: Option<String>,
    /// --load-probe: how long the command may run before it is killed (with what it started)
    #[arg(long = "load-probe-timeout", value_name = "TIME", default_value = "10", requires = "load_probe", value_parser = parse_duration_arg)]
    pub load_probe_timeout: std::time::Duration,
    /// --steps: seconds per step
    #[arg(long = "step-time", value_name = "TIME", default_value = "3", value_parser = parse_duration_arg)]
    pub step_time: std::time::Duration,
    /// -u: how long to wait for late replies after the last request
    #[arg(long = "drain", value_name = "TIME", default_value = "1", value_parser = parse_duration_arg)]
    pub drain: std::time::Duration,
    /// Echo: bytes in flight per connection at most (sent and not yet back), so the rate is
    /// the device's echo rate, not the kernels' buffering
    #[arg(long = "window", value_name = "BYTES", default_value = "256K", value_parser = parse_block)]
    pub window: Size,
    /// Maximum total speed against the number of connections: a run of -t per count, every
    /// count from LO to HI (e.g. 1..10), one row each (-u: flows, the same -b shared by all,
    /// and the loss)
    #[arg(long, value_name = "LO..HI", value_parser = parse_ramp, conflicts_with = "parallel")]
    pub ramp: Option<(u32, u32)>,
    /// --ramp: runs per count (e.g. 5); each count's row shows their mean and maximum, -J
    /// holds every run
    #[arg(long, value_name = "N", default_value_t = 1, requires = "ramp", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Open and close connections as fast as the device takes them for -t, -P at a time:
    /// accepted per second, failures by kind, connect times (TCP only)
    #[arg(long, conflicts_with = "ramp")]
    pub storm: bool,
    /// Open connections (256 at a time, up to -P) until the device refuses one, hold them for
    /// -t, close them all and time the recovery (TCP only)
    #[arg(long, conflicts_with_all = ["ramp", "storm"])]
    pub overload: bool,
    /// A row per connection per interval at any count (by default above 64 connections an
    /// interval shows the spread: minimum, median, maximum)
    #[arg(long)]
    pub each: bool,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// `--ramp LO..HI` (1 <= LO <= HI <= 100000).
fn parse_ramp(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("\"{s}\" is not a range LO..HI of connection counts (e.g. 1..64)");
    let (lo, hi) = s.split_once("..").ok_or_else(bad)?;
    let (lo, hi) = (
        lo.trim().parse::<u32>().map_err(|_| bad())?,
        hi.trim().parse::<u32>().map_err(|_| bad())?,
    );
    if lo == 0 || lo > hi || hi > 100_000 {
        return Err(bad());
    }
    Ok((lo, hi))
}

/// `--load-probe CMD`: a command, not blank.
fn parse_command(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("the command is empty".into());
    }
    Ok(s.to_owned())
}

/// A buffer or write size of 1 byte .. 16M, so that it fits any buffer's length.
fn parse_block(s: &str) -> Result<Size, String> {
    match s.parse::<Size>() {
        Ok(v) if (1..=16 << 20).contains(&v.bytes()) => Ok(v),
        Ok(_) => Err(format!("\"{s}\" must be 1 byte .. 16M")),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Args)]
pub struct ServicesArgs {
    /// Address to listen on (default: every address, IPv6 and IPv4, as `server`; 0.0.0.0 for
    /// IPv4 only)
    #[arg(short = 'B', long = "bind", value_name = "ADDR")]
    pub bind: Option<std::net::IpAddr>,
    /// Which services (comma-separated): echo, discard, chargen
    #[arg(long = "services", value_name = "LIST", value_delimiter = ',', default_value = "echo,discard,chargen", value_parser = ["echo", "discard", "chargen"])]
    pub services: Vec<String>,
    /// Serve on BASE+7, BASE+9 and BASE+19 instead of the well-known 7, 9 and 19 (which need
    /// root or CAP_NET_BIND_SERVICE)
    #[arg(long = "port-base", value_name = "BASE", value_parser = clap::value_parser!(u16).range(1..=65_000))]
    pub port_base: Option<u16>,
    /// Echo port (overrides --port-base)
    #[arg(long = "echo-port", value_name = "PORT")]
    pub echo_port: Option<u16>,
    /// Discard port (overrides --port-base)
    #[arg(long = "discard-port", value_name = "PORT")]
    pub discard_port: Option<u16>,
    /// Chargen port (overrides --port-base)
    #[arg(long = "chargen-port", value_name = "PORT")]
    pub chargen_port: Option<u16>,
    /// TCP only
    #[arg(long = "tcp-only", conflicts_with = "udp_only")]
    pub tcp_only: bool,
    /// UDP only
    #[arg(long = "udp-only")]
    pub udp_only: bool,
    /// Open TCP connections at most; those beyond are refused with a reset
    #[arg(long = "max-connections", value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Bytes an echo connection may hold while its peer does not read (e.g. 16K)
    #[arg(long = "echo-buffer", value_name = "BYTES", default_value = "16K", value_parser = parse_block)]
    pub echo_buffer: Size,
    /// UDP echo and chargen replies per second to any one source address
    #[arg(long = "udp-rate", value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub udp_rate: u32,
}

/// The client's -J and the services' flags parse (a usage error exits 2 before any socket).
#[cfg(test)]
mod tests {
    use crate::flags::{Cli, Command};
    use clap::Parser;

    #[test]
    fn stress_needs_exactly_one_service() {
        assert!(Cli::try_parse_from(["sonde", "stress", "h"]).is_err());
        assert!(Cli::try_parse_from(["sonde", "stress", "h", "--echo", "--chargen"]).is_err());
        let c = Cli::try_parse_from(["sonde", "stress", "h", "--echo", "-P", "8", "-i", "0.5"])
            .unwrap();
        let Command::Stress(a) = c.command else {
            panic!("not stress");
        };
        assert!(a.echo && a.parallel == 8);
        assert_eq!(a.time.as_secs(), 25);
    }

    #[test]
    fn stress_rates_are_rates_from_the_flag_on() {
        let c =
            Cli::try_parse_from(["sonde", "stress", "h", "--echo", "-u", "-b", "97.2m"]).unwrap();
        let Command::Stress(a) = c.command else {
            panic!("not stress");
        };
        assert_eq!(a.bitrate.map(|r| r.bits_per_sec()), Some(97_200_000));
        let c = Cli::try_parse_from(["sonde", "stress", "h", "--steps", "10m,1G"]).unwrap();
        let Command::Stress(a) = c.command else {
            panic!("not stress");
        };
        let steps: Vec<u64> = a
            .steps
            .unwrap_or_default()
            .iter()
            .map(|r| r.bits_per_sec())
            .collect();
        assert_eq!(steps, [10_000_000, 1_000_000_000]);
        assert!(Cli::try_parse_from(["sonde", "stress", "h", "--steps", "fast"]).is_err());
    }

    #[test]
    fn a_load_probe_goes_with_steps_and_has_a_timeout() {
        let parse = |args: &[&str]| {
            let all = [&["sonde", "stress", "h"][..], args].concat();
            Cli::try_parse_from(all).map(|c| match c.command {
                Command::Stress(a) => a,
                _ => panic!("not stress"),
            })
        };
        let a = parse(&["--steps", "10m", "--load-probe", "cat /tmp/load"]).unwrap();
        assert_eq!(a.load_probe.as_deref(), Some("cat /tmp/load"));
        assert_eq!(a.load_probe_timeout.as_secs(), 10, "the default");
        let a = parse(&[
            "--steps",
            "10m",
            "--load-probe",
            "x",
            "--load-probe-timeout",
            "2.5",
        ])
        .unwrap();
        assert_eq!(a.load_probe_timeout.as_millis(), 2500);
        assert!(
            parse(&["--discard", "--load-probe", "x"]).is_err(),
            "needs --steps"
        );
        assert!(parse(&["--steps", "10m", "--load-probe", " "]).is_err());
        assert!(parse(&["--steps", "10m", "--load-probe-timeout", "2"]).is_err());
    }

    #[test]
    fn ramp_repeat_warmup_and_a_tcp_rate_parse() {
        let parse = |args: &[&str]| {
            let all = [&["sonde", "stress", "h", "--discard"][..], args].concat();
            Cli::try_parse_from(all).map(|c| match c.command {
                Command::Stress(a) => a,
                _ => panic!("not stress"),
            })
        };
        let a = parse(&["--ramp", "1..10", "--repeat", "5", "-t", "5"]).unwrap();
        assert_eq!((a.ramp, a.repeat), (Some((1, 10)), 5));
        assert_eq!(parse(&["--ramp", "1..3"]).unwrap().repeat, 1);
        assert!(parse(&["--repeat", "2"]).is_err(), "--repeat needs --ramp");
        assert!(parse(&["--ramp", "1..3", "--repeat", "0"]).is_err());
        let a = parse(&["--warmup", "2", "-b", "2m"]).unwrap();
        assert_eq!(a.warmup.as_secs(), 2);
        assert_eq!(
            a.bitrate.map(|r| r.bits_per_sec()),
            Some(2_000_000),
            "-b without -u"
        );
        assert!(parse(&[]).unwrap().warmup.is_zero());
    }

    #[test]
    fn services_defaults() {
        let c = Cli::try_parse_from(["sonde", "services", "--port-base", "40000"]).unwrap();
        let Command::Services(a) = c.command else {
            panic!("not services");
        };
        assert_eq!(a.services, ["echo", "discard", "chargen"]);
        assert_eq!(a.port_base, Some(40000));
        assert!(Cli::try_parse_from(["sonde", "services", "--services", "daytime"]).is_err());
    }
}
