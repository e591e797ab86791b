//! More flags of `sonde switch-test`: switching at given times, how many switches end a
//! transfer, and the receiver's sampling interval (the throughput series of `-J` and of
//! `sonde report`'s chart).

use clap::Args;

#[derive(Args, Debug, Clone)]
pub struct SwitchMoreArgs {
    /// End the transfer once this many switches are done (before -t if sooner)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub switches: Option<u64>,
    /// Switch at these times (seconds from the start, comma-separated) instead of --every
    #[arg(long, value_name = "SECS,...", value_delimiter = ',', value_parser = crate::flags::values::parse_switch_secs)]
    pub at: Vec<f64>,
    /// With --listen: count received bytes per this many seconds (0.001 to 60) for the
    /// throughput series sent back to the client
    #[arg(short = 'i', long, value_name = "SECS", default_value_t = 0.1, value_parser = interval_secs)]
    pub interval: f64,
}

fn interval_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.001..=60.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "'{s}' is not a number of seconds between 0.001 and 60"
        )),
    }
}
