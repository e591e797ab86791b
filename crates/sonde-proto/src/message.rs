//! sonde's control messages, their type bytes, and capability negotiation.
//!
//! Each message is one [`crate::frame`] whose type byte names the variant and whose body is the
//! variant's fields as compact JSON. JSON keeps the protocol readable in captures and lets a
//! later release add fields (unknown fields are ignored, missing optional ones default), while
//! the frame type byte keeps dispatch typed and cheap. Bodies are bounded by the frame limit.
//!
//! Capabilities: the client lists what it can do in [`Hello::caps`]; the server answers with the
//! subset it also supports in [`Welcome::caps`]. Features are only used when both list them.

use crate::frame::{self, Frame, FrameError, OPTIONAL_TYPE_BASE};
use crate::preamble::{Cookie, COOKIE_LEN};
use serde::{Deserialize, Serialize};
use sonde_stats::model::{CpuUsage, Direction, EndView, IntervalReport, Protocol, StreamRole};
use thiserror::Error;

/// Capabilities this build implements.
pub const CAPABILITIES: &[&str] = &[
    "tcp",
    "udp",
    "reverse",
    "bidir",
    "live-intervals",
    "burst",
    "steady-pacing",
    "skip-rx-copy",
    "fq-rate",
    "dont-fragment",
    "affinity",
    "profile",
    "coded",
    "capacity",
    "cpu-load",
    "coded-options",
    crate::psk::CAPABILITY,
    crate::probe_tag::CAPABILITY,
];

/// Client's opening message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub version: u16,
    pub min_version: u16,
    pub software: String,
    #[serde(default)]
    pub caps: Vec<String>,
}

/// Server's answer to an acceptable [`Hello`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    pub version: u16,
    pub software: String,
    #[serde(default)]
    pub caps: Vec<String>,
    /// TCP congestion-control algorithms the server host offers.
    #[serde(default)]
    pub congestion_available: Vec<String>,
    /// A server that requires a pre-shared key (`--psk-file`): its fresh challenge, 64 hex
    /// digits, which the client answers in [`TestParams::psk_answer`] (see [`crate::psk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_nonce: Option<String>,
}

/// Why a server refuses a client or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseCode {
    Busy,
    MaxClients,
    MaxDuration,
    MaxBitrate,
    BadParameter,
    Version,
    Congestion,
    Internal,
    /// The client did not prove it holds the server's pre-shared key.
    Auth,
}

impl RefuseCode {
    /// Stable short name, as in the JSON encoding.
    pub fn as_str(self) -> &'static str {
        match self {
            RefuseCode::Busy => "busy",
            RefuseCode::MaxClients => "max_clients",
            RefuseCode::MaxDuration => "max_duration",
            RefuseCode::MaxBitrate => "max_bitrate",
            RefuseCode::BadParameter => "bad_parameter",
            RefuseCode::Version => "version",
            RefuseCode::Congestion => "congestion",
            RefuseCode::Internal => "internal",
            RefuseCode::Auth => "auth",
        }
    }
}

/// A refusal with a message meant for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub code: RefuseCode,
    pub message: String,
}

/// What the client asks the server to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestParams {
    pub protocol: Protocol,
    pub direction: Direction,
    pub parallel: u32,
    /// Seconds of measurement after the omit period; 0 when `bytes` or `blocks` ends the test.
    pub duration_secs: f64,
    pub bytes: u64,
    pub blocks: u64,
    pub length: u32,
    /// Target bit/s per stream, 0 = unlimited.
    pub bitrate: u64,
    pub omit_secs: f64,
    pub interval_secs: f64,
    #[serde(default)]
    pub congestion: Option<String>,
    #[serde(default)]
    pub window: Option<u32>,
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
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fq_rate: u64,
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
    /// The client's answer to the server's [`Welcome::auth_nonce`]: HMAC-SHA256 under the
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

