//! The fields every sonde document carries at its top level: `kind`, `partial`, `error`.

use serde::{Deserialize, Serialize};

/// A document's kind, whether the run ended early, and why it failed (null when it did not).
///
/// Flattened into each kind's model. Older documents may lack all three: they read as no
/// kind, complete, no error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub error: Option<String>,
}

impl Envelope {
    /// A run of `kind`.
    pub fn new(kind: &str, partial: bool, error: Option<&str>) -> Self {
        Self {
            kind: Some(kind.to_owned()),
            partial,
            error: error.map(str::to_owned),
        }
    }
}
