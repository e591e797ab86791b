//! Flags of `sonde sweep` (phase one: parse and validate, no sockets).

use crate::flags::output::OutputArgs;
use crate::flags::values::{parse_rate_arg, parse_size_arg};
use clap::Args;
use sonde_stats::sweep_record::SweepDirection;

/// `sonde sweep HOST`: the highest rate within a loss limit per datagram length (bisection),
/// or achieved against asked for a list of rates. UDP steps pace steadily (a held-up sender
/// makes up at most two datagrams); a search that only the host's sender bounded ends
/// "sender-limited" with exit status 1.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  sonde sweep board -u -l 64,100,500,1448 --max-loss 0.1% --max-rate 100m\n  sonde sweep board -b 1000m,140m,130m,100m,50m,10m",
    mut_arg("json", |a| a.help("One JSON document: \"sweep\" (settings, layer), \"results\" per length and direction (verdict: found, at_max_rate (the --max-rate passed: a lower bound), below_floor, step_limit or sender_limited with limited_at_bps; rate_bps, datagrams_per_sec, loss_percent, steps, seconds), \"knees\" of a rate list (knee_bps; sender_short_bps: listed rates the sender could not offer, the receiver getting all it sent: there the sending host set the rate), every step in \"steps\" (offered_bps, sent_bps, achieved_bps, loss_percent, passed, rerun, sender_short), \"partial\", \"error\""))
)]
pub struct SweepArgs {
    /// sonde server host
    pub host: String,
    /// Server port
    #[arg(short = 'p', long, default_value_t = 5201)]
    pub port: u16,
    /// UDP (the search for the highest rate within --max-loss needs it)
    #[arg(short = 'u', long)]
    pub udp: bool,
    /// Datagram lengths to search, comma-separated (e.g. 64,100,500,1448; UDP 16..65507);
    /// with -b one length (default 1448 UDP, 128K TCP)
    #[arg(short = 'l', long = "length", value_name = "LIST", value_delimiter = ',', value_parser = parse_size_arg)]
    pub lengths: Vec<sonde_stats::units::Size>,
    /// Instead of a search: run each of these rates once (e.g. 1000m,140m,10m) and show
    /// achieved against asked, with the rate where achieved stops following
    #[arg(short = 'b', long = "bitrate", value_name = "LIST", value_delimiter = ',', value_parser = parse_rate_arg)]
    pub rates: Vec<u64>,
    /// The loss a search step may have and still pass, in percent (e.g. 0.1%)
    #[arg(long = "max-loss", value_name = "PERCENT", default_value = "0.1%", value_parser = parse_percent)]
    pub max_loss: f64,
    /// Highest rate a search tries, its first step (the link's nominal rate; default: the
    /// speed of the interface towards HOST, when its driver reports one)
    #[arg(long = "max-rate", value_name = "RATE", value_parser = parse_positive_rate)]
    pub max_rate: Option<u64>,
    /// Lowest rate a search tries; losing too much there ends it without a rate
    #[arg(long = "min-rate", value_name = "RATE", default_value = "100k", value_parser = parse_positive_rate)]
    pub min_rate: u64,
    /// Seconds each step transmits
    #[arg(long = "step-time", value_name = "SECS", default_value = "2", value_parser = parse_step_secs)]
    pub step_time: f64,
    /// Repeat runs at the rate found that must all pass (else the search steps down)
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub confirm: u32,
    /// A search stops when its interval is this fraction of its upper end (e.g. 1%)
    #[arg(long, value_name = "PERCENT", default_value = "1%", value_parser = parse_resolution)]
    pub resolution: f64,
    /// Upper bound on the steps of one search
    #[arg(long = "max-steps", value_name = "N", default_value_t = 40, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_steps: u32,
    /// Directions, comma-separated: up (client sends), down (server sends, -R), bidir
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "up", value_parser = parse_direction)]
    pub directions: Vec<SweepDirection>,
    /// A rate is followed when achieved is at most this many percent below asked (less the
    /// loss): with -b the knee, in a search a step where the sender could not offer its rate
    #[arg(long, value_name = "PERCENT", default_value = "2%", value_parser = parse_percent)]
    pub tolerance: f64,
    #[command(flatten)]
    pub ip: crate::flags::connection::FamilyArgs,
    #[command(flatten)]
    pub connect: crate::flags::connection::ConnectTimeoutArgs,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    /// No progress lines on stderr
    #[arg(short = 'q', long)]
    pub quiet: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A percentage: `0.1%` or `0.1`, from 0 up to (not including) 100.
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let n = s.trim().trim_end_matches('%');
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "\"{s}\" is not a percentage from 0 to below 100 (e.g. 0.1%)"
        )),
    }
}

fn parse_resolution(s: &str) -> Result<f64, String> {
    match parse_percent(s)? {
        v if (0.01..=50.0).contains(&v) => Ok(v),
        _ => Err(format!("\"{s}\": the resolution must be 0.01% to 50%")),
    }
}

fn parse_positive_rate(s: &str) -> Result<u64, String> {
    sonde_stats::units::parse_positive_rate(s).map_err(|e| format!("{e}: a sweep paces every step"))
}

fn parse_step_secs(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('s').parse::<f64>() {
        Ok(v) if (0.2..=3600.0).contains(&v) => Ok(v),
        _ => Err(format!("\"{s}\" is not a step time of 0.2 to 3600 seconds")),
    }
}

fn parse_direction(s: &str) -> Result<SweepDirection, String> {
    match s.trim() {
        "up" => Ok(SweepDirection::Up),
        "down" => Ok(SweepDirection::Down),
        "bidir" => Ok(SweepDirection::Bidir),
        _ => Err(format!("\"{s}\" is not a direction: up, down or bidir")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_parse_with_or_without_the_sign() {
        assert_eq!(parse_percent("0.1%"), Ok(0.1));
        assert_eq!(parse_percent("2"), Ok(2.0));
        for bad in ["", "x%", "-1%", "100%", "nan", "inf"] {
            assert!(parse_percent(bad).is_err(), "{bad}");
        }
        assert!(parse_resolution("0%").is_err());
        assert!(parse_direction("sideways").is_err());
        assert!(parse_positive_rate("0").is_err());
        assert_eq!(parse_step_secs("2s"), Ok(2.0));
    }
}
