//! The `-J` documents' typed models: what a command writes and `sonde report` reads.
//!
//! Each document kind has one module here with one set of serde types. The command that
//! writes a document builds the model and serialises it; `sonde report` (`sonde-report`)
//! deserialises the same types. A field renamed or reshaped on one side is then a compile
//! error on the other, instead of a report that silently shows a dash.
//!
//! Sans-IO and a leaf: serde and `serde_json` only, no measurement crate. The writers map
//! their runtime types onto these models; the models spell the documents as they are
//! written today, field for field. Reading tolerates what older documents lack (`default`,
//! `Option`) and what newer ones add (unknown fields are ignored).
//!
//! ```
//! use sonde_schema::btc::BtcDocument;
//! let doc = serde_json::json!({"kind": "btc", "host": "h", "sessions": [], "summary": {}});
//! let read: BtcDocument = sonde_schema::from_value("btc", doc).unwrap();
//! assert_eq!(read.host.as_deref(), Some("h"));
//! ```

pub mod btc;
pub mod capacity;
pub mod coded;
pub mod compare_ip;
pub mod envelope;
mod error;
pub mod latency;
pub mod profile;
pub mod rrul;
pub mod serial;
pub mod stress;
pub mod sweep;
pub mod switch_test;
pub mod throughput;

pub use envelope::Envelope;
pub use error::{from_value, to_value, SchemaError};
