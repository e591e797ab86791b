//! `sonde client -J` and `sonde server -J`: the throughput document, in iperf3's schema
//! (`start`, `intervals`, `end`) with sonde's additions, which real iperf3 output also
//! follows. Its sections are modules of their own: [`start`], [`interval`] (one element of
//! `intervals`, also the JSON-lines `interval` data) and [`end`].
//!
//! The model spells the documents as sonde writes them, key for key, so an iperf3 reader
//! keeps reading them: a key sonde writes only sometimes (a figure the kernel would not
//! give, a TCP field in a UDP test) is an `Option` left out when `None`; a key written as
//! null is an `Option` without that rule. iperf3's own rule for `error` holds: the key is
//! there only when there is an error ([`Iperf3Envelope`]).
//!
//! Reading accepts iperf3's documents and older sonde ones: what the report shows is
//! required where it appears (a sum without its `bytes` or `bits_per_second`, a stream
//! without its `socket`, a CPU figure without its totals are refused, naming the field);
//! everything else may be missing. `server_output_json` is the server's own document as the
//! server wrote it (sonde's or iperf3's, any version): a [`serde_json::Value`], so it is
//! written back unchanged; [`ThroughputDocument::server_intervals`] reads its intervals
//! through the model.

mod count;
pub mod end;
pub mod interval;
pub mod link;
pub mod start;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use end::End;
pub use interval::Interval;
pub use start::Start;

use crate::SchemaError;

/// The kind the reader names in its errors.
pub const KIND: &str = "throughput";

/// The whole document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThroughputDocument {
    /// iperf3's `-T`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// iperf3's `--extra-data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_data: Option<String>,
    /// `{}` until the test started.
    #[serde(default)]
    pub start: Start,
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// Always written; a document without it ended before its summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
    /// The server's own document (`--get-server-output`), as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_json: Option<Value>,
    /// sonde's top-level additions (iperf3's documents have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sonde: Option<DocSonde>,
    #[serde(flatten)]
    pub envelope: Iperf3Envelope,
}

impl ThroughputDocument {
    /// The intervals of the server's own document, when one was passed along.
    ///
    /// # Errors
    /// [`SchemaError`] when they do not fit [`Interval`].
    pub fn server_intervals(&self) -> Result<Option<Vec<Interval>>, SchemaError> {
        match self
            .server_output_json
            .as_ref()
            .and_then(|s| s.get("intervals"))
        {
            Some(v) => crate::from_value(KIND, v.clone()).map(Some),
            None => Ok(None),
        }
    }
}

/// `kind`, `partial` and `error` as the iperf3-shaped documents carry them: no `error` key
/// when there is none (iperf3's readers take its presence as failure). iperf3's own
/// documents have no `kind` and no `partial`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Iperf3Envelope {
    /// `"client"` or `"server"` (a coded transfer is a client's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default)]
    pub partial: bool,
    /// Every error of the run joined with `"; "`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Iperf3Envelope {
    /// A run of `kind`.
    pub fn new(kind: &str, partial: bool, error: Option<&str>) -> Self {
        Self {
            kind: Some(kind.to_owned()),
            partial,
            error: error.map(str::to_owned),
        }
    }
}

/// The top-level `sonde` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocSonde {
    /// `"client"` or `"server"`; null when the test never started.
    #[serde(default)]
    pub role: Option<String>,
    /// `"upload"`, `"reverse"` or `"bidir"`; null when the test never started.
    #[serde(default)]
    pub direction: Option<String>,
    /// No complete summary arrived.
    #[serde(default)]
    pub partial: bool,
    /// A summary (complete or not) arrived.
    #[serde(default)]
    pub complete: bool,
    /// The other end's live intervals, from its point of view (always written; `None` only
    /// in documents from before it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_intervals: Option<Vec<Interval>>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub errors: Vec<String>,
}

#[cfg(test)]
mod tests;
