//! From a scenario's impairments to the chain of stages the userspace engine runs.
//!
//! The order within a chain is fixed, modelled on a real path rather than on netem's
//! internals: the **rate limiter** and its queue first (the bottleneck queue is where the
//! offered load turns into queueing delay and tail drops), then the **device** ring, then
//! **delay** and jitter (propagation), **reordering**, **loss**, **duplication** and
//! **corruption** (what the line does to packets in flight). netem instead decides loss before
//! queueing; here a packet lost on the line still used its share of the bottleneck, as it does
//! on a real lossy link.
//!
//! With `aqm` set, the rate limiter's FIFO gives way to the AQM's queue ([`Managed`]): CoDel,
//! FQ-CoDel or PIE with the scenario's target, interval, flows and quantum or the RFCs'
//! defaults, and the queue limit (a time limit resolved to bytes at the link's rate).
//!
//! On a half-duplex link (`duplex = "half"`) the two directions' rate limiters draw on one
//! budget ([`SharedRate`]): [`build_settings`] makes one per such link and hands each
//! direction its side.
//!
//! A direction with per-family overrides (`ipv6 = { delay = "20ms" }`) gets a
//! [`FamilySplit`]: its own chain, and for each such family a chain built the same way from the
//! direction's settings with the override's values, seeded from the link's name and the family.
//!
//! Each kind of stage has a fixed seed slot, so enabling one impairment does not change the
//! random stream of another: the loss pattern of a 5 % loss link is the same with or without
//! jitter added.

use std::collections::HashMap;

use crate::impair::{
    Chain, CodelParams, CodelQueue, ConfigError, Corrupt, Delay, DelayConfig, Device, Duplex,
    Duplicate, FamilySplit, FqCodel, FqCodelConfig, GilbertElliott, Managed, Pie, PieConfig, Queue,
    RandomLoss, RateConfig, RateLimiter, Reorder, ReorderConfig, SharedRate,
};
use crate::seed::{ChainSeed, Direction};
use sonde_scenario::{aqm, Aqm, Family, Impairments, Scenario};

/// The fixed seed slot of each kind of stage. Slots 0 and 1 belong to the rate limiter and the
/// device model, which draw no random numbers today.
mod slot {
    pub const DELAY: usize = 2;
    pub const REORDER: usize = 3;
    pub const LOSS: usize = 4;
    pub const GEMODEL: usize = 5;
    pub const DUPLICATE: usize = 6;
    pub const CORRUPT: usize = 7;
    /// The AQM's draws (PIE) or flow hash (FQ-CoDel).
    pub const AQM: usize = 8;
}

/// Builds the chain of one link direction.
///
/// # Errors
/// A [`ConfigError`] when a value is out of range; validated scenarios never give one.
pub fn build_chain(imp: &Impairments, seed: ChainSeed) -> Result<Chain, ConfigError> {
    build_chain_on(imp, seed, None)
}

/// The rate limiter's settings from `imp`, when it sets a rate.
fn rate_config(imp: &Impairments) -> Option<RateConfig> {
    let mut cfg = RateConfig::new(imp.rate?.0);
    cfg.overhead = imp.overhead.unwrap_or(cfg.overhead);
    if let Some(b) = imp.burst {
        cfg.burst = u32::try_from(b.0).unwrap_or(u32::MAX);
    }
    cfg.limit = imp
        .queue_limit
        .map_or(cfg.limit, |l| l.at_rate(cfg.bits_per_sec));
    Some(cfg)
}

/// The managed queue `imp.aqm` names, with the limit of the rate limiter's queue.
fn aqm_queue(imp: &Impairments, cfg: &RateConfig, seed: ChainSeed) -> Option<Box<dyn Queue>> {
    let aqm = imp.aqm?;
    let target = imp.aqm_target.map_or(aqm.default_target(), |d| d.0);
    let codel = CodelParams {
        target,
        interval: imp.aqm_interval.map_or(aqm::DEFAULT_INTERVAL, |d| d.0),
    };
    Some(match aqm {
        Aqm::Codel => Box::new(CodelQueue::new(codel, cfg.limit)),
        Aqm::FqCodel => Box::new(FqCodel::new(FqCodelConfig {
            codel,
            flows: imp.flows.unwrap_or(aqm::DEFAULT_FLOWS),
            quantum: imp.quantum.unwrap_or(aqm::DEFAULT_QUANTUM),
            limit: cfg.limit,
            seed: seed.stage(slot::AQM),
        })),
        Aqm::Pie => Box::new(Pie::new(
            PieConfig::new(target, cfg.limit),
            seed.rng(slot::AQM),
        )),
    })
}

