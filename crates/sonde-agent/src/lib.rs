//! `sonde agent`: a long-running process that serves tests like `sonde server` and measures a
//! static list of peers on a schedule, for fleets of boards, racks or sites.
//!
//! Why a separate crate: the agent wires together pieces that each do one job elsewhere (the
//! runtime's server, `latency::run`, `client::run`, the capacity and profile clients, the
//! results store) and adds what only
//! a long-running measurer needs: a [`schedule`] with per-run jitter so a fleet does not
//! synchronise, a [`budget`] so a schedule never saturates the links it measures, and
//! [`metrics`] for Prometheus (and a [`status`] page and `/api/status` beside them, for
//! an operator at one agent), [`names`] that keeps measuring through an outage of the name
//! servers, and a [`sync`] thread that copies the local store to
//! PostgreSQL when `store_url` is set, with a [`retain`]ion that keeps the local store
//! bounded. The schedule and budget are pure and take time as an argument;
//! [`agent::run`] owns the clock and the threads.
//!
//! ```
//! use sonde_agent::config::AgentConfig;
//! let cfg = AgentConfig::parse(r#"
//!     [latency]
//!     every_secs = 10
//!     [[peer]]
//!     host = "sonde-b.example.net"
//! "#)?;
//! assert_eq!(cfg.peers[0].port, 5201);
//! # Ok::<(), sonde_agent::config::ConfigError>(())
//! ```

pub mod agent;
pub mod budget;
pub mod config;
mod config_error;
pub mod group;
pub mod http;
pub mod inflight;
pub mod metrics;
pub mod names;
pub mod outcome;
pub mod own;
pub mod process;
pub mod record;
pub mod reload;
pub mod retain;
pub mod runner;
pub mod schedule;
pub mod server_settings;
pub mod status;
pub mod status_page;
pub mod status_svg;
pub mod sync;
pub mod targets;

pub use agent::{check_files, run, AgentError, AgentOptions, AgentTotals};
