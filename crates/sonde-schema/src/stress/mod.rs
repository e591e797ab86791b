//! `sonde stress -J`: one document kind (`"stress"`) in five shapes, one model each: a run
//! ([`run`]), a ramp ([`ramp`]), load steps ([`steps`]), a storm ([`storm`]) and an overload
//! ([`overload`]). [`StressDocument::from_value`] tells them apart by the section each alone
//! has and reads the one it is.
//!
//! ```
//! use sonde_schema::stress::StressDocument;
//! let doc = serde_json::json!({"kind": "stress", "mode": "discard", "ramp": [
//!     {"connections": 4, "sent_bps": 8e6, "received_bps": 0.0}]});
//! let Ok(StressDocument::Ramp(r)) = StressDocument::from_value(doc) else {
//!     panic!("a ramp");
//! };
//! assert_eq!((r.ramp[0].mean.connections, r.transport.as_str()), (4, "tcp"));
//! ```

pub mod overload;
pub mod ramp;
pub mod run;
pub mod steps;
pub mod storm;

use serde::Deserialize;
use serde_json::Value;

use crate::{Envelope, SchemaError};

/// The kind every shape's envelope names.
pub const KIND: &str = "stress";

/// What a transport reads as when a document from before UDP does not say: TCP.
fn tcp() -> String {
    "tcp".into()
}

/// A stress document, whichever shape.
#[derive(Debug, Clone, PartialEq)]
pub enum StressDocument {
    Run(Box<run::RunDocument>),
    Ramp(Box<ramp::RampDocument>),
    Steps(Box<steps::StepsDocument>),
    Storm(Box<storm::StormDocument>),
    Overload(Box<overload::OverloadDocument>),
}

/// Which shape a stress document is, by the section that only it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Run,
    Ramp,
    Steps,
    Storm,
    Overload,
}

impl Shape {
    /// The shape of `doc`: a `storm` or `overload` object, a `ramp` or `steps` array, else a
    /// run.
    pub fn of(doc: &Value) -> Self {
        if doc.get("storm").is_some_and(Value::is_object) {
            Self::Storm
        } else if doc.get("overload").is_some_and(Value::is_object) {
            Self::Overload
        } else if doc.get("ramp").is_some_and(Value::is_array) {
            Self::Ramp
        } else if doc.get("steps").is_some_and(Value::is_array) {
            Self::Steps
        } else {
            Self::Run
        }
    }
}

/// What every shape says at its top level: its mode (a run's is in its `start`) and its
/// envelope, for a reader to name a document whose sections do not fit their model.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Header {
    pub mode: Option<String>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

impl Header {
    /// The header of `doc`; nothing (no mode, complete, no error) when even that does not
    /// fit.
    pub fn of(doc: &Value) -> Self {
        Self::deserialize(doc).unwrap_or_default()
    }
}

impl StressDocument {
    /// Reads `doc` into the model of its shape ([`Shape::of`]).
    ///
    /// # Errors
    /// A [`SchemaError`] (kind `"stress"`) naming the field that does not fit that model.
    pub fn from_value(doc: Value) -> Result<Self, SchemaError> {
        use crate::from_value as read;
        Ok(match Shape::of(&doc) {
            Shape::Run => Self::Run(Box::new(read(KIND, doc)?)),
            Shape::Ramp => Self::Ramp(Box::new(read(KIND, doc)?)),
            Shape::Steps => Self::Steps(Box::new(read(KIND, doc)?)),
            Shape::Storm => Self::Storm(Box::new(read(KIND, doc)?)),
            Shape::Overload => Self::Overload(Box::new(read(KIND, doc)?)),
        })
    }
}

#[cfg(test)]
mod tests;
