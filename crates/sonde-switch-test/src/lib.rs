//! `sonde switch-test`: a long transfer through the dual-stack switch library
//! (`sonde-switch`) that changes family every N seconds, at given times, or when a verdict
//! file says the other family is better; both ends hash the stream (SHA-256) and the client
//! compares.
//!
//! The application protocol on top of the library is tiny: the client streams
//! pseudo-random bytes (its `stream` module) and ends its stream; the server ([`server`]) answers with
//! its SHA-256, its byte count and its switch records ([`wire`]). While the client sends, a
//! thread of its own ([`driver`]) switches when the [`schedule`] falls due, to where the
//! [`policy`] chooser says. The receiving application's bytes per interval ([`samples`]) go
//! back with the records, for the report's chart.
//!
//! A run's [`client::Outcome`] becomes the `-J` document ([`document`], the
//! [`sonde_schema::switch_test`] model) or the table ([`table`]); what happens along the way
//! goes to a [`sonde_stats::sink::Sink`] of [`Event`]s. Flags, output and exit codes are the
//! command line's.
//!
//! ```no_run
//! use sonde_stats::sink::FnSink;
//! use sonde_switch::{Backend, Family, Targets};
//! use sonde_switch_test::client::{self, ClientConfig};
//! use sonde_switch_test::schedule::Schedule;
//! use std::sync::atomic::AtomicBool;
//! use std::time::Duration;
//!
//! let cfg = ClientConfig {
//!     backend: Backend::Framed,
//!     targets: Targets::from_addrs(&["127.0.0.1:5211".parse()?, "[::1]:5211".parse()?]),
//!     start: Family::V4,
//!     time: Duration::from_secs(2),
//!     schedule: Schedule::new(0.5, &[]),
//!     switches: None,
//!     policy: None,
//! };
//! let o = client::run(&cfg, &AtomicBool::new(false), &mut FnSink(|e: &_| eprintln!("{e:?}")))?;
//! assert!(o.hash_equal());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod client;
pub mod document;
pub mod driver;
mod error;
pub mod peer;
pub mod policy;
pub mod samples;
pub mod schedule;
pub mod server;
mod stream;
pub mod table;
pub mod wire;

pub use error::{Error, Event};
