//! Seeded randomness, so that a run can be repeated exactly.
//!
//! Every stage owns one PRNG. Its seed is derived from the run seed, the link name, the
//! direction and the stage's index in the chain, so adding a stage or a link does not shift the
//! random stream of any other stage, and the same scenario with the same seed drops the same
//! packets. The mixing is spelled out here (FNV-1a over the name, then SplitMix64) rather than
//! taken from `std::hash`, whose output may change between Rust releases.

use rand::RngCore;
use rand::SeedableRng;

/// The PRNG every stage uses: PCG-64 MCG, small state and a few ns per draw.
pub type StageRng = rand_pcg::Pcg64Mcg;

pub use sonde_scenario::seed::{fnv1a, mix, splitmix64};
pub use sonde_scenario::Direction;

/// Where a chain's stages take their seeds from: run seed, link and direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainSeed(u64);

impl ChainSeed {
    /// The seed base for `link` in `direction` of a run seeded with `run_seed`.
    pub fn new(run_seed: u64, link: &str, direction: Direction) -> Self {
        ChainSeed(splitmix64(mix(run_seed, link) ^ direction as u64))
    }

    /// A seed base used as is (tests, benchmarks).
    pub const fn from_raw(seed: u64) -> Self {
        ChainSeed(seed)
    }

    /// The seed of the stage at `index` in the chain.
    pub fn stage(self, index: usize) -> u64 {
        splitmix64(self.0 ^ splitmix64(index as u64 + 1))
    }

    /// A PRNG for the stage at `index`.
    pub fn rng(self, index: usize) -> StageRng {
        StageRng::seed_from_u64(self.stage(index))
    }
}

/// A probability, stored as a 64-bit threshold so a draw is one integer compare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chance {
    threshold: u64,
    always: bool,
}

impl Chance {
    /// Never happens.
    pub const NEVER: Chance = Chance {
        threshold: 0,
        always: false,
    };

    /// A chance of `p` (0 ≤ p ≤ 1), or `None` when `p` is outside that range or not a number.
    pub fn new(p: f64) -> Option<Chance> {
        if !(0.0..=1.0).contains(&p) {
            return None;
        }
        if p >= 1.0 {
            return Some(Chance {
                threshold: u64::MAX,
                always: true,
            });
        }
        // p * 2^64, below 2^64 since p < 1.
        let threshold = (p * 18_446_744_073_709_551_616.0) as u64;
        Some(Chance {
            threshold,
            always: false,
        })
    }

    /// The probability, as a float.
    pub fn probability(self) -> f64 {
        if self.always {
            1.0
        } else {
            self.threshold as f64 / 18_446_744_073_709_551_616.0
        }
    }

    /// Draws once: true with this probability. Consumes exactly one value from `rng` unless
    /// the chance is zero or one, so streams stay aligned whatever the setting.
    pub fn roll(self, rng: &mut StageRng) -> bool {
        if self.always {
            return true;
        }
        if self.threshold == 0 {
            return false;
        }
        rng.next_u64() < self.threshold
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_differ_by_link_direction_and_stage() {
        let a = ChainSeed::new(1, "wan", Direction::AToB);
        let b = ChainSeed::new(1, "wan", Direction::BToA);
        let c = ChainSeed::new(1, "lan", Direction::AToB);
        let d = ChainSeed::new(2, "wan", Direction::AToB);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(a.stage(0), a.stage(1));
        assert_eq!(a, ChainSeed::new(1, "wan", Direction::AToB));
    }

    #[test]
    fn chance_bounds() {
        assert!(Chance::new(-0.1).is_none());
        assert!(Chance::new(1.1).is_none());
        assert!(Chance::new(f64::NAN).is_none());
        let mut rng = ChainSeed::from_raw(3).rng(0);
        assert!(Chance::new(1.0).is_some_and(|c| c.roll(&mut rng)));
        assert!(Chance::new(0.0).is_some_and(|c| !c.roll(&mut rng)));
        let half = Chance::new(0.5).map(Chance::probability);
        assert!(half.is_some_and(|p| (p - 0.5).abs() < 1e-12));
    }
}
