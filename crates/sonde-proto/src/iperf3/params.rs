//! iperf3's parameter JSON (client to server), read with exact types, and sonde's test model.
//!
//! iperf3 3.18+ reads each key only with its expected type (CVE-2024-53580); sonde goes one
//! step further and refuses a known key with the wrong type, so a malformed request ends with
//! a clear SERVER_ERROR instead of a test that silently differs from what was asked. Unknown
//! keys are ignored, as every iperf3 version does. Range checks follow iperf3 HEAD's server
//! and answer with its error numbers ([`super::state::errno`]).

use super::state::errno;
use crate::message::TestParams;
use serde_json::{json, Map, Value};
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::units::Rate;
use sonde_stats::units::Size;
use thiserror::Error;

/// The parameters as iperf3 sent them (only the keys sonde uses or checks).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Iperf3Params {
    pub tcp: bool,
    pub udp: bool,
    pub sctp: bool,
    pub omit: i64,
    pub time: i64,
    pub num: u64,
    pub blockcount: u64,
    pub parallel: i64,
    pub len: i64,
    pub reverse: bool,
    pub bidirectional: bool,
    pub window: Option<i64>,
    pub mss: Option<i64>,
    pub nodelay: bool,
    pub bandwidth: u64,
    pub burst: Option<i64>,
    pub tos: Option<i64>,
    pub congestion: Option<String>,
    pub get_server_output: bool,
    pub udp_counters_64bit: bool,
    pub repeating_payload: bool,
    pub zerocopy: bool,
    pub skip_rx_copy: bool,
    pub fqrate: u64,
    pub dont_fragment: bool,
    /// `-A n,m`: the core the server pins the test to (m).
    pub server_affinity: Option<i64>,
    /// iperf3's RSA credentials token (see [`super::auth`]); checked by a server that asks for
    /// authentication and ignored by one that does not, as iperf3 does.
    pub authtoken: Option<String>,
    pub client_version: Option<String>,
}

/// Options iperf3 negotiates that sonde's [`TestParams`] does not carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Iperf3Options {
    /// 64-bit UDP sequence numbers (`--udp-counters-64bit`).
    pub udp_counters_64bit: bool,
    /// The server returns its own output in its results (`--get-server-output`).
    pub get_server_output: bool,
    /// Payload is the repeated digits "0123456789" (`--repeating-payload`).
    pub repeating_payload: bool,
}

/// Why a parameter message is refused, with the iperf3 error number to send back.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ParamsError {
    #[error("parameter \"{key}\" must be {expected}")]
    WrongType {
        key: &'static str,
        expected: &'static str,
    },
    #[error("no protocol in the parameters (tcp or udp)")]
    NoProtocol,
    #[error("SCTP is not supported")]
    Sctp,
    #[error("parameter \"{key}\" out of range: {value}")]
    Range {
        key: &'static str,
        value: i128,
        code: i32,
    },
    #[error("reverse and bidirectional cannot be combined")]
    ReverseBidir,
    #[error("-t 0 (no time limit) without -n or -k is not supported")]
    Unbounded,
}

impl ParamsError {
    /// The iperf3 `i_errno` that describes this refusal to an iperf3 client.
    pub fn iperf3_errno(&self) -> i32 {
        match self {
            ParamsError::WrongType { .. } | ParamsError::NoProtocol => errno::RECV_PARAMS,
            ParamsError::Sctp => errno::UNIMPLEMENTED,
            ParamsError::Range { code, .. } => *code,
            ParamsError::ReverseBidir => errno::REVERSE_BIDIR,
            ParamsError::Unbounded => errno::DURATION,
        }
    }
}

type Obj = Map<String, Value>;

fn int(o: &Obj, key: &'static str) -> Result<Option<i64>, ParamsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_i64().map(Some).ok_or(ParamsError::WrongType {
            key,
            expected: "an integer",
        }),
    }
}

fn uint(o: &Obj, key: &'static str) -> Result<u64, ParamsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(v) => v.as_u64().ok_or(ParamsError::WrongType {
            key,
            expected: "a non-negative integer",
        }),
    }
}

/// A `true`-when-present key (iperf3 sends `true`; `false` is tolerated).
fn flag(o: &Obj, key: &'static str) -> Result<bool, ParamsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ParamsError::WrongType {
            key,
            expected: "true or false",
        }),
    }
}

/// A flag-like number (iperf3 sends `1`); a boolean is tolerated.
fn int_flag(o: &Obj, key: &'static str) -> Result<bool, ParamsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => v.as_i64().map(|n| n != 0).ok_or(ParamsError::WrongType {
            key,
            expected: "an integer flag",
        }),
    }
}

