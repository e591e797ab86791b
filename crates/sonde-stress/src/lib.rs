//! sonde's stress suite for small TCP/IP stacks.
//!
//! Microcontroller stacks can run only tiny servers: echo (RFC 862), discard (RFC 863) and
//! chargen (RFC 864). This crate drives them hard from a host and serves them itself, so the
//! client can be checked against a known-good peer:
//!
//! - [`client::run`]: `sonde stress`: N concurrent TCP connections (thousands, one mio event
//!   loop, no thread per connection), per-connection rates every interval and Jain's fairness
//!   index, then an orderly close of every connection, checked;
//! - the applications of `sonde stress` over it, each a plain configuration, a stop flag and
//!   (where the run has events along the way) a sink in, a typed outcome out:
//!   [`single::run`] (one run, checked by [`verdict`]), [`ramp::run`], [`storm::run`],
//!   [`overload::run`] and [`steps::run`] (the load steps' loop; the caller runs each step;
//!   [`load_probe`] reads the device's own load at each step's end);
//! - [`services::Services`]: `sonde services`: the three services over TCP and UDP with bounded
//!   memory per connection, a connection limit and no UDP amplification.
//!
//! Figures are computed by `sonde_stats::stress` from the counters kept here; reporters in
//! `sonde-live` render them.
//!
//! ```
//! use sonde_stress::chargen::Pattern;
//! let p = Pattern::new(80);
//! assert_eq!(&p.at(0)[..3], b" !\"");
//! ```

pub mod chargen;
pub mod client;
pub mod flows;
pub mod load_probe;
pub mod os;
pub mod overload;
pub mod ramp;
pub mod services;
pub mod single;
pub mod steps;
pub mod storm;
pub mod verdict;
