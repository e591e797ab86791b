//! iperf3's results JSON, sent by both ends after TEST_END (client first).
//!
//! Integers are read leniently because real peers differ: 3.12 and 3.13 print -1 as
//! 18446744073709551615 (a signed/unsigned printing bug, iperf3 #1435), counters may exceed
//! 2^63, and a few fields are written as floats by some builds. `-1` in either spelling means
//! "not known" and is kept as `None`. Writing uses iperf3's exact types (ints as ints, `jitter`
//! and times as floats) and sends `omitted_*` either as a pair or not at all.

use serde_json::{json, Map, Value};
use thiserror::Error;

/// One stream in a results message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamResult {
    /// iperf3 stream id (1, 3, 4, ...).
    pub id: u32,
    pub bytes: u64,
    /// TCP sender only; None = -1.
    pub retransmits: Option<u64>,
    /// Seconds (receiver's value; 0 elsewhere).
    pub jitter: f64,
    /// UDP datagrams lost (receiver); None = -1.
    pub errors: Option<u64>,
    /// UDP datagrams sent (sender) or highest sequence seen (receiver); None = -1.
    pub packets: Option<u64>,
    pub start_time: f64,
    pub end_time: f64,
}

/// One end's results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    pub cpu_util_total: f64,
    pub cpu_util_user: f64,
    pub cpu_util_system: f64,
    /// 1 = TCP sender with retransmit counts, 0 = cannot tell, -1 = only receives.
    pub sender_has_retransmits: i64,
    pub congestion_used: Option<String>,
    pub streams: Vec<StreamResult>,
    pub server_output_json: Option<Value>,
    pub server_output_text: Option<String>,
}

/// A results message iperf3 would refuse too.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResultsError {
    #[error("results lack \"{0}\"")]
    Missing(&'static str),
    #[error("results field \"{0}\" has the wrong type")]
    WrongType(&'static str),
    #[error("results name stream id {0}, which iperf3 never uses")]
    BadStreamId(u64),
}

/// An integer that may be -1 spelled as u64::MAX, or a float from some builds.
fn lenient(v: &Value) -> Option<Option<u64>> {
    if let Some(u) = v.as_u64() {
        return Some((u != u64::MAX).then_some(u));
    }
    if let Some(i) = v.as_i64() {
        return Some(u64::try_from(i).ok());
    }
    let f = v.as_f64()?;
    if !f.is_finite() {
        return None;
    }
    Some((f >= 0.0).then_some(f as u64))
}

fn need<'a>(o: &'a Map<String, Value>, key: &'static str) -> Result<&'a Value, ResultsError> {
    o.get(key).ok_or(ResultsError::Missing(key))
}

fn float(o: &Map<String, Value>, key: &'static str) -> Result<f64, ResultsError> {
    need(o, key)?.as_f64().ok_or(ResultsError::WrongType(key))
}

fn count(o: &Map<String, Value>, key: &'static str) -> Result<Option<u64>, ResultsError> {
    lenient(need(o, key)?).ok_or(ResultsError::WrongType(key))
}

fn opt_float(o: &Map<String, Value>, key: &'static str) -> Result<f64, ResultsError> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(0.0),
        Some(v) => v.as_f64().ok_or(ResultsError::WrongType(key)),
    }
}

impl StreamResult {
    fn parse(v: &Value) -> Result<Self, ResultsError> {
        let o = v.as_object().ok_or(ResultsError::WrongType("streams"))?;
        let id = count(o, "id")?.ok_or(ResultsError::WrongType("id"))?;
        let id = u32::try_from(id)
            .ok()
            .filter(|i| super::from_iperf3_id(*i).is_some())
            .ok_or(ResultsError::BadStreamId(id))?;
        Ok(Self {
            id,
            bytes: count(o, "bytes")?.unwrap_or(0),
            retransmits: count(o, "retransmits")?,
            jitter: float(o, "jitter")?,
            errors: count(o, "errors")?,
            packets: count(o, "packets")?,
            start_time: opt_float(o, "start_time")?,
            end_time: opt_float(o, "end_time")?,
        })
    }

    fn to_json(&self) -> Value {
        let neg = |v: Option<u64>| v.map_or(json!(-1), |x| json!(x));
        json!({
            "id": self.id,
            "bytes": self.bytes,
            "retransmits": neg(self.retransmits),
            "jitter": self.jitter,
            "errors": self.errors.unwrap_or(0),
            "packets": self.packets.unwrap_or(0),
            "start_time": self.start_time,
            "end_time": self.end_time,
        })
    }
}