fn string(o: &Obj, key: &'static str) -> Result<Option<String>, ParamsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ParamsError::WrongType {
            key,
            expected: "a string",
        }),
    }
}

fn range(key: &'static str, v: i64, lo: i64, hi: i64, code: i32) -> Result<(), ParamsError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(ParamsError::Range {
            key,
            value: i128::from(v),
            code,
        })
    }
}

impl Iperf3Params {
    /// Reads a parameter object with exact types.
    ///
    /// # Errors
    /// [`ParamsError::WrongType`] for a known key with another type.
    pub fn parse(v: &Value) -> Result<Self, ParamsError> {
        let Some(o) = v.as_object() else {
            return Err(ParamsError::WrongType {
                key: "(message)",
                expected: "a JSON object",
            });
        };
        Ok(Self {
            tcp: flag(o, "tcp")?,
            udp: flag(o, "udp")?,
            sctp: flag(o, "sctp")?,
            omit: int(o, "omit")?.unwrap_or(0),
            time: int(o, "time")?.unwrap_or(0),
            num: uint(o, "num")?,
            blockcount: uint(o, "blockcount")?,
            parallel: int(o, "parallel")?.unwrap_or(1),
            len: int(o, "len")?.unwrap_or(0),
            reverse: flag(o, "reverse")?,
            bidirectional: flag(o, "bidirectional")?,
            window: int(o, "window")?,
            mss: int(o, "MSS")?,
            nodelay: flag(o, "nodelay")?,
            bandwidth: uint(o, "bandwidth")?,
            burst: int(o, "burst")?,
            tos: int(o, "TOS")?,
            congestion: string(o, "congestion")?,
            get_server_output: int_flag(o, "get_server_output")?,
            udp_counters_64bit: int_flag(o, "udp_counters_64bit")?,
            repeating_payload: int_flag(o, "repeating_payload")?,
            zerocopy: int_flag(o, "zerocopy")?,
            skip_rx_copy: int_flag(o, "skip_rx_copy")?,
            fqrate: uint(o, "fqrate")?,
            dont_fragment: int_flag(o, "dont_fragment")?,
            server_affinity: int(o, "server_affinity")?,
            authtoken: string(o, "authtoken")?,
            client_version: string(o, "client_version")?,
        })
    }

    /// Checks the ranges iperf3 HEAD's server checks and maps the request to sonde's model.
    /// `interval_secs` is the reporting interval of the local end (iperf3 does not send it).
    ///
    /// # Errors
    /// The first [`ParamsError`] found.
    pub fn to_sonde(&self, interval_secs: f64) -> Result<(TestParams, Iperf3Options), ParamsError> {
        let (protocol, len) = self.check()?;
        let bounded = self.num > 0 || self.blockcount > 0;
        let p = TestParams {
            protocol,
            direction: self.direction(),
            parallel: self.parallel as u32,
            duration_secs: if bounded { 0.0 } else { self.time as f64 },
            bytes: Size::from_bytes(self.num),
            blocks: self.blockcount,
            length: Size::from_bytes(len as u64),
            rate: sonde_stats::units::Rate::from_bits_per_sec(self.bandwidth),
            omit_secs: self.omit as f64,
            interval_secs,
            congestion: self.congestion.clone().filter(|c| !c.is_empty()),
            window: self
                .window
                .filter(|w| *w > 0)
                .map(|w| Size::from_bytes(w as u64)),
            mss: self.mss.filter(|m| *m > 0).map(|m| m as u32),
            nodelay: self.nodelay,
            tos: self.tos.unwrap_or(0) as u8,
            zerocopy: false,
            burst: self.burst.unwrap_or(0) as u32,
            steady_pacing: false,
            skip_rx_copy: self.skip_rx_copy,
            fq_rate: Rate::from_bits_per_sec(self.fqrate),
            dont_fragment: self.dont_fragment,
            server_affinity: self.server_affinity.and_then(|c| u32::try_from(c).ok()),
            profile: None,
            coded: false,
            coded_options: None,
            capacity: None,
            psk_answer: None,
        };
        let opts = Iperf3Options {
            udp_counters_64bit: self.udp_counters_64bit,
            get_server_output: self.get_server_output,
            repeating_payload: self.repeating_payload,
        };
        Ok((p, opts))
    }

