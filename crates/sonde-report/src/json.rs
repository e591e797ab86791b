//! Paths into a result document's JSON: the lookups every reader uses.
//!
//! The kinds that have a typed model in `sonde_schema` are read through it ([`model`]); the
//! others are still read from JSON values by path: a report must render results from older
//! sondes and from iperf3 itself, where fields are missing or extra. Every field is optional
//! here; what is missing shows as a dash in the report.
//!
//! A leaf: it knows `serde_json` and nothing of the report, so every reader (and the stage
//! counters) can use it without pulling in the dispatcher that calls them.

use serde_json::Value;

/// Looks up a path of object keys.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// A number at `path`.
pub fn num(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)
        .and_then(Value::as_f64)
        .filter(|f| f.is_finite())
}

/// An unsigned integer at `path`.
pub fn uint(v: &Value, path: &[&str]) -> Option<u64> {
    at(v, path).and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f.max(0.0) as u64)))
}

/// The elements of the array at key `k` (none when it is missing or not an array).
pub fn items<'a>(v: &'a Value, k: &str) -> impl Iterator<Item = &'a Value> {
    v.get(k).and_then(Value::as_array).into_iter().flatten()
}

/// A string at `path`.
pub fn text(v: &Value, path: &[&str]) -> Option<String> {
    at(v, path).and_then(Value::as_str).map(str::to_owned)
}

/// The document read into its kind's typed model (`sonde_schema`); the error names the kind
/// and serde's account of the field that did not fit.
pub fn model<T: serde::de::DeserializeOwned>(kind: &'static str, doc: &Value) -> Result<T, String> {
    sonde_schema::from_value(kind, doc.clone()).map_err(|e| e.to_string())
}

/// The tool that wrote a document, with its version: `"sonde 0.1.0"`, `"iperf3 3.12"`.
/// iperf3 writes `start.version` as `"iperf 3.12"`; sonde as `"sonde 0.1.0"`.
pub fn tool(doc: &Value) -> Option<String> {
    match text(doc, &["start", "version"]) {
        Some(v) => match v.strip_prefix("iperf ") {
            Some(version) => Some(format!("iperf3 {}", version.trim())),
            None => Some(v),
        },
        None if doc.get("sonde").is_some() || at(doc, &["start", "sonde"]).is_some() => {
            Some("sonde".into())
        }
        None => None,
    }
}