fn is_zero(v: &u64) -> bool {
    *v == 0
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
            bytes: 0,
            blocks: 0,
            length: 128 * 1024,
            bitrate: 0,
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
            fq_rate: 0,
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
    #[error("UDP datagram length must be {min}..={max}, got {0}", min = limits::MIN_UDP_LEN, max = limits::MAX_UDP_LEN)]
    UdpLength(u32),
    #[error("TCP write length must be 1..={max}, got {0}", max = limits::MAX_TCP_LEN)]
    TcpLength(u32),
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
                if !(limits::MIN_UDP_LEN..=limits::MAX_UDP_LEN).contains(&self.length) =>
            {
                return Err(ParamError::UdpLength(self.length))
            }
            Protocol::Tcp if !(1..=limits::MAX_TCP_LEN).contains(&self.length) => {
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
        if self.duration_secs == 0.0 && self.bytes == 0 && self.blocks == 0 {
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

/// Server's acceptance of a test: the cookie that data streams must present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accept {
    pub cookie: String,
}

impl Accept {
    pub fn new(cookie: &Cookie) -> Self {
        Self {
            cookie: crate::preamble::cookie_hex(cookie),
        }
    }

    /// Decodes the hex cookie.
    ///
    /// # Errors
    /// [`MessageError::BadCookie`] when it is not 32 hex digits.
    pub fn cookie(&self) -> Result<Cookie, MessageError> {
        let s = self.cookie.as_bytes();
        if s.len() != COOKIE_LEN * 2 {
            return Err(MessageError::BadCookie);
        }
        let mut out = [0u8; COOKIE_LEN];
        for (i, pair) in s.chunks_exact(2).enumerate() {
            let text = std::str::from_utf8(pair).map_err(|_| MessageError::BadCookie)?;
            out[i] = u8::from_str_radix(text, 16).map_err(|_| MessageError::BadCookie)?;
        }
        Ok(out)
    }
}

/// How much a sender wrote on one stream, for exact loss accounting at the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentCount {
    pub id: u32,
    pub bytes: u64,
    /// UDP datagrams sent since the start (the last sequence number used).
    pub packets: u64,
}

/// The client's end of the test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stop {
    #[serde(default)]
    pub sent: Vec<SentCount>,
    /// When the client told its senders to stop: nanoseconds of its test clock, which starts
    /// at its first data. The server's receivers end their span there (or at their last
    /// arrival, if later) rather than when the server read this message, which on a busy
    /// host comes milliseconds late. Absent from older clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at_ns: Option<u64>,
}

/// One stream as one end saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerStream {
    pub id: u32,
    pub role: StreamRole,
    pub view: EndView,
}

/// One end's final figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    pub cpu: CpuUsage,
    #[serde(default)]
    pub congestion: Option<String>,
    pub streams: Vec<PeerStream>,
    /// For streams this end sent: totals, so the receiving end can count tail losses.
    #[serde(default)]
    pub sent: Vec<SentCount>,
    /// What this end has to tell the other's user about its side (a sender that fell behind
    /// its schedule). Bounded when read: see [`MAX_RESULT_NOTES`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A profile run: the figures of the streams this end received.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub profile: Vec<sonde_profile::result::StreamResult>,
    /// The whole server process's CPU time over the test (`cpu-load`: sent only to a client
    /// that lists it, so an older peer never sees the field). Read through
    /// [`ProcessLoad::checked`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_load: Option<ProcessLoad>,
}

/// A process's CPU time over a span of wall-clock time (`cpu-load`), from `getrusage`.
///
/// Unlike [`CpuUsage`] (the test's own threads, as iperf3 reports), this is every thread of
/// the process: what the machine spent serving, including other sessions and the control
/// connection, which is what a load-against-rate step wants to chart.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProcessLoad {
    pub user_secs: f64,
    pub system_secs: f64,
    pub wall_secs: f64,
}

