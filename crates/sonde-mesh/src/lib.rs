//! `sonde lab run mesh`: N network namespaces around one router, `sonde agent` in each with
//! every other node as a peer, for a full mesh of schedules at once. With `--store`, every
//! agent writes to one PostgreSQL as it measures, through a relay on the router's end of
//! its node's link. At
//! the end every agent's metrics endpoint is scraped, the agents are stopped (each records
//! what it was measuring), their databases are combined into one run of the mesh's own
//! database (and checked against PostgreSQL), and the result is an N x N matrix of median RTT
//! and loss per family.
//!
//! Why its own crate: a mesh is not a matrix of tests run one after another (what
//! `sonde-labrun` does) but many long-running processes at once; it reuses the lab
//! ([`sonde_lab`]) for namespaces and teardown and the agent ([`sonde_agent`]) for the
//! measuring, and adds only the plan, the process handling, the collection and the matrix.
//!
//! - [`spec`]: the mesh description (`mesh.toml`), checked.
//! - [`plan`]: the star topology, addresses and agent configurations (pure).
//! - [`agents`]: the agent processes; [`scrape`]: one `/metrics` scrape.
//! - [`relay`]: the way from every node, across its link, to PostgreSQL.
//! - [`outage`]: nodes' links taken down and back during the run.
//! - [`collect`]: combining the agents' databases, copying them to PostgreSQL.
//! - [`matrix`]: the per-pair figures (pure); [`render`]: them as text.
//! - [`run()`]: all of it in order, with teardown on every path.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use sonde_mesh::{run, MeshObserver, MeshOptions, MeshSpec};
//!
//! struct Quiet;
//! impl MeshObserver for Quiet {}
//!
//! let spec = MeshSpec::builtin()?.with(Some(4), Some(10.0))?;
//! let opts = MeshOptions {
//!     out_dir: "mesh-out".into(),
//!     sonde_exe: std::env::current_exe()?,
//!     sonde_version: "sonde 0.1.0".into(),
//!     spec_text: sonde_mesh::spec::BUILTIN_TEXT.into(),
//!     store: None,
//! };
//! let summary = run(spec, &opts, &mut Quiet, &AtomicBool::new(false))?;
//! print!("{}", sonde_mesh::render::summary(&summary));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod agents;
pub mod collect;
pub mod error;
pub mod matrix;
pub mod outage;
pub mod plan;
pub mod relay;
pub mod render;
pub mod run;
pub mod scrape;
pub mod spec;

pub use error::MeshError;
pub use run::{run, MeshObserver, MeshOptions, MeshSummary};
pub use spec::MeshSpec;
