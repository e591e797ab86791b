//! What the report's grouping needs to know of the document kinds that are neither a
//! throughput, a latency nor a profile result (stress, sweep, capacity, compare-ip): a
//! label, whether the run completed and how long it measured, and where its parameters are.
//! One place, so adding a kind does not touch every match in the builder.

use serde_json::Value;

use crate::result::ResultDoc;

/// "stress, tcp echo", "sweep, udp search", "capacity, IPv4", "compare-ip, HOST"; None for
/// the other kinds.
pub fn label(r: &ResultDoc) -> Option<String> {
    match r {
        ResultDoc::Stress(s) => Some(s.label()),
        ResultDoc::Sweep(s) => Some(s.label()),
        ResultDoc::Capacity(c) => Some(c.label()),
        ResultDoc::CompareIp(c) => Some(match &c.target {
            Some(t) => format!("compare-ip, {t}"),
            None => "compare-ip".into(),
        }),
        ResultDoc::Rrul(r) => Some(r.label()),
        ResultDoc::Btc(b) => Some(b.label()),
        ResultDoc::Serial(s) => Some(s.label()),
        ResultDoc::Throughput(_) | ResultDoc::Latency(_) | ResultDoc::Profile(_) => None,
    }
}

/// Seconds measured (when the document says), and why the run did not complete (None: it
/// did). A run cut short without an error says so.
pub fn outcome(r: &ResultDoc) -> (Option<f64>, Option<String>) {
    let cut = |partial: bool, error: &Option<String>| {
        error
            .clone()
            .or_else(|| partial.then(|| "the run was cut short".to_owned()))
    };
    match r {
        ResultDoc::Stress(s) => {
            // A storm or an overload stopped by Ctrl-C says so only in its `partial`.
            let partial = s.storm.as_ref().is_some_and(|x| x.partial)
                || s.overload.as_ref().is_some_and(|x| x.partial);
            (s.seconds, cut(partial, &s.error))
        }
        ResultDoc::Sweep(s) => (
            Some(s.steps.iter().filter_map(|x| x.seconds).sum::<f64>()).filter(|t| *t > 0.0),
            cut(s.partial, &s.error),
        ),
        ResultDoc::Capacity(c) => (c.seconds, cut(c.partial, &c.error)),
        ResultDoc::CompareIp(c) => (None, cut(c.partial, &c.error)),
        ResultDoc::Rrul(r) => (r.seconds(), cut(r.partial, &r.error)),
        ResultDoc::Btc(b) => (b.seconds(), cut(b.partial, &b.error)),
        ResultDoc::Serial(s) => (s.seconds(), cut(s.partial, &s.error)),
        ResultDoc::Throughput(_) | ResultDoc::Latency(_) | ResultDoc::Profile(_) => (None, None),
    }
}

/// The part of a document that holds its parameters, for the kinds without a `start`: a
/// sweep's settings. The other kinds show theirs in their own tables.
pub fn parameters(doc: &Value) -> Option<&Value> {
    doc.get("sweep").filter(|v| v.is_object())
}
