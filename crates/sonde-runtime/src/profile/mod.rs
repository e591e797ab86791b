//! Traffic profiles over the network: both ends run the streams a profile names, each
//! sending its bursts on time and counting what arrives (`sonde profile run`).
//!
//! A profile run uses sonde's control protocol unchanged (hello, request, streams, start,
//! stop, results): the request carries the profile (capability `profile`), the profile's
//! streams are the test's UDP data streams in file order, and each end's results carry the
//! figures of the streams it received. [`workers`] sends and counts; [`client`] drives a run;
//! the server's side lives with its sessions. The clocks' offset, measured with the latency
//! prober before a run, is the suite's part (`crate::profile_run`): this kind imports only
//! the core.

pub mod client;
pub mod workers;

pub use client::{run_as_requested, ProfileConfig, ProfileOutcome};
