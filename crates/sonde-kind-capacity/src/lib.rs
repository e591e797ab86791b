//! `sonde capacity`: path capacity by packet dispersion against a sonde server, the runtime
//! half of `sonde_stats::capacity`.
//!
//! The server sends the plan's trains ([`server`], which `sonde_runtime::server` hands an
//! admitted capacity test); [`client`] receives them with the kernel's software receive
//! stamps (`SO_TIMESTAMPING`, taken when a packet enters the stack, so the client thread's
//! wake-ups do not count), acknowledges each train, and hands the trains to the pure
//! estimate. The socket never enables `UDP_GRO`, so
//! every datagram arrives on its own with its own stamp; batches the receiving host still
//! makes (interrupt coalescing, NAPI) are detected from the stamps.
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone; `sonde-runtime`
//! re-exports it as `sonde_runtime::capacity`.
//!
//! ```
//! use sonde_proto::capacity::CapacityPlan;
//! // A capacity test is one reverse UDP stream, its watchdog a bound per train.
//! let plan = CapacityPlan::default();
//! let p = sonde_kind_capacity::params(plan, 1200);
//! assert_eq!(p.parallel, 1);
//! assert!(p.duration_secs <= f64::from(plan.trains()) * sonde_kind_capacity::SECS_PER_TRAIN);
//! ```

pub mod client;
pub mod collect;
pub mod longest;
pub mod server;

use sonde_proto::capacity::CapacityPlan;
use sonde_proto::message::TestParams;
use sonde_stats::model::{Direction, Protocol};

/// How long the server may take per train at most (the wait for an acknowledgement and the
/// idle time after it), which bounds the test: its watchdog.
pub const SECS_PER_TRAIN: f64 = 8.0;

/// The test request of a capacity run of `plan` with `length`-byte datagrams.
pub fn params(plan: CapacityPlan, length: u32) -> TestParams {
    TestParams {
        protocol: Protocol::Udp,
        direction: Direction::Reverse,
        parallel: 1,
        length: sonde_stats::units::Size::from_bytes(length.into()),
        rate: sonde_stats::units::Rate::UNLIMITED,
        duration_secs: (f64::from(plan.trains()) * SECS_PER_TRAIN).min(3600.0),
        interval_secs: 0.0,
        capacity: Some(plan),
        ..TestParams::default()
    }
}
