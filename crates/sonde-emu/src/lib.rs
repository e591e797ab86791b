//! The sans-IO core of `sonde lab`: link impairments on a virtual clock.
//!
//! sonde's lab runs tests across emulated links (client, router, server in network
//! namespaces). Where the kernel has netem, the kernel impairs the links; where it does not,
//! a userspace engine in the router namespace forwards between the router's interfaces and
//! applies the impairments itself. This crate is that engine's core, without the forwarding:
//!
//! - [`impair`]: one small [`Stage`](impair::Stage) per impairment (rate and queue limit,
//!   delay and jitter, random and Gilbert-Elliott loss, reordering, duplication, corruption, a
//!   device model), composed into a [`Chain`](impair::Chain) per link direction. Every stage
//!   takes `now` as an argument and draws from its own seeded PRNG, so a run repeats exactly
//!   and tests run 20 000 packets through a 10 ms delay in no real time.
//! - [`build`]: turns one link direction's settings (a [`sonde_scenario::Impairments`]) into a
//!   [`Chain`](impair::Chain). The scenario file itself (topology, settings, tests, matrix) is
//!   `sonde-scenario`'s, below this crate.
//! - [`backend`]: which backend (kernel qdisc or userspace) applies each impairment, given
//!   what the kernel offers; the answer is recorded with each run.
//!
//! ```
//! use std::time::Duration;
//! use sonde_emu::impair::{Chain, Delay, DelayConfig, RandomLoss, Stage};
//! use sonde_emu::{ChainSeed, Instant, Packet};
//!
//! let seed = ChainSeed::from_raw(42);
//! let mut link = Chain::new()
//!     .with(Delay::new(DelayConfig::fixed(Duration::from_millis(10)), seed.rng(0)))
//!     .with(RandomLoss::new(0.0, seed.rng(1))?);
//! link.push(Packet::new(vec![0; 64], 1), Instant::ZERO);
//! assert_eq!(link.next_wakeup(), Some(Instant::from_millis(10)));
//! assert_eq!(link.poll(Instant::from_millis(10)).map(|p| p.meta.seq), Some(1));
//! # Ok::<(), sonde_emu::impair::ConfigError>(())
//! ```

pub mod backend;
pub mod build;
pub mod impair;
pub mod packet;
pub mod seed;
pub mod time;

pub use packet::{Meta, Packet};
pub use seed::{ChainSeed, Direction};
pub use time::Instant;
