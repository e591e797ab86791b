//! Reading `sonde switch-test -J` documents, through their model (`sonde_schema::switch_test`),
//! into the report's throughput view.
//!
//! A switch test has its own document shape (top-level `"test": "switch-test"`): the client's
//! totals and hash check in `end`, and the receiving server's view in `server` - its switch
//! records and the bytes it received per interval (`server.received_over_time`). The report
//! reads it as one upload whose interval series is what the receiving application got, and
//! marks each switch on the chart at the time the server's session saw it (its JOIN), by the
//! family it moved to.

use crate::view::{DirView, Series, Throughput};
use serde_json::Value;
use sonde_schema::switch_test::{ServerSide, SwitchTestDocument, KIND};

/// Whether `doc` is a switch test's document.
pub fn is_switch_test(doc: &Value) -> bool {
    doc.get("test").and_then(Value::as_str) == Some(KIND)
}

/// The receiver's bytes per interval as a bit/s series, each point at its interval's middle.
fn received(server: Option<&ServerSide>) -> Vec<Series> {
    let Some(r) = server.and_then(|s| s.received_over_time.as_ref()) else {
        return Vec::new();
    };
    let Some(step) = Some(r.interval).filter(|s| *s > 0.0) else {
        return Vec::new();
    };
    let mut s = Series::new("client → server received by server (receiver)".into());
    for (i, b) in r.bytes.iter().enumerate() {
        let start = i as f64 * step;
        let bps = *b as f64 * 8.0 / step;
        s.push(Some(start), start + step, start + step / 2.0, bps);
    }
    vec![s]
}

/// Each switch the server saw: (when, "planned to IPv6" and the like).
fn switches(server: Option<&ServerSide>) -> Vec<(f64, String)> {
    server
        .map(|s| &s.switches[..])
        .unwrap_or_default()
        .iter()
        .map(|r| (r.at, format!("{} to {}", r.kind, r.to)))
        .collect()
}

/// The throughput view of a switch-test document (see the module docs), read through its
/// model ([`sonde_schema::switch_test`]); a document that does not fit it is an error naming
/// the kind and the field.
pub fn throughput(doc: &Value) -> Result<Throughput, String> {
    let doc: SwitchTestDocument = crate::json::model(KIND, doc)?;
    let end = doc.end.as_ref();
    let server = doc.server.as_ref().and_then(Option::as_ref);
    let seconds = end.map(|e| e.seconds);
    let received_bytes = end.map(|e| e.server_bytes);
    let dir = DirView {
        client_sends: true,
        sent_bytes: end.map(|e| e.bytes),
        sent_bps: end.map(|e| e.bits_per_second),
        received_bytes,
        received_bps: received_bytes
            .zip(seconds.filter(|s| *s > 0.0))
            .map(|(b, s)| b as f64 * 8.0 / s),
        seconds,
        retransmits: None,
        udp: None,
    };
    let equal = end.map(|e| e.hash_equal);
    Ok(Throughput {
        throughput: received(server),
        // The envelope's `partial` (older documents: `end.interrupted` only; none: it ended
        // before it measured).
        partial: doc.envelope.partial || end.is_none_or(|e| e.interrupted),
        error: doc.envelope.error.clone().or_else(|| {
            (equal == Some(false))
                .then(|| "the stream's SHA-256 or length differs at the two ends".into())
        }),
        switches: switches(server),
        ..Throughput::one_direction("SWITCH", dir)
    })
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
        assert!(throughput(&doc(false)).unwrap().error.is_some());
    }

    #[test]
    fn the_receivers_series_and_the_servers_switches_are_read() {
        let t = throughput(&doc(true)).unwrap();
        assert!(t.error.is_none() && !t.partial);
        assert_eq!(
            t.switches,
            [
                (0.25, "planned to IPv6".to_string()),
                (0.75, "recovery to IPv4".to_string())
            ]
        );
        assert_eq!(t.throughput.len(), 1);
        assert_eq!(t.directions[0].received_bps, Some(8000.0));
    }

    #[test]
    fn a_document_without_a_figure_the_report_shows_is_an_error_naming_it() {
        let mut d = doc(true);
        d["end"].as_object_mut().unwrap().remove("server_bytes");
        let e = throughput(&d).unwrap_err();
        assert!(
            e.contains("switch-test") && e.contains("server_bytes"),
            "{e}"
        );
        let mut d = doc(true);
        d["server"]["received_over_time"]["bytes"] = json!(["many"]);
        assert!(throughput(&d).is_err());
    }

    #[test]
    fn a_run_that_failed_before_it_measured_reads_as_partial_with_its_error() {
        let d = json!({"test": "switch-test", "start": {}, "kind": "switch-test",
            "partial": true, "error": "refused"});
        let t = throughput(&d).unwrap();
        assert!(t.partial);
        assert_eq!(t.error.as_deref(), Some("refused"));
        assert!(t.throughput.is_empty() && t.switches.is_empty());
    }
}
