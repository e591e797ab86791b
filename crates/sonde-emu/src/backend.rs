//! Which backend applies a link direction's impairments: a kernel qdisc or the userspace engine.
//!
//! The rule: the kernel's netem where the kernel has it, the userspace engine
//! otherwise; a plain rate limit may still use tbf (or htb), which every kernel here has. This
//! module is the pure decision; the lab records its answer with every run, so a result says
//! what produced its link conditions.
//!
//! A direction is given to **one** backend as a whole. Splitting it (say tbf for the rate,
//! the engine for the loss) would change the order of the stages (see [`crate::build`]) and
//! put part of the randomness outside the run seed. The userspace engine is also chosen where
//! netem cannot do what the scenario asks: an AQM (`aqm = "codel"`, `"fq_codel"`, `"pie"`: the
//! kernel here has none of those qdiscs), the device model (no qdisc has a frame ring with
//! a packet-rate ceiling), a queue limit in bytes (netem's `limit` counts packets), reordering
//! without delay (netem only reorders delayed packets), jitter with order kept and no rate
//! (netem then reorders), and a half-duplex link (a qdisc shapes one interface's egress; the
//! two directions' shared budget lives in the engine, [`crate::impair::SharedRate`]), and
//! per-family impairments (the engine splits frames by EtherType,
//! [`crate::impair::FamilySplit`]).

use serde::Serialize;

use crate::impair::QueueLimit;
use crate::seed::Direction;
use sonde_scenario::{Impairments, Scenario};

/// What the running kernel offers (probed by the lab, e.g. by trying `tc qdisc add`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct KernelCaps {
    /// `sch_netem` is available.
    pub has_netem: bool,
    /// `sch_tbf` is available.
    pub has_tbf: bool,
    /// `sch_htb` is available.
    pub has_htb: bool,
}

/// A kernel queueing discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Qdisc {
    /// netem.
    Netem,
    /// Token bucket filter.
    Tbf,
    /// Hierarchical token bucket with a pfifo/bfifo child.
    Htb,
}

/// Where an impairment is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// By a qdisc on the router's egress interface.
    Kernel(Qdisc),
    /// By the userspace engine forwarding in the router namespace.
    Userspace,
}

/// One kind of impairment, for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Impairment {
    /// Rate limit (with its overhead and burst).
    Rate,
    /// The rate shared by both directions (`duplex = "half"`).
    HalfDuplex,
    /// Queue limit.
    QueueLimit,
    /// Active queue management (CoDel, FQ-CoDel, PIE) of the rate limiter's queue.
    Aqm,
    /// Device model.
    Device,
    /// Delay.
    Delay,
    /// Jitter.
    Jitter,
    /// Random loss.
    Loss,
    /// Gilbert-Elliott loss.
    Gemodel,
    /// Reordering.
    Reorder,
    /// Duplication.
    Duplicate,
    /// Corruption.
    Corrupt,
    /// A chain of its own for IPv4 or IPv6 frames (`ipv4 = {...}`, `ipv6 = {...}`).
    PerFamily,
}

impl Impairment {
    /// The impairments set in `imp`, in chain order.
    pub fn present(imp: &Impairments) -> Vec<Impairment> {
        [
            (Impairment::Rate, imp.rate.is_some()),
            (
                Impairment::HalfDuplex,
                imp.duplex == Some(sonde_scenario::Duplex::Half),
            ),
            (Impairment::QueueLimit, imp.queue_limit.is_some()),
            (Impairment::Aqm, imp.aqm.is_some()),
            (Impairment::Device, imp.device.is_some()),
            (Impairment::Delay, imp.delay.is_some()),
            (Impairment::Jitter, imp.jitter.is_some()),
            (Impairment::Reorder, imp.reorder.is_some()),
            (Impairment::Loss, imp.loss.is_some()),
            (Impairment::Gemodel, imp.gemodel.is_some()),
            (Impairment::Duplicate, imp.duplicate.is_some()),
            (Impairment::Corrupt, imp.corrupt.is_some()),
            (Impairment::PerFamily, imp.splits_families()),
        ]
        .into_iter()
        .filter_map(|(kind, set)| set.then_some(kind))
        .collect()
    }

    fn is_random(self) -> bool {
        matches!(
            self,
            Impairment::Jitter
                | Impairment::Loss
                | Impairment::Gemodel
                | Impairment::Reorder
                | Impairment::Duplicate
                | Impairment::Corrupt
        )
    }
}

