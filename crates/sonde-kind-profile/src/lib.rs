//! Traffic profiles over the network: both ends run the streams a profile names, each
//! sending its bursts on time and counting what arrives, late and lost (`sonde profile run`).
//!
//! A profile run uses sonde's control protocol unchanged (hello, request, streams, start,
//! stop, results): the request carries the profile (capability `profile`), the profile's
//! streams are the test's UDP data streams in file order, and each end's results carry the
//! figures of the streams it received. [`workers`] sends and counts; [`client`] drives a run;
//! [`server`] is the server's end of it, which `sonde_runtime::server` hands an admitted run.
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone. The clocks' offset,
//! measured with the latency prober before a run, is the suite's part
//! (`sonde_runtime::profile_run`), in `sonde-runtime`, which re-exports this crate as
//! `sonde_runtime::profile`.

pub mod client;
pub mod server;
pub mod workers;

pub use client::{run_as_requested, ProfileConfig, ProfileOutcome};
