//! The fields every `-J` document carries at its top level, whatever command wrote it: what
//! kind of run it is, whether the run ended early, and why it failed.
//!
//! Commands used to say it each their own way (`partial` here, `end.interrupted` there, an
//! `error` missing where the run failed); a reader (`sonde report`, a script) now asks every
//! document the same three questions:
//!
//! - `"kind"`: the command (`"client"`, `"server"`, `"latency"`, `"btc"`, `"switch-test"`, ...);
//! - `"partial"`: true when the run did not reach its end condition (a signal, a failure);
//! - `"error"`: the reason it failed, or null.
//!
//! The iperf3-shaped documents of `client` and `server` keep iperf3's rule for `error`: the
//! key is there only when there is an error, as iperf3's readers expect.
//!
//! ```
//! use sonde_live::envelope::Envelope;
//! let mut doc = serde_json::json!({"rows": []});
//! Envelope::new("btc").partial(true).error(Some("refused")).stamp(&mut doc);
//! assert_eq!(doc["kind"], "btc");
//! assert_eq!(doc["partial"], true);
//! assert_eq!(doc["error"], "refused");
//! ```

use serde_json::{json, Map, Value};

/// A document's kind, `partial` and `error`, to stamp on its top level.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    kind: &'static str,
    partial: bool,
    error: Option<String>,
    /// iperf3's rule: no `error` key when there is none.
    iperf3: bool,
}

impl Envelope {
    /// A complete run of `kind` with no error.
    pub fn new(kind: &'static str) -> Self {
        Self {
            kind,
            partial: false,
            error: None,
            iperf3: false,
        }
    }

    /// The same, following iperf3's rule for `error` (client and server documents).
    pub fn iperf3(kind: &'static str) -> Self {
        Self {
            iperf3: true,
            ..Self::new(kind)
        }
    }

    /// Marks the run as ended early (or not).
    #[must_use]
    pub fn partial(mut self, partial: bool) -> Self {
        self.partial = partial;
        self
    }

    /// The reason the run failed. It does not make the run partial: a run that reached its
    /// end can fail (a hash mismatch, a family that did not resolve); the caller says
    /// [`Envelope::partial`] when the failure, or a signal, ended it early.
    #[must_use]
    pub fn error(mut self, error: Option<&str>) -> Self {
        self.error = error.map(str::to_owned);
        self
    }

    /// Writes the fields into `doc` (an object; anything else is left alone), replacing what
    /// was there under those names.
    pub fn stamp(&self, doc: &mut Value) {
        if let Some(o) = doc.as_object_mut() {
            self.stamp_map(o);
        }
    }

    /// `doc` as a JSON value, stamped (a `doc` that is no object is left without).
    pub fn wrap(&self, doc: &impl serde::Serialize) -> Value {
        let mut v = serde_json::to_value(doc).unwrap_or_else(|_| json!({}));
        self.stamp(&mut v);
        v
    }

    /// [`Envelope::stamp`] on the document's map.
    pub fn stamp_map(&self, o: &mut Map<String, Value>) {
        o.insert("kind".into(), json!(self.kind));
        o.insert("partial".into(), json!(self.partial));
        match (&self.error, self.iperf3) {
            (Some(e), _) => {
                o.insert("error".into(), json!(e));
            }
            (None, true) => {
                o.remove("error");
            }
            (None, false) => {
                o.insert("error".into(), Value::Null);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_without_an_error_says_null_except_in_iperf3_shape() {
        let mut d = json!({});
        Envelope::new("latency").stamp(&mut d);
        assert_eq!(
            d,
            json!({"kind": "latency", "partial": false, "error": null})
        );
        let mut d = json!({"error": "stale"});
        Envelope::iperf3("client").stamp(&mut d);
        assert_eq!(d, json!({"kind": "client", "partial": false}));
    }

    #[test]
    fn an_error_alone_does_not_make_the_run_partial() {
        let mut d = json!({});
        Envelope::new("switch-test")
            .error(Some("hash mismatch"))
            .stamp(&mut d);
        assert_eq!(d["partial"], false, "the run reached its end");
        assert_eq!(d["error"], "hash mismatch");
        Envelope::new("serial")
            .partial(true)
            .error(Some("refused"))
            .stamp(&mut d);
        assert_eq!(d["partial"], true);
        assert_eq!(d["error"], "refused");
    }
}