/// The decision for one link direction, as recorded with a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirectionPlan {
    /// The link.
    pub link: String,
    /// The direction.
    pub direction: Direction,
    /// The backend applying every impairment of this direction.
    pub backend: Backend,
    /// The impairments it applies, in chain order.
    pub impairments: Vec<Impairment>,
    /// Why this backend.
    pub reason: &'static str,
    /// True when the run seed fixes every random draw (false for netem, whose PRNG the lab
    /// does not seed).
    pub repeatable: bool,
}

/// The decisions for every impaired link direction of one settings entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BackendPlan {
    /// The settings' name.
    pub settings: String,
    /// What the kernel offered.
    pub caps: KernelCaps,
    /// One entry per impaired link direction.
    pub directions: Vec<DirectionPlan>,
}

impl BackendPlan {
    /// True when some direction needs the userspace engine.
    pub fn needs_userspace(&self) -> bool {
        self.directions
            .iter()
            .any(|d| d.backend == Backend::Userspace)
    }
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The scenario has no settings of that name.
    #[error("unknown settings {0:?}")]
    UnknownSettings(String),
}

/// Why no qdisc can apply `imp` at all, whatever the kernel offers; `None` when some might.
fn engine_only(imp: &Impairments, kinds: &[Impairment]) -> Option<&'static str> {
    if imp.device.is_some() {
        return Some("no qdisc models a frame ring with a packet-rate ceiling");
    }
    if imp.aqm.is_some() {
        // The lab's kernel has no sch_codel, sch_fq_codel or sch_pie, as it has netem only
        // where probed; the engine runs all three on its virtual clock.
        return Some(
            "an AQM (codel, fq_codel, pie): this kernel has none of those qdiscs, the engine runs it",
        );
    }
    if kinds.contains(&Impairment::PerFamily) {
        return Some("no qdisc here gives IPv4 and IPv6 frames chains of their own");
    }
    if kinds.contains(&Impairment::HalfDuplex) {
        return Some("no qdisc shares one rate between a link's two directions");
    }
    None
}

/// Chooses the backend of one direction's impairments, with the reason; `None` when nothing
/// is set.
pub fn choose(imp: &Impairments, caps: KernelCaps) -> Option<(Backend, &'static str)> {
    use Backend::{Kernel, Userspace};
    let kinds = Impairment::present(imp);
    if kinds.is_empty() {
        return None;
    }
    if let Some(reason) = engine_only(imp, &kinds) {
        return Some((Userspace, reason));
    }
    let rate_only = kinds
        .iter()
        .all(|k| matches!(k, Impairment::Rate | Impairment::QueueLimit));
    let packet_limit = matches!(imp.queue_limit, Some(QueueLimit::Packets(_)));
    if rate_only {
        return Some(match (packet_limit, caps) {
            (false, KernelCaps { has_tbf: true, .. }) => {
                (Kernel(Qdisc::Tbf), "a plain rate limit: tbf")
            }
            (_, KernelCaps { has_htb: true, .. }) => (
                Kernel(Qdisc::Htb),
                "a plain rate limit: htb with a fifo child holding the queue limit",
            ),
            (
                _,
                KernelCaps {
                    has_netem: true, ..
                },
            ) if !matches!(
                imp.queue_limit,
                Some(QueueLimit::Bytes(_) | QueueLimit::Time(_))
            ) =>
            {
                (Kernel(Qdisc::Netem), "a plain rate limit: netem rate")
            }
            _ => (
                Userspace,
                "no qdisc here shapes this rate with this queue limit",
            ),
        });
    }
    if !caps.has_netem {
        return Some((Userspace, "the kernel has no netem"));
    }
    if matches!(
        imp.queue_limit,
        Some(QueueLimit::Bytes(_) | QueueLimit::Time(_))
    ) {
        return Some((Userspace, "netem's limit counts packets, not bytes or time"));
    }
    if imp.reorder.is_some() && imp.delay.is_none() {
        return Some((Userspace, "netem reorders only delayed packets"));
    }
    if imp.jitter.is_some() && !imp.jitter_reorders && imp.rate.is_none() {
        return Some((
            Userspace,
            "netem reorders jittered packets unless a rate is set",
        ));
    }
    Some((Kernel(Qdisc::Netem), "netem has every impairment set"))
}

