//! [`SchemaError`]: a document that does not fit its kind's model, named by kind and field.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// A document of `kind` that did not deserialise into its model.
#[derive(Debug)]
pub struct SchemaError {
    /// The document kind whose model refused it (`"btc"`, `"latency"`, ...).
    pub kind: &'static str,
    /// serde's account: the field and what was wrong with it.
    pub source: serde_json::Error,
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "not a valid {} document: {}", self.kind, self.source)
    }
}

impl std::error::Error for SchemaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Deserialises a document of `kind` into its model `T`.
pub fn from_value<T: DeserializeOwned>(kind: &'static str, doc: Value) -> Result<T, SchemaError> {
    serde_json::from_value(doc).map_err(|source| SchemaError { kind, source })
}

/// A model as the JSON value the writers hand on (object keys in serde_json's order, as the
/// documents were written before the models).
pub fn to_value<T: serde::Serialize>(model: &T) -> Value {
    serde_json::to_value(model).unwrap_or(Value::Null)
}
