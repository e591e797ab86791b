//! Statistics and result model of `sonde stress`: many connections to a small TCP/IP stack's
//! echo (RFC 862), discard (RFC 863) or chargen (RFC 864) server.
//!
//! The runtime counts bytes per connection and hands cumulative counters with the time since
//! the run started to an [`slicer::IntervalSlicer`], which turns them into per-interval rates and
//! Jain's fairness index ([`fairness::jain`]); [`steady::Steady`] marks the warm-up and counts
//! each connection's intervals without traffic. Reporters render the [`model::StressEvent`]s.

pub mod fairness;
pub mod model;
pub mod overload;
pub mod ramp;
pub mod slicer;
pub mod steady;
pub mod steps;
pub mod storm;
pub mod udp;
