//! A device model: a packets-per-second ceiling behind a finite frame ring.
//!
//! Small bridges (a USB-to-Ethernet adapter in front of a microcontroller, scenario 1) are
//! limited by how many frames they move per second, not by bits, and they buffer a handful of
//! frames in a descriptor ring: a frame that arrives while the ring is full is lost. This
//! stage models exactly that: at most `ring` frames held, one frame leaving every
//! `⌈10^9 / pps⌉` ns at the earliest. Because departures are spaced by at least that
//! interval, no window of one second ever holds more than `pps` departures.

use std::collections::VecDeque;

use super::{ConfigError, DeviceConfig, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;

/// A frame ring drained at a fixed packet rate. See the module docs.
#[derive(Debug)]
pub struct Device {
    interval: u64,
    ring_size: usize,
    ring: VecDeque<(Instant, Packet)>,
    next_slot: Instant,
    stats: StageStats,
}

impl Device {
    /// A device with `config`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for a zero packet rate or ring.
    pub fn new(config: DeviceConfig) -> Result<Self, ConfigError> {
        if config.pps == 0 {
            return Err(ConfigError::Zero { what: "device pps" });
        }
        if config.ring == 0 {
            return Err(ConfigError::Zero {
                what: "device ring",
            });
        }
        Ok(Device {
            interval: 1_000_000_000_u64.div_ceil(config.pps),
            ring_size: config.ring as usize,
            ring: VecDeque::with_capacity(config.ring as usize),
            next_slot: Instant::ZERO,
            stats: StageStats::default(),
        })
    }
}

impl Stage for Device {
    fn name(&self) -> &'static str {
        "device"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if self.ring.len() >= self.ring_size {
            self.stats.on_drop(&pkt);
            return;
        }
        self.ring.push_back((now, pkt));
        self.stats.set_queued(self.ring.len());
    }

    fn poll(&mut self, now: Instant) -> Option<Packet> {
        let depart = self.next_wakeup()?;
        if depart > now {
            return None;
        }
        let (_, pkt) = self.ring.pop_front()?;
        // Schedule from the virtual departure, not from `now`: a late poll must not slow the
        // device down, and the spacing keeps the ceiling.
        self.next_slot = depart.add_nanos(self.interval);
        self.stats.set_queued(self.ring.len());
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        self.ring
            .front()
            .map(|(arrived, _)| (*arrived).max(self.next_slot))
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_full_drops_and_spacing_holds() {
        let mut d =
            Device::new(DeviceConfig { pps: 8000, ring: 4 }).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..6 {
            d.push(Packet::new(vec![0; 64], i), Instant::ZERO);
        }
        assert_eq!(d.stats().dropped, 2);
        let mut times = Vec::new();
        while let Some(t) = d.next_wakeup() {
            assert!(d.poll(t).is_some());
            times.push(t.as_nanos());
        }
        assert_eq!(times, [0, 125_000, 250_000, 375_000]);
    }

    #[test]
    fn rejects_zero() {
        assert!(Device::new(DeviceConfig { pps: 0, ring: 1 }).is_err());
        assert!(Device::new(DeviceConfig { pps: 1, ring: 0 }).is_err());
    }
}
