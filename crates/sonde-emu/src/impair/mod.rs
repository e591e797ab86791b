//! Link impairments as small composable stages, after smoltcp's `phy/fault_injector.rs`.
//!
//! Each impairment of a link direction is one [`Stage`]: a rate limiter with a tail-drop queue
//! or an AQM (CoDel, FQ-CoDel, PIE: [`Managed`]),
//! delay with jitter, random or Gilbert-Elliott loss, reordering, duplication, corruption, and
//! a device model (a packets-per-second ceiling with a finite frame ring). A [`Chain`] feeds the
//! output of each stage into the next, and is a stage itself.
//!
//! The stages are sans-IO state machines: they never read a clock and never touch a socket.
//! The caller passes `now` (a virtual [`Instant`]) to every call, which is what lets the tests
//! drive 20 000 packets through a 10 ms delay in microseconds of real time, and lets the
//! forwarder drive the very same code from the monotonic clock.
//!
//! The semantics follow Linux netem (`tc-netem(8)`, `net/sched/sch_netem.c`) where netem has
//! the feature, so results compare with the kernel backend; differences are stated on each
//! stage.

mod chain;
mod codel;
mod delay;
mod device;
mod family;
mod fq_codel;
mod loss;
mod managed;
mod mangle;
mod medium;
mod pie;
mod rate;
mod reorder;

pub use chain::Chain;
pub use codel::{Codel, CodelParams, CodelQueue, FlowQueue};
pub use delay::{sample, Delay, DelayConfig};
pub use device::Device;
pub use family::{classify, FamilySplit};
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use loss::{GilbertElliott, RandomLoss};
pub use managed::{Managed, Queue};
pub use mangle::{Corrupt, Duplicate};
pub use medium::SharedRate;
pub use pie::{Pie, PieConfig};
pub use rate::{RateConfig, RateLimiter};
pub use reorder::{Reorder, ReorderConfig};
/// The settings of the device, delay and Gilbert-Elliott stages: values a scenario names, so
/// they are defined with the file format in [`sonde_scenario`].
pub use sonde_scenario::{DeviceConfig, Distribution, Duplex, GeParams};
/// The queue limit of the rate and delay stages: a scenario quantity, so it is defined with the
/// other units in [`sonde_stats::units`].
pub use sonde_stats::units::QueueLimit;

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::time::Instant;

/// One impairment of one link direction.
///
/// # Calling order
/// `now` never decreases from one call to the next. After one or more [`push`](Stage::push)es,
/// the driver calls [`poll`](Stage::poll) with the same `now` until it returns `None`, then
/// sleeps until [`next_wakeup`](Stage::next_wakeup) (or the next arrival) and polls again.
/// A stage may return a packet from `poll` only at or after the instant `next_wakeup`
/// announced, so a driver that wakes exactly then reproduces the virtual-time schedule.
pub trait Stage: Send + core::fmt::Debug {
    /// A short name for records and stats (`"rate"`, `"delay"`, ...).
    fn name(&self) -> &'static str;

    /// Hands a packet to the stage at `now`. The stage queues, drops (counted in its stats) or
    /// passes it on; whatever it passes on comes out of [`poll`](Stage::poll).
    fn push(&mut self, pkt: Packet, now: Instant);

    /// The next packet due at or before `now`, if any.
    fn poll(&mut self, now: Instant) -> Option<Packet>;

    /// When `poll` will next have a packet: `None` when the stage is empty; an instant at or
    /// before the last `now` when a packet is ready already.
    fn next_wakeup(&self) -> Option<Instant>;

    /// Counters since the stage was made.
    fn stats(&self) -> StageStats;

    /// The counters a run records for this stage, each under its own name: by default the
    /// stage's [`stats`](Stage::stats) under its [`name`](Stage::name). A stage with a part
    /// that drops on its own account (the device's upstream queue) lists it separately, so
    /// the record says where a frame was lost.
    fn parts(&self) -> Vec<(&'static str, StageStats)> {
        vec![(self.name(), self.stats())]
    }
}

/// Counters of one stage. Every drop, duplicate, corruption and reordering is counted where it
/// happens, so a run's record says which impairment did what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct StageStats {
    /// Packets pushed in.
    pub packets_in: u64,
    /// Bytes pushed in.
    pub bytes_in: u64,
    /// Packets polled out (duplicates included).
    pub packets_out: u64,
    /// Bytes polled out.
    pub bytes_out: u64,
    /// Packets dropped (loss, full queue or full ring).
    pub dropped: u64,
    /// Bytes dropped.
    pub bytes_dropped: u64,
    /// Extra copies made.
    pub duplicated: u64,
    /// Packets with a bit flipped.
    pub corrupted: u64,
    /// Packets that came out after a packet that went in after them.
    pub reordered: u64,
    /// Packets held right now.
    pub queued: u64,
    /// Most packets held at once.
    pub max_queued: u64,
}

impl StageStats {
    pub(crate) fn on_in(&mut self, pkt: &Packet) {
        self.packets_in += 1;
        self.bytes_in += pkt.len() as u64;
    }

    pub(crate) fn on_out(&mut self, pkt: &Packet) {
        self.packets_out += 1;
        self.bytes_out += pkt.len() as u64;
    }

    pub(crate) fn on_drop(&mut self, pkt: &Packet) {
        self.dropped += 1;
        self.bytes_dropped += pkt.len() as u64;
    }

    pub(crate) fn set_queued(&mut self, n: usize) {
        self.queued = n as u64;
        self.max_queued = self.max_queued.max(self.queued);
    }
}

/// Why a stage could not be made from its settings.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A probability outside 0..=1.
    #[error("{what} must be a probability between 0 and 1, got {value}")]
    Probability {
        /// Which setting.
        what: &'static str,
        /// The value given.
        value: f64,
    },
    /// A rate, packet rate or size that must be positive was zero.
    #[error("{what} must be more than zero")]
    Zero {
        /// Which setting.
        what: &'static str,
    },
}

pub(crate) fn chance(what: &'static str, p: f64) -> Result<crate::seed::Chance, ConfigError> {
    crate::seed::Chance::new(p).ok_or(ConfigError::Probability { what, value: p })
}

/// The ready queue of stages that pass packets on at once (loss, duplication, corruption).
#[derive(Debug, Default)]
pub(crate) struct Ready {
    queue: VecDeque<Packet>,
    since: Instant,
}

impl Ready {
    pub(crate) fn put(&mut self, pkt: Packet, now: Instant) {
        if self.queue.is_empty() {
            self.since = now;
        }
        self.queue.push_back(pkt);
    }

    pub(crate) fn take(&mut self) -> Option<Packet> {
        self.queue.pop_front()
    }

    pub(crate) fn wakeup(&self) -> Option<Instant> {
        (!self.queue.is_empty()).then_some(self.since)
    }

    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }
}
