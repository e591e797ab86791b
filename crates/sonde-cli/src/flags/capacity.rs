//! Flags of `sonde capacity` (phase one: parse and validate).

use crate::flags::output::OutputArgs;
use clap::Args;

/// `sonde capacity HOST`: path capacity by packet dispersion against a sonde server.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("One JSON document: host, server, family, layer (\"ip\"), overhead_model, payload_bytes, ip_bytes, short_train_len / long_train_len (datagrams per train), kernel_timestamps, seconds, verdict (host-limited, shaped, link, unmeasured), sustained_ip_bps / sustained_payload_bps / sustained_shaper_bps, \"estimate\" (train counts, short-train rates, histogram with bin width and modes, cov, peak mode, adr_bps, sustained range, bucket_bytes, knees, departure_bps, per-long-train fits), early_stop (enabled, rule, planned_long_trains, stopped, after_long_trains, last: the rule's long_trains, mean_bps, spread, ci_half, same_shape, converged), with --tx-timestamps \"departures\" (trains reported, median and largest gap in ns, not_back_to_back train ids, per-train gaps), partial, error")))]
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
    #[arg(long = "no-early-stop")]
    pub no_early_stop: bool,
    /// Ask the server for its kernel's software transmit stamps (SO_TIMESTAMPING) and show
    /// the spread of each train's departure gaps, flagging trains that did not leave back
    /// to back
    #[arg(long = "tx-timestamps")]
    pub tx_timestamps: bool,
    #[command(flatten)]
    pub connect: crate::flags::connection::ConnectTimeoutArgs,
    #[command(flatten)]
    pub psk: crate::flags::auth::PskArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