impl Results {
    /// Reads a results object; the fields iperf3 requires must be present.
    ///
    /// # Errors
    /// [`ResultsError`] naming the first missing or mistyped field.
    pub fn parse(v: &Value) -> Result<Self, ResultsError> {
        let o = v.as_object().ok_or(ResultsError::WrongType("(message)"))?;
        let streams = need(o, "streams")?
            .as_array()
            .ok_or(ResultsError::WrongType("streams"))?
            .iter()
            .map(StreamResult::parse)
            .collect::<Result<Vec<_>, _>>()?;
        let shr = need(o, "sender_has_retransmits")?;
        let sender_has_retransmits = match lenient(shr) {
            Some(Some(v)) => i64::try_from(v).unwrap_or(1),
            Some(None) => -1,
            None => return Err(ResultsError::WrongType("sender_has_retransmits")),
        };
        Ok(Self {
            cpu_util_total: float(o, "cpu_util_total")?,
            cpu_util_user: float(o, "cpu_util_user")?,
            cpu_util_system: float(o, "cpu_util_system")?,
            sender_has_retransmits,
            congestion_used: o
                .get("congestion_used")
                .and_then(Value::as_str)
                .map(str::to_owned),
            streams,
            server_output_json: o.get("server_output_json").cloned(),
            server_output_text: o
                .get("server_output_text")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// The message as iperf3 writes it.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("cpu_util_total".into(), json!(self.cpu_util_total));
        m.insert("cpu_util_user".into(), json!(self.cpu_util_user));
        m.insert("cpu_util_system".into(), json!(self.cpu_util_system));
        m.insert(
            "sender_has_retransmits".into(),
            json!(self.sender_has_retransmits),
        );
        if let Some(c) = &self.congestion_used {
            m.insert("congestion_used".into(), json!(c));
        }
        m.insert(
            "streams".into(),
            Value::Array(self.streams.iter().map(StreamResult::to_json).collect()),
        );
        if let Some(j) = &self.server_output_json {
            m.insert("server_output_json".into(), j.clone());
        }
        if let Some(t) = &self.server_output_text {
            m.insert("server_output_text".into(), json!(t));
        }
        Value::Object(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As iperf3 3.12 sends it for a TCP receiver (retransmits -1 printed unsigned).
    const FROM_312: &str = r#"{"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1.0,"sender_has_retransmits":18446744073709551615,"congestion_used":"bbr","streams":[{"id":1,"bytes":3000000000,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":2.000123}]}"#;

    #[test]
    fn accepts_unsigned_minus_one() {
        let r = Results::parse(&serde_json::from_str(FROM_312).unwrap()).unwrap();
        assert_eq!(r.sender_has_retransmits, -1);
        assert_eq!(r.streams[0].retransmits, None);
        assert_eq!(r.streams[0].bytes, 3_000_000_000);
        assert_eq!(r.congestion_used.as_deref(), Some("bbr"));
        let again = Results::parse(&r.to_json()).unwrap();
        assert_eq!(again, r);
        assert_eq!(r.to_json()["streams"][0]["retransmits"], json!(-1));
    }

    #[test]
    fn accepts_signed_minus_one_and_huge_counters() {
        let v = json!({"cpu_util_total":0,"cpu_util_user":0,"cpu_util_system":0,
            "sender_has_retransmits":-1,"streams":[{"id":3,"bytes":18446744073709551614u64,
            "retransmits":-1,"jitter":0.001,"errors":-1,"packets":5}]});
        let r = Results::parse(&v).unwrap();
        assert_eq!(r.streams[0].bytes, u64::MAX - 1);
        assert_eq!(r.streams[0].errors, None);
        assert_eq!(r.streams[0].end_time, 0.0);
    }

    #[test]
    fn rejects_missing_and_bad_fields() {
        let base = || -> Value { serde_json::from_str(FROM_312).unwrap() };
        let mut v = base();
        v.as_object_mut().unwrap().remove("streams");
        assert_eq!(Results::parse(&v), Err(ResultsError::Missing("streams")));
        let mut v = base();
        v["streams"][0]["id"] = json!(2);
        assert_eq!(Results::parse(&v), Err(ResultsError::BadStreamId(2)));
        let mut v = base();
        v["streams"][0]["bytes"] = json!("many");
        assert_eq!(Results::parse(&v), Err(ResultsError::WrongType("bytes")));
        assert!(Results::parse(&json!([1])).is_err());
    }
}
