//! Duplication and corruption, netem's `duplicate P` and `corrupt P`.
//!
//! A duplicated packet is followed at once by its copy (marked [`Meta::duplicate`]).
//! Corruption flips one random bit anywhere in the packet, as netem does (it picks a random
//! byte and xors it with a random single bit); a corrupted IP header then fails its checksum
//! at the receiver, as on a real line.
//!
//! [`Meta::duplicate`]: crate::packet::Meta::duplicate

use rand::RngCore;

use super::{chance, ConfigError, Ready, Stage, StageStats};
use crate::packet::Packet;
use crate::seed::{Chance, StageRng};
use crate::time::Instant;

/// Sends a second copy of a packet with a fixed probability.
#[derive(Debug)]
pub struct Duplicate {
    p: Chance,
    rng: StageRng,
    out: Ready,
    stats: StageStats,
}

impl Duplicate {
    /// Duplication with probability `p` (0..=1).
    ///
    /// # Errors
    /// [`ConfigError::Probability`] when `p` is outside 0..=1.
    pub fn new(p: f64, rng: StageRng) -> Result<Self, ConfigError> {
        Ok(Duplicate {
            p: chance("duplicate", p)?,
            rng,
            out: Ready::default(),
            stats: StageStats::default(),
        })
    }
}

impl Stage for Duplicate {
    fn name(&self) -> &'static str {
        "duplicate"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if self.p.roll(&mut self.rng) {
            let mut copy = pkt.clone();
            copy.meta.duplicate = true;
            self.stats.duplicated += 1;
            self.out.put(pkt, now);
            self.out.put(copy, now);
        } else {
            self.out.put(pkt, now);
        }
    }

    fn poll(&mut self, _now: Instant) -> Option<Packet> {
        let pkt = self.out.take()?;
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        self.out.wakeup()
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

/// Flips one random bit of a packet with a fixed probability.
#[derive(Debug)]
pub struct Corrupt {
    p: Chance,
    rng: StageRng,
    out: Ready,
    stats: StageStats,
}

impl Corrupt {
    /// Corruption with probability `p` (0..=1).
    ///
    /// # Errors
    /// [`ConfigError::Probability`] when `p` is outside 0..=1.
    pub fn new(p: f64, rng: StageRng) -> Result<Self, ConfigError> {
        Ok(Corrupt {
            p: chance("corrupt", p)?,
            rng,
            out: Ready::default(),
            stats: StageStats::default(),
        })
    }
}

impl Stage for Corrupt {
    fn name(&self) -> &'static str {
        "corrupt"
    }

    fn push(&mut self, mut pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if self.p.roll(&mut self.rng) && !pkt.is_empty() {
            let bit = self.rng.next_u64() % (pkt.len() as u64 * 8);
            let (byte, shift) = ((bit / 8) as usize, bit % 8);
            if let Some(b) = pkt.data.get_mut(byte) {
                *b ^= 1 << shift;
                pkt.meta.corrupted = true;
                self.stats.corrupted += 1;
            }
        }
        self.out.put(pkt, now);
    }

    fn poll(&mut self, _now: Instant) -> Option<Packet> {
        let pkt = self.out.take()?;
        self.stats.on_out(&pkt);
        Some(pkt)
    }

    fn next_wakeup(&self) -> Option<Instant> {
        self.out.wakeup()
    }

    fn stats(&self) -> StageStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::ChainSeed;

    #[test]
    fn corrupt_flips_exactly_one_bit() {
        let mut c =
            Corrupt::new(1.0, ChainSeed::from_raw(4).rng(0)).unwrap_or_else(|e| panic!("{e}"));
        for i in 0..100 {
            c.push(Packet::new(vec![0; 100], i), Instant::ZERO);
            let p = c.poll(Instant::ZERO).unwrap_or_default();
            let ones: u32 = p.data.iter().map(|b| b.count_ones()).sum();
            assert_eq!(ones, 1);
            assert!(p.meta.corrupted);
        }
        // An empty packet passes untouched instead of panicking.
        c.push(Packet::new(Vec::new(), 0), Instant::ZERO);
        assert!(c.poll(Instant::ZERO).is_some_and(|p| !p.meta.corrupted));
        assert_eq!(c.stats().corrupted, 100);
    }

    #[test]
    fn duplicate_emits_copy_after_original() {
        let mut d =
            Duplicate::new(1.0, ChainSeed::from_raw(4).rng(0)).unwrap_or_else(|e| panic!("{e}"));
        d.push(Packet::new(vec![9; 10], 5), Instant::ZERO);
        let a = d.poll(Instant::ZERO).unwrap_or_default();
        let b = d.poll(Instant::ZERO).unwrap_or_default();
        assert_eq!((a.meta.seq, a.meta.duplicate), (5, false));
        assert_eq!((b.meta.seq, b.meta.duplicate), (5, true));
        assert_eq!(a.data, b.data);
        assert_eq!(d.stats().duplicated, 1);
        assert_eq!(d.stats().packets_out, 2);
    }
}
