//! The results database of `sonde lab`: SQLite, a documented and migrated schema, and the raw
//! JSON files beside it.
//!
//! Why SQLite: a lab run is hundreds of tests recorded one at a time by a process that may be
//! killed; each [`Store::record_test`] is one transaction, so a result is either fully stored
//! or absent, and `--resume` asks [`Store::completed_ids`] what is left to do. Why also raw
//! files: the `-J` document of each test is kept verbatim beside the database
//! ([`Store::raw_path`]) so results stay usable with `jq` or iperf3 tooling without SQL. The
//! database keeps a copy of the document too, so a report needs the database alone.
//!
//! The schema (see `SCHEMA.md`) carries a version; [`Store::open`] applies any missing
//! migrations in one transaction and refuses a database written by a newer sonde.
//!
//! ```
//! use sonde_store::{NewRun, Store, RunStatus};
//! # let dir = tempfile::tempdir()?;
//! let mut store = Store::open(dir.path().join("results.db"))?;
//! let run = store.begin_run(&NewRun {
//!     scenario_name: "quick".into(),
//!     scenario_toml: "name = \"quick\"".into(),
//!     sonde_version: "sonde 0.1.0".into(),
//!     hostname: "lab".into(),
//!     kernel: "6.1.0".into(),
//!     host_info: serde_json::json!({}),
//!     seed: 1,
//!     started_unix: 1_700_000_000.0,
//!     settings: vec![],
//! })?;
//! assert!(store.completed_ids(run)?.is_empty());
//! store.finish_run(run, RunStatus::Completed, 1_700_000_060.0)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod load;
mod pg;
mod read_only;
mod records;
mod results;
mod retain;
mod schema;
mod store;

pub use error::StoreError;
pub use pg::{
    check_postgres_url, is_postgres_url, postgres_endpoint, postgres_url_via, PostgresEndpoint,
    Remote, SyncOutcome,
};
pub use records::{
    Cpu, EndRecord, IfCounters, InterfaceTraffic, LinkSettingsRecord, LoadedRun, NewRun, RunId,
    RunRecord, RunStatus, TestRecord, TestStatus,
};
pub use results::Results;
pub use retain::WriteMark;
pub use schema::LATEST as SCHEMA_VERSION;
pub use store::Store;