/// [`build_chain`] whose rate limiter, when `shared` is given, draws on that half-duplex
/// budget instead of a bucket of its own.
fn build_chain_on(
    imp: &Impairments,
    seed: ChainSeed,
    shared: Option<SharedRate>,
) -> Result<Chain, ConfigError> {
    let mut chain = Chain::new();
    if let Some(cfg) = rate_config(imp) {
        let limiter = match shared {
            Some(s) => RateLimiter::sharing(cfg, s),
            None => RateLimiter::new(cfg)?,
        };
        match aqm_queue(imp, &cfg, seed) {
            Some(queue) => chain.push_stage(Box::new(Managed::new(limiter, queue))),
            None => chain.push_stage(Box::new(limiter)),
        }
    }
    if let Some(dev) = imp.device {
        chain.push_stage(Box::new(Device::new(dev)?));
    }
    if imp.delay.is_some() || imp.jitter.is_some() {
        let cfg = DelayConfig {
            jitter: imp.jitter.map(|j| j.0).unwrap_or_default(),
            distribution: imp.distribution.unwrap_or_default(),
            keep_order: !imp.jitter_reorders,
            ..DelayConfig::fixed(imp.delay.map(|d| d.0).unwrap_or_default())
        };
        chain.push_stage(Box::new(Delay::new(cfg, seed.rng(slot::DELAY))));
    }
    if let Some(r) = imp.reorder {
        let cfg = ReorderConfig {
            probability: r.probability.0,
            gap: r.gap,
            max_hold: r.max_hold.0,
        };
        chain.push_stage(Box::new(Reorder::new(cfg, seed.rng(slot::REORDER))?));
    }
    if let Some(p) = imp.loss {
        chain.push_stage(Box::new(RandomLoss::new(p.0, seed.rng(slot::LOSS))?));
    }
    if let Some(ge) = imp.gemodel {
        chain.push_stage(Box::new(GilbertElliott::new(
            ge.params(),
            seed.rng(slot::GEMODEL),
        )?));
    }
    if let Some(p) = imp.duplicate {
        chain.push_stage(Box::new(Duplicate::new(p.0, seed.rng(slot::DUPLICATE))?));
    }
    if let Some(p) = imp.corrupt {
        chain.push_stage(Box::new(Corrupt::new(p.0, seed.rng(slot::CORRUPT))?));
    }
    Ok(chain)
}

/// The chain of one impaired link direction.
#[derive(Debug)]
pub struct LinkChain {
    /// The link's name.
    pub link: String,
    /// The direction.
    pub direction: Direction,
    /// The stages: the direction's own chain, and a chain per family that has overrides.
    pub chain: FamilySplit,
}

/// Why the chains of a setting could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The scenario has no settings of that name.
    #[error("unknown settings {0:?}")]
    UnknownSettings(String),
    /// A stage refused its configuration.
    #[error("link {link:?} {direction}: {error}")]
    Stage {
        /// The link.
        link: String,
        /// The direction.
        direction: Direction,
        /// Why.
        error: ConfigError,
    },
}

/// The chains of every impaired link direction of `settings`, seeded from `run_seed`.
///
/// # Errors
/// [`BuildError`] for an unknown settings name or an out-of-range value.
pub fn build_settings(
    scenario: &Scenario,
    settings: &str,
    run_seed: u64,
) -> Result<Vec<LinkChain>, BuildError> {
    let s = scenario
        .setting(settings)
        .ok_or_else(|| BuildError::UnknownSettings(settings.to_owned()))?;
    // One budget per half-duplex link, each direction taking its side.
    let mut budgets: HashMap<&str, [Option<SharedRate>; 2]> = HashMap::new();
    s.directions()
        .map(|(link, direction, imp)| {
            let err = |error| BuildError::Stage {
                link: link.to_owned(),
                direction,
                error,
            };
            let shared = match (imp.duplex, rate_config(imp)) {
                (Some(Duplex::Half), Some(cfg)) => {
                    if !budgets.contains_key(link) {
                        let pair = SharedRate::pair(cfg.bits_per_sec, cfg.burst).map_err(err)?;
                        budgets.insert(link, pair.map(Some));
                    }
                    let side = usize::from(direction == Direction::BToA);
                    budgets.get_mut(link).and_then(|p| p[side].take())
                }
                _ => None,
            };
            let seed = ChainSeed::new(run_seed, link, direction);
            let mut chain = FamilySplit::new(build_chain_on(imp, seed, shared).map_err(err)?);
            for family in Family::BOTH {
                let Some(own) = imp.for_family(family) else {
                    continue;
                };
                // A stream of its own, so a family's override leaves the other's draws alone.
                let seed = ChainSeed::new(run_seed, &format!("{link} {family}"), direction);
                chain = chain.with_family(family, build_chain(&own, seed).map_err(err)?);
            }
            Ok(LinkChain {
                link: link.to_owned(),
                direction,
                chain,
            })
        })
        .collect()
}
