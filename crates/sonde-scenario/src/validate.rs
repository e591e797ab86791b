//! Cross-checks of a parsed scenario, each failure a precise [`ValidationError`].

use std::collections::{BTreeSet, HashSet};
use std::net::{Ipv4Addr, Ipv6Addr};

use super::{Impairments, Ipv4Subnet, Ipv6Subnet, Link, Percent, Scenario, Test};
pub(crate) use crate::validation_error::{needs, zero};
pub use crate::validation_error::{ValidationError, MAX_NAME, PLACEHOLDERS};
use crate::Direction;

fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
}

fn unique<'a>(
    kind: &'static str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), ValidationError> {
    let mut seen = HashSet::new();
    for name in names {
        if !seen.insert(name) {
            return Err(ValidationError::Duplicate {
                kind,
                name: name.to_owned(),
            });
        }
    }
    Ok(())
}

/// The `{name}`s in `arg`.
pub(crate) fn placeholders(arg: &str) -> impl Iterator<Item = &str> {
    arg.split('{').skip(1).filter_map(|rest| {
        let name = rest.split_once('}')?.0;
        (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
            .then_some(name)
    })
}

impl Link {
    /// The link's IPv4 subnet: the configured one, or `10.77.<index + 1>.0/24`.
    pub fn ipv4_subnet(&self, index: usize) -> Ipv4Subnet {
        self.ipv4.unwrap_or(Ipv4Subnet {
            network: Ipv4Addr::new(10, 77, (index + 1).min(255) as u8, 0),
            prefix: 24,
        })
    }

    /// The link's IPv6 subnet: the configured one, or `fd00:77:0:<index + 1>::/64`.
    pub fn ipv6_subnet(&self, index: usize) -> Ipv6Subnet {
        self.ipv6.unwrap_or(Ipv6Subnet {
            network: Ipv6Addr::new(0xfd00, 0x77, 0, (index + 1).min(0xffff) as u16, 0, 0, 0, 0),
            prefix: 64,
        })
    }
}

impl Scenario {
    /// Checks everything the file format cannot: names, references, ranges, exclusions.
    ///
    /// # Errors
    /// The first [`ValidationError`] found.
    pub fn validate(&self) -> Result<(), ValidationError> {
        self.validate_topology()?;
        self.validate_settings()?;
        self.validate_tests()?;
        self.validate_matrix()
    }

    fn nodes(&self) -> impl Iterator<Item = &str> {
        self.hosts.iter().chain(&self.routers).map(String::as_str)
    }

    fn validate_topology(&self) -> Result<(), ValidationError> {
        if self.hosts.is_empty() {
            return Err(ValidationError::Empty { what: "hosts" });
        }
        if self.links.is_empty() {
            return Err(ValidationError::Empty { what: "link" });
        }
        unique("node", self.nodes())?;
        unique("link", self.links.iter().map(|l| l.name.as_str()))?;
        for (kind, name) in self
            .nodes()
            .map(|n| ("node", n))
            .chain(self.links.iter().map(|l| ("link", l.name.as_str())))
        {
            if !valid_name(name) {
                return Err(ValidationError::BadName {
                    kind,
                    name: name.to_owned(),
                });
            }
        }
        let nodes: HashSet<&str> = self.nodes().collect();
        for (i, link) in self.links.iter().enumerate() {
            for node in [&link.a, &link.b] {
                if !nodes.contains(node.as_str()) {
                    return Err(ValidationError::UnknownNode {
                        link: link.name.clone(),
                        node: node.clone(),
                    });
                }
            }
            if link.a == link.b {
                return Err(ValidationError::SelfLink {
                    link: link.name.clone(),
                    node: link.a.clone(),
                });
            }
            if !(1280..=65535).contains(&link.mtu) {
                return Err(ValidationError::Mtu {
                    link: link.name.clone(),
                    mtu: link.mtu,
                });
            }
            let (v4, v6) = (link.ipv4_subnet(i), link.ipv6_subnet(i));
            if v4.prefix > 30 || v6.prefix > 126 {
                let subnet = if v4.prefix > 30 {
                    String::from(v4)
                } else {
                    String::from(v6)
                };
                return Err(ValidationError::SubnetTooSmall {
                    link: link.name.clone(),
                    subnet,
                });
            }
            for (j, other) in self.links.iter().enumerate().take(i) {
                let overlap = if v4.overlaps(other.ipv4_subnet(j)) {
                    Some(String::from(v4))
                } else if v6.overlaps(other.ipv6_subnet(j)) {
                    Some(String::from(v6))
                } else {
                    None
                };
                if let Some(subnet) = overlap {
                    return Err(ValidationError::SubnetOverlap {
                        a: other.name.clone(),
                        b: link.name.clone(),
                        subnet,
                    });
                }
            }
        }
        self.validate_connected()
    }

    fn validate_connected(&self) -> Result<(), ValidationError> {
        let first = self.hosts.first().map(String::as_str).unwrap_or_default();
        let mut reached: BTreeSet<&str> = BTreeSet::from([first]);
        loop {
            let before = reached.len();
            for l in &self.links {
                if reached.contains(l.a.as_str()) || reached.contains(l.b.as_str()) {
                    reached.insert(&l.a);
                    reached.insert(&l.b);
                }
            }
            if reached.len() == before {
                break;
            }
        }
        match self.nodes().find(|n| !reached.contains(n)) {
            Some(node) => Err(ValidationError::Disconnected {
                node: node.to_owned(),
                first: first.to_owned(),
            }),
            None => Ok(()),
        }
    }

    fn validate_settings(&self) -> Result<(), ValidationError> {
        if self.settings.is_empty() {
            return Err(ValidationError::Empty { what: "settings" });
        }
        unique("settings", self.settings.iter().map(|s| s.name.as_str()))?;
        for s in &self.settings {
            let mut seen = HashSet::new();
            for entry in &s.links {
                if self.link(&entry.link).is_none() {
                    return Err(ValidationError::UnknownLink {
                        setting: s.name.clone(),
                        link: entry.link.clone(),
                    });
                }
                for &direction in entry.direction.directions() {
                    if !seen.insert((entry.link.as_str(), direction)) {
                        return Err(ValidationError::SetTwice {
                            setting: s.name.clone(),
                            link: entry.link.clone(),
                            direction,
                        });
                    }
                }
                let at = format!(
                    "settings {:?}, link {:?} {}",
                    s.name,
                    entry.link,
                    direction_label(entry.direction.directions())
                );
                let link_mtu = self.link(&entry.link).map_or(65535, |l| l.mtu);
                crate::family::check_family_mtus(&at, &entry.impair, link_mtu)?;
                validate_impairments(&at, &entry.impair)?;
            }
            crate::shared::check_half_duplex(s)?;
        }
        Ok(())
    }

    fn validate_tests(&self) -> Result<(), ValidationError> {
        if self.tests.is_empty() {
            return Err(ValidationError::Empty { what: "test" });
        }
        unique("test", self.tests.iter().map(|t| t.name.as_str()))?;
        self.tests.iter().try_for_each(|t| self.validate_test(t))
    }

    fn validate_test(&self, t: &Test) -> Result<(), ValidationError> {
        for (role, node) in [("client", &t.client), ("server", &t.server)] {
            if let Some(node) = node {
                if !self.hosts.contains(node) {
                    return Err(ValidationError::UnknownHost {
                        test: t.name.clone(),
                        role,
                        node: node.clone(),
                    });
                }
            }
        }
        let args = match (&t.sonde, &t.command) {
            (Some(a), None) => a,
            (None, Some(c)) if c.first().is_some_and(|p| !p.is_empty()) => c,
            _ => {
                return Err(ValidationError::TestKind {
                    test: t.name.clone(),
                })
            }
        };
        for name in args.iter().flat_map(|a| placeholders(a)) {
            if !PLACEHOLDERS.contains(&name) {
                return Err(ValidationError::UnknownPlaceholder {
                    test: t.name.clone(),
                    name: name.to_owned(),
                });
            }
        }
        if t.timeout.is_some_and(|d| d.0.is_zero()) {
            return Err(ValidationError::Zero {
                at: format!("test {:?}", t.name),
                field: "timeout",
            });
        }
        Ok(())
    }

    fn validate_matrix(&self) -> Result<(), ValidationError> {
        let m = &self.matrix;
        if m.repetitions == 0 {
            return Err(ValidationError::NoRepetitions);
        }
        for (kind, names) in [("settings", &m.settings), ("test", &m.tests)] {
            for name in names.iter().flatten() {
                let known = match kind {
                    "settings" => self.setting(name).is_some(),
                    _ => self.test(name).is_some(),
                };
                if !known {
                    return Err(ValidationError::MatrixUnknown {
                        kind,
                        name: name.clone(),
                    });
                }
            }
            if let Some(names) = names {
                if names.is_empty() {
                    return Err(ValidationError::Empty { what: kind });
                }
                unique(kind, names.iter().map(String::as_str))?;
            }
        }
        Ok(())
    }
}

fn direction_label(dirs: &[Direction]) -> &'static str {
    match dirs {
        [d] => d.as_str(),
        _ => "both directions",
    }
}

