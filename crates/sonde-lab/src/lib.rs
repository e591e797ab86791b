//! sonde's lab: a scenario's hosts and routers as network namespaces joined by veth pairs,
//! with each link direction impaired by a kernel qdisc or by the userspace engine.
//!
//! [`sonde_scenario`] holds the scenario model and [`sonde_emu`] the other pure parts (the
//! impairment stages, the backend decision); this crate does what needs root and a kernel: it creates namespaces, links,
//! addresses and routes ([`Lab::build`]), shapes with tbf/htb (or netem where present) via
//! [`qdisc`], runs the userspace forwarder ([`forward`]) in a bump-in-the-wire namespace on
//! each link that needs it, turns segmentation offloads off with the ethtool ioctl
//! ([`offload`]) so that interface counters count wire frames, reads those counters, and
//! removes everything again (on drop,
//! and by prefix with [`clean_leftovers`] after a `kill -9`).
//!
//! ```no_run
//! use sonde_lab::{Lab, LabOptions};
//!
//! let scenario = sonde_scenario::builtin("quick").ok_or("no quick scenario")?;
//! let lab = Lab::build(&scenario, Some("loss-5"), LabOptions::default())?;
//! let server = lab.node("server")?.ifaces[0].ipv4;
//! let status = lab.command("client", "ping", &["-c", "3", &server.to_string()])?.status()?;
//! let report = lab.finish(); // plan + per-stage counters for the results database
//! # let _ = (status, report);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cmd;
pub mod counters;
pub mod error;
mod ethtool;
mod family_mtu;
pub mod forward;
pub mod lab;
pub mod netns;
pub mod offload;
pub mod qdisc;
pub mod steal;
pub mod topology;

pub use counters::IfCounters;
pub use error::LabError;
pub use lab::{Lab, LabOptions, LabReport};
pub use netns::{check_privileges, clean_leftovers, Cleaned};
pub use topology::Layout;
