//! What a client asks the server to run ([`TestParams`]), its defaults, and the limits the
//! protocol puts on it.

use serde::{Deserialize, Serialize};
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::units::{Rate, Size};
use thiserror::Error;

/// What the client asks the server to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestParams {
    pub protocol: Protocol,
    pub direction: Direction,
    pub parallel: u32,
    /// Seconds of measurement after the omit period; 0 when `bytes` or `blocks` ends the test.
    pub duration_secs: f64,
    /// Bytes each way that end the test (`-n`), 0 = none.
    pub bytes: Size,
    pub blocks: u64,
    /// Bytes per write or datagram (`-l`); checked against [`limits`] by [`TestParams::validate`].
    pub length: Size,
    /// Target rate per stream, 0 = unlimited ([`Rate::UNLIMITED`]); `bitrate` on the wire.
    #[serde(rename = "bitrate")]
    pub rate: Rate,
    pub omit_secs: f64,
    pub interval_secs: f64,
    #[serde(default)]
    pub congestion: Option<String>,
    #[serde(default)]
    pub window: Option<Size>,
    #[serde(default)]
    pub mss: Option<u32>,
    #[serde(default)]
    pub nodelay: bool,
    #[serde(default)]
    pub tos: u8,
    #[serde(default)]
    pub zerocopy: bool,
    /// UDP datagrams sent back to back at each paced departure (`--burst`); 0 or 1 = every
    /// datagram at its own time. Older peers ignore the field: a client asks for bursts (> 1)
    /// only from a server that lists the `burst` capability.
    #[serde(default, skip_serializing_if = "is_smooth")]
    pub burst: u32,
    /// Paced UDP senders make up at most two datagrams of lost schedule, instead of up to
    /// 200 ms of it (`--steady-pacing`; every `sonde sweep` step). Sent only to a server
    /// listing the `steady-pacing` capability when it sends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steady_pacing: bool,
    /// TCP receivers discard data without copying it to user space (`--skip-rx-copy`, as
    /// iperf3 3.16+): measures the path and the sender, not the receiver's memory copy.
    /// Sent only to a server that lists the `skip-rx-copy` capability.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skip_rx_copy: bool,
    /// Kernel pacing of every data socket in bit/s (`--fq-rate`, SO_MAX_PACING_RATE), 0 = none.
    /// Sent only to a server that lists the `fq-rate` capability.
    #[serde(default, skip_serializing_if = "is_unlimited")]
    pub fq_rate: Rate,
    /// UDP datagrams with the IP don't-fragment bit (`--dont-fragment`): one bigger than the
    /// path MTU is refused, not fragmented. Sent only to a server listing `dont-fragment`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dont_fragment: bool,
    /// The CPU core the server pins this test's threads to (`-A n,m`: m). Sent only to a
    /// server listing the `affinity` capability.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_affinity: Option<u32>,
    /// Run the coded transport (`--coded`) over the one UDP stream instead of plain UDP
    /// datagrams. Sent only to a server listing the `coded` capability.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub coded: bool,
    /// The coded test's data, feedback policy and scheme when they are not the defaults. Sent
    /// only to a server listing `coded-options`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coded_options: Option<crate::coded::CodedOptions>,
    /// A traffic profile instead of the throughput test (`sonde profile run`): its streams
    /// replace `parallel` and `direction`. Sent only to a server listing `profile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRequest>,
    /// Capacity probe trains instead of the throughput test (`sonde capacity`): the server
    /// sends them on the one UDP stream (`direction` reverse). Sent only to a server listing
    /// `capacity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacityPlan>,
    /// The client's answer to the server's [`Welcome::auth_nonce`](super::Welcome::auth_nonce): HMAC-SHA256 under the
    /// pre-shared key over the nonce and this request without this field ([`crate::psk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psk_answer: Option<String>,
}

/// A traffic profile to run, and how its receivers take one-way delays.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRequest {
    pub profile: sonde_profile::Profile,
    /// The user says both ends' clocks agree (`--clock-synced`): delays are receive time
    /// minus send stamp, not an estimate.
    #[serde(default)]
    pub clock_synced: bool,
    /// The clocks' offset the client measured before the run (without `--clock-synced`):
    /// each receiver corrects its one-way delays by it. A server that predates it ignores it
    /// and reports delays above each stream's fastest datagram instead, labelled as such.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset: Option<sonde_profile::result::ClockOffset>,
}

fn is_unlimited(rate: &Rate) -> bool {
    rate.is_unlimited()
}

/// Left out only at its default (0): 1 means the same (smooth pacing) but is written, so a
/// message decodes to exactly what was encoded.
fn is_smooth(burst: &u32) -> bool {
    *burst == 0
}

impl Default for TestParams {
    /// iperf3's defaults: one TCP upload stream for 10 s, 128 KiB writes, no rate limit,
    /// reports every second.
    fn default() -> Self {
        Self {
            protocol: Protocol::Tcp,
            direction: Direction::Upload,
            parallel: 1,
            duration_secs: 10.0,
            bytes: Size::ZERO,
            blocks: 0,
            length: Size::from_bytes(128 * 1024),
            rate: Rate::UNLIMITED,
            omit_secs: 0.0,
            interval_secs: 1.0,
            congestion: None,
            window: None,
            mss: None,
            nodelay: false,
            tos: 0,
            zerocopy: false,
            burst: 0,
            steady_pacing: false,
            skip_rx_copy: false,
            fq_rate: Rate::UNLIMITED,
            dont_fragment: false,
            server_affinity: None,
            profile: None,
            coded: false,
            coded_options: None,
            capacity: None,
            psk_answer: None,
        }
    }
}

