//! A device model: a packets-per-second ceiling behind a finite frame ring.
//!
//! Small bridges (a USB-to-Ethernet adapter in front of a microcontroller, scenario 1) are
//! limited by how many frames they move per second, not by bits, and they buffer a handful of
//! frames in a descriptor ring: a frame that arrives while the ring is full is lost. This
//! stage models exactly that: at most `ring` frames held, one frame leaving every
//! `⌈10^9 / pps⌉` ns at the earliest. Because departures are spaced by at least that
//! interval, no window of one second ever holds more than `pps` departures.
//!
//! **Backpressure.** Some bridges hold their sender instead (USB flow control: the host's
//! driver is told to wait while the device's ring is full). With `backpressure` a frame that
//! finds the ring full waits in an upstream queue, the sender's own transmit queue, and enters
//! the ring at the instant a departure frees a slot: the ring then never drops. The upstream
//! queue holds at most `queue` frames (1000 by default, a Linux host's `txqueuelen`): a sender
//! that outruns the device for long enough fills that too, and what it cannot take is
//! dropped there. The queue reports as a stage of its own, `device-queue`, before `device`
//! ([`Stage::parts`]), so a run's record says which of the two dropped a frame.

use std::collections::VecDeque;

use super::{ConfigError, DeviceConfig, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;

/// The frames waiting upstream of a full ring, with flow control.
#[derive(Debug)]
struct Upstream {
    limit: usize,
    queue: VecDeque<Packet>,
    stats: StageStats,
}

/// A frame ring drained at a fixed packet rate. See the module docs.
#[derive(Debug)]
pub struct Device {
    interval: u64,
    ring_size: usize,
    ring: VecDeque<(Instant, Packet)>,
    next_slot: Instant,
    stats: StageStats,
    /// Present with backpressure.
    upstream: Option<Upstream>,
}

impl Device {
    /// A device with `config`.
    ///
    /// # Errors
    /// [`ConfigError::Zero`] for a zero packet rate, ring or (with backpressure) queue.
    pub fn new(config: DeviceConfig) -> Result<Self, ConfigError> {
        if config.pps == 0 {
            return Err(ConfigError::Zero { what: "device pps" });
        }
        if config.ring == 0 {
            return Err(ConfigError::Zero {
                what: "device ring",
            });
        }
        let upstream = match (config.backpressure, config.queue_len()) {
            (false, _) => None,
            (true, 0) => {
                return Err(ConfigError::Zero {
                    what: "device queue",
                })
            }
            (true, limit) => Some(Upstream {
                limit: limit as usize,
                queue: VecDeque::new(),
                stats: StageStats::default(),
            }),
        };
        Ok(Device {
            interval: 1_000_000_000_u64.div_ceil(config.pps),
            ring_size: config.ring as usize,
            ring: VecDeque::with_capacity(config.ring as usize),
            next_slot: Instant::ZERO,
            stats: StageStats::default(),
            upstream,
        })
    }

    fn enter_ring(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        self.ring.push_back((now, pkt));
        self.stats.set_queued(self.ring.len());
    }

    /// Moves waiting frames into the ring while it has room, at `now`.
    fn refill_ring(&mut self, now: Instant) {
        while self.ring.len() < self.ring_size {
            let Some(up) = self.upstream.as_mut() else {
                return;
            };
            let Some(pkt) = up.queue.pop_front() else {
                return;
            };
            up.stats.on_out(&pkt);
            up.stats.set_queued(up.queue.len());
            self.enter_ring(pkt, now);
        }
    }
}

impl Stage for Device {
    fn name(&self) -> &'static str {
        "device"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        let ring_full = self.ring.len() >= self.ring_size;
        let Some(up) = self.upstream.as_mut() else {
            if ring_full {
                self.stats.on_in(&pkt);
                self.stats.on_drop(&pkt);
            } else {
                self.enter_ring(pkt, now);
            }
            return;
        };
        up.stats.on_in(&pkt);
        if up.queue.is_empty() && !ring_full {
            up.stats.on_out(&pkt);
            self.enter_ring(pkt, now);
            return;
        }
        if up.queue.len() >= up.limit {
            up.stats.on_drop(&pkt);
            return;
        }
        up.queue.push_back(pkt);
        up.stats.set_queued(up.queue.len());
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
        // The slot freed at the departure: a waiting frame takes it then.
        self.refill_ring(depart);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        self.ring
            .front()
            .map(|(arrived, _)| (*arrived).max(self.next_slot))
    }

    /// The ring's counters; the upstream queue's are in [`Stage::parts`].
    fn stats(&self) -> StageStats {
        self.stats
    }

    fn parts(&self) -> Vec<(&'static str, StageStats)> {
        match &self.upstream {
            Some(up) => vec![("device-queue", up.stats), ("device", self.stats)],
            None => vec![("device", self.stats)],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(pps: u64, ring: u32, queue: Option<u32>) -> Device {
        let cfg = DeviceConfig {
            backpressure: queue.is_some(),
            queue,
            ..DeviceConfig::dropping(pps, ring)
        };
        Device::new(cfg).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Polls every departure at its announced instant; the instants in ns.
    fn drain(d: &mut Device) -> Vec<u64> {
        let mut times = Vec::new();
        while let Some(t) = d.next_wakeup() {
            assert!(d.poll(t).is_some());
            times.push(t.as_nanos());
        }
        times
    }

    #[test]
    fn ring_full_drops_and_spacing_holds() {
        let mut d = device(8000, 4, None);
        for i in 0..6 {
            d.push(Packet::new(vec![0; 64], i), Instant::ZERO);
        }
        assert_eq!(d.stats().dropped, 2);
        assert_eq!(drain(&mut d), [0, 125_000, 250_000, 375_000]);
        assert_eq!(d.parts(), vec![("device", d.stats())]);
    }

    #[test]
    fn backpressure_holds_frames_instead_of_dropping_and_keeps_the_spacing() {
        let mut d = device(8000, 4, Some(1000));
        for i in 0..20 {
            d.push(Packet::new(vec![0; 64], i), Instant::ZERO);
        }
        assert_eq!(d.stats().dropped, 0);
        let times = drain(&mut d);
        let want: Vec<u64> = (0..20).map(|i| i * 125_000).collect();
        assert_eq!(times, want);
        let parts = d.parts();
        assert_eq!(parts.len(), 2);
        let (queue, ring) = (parts[0].1, parts[1].1);
        assert_eq!((parts[0].0, parts[1].0), ("device-queue", "device"));
        assert_eq!(
            (queue.packets_in, queue.packets_out, queue.dropped),
            (20, 20, 0)
        );
        assert_eq!(queue.max_queued, 16);
        assert_eq!(
            (ring.packets_in, ring.packets_out, ring.dropped),
            (20, 20, 0)
        );
        assert_eq!(ring.max_queued, 4);
    }

    #[test]
    fn frames_beyond_the_upstream_queue_are_dropped_and_counted_there() {
        let mut d = device(1000, 2, Some(3));
        for i in 0..10 {
            d.push(Packet::new(vec![0; 100], i), Instant::ZERO);
        }
        // 2 in the ring, 3 waiting, 5 refused by the queue: none by the ring.
        let parts = d.parts();
        assert_eq!(parts[0].1.dropped, 5);
        assert_eq!(parts[0].1.bytes_dropped, 500);
        assert_eq!(parts[1].1.dropped, 0);
        assert_eq!(
            drain(&mut d),
            [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]
        );
        // Frames that come once the device has drained go straight through at its rate.
        d.push(Packet::new(vec![0; 100], 10), Instant::from_millis(10));
        assert_eq!(d.next_wakeup(), Some(Instant::from_millis(10)));
    }

    #[test]
    fn arrivals_at_the_rate_pass_without_waiting() {
        let mut d = device(8000, 4, Some(10));
        for i in 0..100u64 {
            let t = Instant::from_nanos(i * 125_000);
            d.push(Packet::new(vec![0; 64], i), t);
            assert_eq!(d.next_wakeup(), Some(t));
            assert!(d.poll(t).is_some());
        }
        assert_eq!(d.parts()[0].1.max_queued, 0);
    }

    #[test]
    fn rejects_zero() {
        assert!(Device::new(DeviceConfig::dropping(0, 1)).is_err());
        assert!(Device::new(DeviceConfig::dropping(1, 0)).is_err());
        let no_queue = DeviceConfig {
            backpressure: true,
            queue: Some(0),
            ..DeviceConfig::dropping(1, 1)
        };
        assert!(Device::new(no_queue).is_err());
    }
}
