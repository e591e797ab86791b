//! Per-family impairments of a link direction: IPv4 and IPv6 treated differently on one link,
//! as a 6in4 tunnel or a different route would treat them, so a comparison of the two
//! families (`sonde compare-ip`) has a known answer to be checked against.
//!
//! `ipv6 = { delay = "20ms", mtu = 1480 }` beside a direction's own keys: that family's frames
//! go through a chain of their own, the direction's stages with the override's values (the
//! other family and everything else, ARP included, through the direction's own chain). `mtu`
//! is not a stage: the lab sets it as the route MTU of that family on the sending end, so the
//! hosts send no larger packets, as behind a tunnel whose path MTU is known.

use serde::{Deserialize, Serialize};

use crate::{Dur, Impairments, Percent, Rate, ValidationError};

/// An IP family, as a link's impairments name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// IPv4 (EtherType 0x0800).
    Ipv4,
    /// IPv6 (EtherType 0x86DD).
    Ipv6,
}

impl Family {
    /// Both families.
    pub const BOTH: [Family; 2] = [Family::Ipv4, Family::Ipv6];

    /// `ipv4` or `ipv6`, as in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }

    /// The smallest MTU the family allows: 576 for IPv4 (RFC 791's datagram every host takes),
    /// 1280 for IPv6 (RFC 8200).
    pub fn min_mtu(self) -> u32 {
        match self {
            Family::Ipv4 => 576,
            Family::Ipv6 => 1280,
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one family gets instead of the direction's own values. Every field is optional.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyOverride {
    /// Rate limit of this family's frames, `"20mbit"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Fixed delay, `"20ms"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Jitter around the delay (needs a delay, the family's or the direction's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Dur>,
    /// Random loss, `"1%"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Percent>,
    /// The family's MTU from the sending end: a route MTU, not a stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
}

impl FamilyOverride {
    /// True when a stage value is overridden (anything but `mtu`), so the family needs a
    /// chain of its own.
    pub fn changes_chain(&self) -> bool {
        self.rate.is_some() || self.delay.is_some() || self.jitter.is_some() || self.loss.is_some()
    }
}

impl Impairments {
    /// The override of `family`, if the direction has one.
    pub fn family(&self, family: Family) -> Option<&FamilyOverride> {
        match family {
            Family::Ipv4 => self.ipv4.as_ref(),
            Family::Ipv6 => self.ipv6.as_ref(),
        }
    }

    /// The impairments `family`'s frames get when its override changes a stage: these with
    /// the override's values in place (and no overrides of their own). `None` when that
    /// family goes through the direction's own chain.
    pub fn for_family(&self, family: Family) -> Option<Impairments> {
        let o = self.family(family).filter(|o| o.changes_chain())?;
        let mut imp = self.clone();
        imp.ipv4 = None;
        imp.ipv6 = None;
        imp.rate = o.rate.or(imp.rate);
        imp.delay = o.delay.or(imp.delay);
        imp.jitter = o.jitter.or(imp.jitter);
        if o.loss.is_some() {
            imp.loss = o.loss;
            imp.gemodel = None;
        }
        Some(imp)
    }

    /// True when some family has a chain of its own.
    pub fn splits_families(&self) -> bool {
        Family::BOTH
            .iter()
            .any(|&f| self.family(f).is_some_and(FamilyOverride::changes_chain))
    }
}

/// Checks the family overrides of one direction: each family's impairments as a direction's
/// are checked, no family chain on a half-duplex link, and each MTU at least the family's
/// minimum (the link's MTU, the upper bound, is checked by [`check_family_mtus`]).
///
/// # Errors
/// The first [`ValidationError`] found, with `at` and the family named.
pub(crate) fn check_families(at: &str, imp: &Impairments) -> Result<(), ValidationError> {
    check_family_mtus(at, imp, 65535)?;
    for family in Family::BOTH {
        let Some(o) = imp.family(family) else {
            continue;
        };
        let here = format!("{at}, {family}");
        // A family chain has a rate bucket of its own: it cannot draw on the one budget a
        // half-duplex link's two directions share.
        if o.changes_chain() && imp.duplex == Some(crate::Duplex::Half) {
            return Err(ValidationError::Conflict {
                at: here,
                a: "rate, delay, jitter or loss",
                b: "duplex = \"half\"",
            });
        }
        if let Some(merged) = imp.for_family(family) {
            crate::validate_impairments(&here, &merged)?;
        }
    }
    Ok(())
}

/// Checks that each family's `mtu` lies between the family's minimum and `link_mtu`.
///
/// # Errors
/// [`ValidationError::FamilyMtu`] with `at` and the family named.
pub(crate) fn check_family_mtus(
    at: &str,
    imp: &Impairments,
    link_mtu: u32,
) -> Result<(), ValidationError> {
    for family in Family::BOTH {
        let Some(mtu) = imp.family(family).and_then(|o| o.mtu) else {
            continue;
        };
        if !(family.min_mtu()..=link_mtu).contains(&mtu) {
            return Err(ValidationError::FamilyMtu {
                at: format!("{at}, {family}"),
                mtu,
                min: family.min_mtu(),
                max: link_mtu,
            });
        }
    }
    Ok(())
}
