//! The `-J` documents' typed models: what a command writes and `sonde report` reads.
//!
//! Each document kind has one module here with one set of serde types. The command that
//! writes a document builds the model and serialises it; `sonde report` (`sonde-report`)
//! deserialises the same types. A field renamed or reshaped on one side is then a compile
//! error on the other, instead of a report that silently shows a dash.
//!
//! Sans-IO, on `sonde-stats` only (no I/O crate, no runtime). Two sorts of type live here:
//! the document wrappers (the `...Document` types, the [`Envelope`]) and the parts that only
//! a document has, spelled as it spells them (a latency run's `start`, the stress events,
//! a sweep's records, the link block, the profile streams, and the models whose fields are
//! optional where the runtime's are not); and, re-exported under each kind's module, the
//! result types the runtime produces (a btc session, the latency summary, the capacity
//! estimate, a ramp step, ...), which are `sonde-stats`' own: the writers put those into a
//! document as they are, with no copy in between. Reading tolerates what older documents
//! lack (`default`, `Option`, on the stats types too) and what newer ones add (unknown
//! fields are ignored).
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
