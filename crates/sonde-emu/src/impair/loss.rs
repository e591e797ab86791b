//! Packet loss: independent (Bernoulli) and bursty (Gilbert-Elliott).
//!
//! Random loss drops each packet with probability `p`, independently: netem's `loss random P`
//! without its correlation knob.
//!
//! The Gilbert-Elliott model is netem's `loss gemodel p [r [1-h [1-k]]]` (after Salsano et al.,
//! "Definition of a general and intuitive loss model for packet networks and its
//! implementation in the Netem module in the Linux kernel", and the netem source): a two-state
//! Markov chain. In the good state a packet is lost with probability `1-k`, in the bad state
//! with `1-h`; after each packet the chain moves good→bad with probability `p` and bad→good
//! with `r`. The stationary share of the bad state is `p / (p + r)`, so the mean loss rate is
//! `(r·(1-k) + p·(1-h)) / (p + r)`, and with `1-h = 1`, `1-k = 0` bursts last `1/r` packets
//! on average.

use super::{chance, ConfigError, GeParams, Ready, Stage, StageStats};
use crate::packet::Packet;
use crate::seed::{Chance, StageRng};
use crate::time::Instant;

/// Drops each packet independently with a fixed probability.
#[derive(Debug)]
pub struct RandomLoss {
    p: Chance,
    rng: StageRng,
    out: Ready,
    stats: StageStats,
}

impl RandomLoss {
    /// Loss with probability `p` (0..=1).
    ///
    /// # Errors
    /// [`ConfigError::Probability`] when `p` is outside 0..=1.
    pub fn new(p: f64, rng: StageRng) -> Result<Self, ConfigError> {
        Ok(RandomLoss {
            p: chance("loss", p)?,
            rng,
            out: Ready::default(),
            stats: StageStats::default(),
        })
    }
}

impl Stage for RandomLoss {
    fn name(&self) -> &'static str {
        "loss"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if self.p.roll(&mut self.rng) {
            self.stats.on_drop(&pkt);
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Good,
    Bad,
}

/// Bursty loss from a two-state Markov chain. See the module docs.
#[derive(Debug)]
pub struct GilbertElliott {
    to_bad: Chance,
    to_good: Chance,
    loss_bad: Chance,
    loss_good: Chance,
    state: State,
    rng: StageRng,
    out: Ready,
    stats: StageStats,
}

impl GilbertElliott {
    /// A chain starting in the good state.
    ///
    /// # Errors
    /// [`ConfigError::Probability`] when a parameter is outside 0..=1.
    pub fn new(params: GeParams, rng: StageRng) -> Result<Self, ConfigError> {
        Ok(GilbertElliott {
            to_bad: chance("gemodel p", params.p)?,
            to_good: chance("gemodel r", params.r)?,
            loss_bad: chance("gemodel 1-h", params.loss_bad)?,
            loss_good: chance("gemodel 1-k", params.loss_good)?,
            state: State::Good,
            rng,
            out: Ready::default(),
            stats: StageStats::default(),
        })
    }

    /// Decides the fate of one packet: loss in the current state, then the transition.
    fn lose(&mut self) -> bool {
        let (loss, switch, next) = match self.state {
            State::Good => (self.loss_good, self.to_bad, State::Bad),
            State::Bad => (self.loss_bad, self.to_good, State::Good),
        };
        let lost = loss.roll(&mut self.rng);
        if switch.roll(&mut self.rng) {
            self.state = next;
        }
        lost
    }
}

impl Stage for GilbertElliott {
    fn name(&self) -> &'static str {
        "gemodel"
    }

    fn push(&mut self, pkt: Packet, now: Instant) {
        self.stats.on_in(&pkt);
        if self.lose() {
            self.stats.on_drop(&pkt);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed::ChainSeed;

    #[test]
    fn stationary_loss_formula() {
        let g = GeParams {
            p: 0.01,
            r: 0.3,
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        assert!((g.stationary_loss() - 0.01 / 0.31).abs() < 1e-12);
        assert!((GeParams::simple(0.05).stationary_loss() - 0.05).abs() < 1e-12);
    }

    #[test]
    fn rejects_bad_probability() {
        let rng = ChainSeed::from_raw(1).rng(0);
        assert!(RandomLoss::new(1.5, rng.clone()).is_err());
        let mut g = GeParams::simple(0.1);
        g.loss_bad = -0.1;
        assert!(GilbertElliott::new(g, rng).is_err());
    }
}