/// Limits the protocol itself puts on [`TestParams`] (servers may add tighter ones).
pub mod limits {
    pub const MAX_PARALLEL: u32 = 128;
    pub const MIN_UDP_LEN: u32 = crate::datagram::HEADER_LEN as u32;
    pub const MAX_UDP_LEN: u32 = 65507;
    pub const MAX_TCP_LEN: u32 = 16 * 1024 * 1024;
    /// Largest socket buffer a test may ask for (`-w`): a 32-bit count, as the field always
    /// was on the wire (the kernel caps it further at `rmem_max` / `wmem_max`).
    pub const MAX_WINDOW: u64 = u32::MAX as u64;
    pub const MAX_OMIT_SECS: f64 = 600.0;
    pub const MAX_DURATION_SECS: f64 = 86400.0;
    /// Most datagrams in one intended burst (`--burst`), as iperf3 allows.
    pub const MAX_BURST: u32 = 1000;
}

/// A [`TestParams`] field outside what the protocol allows.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ParamError {
    #[error("parallel streams must be 1..={max}, got {0}", max = limits::MAX_PARALLEL)]
    Parallel(u32),
    #[error("UDP datagram length must be {min}..={max}, got {got}", min = limits::MIN_UDP_LEN, max = limits::MAX_UDP_LEN, got = .0.bytes())]
    UdpLength(Size),
    #[error("TCP write length must be 1..={max}, got {got}", max = limits::MAX_TCP_LEN, got = .0.bytes())]
    TcpLength(Size),
    #[error("socket buffer must be at most {max} bytes, got {got}", max = limits::MAX_WINDOW, got = .0.bytes())]
    Window(Size),
    #[error("duration must be 0..={max} s, got {0}", max = limits::MAX_DURATION_SECS)]
    Duration(f64),
    #[error("omit must be 0..={max} s, got {0}", max = limits::MAX_OMIT_SECS)]
    Omit(f64),
    #[error("interval must be 0 or 0.1..=60 s, got {0}")]
    Interval(f64),
    #[error("a test needs an end: a duration, a byte count or a block count")]
    NoEnd,
    #[error("burst must be 1..={max} datagrams, got {0}", max = limits::MAX_BURST)]
    Burst(u32),
    #[error("capacity plan: {0}")]
    Capacity(#[from] crate::capacity::PlanError),
    #[error("traffic profile: {0}")]
    Profile(#[from] sonde_profile::ProfileError),
}

impl TestParams {
    /// The write or datagram length as the 32-bit field a datagram header and the capacity
    /// plan take; a checked request's length always fits (a larger one reads as
    /// `u32::MAX`, which [`TestParams::validate`] refuses).
    pub fn length_u32(&self) -> u32 {
        u32::try_from(self.length.bytes()).unwrap_or(u32::MAX)
    }

    /// Checks every field against the protocol's limits.
    ///
    /// # Errors
    /// The first [`ParamError`] found.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.parallel == 0 || self.parallel > limits::MAX_PARALLEL {
            return Err(ParamError::Parallel(self.parallel));
        }
        match self.protocol {
            Protocol::Udp
                if !(u64::from(limits::MIN_UDP_LEN)..=u64::from(limits::MAX_UDP_LEN))
                    .contains(&self.length.bytes()) =>
            {
                return Err(ParamError::UdpLength(self.length))
            }
            Protocol::Tcp
                if !(1..=u64::from(limits::MAX_TCP_LEN)).contains(&self.length.bytes()) =>
            {
                return Err(ParamError::TcpLength(self.length))
            }
            _ => {}
        }
        if !(0.0..=limits::MAX_DURATION_SECS).contains(&self.duration_secs) {
            return Err(ParamError::Duration(self.duration_secs));
        }
        if !(0.0..=limits::MAX_OMIT_SECS).contains(&self.omit_secs) {
            return Err(ParamError::Omit(self.omit_secs));
        }
        if !(self.interval_secs == 0.0 || (0.1..=60.0).contains(&self.interval_secs)) {
            return Err(ParamError::Interval(self.interval_secs));
        }
        if let Some(w) = self.window.filter(|w| w.bytes() > limits::MAX_WINDOW) {
            return Err(ParamError::Window(w));
        }
        if self.duration_secs == 0.0 && self.bytes.is_zero() && self.blocks == 0 {
            return Err(ParamError::NoEnd);
        }
        if self.burst > limits::MAX_BURST {
            return Err(ParamError::Burst(self.burst));
        }
        if let Some(r) = &self.profile {
            r.profile.validate()?;
        }
        if let Some(c) = &self.capacity {
            c.validate()?;
        }
        Ok(())
    }

    /// Number of data connections the test opens.
    pub fn stream_count(&self) -> u32 {
        if let Some(r) = &self.profile {
            return r.profile.streams.len() as u32;
        }
        match self.direction {
            Direction::Bidir => self.parallel * 2,
            _ => self.parallel,
        }
    }

    /// Whether the client sends on stream `id` (ids are 1..=stream_count; in bidir the first
    /// `parallel` are the client's sending streams).
    pub fn client_sends(&self, id: u32) -> bool {
        if let Some(r) = &self.profile {
            return r.profile.client_sends(id);
        }
        match self.direction {
            Direction::Upload => true,
            Direction::Reverse => false,
            Direction::Bidir => id <= self.parallel,
        }
    }
}