    /// The checks of [`Iperf3Params::to_sonde`], in iperf3's order: the protocol and the
    /// block length (iperf3's default for the protocol when 0) when every value is in range.
    fn check(&self) -> Result<(Protocol, i64), ParamsError> {
        if self.sctp {
            return Err(ParamsError::Sctp);
        }
        let protocol = match (self.tcp, self.udp) {
            (_, true) => Protocol::Udp,
            (true, false) => Protocol::Tcp,
            (false, false) => return Err(ParamsError::NoProtocol),
        };
        if self.reverse && self.bidirectional {
            return Err(ParamsError::ReverseBidir);
        }
        range("omit", self.omit, 0, 600, errno::OMIT)?;
        range("time", self.time, 0, 86400, errno::DURATION)?;
        range("parallel", self.parallel, 1, 128, errno::NUM_STREAMS)?;
        let len = match (protocol, self.len) {
            (Protocol::Udp, 0) => 1448,
            (Protocol::Tcp, 0) => 128 * 1024,
            (_, l) => l,
        };
        match protocol {
            Protocol::Udp => range("len", len, 16, 65507, errno::UDP_BLOCK_SIZE)?,
            Protocol::Tcp => range("len", len, 1, 1 << 20, errno::BLOCK_SIZE)?,
        }
        self.check_options()?;
        if self.time == 0 && self.num == 0 && self.blockcount == 0 {
            return Err(ParamsError::Unbounded);
        }
        Ok((protocol, len))
    }

    /// The ranges of the optional socket and pacing values, when given.
    fn check_options(&self) -> Result<(), ParamsError> {
        if let Some(w) = self.window {
            range("window", w, 0, 512 << 20, errno::BUF_SIZE)?;
        }
        if let Some(m) = self.mss {
            range("MSS", m, 0, 32767, errno::MSS)?;
        }
        if let Some(t) = self.tos {
            range("TOS", t, 0, 255, errno::BAD_TOS)?;
        }
        if let Some(b) = self.burst {
            range("burst", b, 0, 1000, errno::BURST)?;
        }
        Ok(())
    }

    /// Bidirectional, reverse or upload, as the flags say (both set is refused by the check).
    fn direction(&self) -> Direction {
        if self.bidirectional {
            Direction::Bidir
        } else if self.reverse {
            Direction::Reverse
        } else {
            Direction::Upload
        }
    }
}