/// Largest span a peer's [`ProcessLoad`] may claim (a day), and so the largest CPU times
/// (times 1024 cores): anything beyond is not a measurement.
const MAX_LOAD_WALL_SECS: f64 = 86_400.0;

impl ProcessLoad {
    /// The figures when they can be a measurement: finite, not negative, a wall time above
    /// zero and under a day, CPU times under 1024 cores' worth of it. `None` otherwise.
    pub fn checked(self) -> Option<Self> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        let cap = self.wall_secs * 1024.0;
        (ok(self.user_secs)
            && ok(self.system_secs)
            && ok(self.wall_secs)
            && self.wall_secs > 0.0
            && self.wall_secs <= MAX_LOAD_WALL_SECS
            && self.user_secs <= cap
            && self.system_secs <= cap)
            .then_some(self)
    }

    /// User plus system time in percent of one core over the wall time.
    pub fn percent(&self) -> f64 {
        (self.user_secs + self.system_secs) / self.wall_secs.max(f64::MIN_POSITIVE) * 100.0
    }
}

/// Most notes a peer's results may carry that a reader shows.
pub const MAX_RESULT_NOTES: usize = 16;

/// Either end giving up, with the reason for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Abort {
    pub reason: String,
}

/// A control message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Hello(Hello),
    Welcome(Welcome),
    Refuse(Refusal),
    TestRequest(Box<TestParams>),
    Accept(Accept),
    StreamsReady,
    Start,
    Stop(Stop),
    Results(Box<Results>),
    Abort(Abort),
    Done,
    /// Optional: the server's live interval report (capability `live-intervals`).
    LiveInterval(Box<IntervalReport>),
}

/// Why a frame is not a valid message.
#[derive(Debug, Error)]
pub enum MessageError {
    #[error("unknown mandatory control message type {0:#04x}")]
    UnknownType(u8),
    #[error("malformed body of control message type {ty:#04x}: {source}")]
    BadBody { ty: u8, source: serde_json::Error },
    #[error("session cookie is not 32 hex digits")]
    BadCookie,
    #[error(transparent)]
    Frame(#[from] FrameError),
}

mod types {
    pub const HELLO: u8 = 0x01;
    pub const WELCOME: u8 = 0x02;
    pub const REFUSE: u8 = 0x03;
    pub const TEST_REQUEST: u8 = 0x04;
    pub const ACCEPT: u8 = 0x05;
    pub const STREAMS_READY: u8 = 0x06;
    pub const START: u8 = 0x07;
    pub const STOP: u8 = 0x08;
    pub const RESULTS: u8 = 0x09;
    pub const ABORT: u8 = 0x0A;
    pub const DONE: u8 = 0x0B;
    pub const LIVE_INTERVAL: u8 = 0x80;
}

fn body<T: for<'de> Deserialize<'de>>(f: &Frame) -> Result<T, MessageError> {
    serde_json::from_slice(&f.body).map_err(|source| MessageError::BadBody {
        ty: f.msg_type,
        source,
    })
}

impl Message {
    /// Short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Hello(_) => "hello",
            Message::Welcome(_) => "welcome",
            Message::Refuse(_) => "refuse",
            Message::TestRequest(_) => "test-request",
            Message::Accept(_) => "accept",
            Message::StreamsReady => "streams-ready",
            Message::Start => "start",
            Message::Stop(_) => "stop",
            Message::Results(_) => "results",
            Message::Abort(_) => "abort",
            Message::Done => "done",
            Message::LiveInterval(_) => "live-interval",
        }
    }

    /// Decodes a frame. `Ok(None)` for an unknown optional type, which the caller skips.
    ///
    /// # Errors
    /// [`MessageError`] for an unknown mandatory type or a body that does not parse.
    pub fn decode(f: &Frame) -> Result<Option<Message>, MessageError> {
        use types::*;
        let msg = match f.msg_type {
            HELLO => Message::Hello(body(f)?),
            WELCOME => Message::Welcome(body(f)?),
            REFUSE => Message::Refuse(body(f)?),
            TEST_REQUEST => Message::TestRequest(Box::new(body(f)?)),
            ACCEPT => Message::Accept(body(f)?),
            STREAMS_READY => Message::StreamsReady,
            START => Message::Start,
            STOP => Message::Stop(body(f)?),
            RESULTS => Message::Results(Box::new(body(f)?)),
            ABORT => Message::Abort(body(f)?),
            DONE => Message::Done,
            LIVE_INTERVAL => Message::LiveInterval(Box::new(body(f)?)),
            t if t >= OPTIONAL_TYPE_BASE => return Ok(None),
            t => return Err(MessageError::UnknownType(t)),
        };
        Ok(Some(msg))
    }

    /// Encodes the message as one frame.
    ///
    /// # Errors
    /// [`MessageError::Frame`] if the body exceeds the frame limit.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        use types::*;
        let json = |v: Result<Vec<u8>, serde_json::Error>, ty: u8| {
            v.map_err(|source| MessageError::BadBody { ty, source })
        };
        let (ty, bytes) = match self {
            Message::Hello(m) => (HELLO, json(serde_json::to_vec(m), HELLO)?),
            Message::Welcome(m) => (WELCOME, json(serde_json::to_vec(m), WELCOME)?),
            Message::Refuse(m) => (REFUSE, json(serde_json::to_vec(m), REFUSE)?),
            Message::TestRequest(m) => (TEST_REQUEST, json(serde_json::to_vec(m), TEST_REQUEST)?),
            Message::Accept(m) => (ACCEPT, json(serde_json::to_vec(m), ACCEPT)?),
            Message::StreamsReady => (STREAMS_READY, Vec::new()),
            Message::Start => (START, Vec::new()),
            Message::Stop(m) => (STOP, json(serde_json::to_vec(m), STOP)?),
            Message::Results(m) => (RESULTS, json(serde_json::to_vec(m), RESULTS)?),
            Message::Abort(m) => (ABORT, json(serde_json::to_vec(m), ABORT)?),
            Message::Done => (DONE, Vec::new()),
            Message::LiveInterval(m) => {
                (LIVE_INTERVAL, json(serde_json::to_vec(m), LIVE_INTERVAL)?)
            }
        };
        Ok(frame::encode(ty, &bytes)?)
    }
}

