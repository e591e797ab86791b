//! Reading `sonde switch-test -J` documents into the report's throughput view.
//!
//! A switch test has its own document shape (top-level `"test": "switch-test"`): the client's
//! totals and hash check in `end`, and the receiving server's view in `server` - its switch
//! records and the bytes it received per interval (`server.received_over_time`). The report
//! reads it as one upload whose interval series is what the receiving application got, and
//! marks each switch on the chart at the time the server's session saw it (its JOIN), by the
//! family it moved to.

use crate::json::{num, text, uint};
use crate::view::{DirView, Series, Throughput};
use serde_json::Value;

/// Whether `doc` is a switch test's document.
pub fn is_switch_test(doc: &Value) -> bool {
    doc.get("test").and_then(Value::as_str) == Some("switch-test")
}

/// The receiver's bytes per interval as a bit/s series, each point at its interval's middle.
fn received(server: Option<&Value>) -> Vec<Series> {
    let Some(r) = server.and_then(|s| s.get("received_over_time")) else {
        return Vec::new();
    };
    let (Some(step), Some(bytes)) = (
        num(r, &["interval"]).filter(|s| *s > 0.0),
        r.get("bytes").and_then(Value::as_array),
    ) else {
        return Vec::new();
    };
    let mut s = Series::new("client → server received by server (receiver)".into());
    for (i, b) in bytes.iter().enumerate() {
        let start = i as f64 * step;
        let bps = b.as_f64().unwrap_or(0.0) * 8.0 / step;
        s.push(Some(start), start + step, start + step / 2.0, bps);
    }
    vec![s]
}

/// Each switch the server saw: (when, "planned to IPv6" and the like).
fn switches(server: Option<&Value>) -> Vec<(f64, String)> {
    server
        .and_then(|s| s.get("switches"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let at = num(r, &["at"])?;
            let kind = text(r, &["kind"]).unwrap_or_else(|| "switch".into());
            let to = text(r, &["to"]).unwrap_or_else(|| "?".into());
            Some((at, format!("{kind} to {to}")))
        })
        .collect()
}

/// The throughput view of a switch-test document (see the module docs).
pub fn throughput(doc: &Value) -> Throughput {
    let end = doc.get("end");
    let server = doc.get("server");
    let e = |k: &str| end.and_then(|e| num(e, &[k]));
    let seconds = e("seconds");
    let received_bytes = end.and_then(|e| uint(e, &["server_bytes"]));
    let dir = DirView {
        client_sends: true,
        sent_bytes: end.and_then(|e| uint(e, &["bytes"])),
        sent_bps: e("bits_per_second"),
        received_bytes,
        received_bps: received_bytes
            .zip(seconds.filter(|s| *s > 0.0))
            .map(|(b, s)| b as f64 * 8.0 / s),
        seconds,
        retransmits: None,
        udp: None,
    };
    let equal = end
        .and_then(|e| e.get("hash_equal"))
        .and_then(Value::as_bool);
    Throughput {
        throughput: received(server),
        // The envelope's `partial` (older documents: `end.interrupted` only).
        partial: doc
            .get("partial")
            .and_then(Value::as_bool)
            .or_else(|| {
                end.and_then(|e| e.get("interrupted"))
                    .and_then(Value::as_bool)
            })
            .unwrap_or(end.is_none()),
        error: text(doc, &["error"]).or_else(|| {
            (equal == Some(false))
                .then(|| "the stream's SHA-256 or length differs at the two ends".into())
        }),
        switches: switches(server),
        ..Throughput::one_direction("SWITCH", dir)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A switch test's document, its hash check passed or not (the dispatcher's tests read it
    /// too).
    pub(crate) fn doc(equal: bool) -> Value {
        json!({"test": "switch-test",
            "start": {"every": 0.5},
            "end": {"bytes": 1000, "server_bytes": 1000, "seconds": 1.0,
                    "bits_per_second": 8000.0, "hash_equal": equal, "interrupted": false},
            "server": {
                "switches": [{"at": 0.25, "kind": "planned", "to": "IPv6"},
                             {"at": 0.75, "kind": "recovery", "to": "IPv4"}],
                "received_over_time": {"interval": 0.5, "bytes": [600, 400], "gaps": []}}})
    }

    #[test]
    fn a_hash_mismatch_is_an_error_of_the_test() {
        assert!(throughput(&doc(false)).error.is_some());
    }
}
