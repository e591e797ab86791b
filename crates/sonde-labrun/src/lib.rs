//! The matrix runner behind `sonde lab run`: for each link setting of a scenario, build the
//! lab, start `sonde server` in the server node, run every test × repetition from the client
//! node, record each outcome in the results database, tear the lab down, go on.
//!
//! It lives apart from the binary so the binary stays a thin layer (flags, progress display,
//! exit code) and the runner's rules are tested on their own. Those rules, in short:
//!
//! - **A failed test never stops the run.** A non-zero exit, a missing result, a test killed
//!   at its deadline (its duration twice over plus 60 s, or the scenario's `timeout`), even a
//!   setting whose lab cannot be built: each is recorded as failed, with the reason, and the
//!   next test runs.
//! - **Everything recorded stays recorded.** Each test is one transaction
//!   ([`sonde_store::Store::record_test`]); the raw `-J` document goes to
//!   [`sonde_store::Store::raw_path`] beside the database.
//! - **Interrupting is clean.** The caller's interrupt flag (Ctrl-C) kills the running test
//!   (which is then not recorded), stops the servers, finishes the lab and marks the run
//!   `interrupted`; [`RunOptions::resume`] later runs only what the database lacks. A lab
//!   whose build the interrupt cut short is not a failed setting either: its tests are left
//!   for `--resume`, and the run is recorded (as interrupted) even when no lab was built yet.
//! - **Progress goes to an [`Observer`]**, never to stdout from here.
//!
//! ```no_run
//! use std::sync::atomic::AtomicBool;
//! use sonde_labrun::{load, run, Observer, RunOptions};
//!
//! struct Quiet;
//! impl Observer for Quiet {}
//!
//! let scenario = load("quick")?;
//! let opts = RunOptions {
//!     out_dir: "lab-out".into(),
//!     resume: false,
//!     settings: vec![],
//!     sonde_exe: std::env::current_exe()?,
//!     sonde_version: "sonde 0.1.0".into(),
//!     store: None,
//! };
//! let summary = run(&scenario, &opts, &mut Quiet, &AtomicBool::new(false))?;
//! println!("{} ok, {} failed", summary.ok, summary.failed);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod args;
mod clean;
mod error;
mod exec;
mod host;
mod iperf2_csv;
mod runner;
mod server;
mod source;
mod test;

pub use clean::{clean, CleanReport};
pub use error::RunError;
pub use runner::{database_path, run, Observer, RunOptions, RunSummary, DATABASE};
pub use source::{builtins, load, with_test_duration, Loaded};