/// The capabilities both ends support, in this build's order.
pub fn negotiate(peer_caps: &[String]) -> Vec<String> {
    CAPABILITIES
        .iter()
        .filter(|c| peer_caps.iter().any(|p| p == *c))
        .map(|c| (*c).to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameDecoder;

    pub(crate) fn params() -> TestParams {
        TestParams {
            protocol: Protocol::Udp,
            direction: Direction::Bidir,
            parallel: 2,
            length: 1448,
            bitrate: 1_000_000,
            ..TestParams::default()
        }
    }

    fn round_trip(m: Message) -> Message {
        let mut d = FrameDecoder::new();
        d.push(&m.encode().unwrap());
        Message::decode(&d.next_frame().unwrap().unwrap())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn messages_round_trip() {
        let msgs = vec![
            Message::Hello(Hello {
                version: 1,
                min_version: 1,
                software: "sonde 0.1".into(),
                caps: vec!["udp".into()],
            }),
            Message::TestRequest(Box::new(params())),
            Message::Accept(Accept::new(&[0xA5; COOKIE_LEN])),
            Message::StreamsReady,
            Message::Stop(Stop {
                sent: vec![SentCount {
                    id: 1,
                    bytes: 10,
                    packets: 1,
                }],
                stopped_at_ns: Some(10_000_123_456),
            }),
            Message::Stop(Stop {
                sent: Vec::new(),
                stopped_at_ns: None,
            }),
            Message::Abort(Abort {
                reason: "ctrl-c".into(),
            }),
            Message::Done,
        ];
        for m in msgs {
            assert_eq!(round_trip(m.clone()), m);
        }
    }

    #[test]
    fn literal_start_frame() {
        assert_eq!(Message::Start.encode().unwrap(), vec![0, 0, 0, 1, 0x07]);
    }

    #[test]
    fn unknown_optional_is_skipped_mandatory_is_error() {
        let f = Frame {
            msg_type: 0x9F,
            body: vec![1, 2, 3],
        };
        assert!(Message::decode(&f).unwrap().is_none());
        let f = Frame {
            msg_type: 0x3F,
            body: vec![],
        };
        assert!(matches!(
            Message::decode(&f),
            Err(MessageError::UnknownType(0x3F))
        ));
    }

    #[test]
    fn wrong_json_types_are_errors_not_panics() {
        let f = Frame {
            msg_type: 0x04,
            body: br#"{"protocol":5,"parallel":"x"}"#.to_vec(),
        };
        assert!(matches!(
            Message::decode(&f),
            Err(MessageError::BadBody { ty: 4, .. })
        ));
    }

    #[test]
    fn cookie_hex_round_trip_and_rejects_garbage() {
        let a = Accept::new(&[0x0F; COOKIE_LEN]);
        assert_eq!(a.cookie().unwrap(), [0x0F; COOKIE_LEN]);
        assert!(Accept {
            cookie: "zz".repeat(16)
        }
        .cookie()
        .is_err());
        assert!(Accept {
            cookie: "é".repeat(16)
        }
        .cookie()
        .is_err());
        assert!(Accept {
            cookie: "00".into()
        }
        .cookie()
        .is_err());
    }

    #[test]
    fn validation() {
        let mut p = params();
        assert!(p.validate().is_ok());
        p.parallel = 0;
        assert_eq!(p.validate(), Err(ParamError::Parallel(0)));
        p.parallel = 1;
        p.length = 8;
        assert_eq!(p.validate(), Err(ParamError::UdpLength(8)));
        p.length = 100;
        p.duration_secs = 0.0;
        assert_eq!(p.validate(), Err(ParamError::NoEnd));
        p.blocks = 5;
        assert!(p.validate().is_ok());
        p.duration_secs = f64::NAN;
        assert!(p.validate().is_err());
    }

    #[test]
    fn bidir_stream_roles() {
        let p = params();
        assert_eq!(p.stream_count(), 4);
        assert!(p.client_sends(2));
        assert!(!p.client_sends(3));
    }

    #[test]
    fn process_load_is_checked_and_optional_on_the_wire() {
        let l = ProcessLoad {
            user_secs: 0.5,
            system_secs: 0.25,
            wall_secs: 3.0,
        };
        assert_eq!(l.checked(), Some(l));
        assert!((l.percent() - 25.0).abs() < 1e-9);
        for bad in [
            ProcessLoad {
                wall_secs: 0.0,
                ..l
            },
            ProcessLoad {
                user_secs: f64::NAN,
                ..l
            },
            ProcessLoad {
                system_secs: -1.0,
                ..l
            },
            ProcessLoad {
                user_secs: 1e9,
                ..l
            },
            ProcessLoad {
                wall_secs: 1e6,
                ..l
            },
        ] {
            assert_eq!(bad.checked(), None, "{bad:?}");
        }
        // Absent from a server without `cpu-load`: the results read as before.
        let v: Results =
            serde_json::from_str(r#"{"cpu":{"total":1.0,"user":1.0,"system":0.0},"streams":[]}"#)
                .unwrap();
        assert_eq!(v.process_load, None);
        assert!(!serde_json::to_string(&v).unwrap().contains("process_load"));
        assert!(CAPABILITIES.contains(&"cpu-load"));
    }

    #[test]
    fn negotiation_is_intersection() {
        let caps = negotiate(&["udp".into(), "warp-drive".into(), "tcp".into()]);
        assert_eq!(caps, vec!["tcp".to_string(), "udp".to_string()]);
    }
}
