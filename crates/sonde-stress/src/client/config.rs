//! What a TCP stress run is asked to do: [`StressConfig`], shared by the connect phase, the
//! data run and `--overload`.

use sonde_stats::stress::model::StressMode;
use sonde_stats::units::Rate;
use std::net::SocketAddr;
use std::time::Duration;

/// One stress run.
#[derive(Debug, Clone)]
pub struct StressConfig {
    pub addr: SocketAddr,
    /// The host as the user typed it, for the report.
    pub remote: String,
    pub mode: StressMode,
    pub connections: u32,
    pub duration: Duration,
    pub interval: Duration,
    pub connect_timeout: Duration,
    pub close_timeout: Duration,
    /// Largest write per call.
    pub block: usize,
    /// Echo: bytes sent and not yet back at most, so that the rate is the device's echo rate
    /// rather than how much the kernels buffer.
    pub echo_window: u64,
    /// `-b`: each connection's sending rate at most (paced, one write of burst); `None`:
    /// as fast as the device takes it.
    pub rate: Option<Rate>,
    /// `--warmup`: intervals ending this soon after the data began are reported, marked,
    /// and left out of the summary's rates, fairness and zero shares.
    pub warmup: Duration,
}