/// The backend plan of `settings` in `scenario` on a kernel with `caps`.
///
/// # Errors
/// [`PlanError::UnknownSettings`] when the scenario has no such settings.
pub fn plan(
    scenario: &Scenario,
    settings: &str,
    caps: KernelCaps,
) -> Result<BackendPlan, PlanError> {
    let s = scenario
        .setting(settings)
        .ok_or_else(|| PlanError::UnknownSettings(settings.to_owned()))?;
    let directions = s
        .directions()
        .filter_map(|(link, direction, imp)| {
            let (backend, reason) = choose(imp, caps)?;
            let impairments = Impairment::present(imp);
            let repeatable = backend != Backend::Kernel(Qdisc::Netem)
                || !impairments.iter().any(|k| k.is_random());
            Some(DirectionPlan {
                link: link.to_owned(),
                direction,
                backend,
                impairments,
                reason,
                repeatable,
            })
        })
        .collect();
    Ok(BackendPlan {
        settings: settings.to_owned(),
        caps,
        directions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::QueueLimit;
    use sonde_scenario::{Dur, Percent, Rate};
    use std::time::Duration;

    const HERE: KernelCaps = KernelCaps {
        has_netem: false,
        has_tbf: true,
        has_htb: true,
    };
    const NETEM: KernelCaps = KernelCaps {
        has_netem: true,
        has_tbf: true,
        has_htb: true,
    };

    fn rate(limit: Option<QueueLimit>) -> Impairments {
        Impairments {
            rate: Some(Rate(100_000_000)),
            queue_limit: limit,
            ..Impairments::default()
        }
    }

    fn backend(imp: &Impairments, caps: KernelCaps) -> Option<Backend> {
        choose(imp, caps).map(|(b, _)| b)
    }

    #[test]
    fn plain_rate_uses_a_kernel_shaper() {
        assert_eq!(backend(&Impairments::default(), HERE), None);
        assert_eq!(
            backend(&rate(None), HERE),
            Some(Backend::Kernel(Qdisc::Tbf))
        );
        let bytes = rate(Some(QueueLimit::Bytes(150_000)));
        assert_eq!(backend(&bytes, HERE), Some(Backend::Kernel(Qdisc::Tbf)));
        let packets = rate(Some(QueueLimit::Packets(100)));
        assert_eq!(backend(&packets, HERE), Some(Backend::Kernel(Qdisc::Htb)));
        let tbf_only = KernelCaps {
            has_htb: false,
            ..HERE
        };
        assert_eq!(backend(&packets, tbf_only), Some(Backend::Userspace));
        assert_eq!(
            backend(&rate(None), KernelCaps::default()),
            Some(Backend::Userspace)
        );
    }

    #[test]
    fn anything_else_needs_netem_or_userspace() {
        let mut lossy = rate(None);
        lossy.loss = Some(Percent(0.05));
        assert_eq!(backend(&lossy, HERE), Some(Backend::Userspace));
        assert_eq!(backend(&lossy, NETEM), Some(Backend::Kernel(Qdisc::Netem)));

        let jitter = Impairments {
            delay: Some(Dur(Duration::from_millis(10))),
            jitter: Some(Dur(Duration::from_millis(1))),
            ..Impairments::default()
        };
        assert_eq!(backend(&jitter, NETEM), Some(Backend::Userspace));
        let reordering = Impairments {
            jitter_reorders: true,
            ..jitter
        };
        assert_eq!(
            backend(&reordering, NETEM),
            Some(Backend::Kernel(Qdisc::Netem))
        );

        let half = Impairments {
            duplex: Some(sonde_scenario::Duplex::Half),
            ..rate(None)
        };
        assert_eq!(backend(&half, NETEM), Some(Backend::Userspace));

        let mut bytes = lossy.clone();
        bytes.queue_limit = Some(QueueLimit::Bytes(1));
        assert_eq!(backend(&bytes, NETEM), Some(Backend::Userspace));
    }

    #[test]
    fn an_aqm_or_a_time_limit_goes_where_it_can_run() {
        // No qdisc here runs codel, fq_codel or pie: the engine does, whatever else is set.
        for aqm in [
            sonde_scenario::Aqm::Codel,
            sonde_scenario::Aqm::FqCodel,
            sonde_scenario::Aqm::Pie,
        ] {
            let imp = Impairments {
                aqm: Some(aqm),
                ..rate(None)
            };
            let chosen = choose(&imp, NETEM);
            assert_eq!(chosen.map(|c| c.0), Some(Backend::Userspace));
            assert!(chosen.is_some_and(|c| c.1.contains("none of those qdiscs")));
            assert!(Impairment::present(&imp).contains(&Impairment::Aqm));
        }
        // A time limit is bytes at the rate: tbf holds it, netem (packets only) does not.
        let time = rate(Some(QueueLimit::Time(Duration::from_millis(100))));
        assert_eq!(backend(&time, HERE), Some(Backend::Kernel(Qdisc::Tbf)));
        let delayed = Impairments {
            delay: Some(Dur(Duration::from_millis(10))),
            ..time
        };
        assert_eq!(backend(&delayed, NETEM), Some(Backend::Userspace));
    }
}