fn percent(at: &str, field: &'static str, v: Option<Percent>) -> Result<(), ValidationError> {
    match v {
        Some(p) if p.0 > 1.0 => Err(ValidationError::OverHundred {
            at: at.to_owned(),
            field,
            value: p,
        }),
        _ => Ok(()),
    }
}

/// Checks one direction's impairments.
///
/// # Errors
/// The first [`ValidationError`] found; `at` says where in the file.
pub fn validate_impairments(at: &str, imp: &Impairments) -> Result<(), ValidationError> {
    if imp.rate.is_some_and(|r| r.0 == 0) {
        return Err(zero(at, "rate"));
    }
    for (field, set) in [
        ("overhead", imp.overhead.is_some()),
        ("burst", imp.burst.is_some()),
        ("queue_limit", imp.queue_limit.is_some()),
    ] {
        if set && imp.rate.is_none() {
            return Err(needs(at, field, "rate"));
        }
    }
    if imp.burst.is_some_and(|b| b.0 == 0) {
        return Err(zero(at, "burst"));
    }
    if imp.queue_limit.is_some_and(|l| match l {
        crate::QueueLimit::Packets(n) | crate::QueueLimit::Bytes(n) => n == 0,
        crate::QueueLimit::Time(t) => t.is_zero(),
    }) {
        return Err(zero(at, "queue_limit"));
    }
    if imp.jitter.is_some() && imp.delay.is_none() {
        return Err(needs(at, "jitter", "delay"));
    }
    if (imp.distribution.is_some() || imp.jitter_reorders) && imp.jitter.is_none() {
        let field = if imp.jitter_reorders {
            "jitter_reorders"
        } else {
            "distribution"
        };
        return Err(needs(at, field, "jitter"));
    }
    if imp.loss.is_some() && imp.gemodel.is_some() {
        return Err(ValidationError::Conflict {
            at: at.to_owned(),
            a: "loss",
            b: "gemodel",
        });
    }
    percent(at, "loss", imp.loss)?;
    percent(at, "duplicate", imp.duplicate)?;
    percent(at, "corrupt", imp.corrupt)?;
    if let Some(ge) = imp.gemodel {
        percent(at, "gemodel p", Some(ge.p))?;
        percent(at, "gemodel r", ge.r)?;
        percent(at, "gemodel 1-h", ge.one_minus_h)?;
        percent(at, "gemodel 1-k", ge.one_minus_k)?;
    }
    if let Some(r) = imp.reorder {
        percent(at, "reorder probability", Some(r.probability))?;
        if r.gap == 0 {
            return Err(zero(at, "reorder gap"));
        }
    }
    crate::aqm::check_aqm(at, imp)?;
    if let Some(d) = imp.device {
        crate::shared::check_device(at, &d)?;
    }
    if imp.duplex == Some(crate::Duplex::Half) && imp.rate.is_none() {
        return Err(needs(at, "duplex = \"half\"", "rate"));
    }
    crate::family::check_families(at, imp)
}