/// The parameter JSON an iperf3 3.12 client would send for `p`, with iperf3's exact types.
/// Durations are whole seconds on the wire: fractions are rounded up.
pub fn params_json(p: &TestParams, o: &Iperf3Options, client_version: &str) -> Value {
    let secs = |s: f64| s.max(0.0).ceil() as u64;
    let mut m = Map::new();
    let proto = match p.protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
    };
    m.insert(proto.into(), json!(true));
    m.insert("omit".into(), json!(secs(p.omit_secs)));
    let bounded = !p.bytes.is_zero() || p.blocks > 0;
    m.insert(
        "time".into(),
        json!(if bounded { 0 } else { secs(p.duration_secs) }),
    );
    m.insert("num".into(), json!(p.bytes));
    m.insert("blockcount".into(), json!(p.blocks));
    m.insert("parallel".into(), json!(p.parallel));
    m.insert("len".into(), json!(p.length));
    match p.direction {
        Direction::Reverse => {
            m.insert("reverse".into(), json!(true));
        }
        Direction::Bidir => {
            m.insert("bidirectional".into(), json!(true));
        }
        Direction::Upload => {}
    }
    if let Some(w) = p.window {
        m.insert("window".into(), json!(w));
    }
    if let Some(mss) = p.mss {
        m.insert("MSS".into(), json!(mss));
    }
    if p.nodelay {
        m.insert("nodelay".into(), json!(true));
    }
    if let Some(core) = p.server_affinity {
        m.insert("server_affinity".into(), json!(core));
    }
    if !p.rate.is_unlimited() {
        m.insert("bandwidth".into(), json!(p.rate.bits_per_sec()));
    }
    if p.burst > 1 {
        m.insert("burst".into(), json!(p.burst));
    }
    m.insert("pacing_timer".into(), json!(1000));
    if p.tos != 0 {
        m.insert("TOS".into(), json!(p.tos));
    }
    if let Some(c) = &p.congestion {
        m.insert("congestion".into(), json!(c));
    }
    if o.get_server_output {
        m.insert("get_server_output".into(), json!(1));
    }
    if o.udp_counters_64bit {
        m.insert("udp_counters_64bit".into(), json!(1));
    }
    if o.repeating_payload {
        m.insert("repeating_payload".into(), json!(1));
    }
    if p.skip_rx_copy {
        m.insert("skip_rx_copy".into(), json!(1));
    }
    if !p.fq_rate.is_unlimited() {
        m.insert("fqrate".into(), json!(p.fq_rate.bits_per_sec()));
    }
    if p.dont_fragment {
        m.insert("dont_fragment".into(), json!(1));
    }
    if p.zerocopy {
        m.insert("zerocopy".into(), json!(1));
    }
    m.insert("client_version".into(), json!(client_version));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from iperf3 3.12 (`iperf3 -c ... -t 2`).
    const CAPTURED: &str = r#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#;

    #[test]
    fn captured_312_params_map_to_a_tcp_upload() {
        let v: Value = serde_json::from_str(CAPTURED).unwrap();
        let (p, o) = Iperf3Params::parse(&v).unwrap().to_sonde(1.0).unwrap();
        assert_eq!(p.protocol, Protocol::Tcp);
        assert_eq!(p.direction, Direction::Upload);
        assert_eq!(
            (p.duration_secs, p.length.bytes(), p.parallel),
            (2.0, 131072, 1)
        );
        assert_eq!(o, Iperf3Options::default());
    }

    #[test]
    fn round_trip_through_our_own_json() {
        let v: Value = serde_json::from_str(
            r#"{"udp":true,"omit":1,"time":3,"num":0,"blockcount":0,"parallel":3,"len":1400,"bidirectional":true,"bandwidth":5000000,"TOS":16,"udp_counters_64bit":1,"get_server_output":1,"repeating_payload":1,"window":262144,"nodelay":true,"MSS":1200,"congestion":"reno"}"#,
        )
        .unwrap();
        let (p, o) = Iperf3Params::parse(&v).unwrap().to_sonde(1.0).unwrap();
        let again = params_json(&p, &o, "3.12");
        let (p2, o2) = Iperf3Params::parse(&again).unwrap().to_sonde(1.0).unwrap();
        assert_eq!((p, o), (p2, o2));
        assert_eq!(again["udp_counters_64bit"], json!(1));
        assert_eq!(again["time"], json!(3));
    }

    #[test]
    fn wrong_types_are_refused() {
        for bad in [
            r#"{"tcp":true,"time":"10","parallel":1}"#,
            r#"{"tcp":1,"time":10}"#,
            r#"{"tcp":true,"time":10,"parallel":1.5}"#,
            r#"{"tcp":true,"time":10,"num":-1}"#,
            r#"{"tcp":true,"time":10,"congestion":7}"#,
        ] {
            let v: Value = serde_json::from_str(bad).unwrap();
            let e = Iperf3Params::parse(&v).unwrap_err();
            assert_eq!(e.iperf3_errno(), errno::RECV_PARAMS, "{bad}");
        }
    }

    #[test]
    fn ranges_use_iperf3_codes() {
        let check = |s: &str, code: i32| {
            let v: Value = serde_json::from_str(s).unwrap();
            let e = Iperf3Params::parse(&v).unwrap().to_sonde(1.0).unwrap_err();
            assert_eq!(e.iperf3_errno(), code, "{s}: {e}");
        };
        check(r#"{"tcp":true,"time":10,"parallel":0}"#, errno::NUM_STREAMS);
        check(
            r#"{"tcp":true,"time":10,"parallel":129}"#,
            errno::NUM_STREAMS,
        );
        check(r#"{"udp":true,"time":10,"len":8}"#, errno::UDP_BLOCK_SIZE);
        check(r#"{"tcp":true,"time":90000}"#, errno::DURATION);
        check(r#"{"tcp":true,"time":0}"#, errno::DURATION);
        check(
            r#"{"tcp":true,"time":1,"reverse":true,"bidirectional":true}"#,
            errno::REVERSE_BIDIR,
        );
        check(r#"{"tcp":true,"time":1,"TOS":300}"#, errno::BAD_TOS);
        check(r#"{"time":1}"#, errno::RECV_PARAMS);
        check(r#"{"sctp":true,"time":1}"#, errno::UNIMPLEMENTED);
    }

    #[test]
    fn byte_count_ends_the_test() {
        let v: Value = serde_json::from_str(r#"{"tcp":true,"time":10,"num":1000000}"#).unwrap();
        let (p, _) = Iperf3Params::parse(&v).unwrap().to_sonde(1.0).unwrap();
        assert_eq!((p.duration_secs, p.bytes.bytes()), (0.0, 1_000_000));
    }
}
