//! Cross-checks of a parsed scenario, each failure a precise [`ValidationError`].

use std::collections::{BTreeSet, HashSet};
use std::net::{Ipv4Addr, Ipv6Addr};

use super::{Impairments, Ipv4Subnet, Ipv6Subnet, Link, Percent, Scenario, Test};
use crate::Direction;

/// Longest node or link name: interface names (`IFNAMSIZ` = 16 with the NUL) are built as a
/// short prefix, the name and a suffix.
pub const MAX_NAME: usize = 10;

/// What is inconsistent in a scenario.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidationError {
    /// A required list is empty.
    #[error("no {what}: a scenario needs at least one")]
    Empty {
        /// Which list.
        what: &'static str,
    },
    /// A name is used twice.
    #[error("{kind} name {name:?} is used twice")]
    Duplicate {
        /// Node, link, settings or test.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// A node or link name that cannot become an interface or namespace name.
    #[error("{kind} name {name:?} is invalid: use 1 to {MAX_NAME} characters a-z, 0-9 or '-'")]
    BadName {
        /// Node or link.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// A link endpoint that is not a host or router.
    #[error("link {link:?}: endpoint {node:?} is not a host or router")]
    UnknownNode {
        /// The link.
        link: String,
        /// The endpoint.
        node: String,
    },
    /// A link from a node to itself.
    #[error("link {link:?} joins {node:?} to itself")]
    SelfLink {
        /// The link.
        link: String,
        /// The node.
        node: String,
    },
    /// A node no path reaches.
    #[error("node {node:?} is not connected to {first:?}")]
    Disconnected {
        /// The node.
        node: String,
        /// The first host.
        first: String,
    },
    /// An MTU out of range.
    #[error("link {link:?}: MTU {mtu} must be between 1280 (the IPv6 minimum) and 65535")]
    Mtu {
        /// The link.
        link: String,
        /// The MTU.
        mtu: u32,
    },
    /// A subnet too small for two addresses.
    #[error("link {link:?}: subnet {subnet} has room for fewer than two hosts")]
    SubnetTooSmall {
        /// The link.
        link: String,
        /// The subnet.
        subnet: String,
    },
    /// Two links whose subnets overlap.
    #[error("links {a:?} and {b:?} have overlapping subnets ({subnet})")]
    SubnetOverlap {
        /// One link.
        a: String,
        /// The other.
        b: String,
        /// The subnet of `b`.
        subnet: String,
    },
    /// A setting names a link that does not exist.
    #[error("settings {setting:?}: unknown link {link:?}")]
    UnknownLink {
        /// The settings.
        setting: String,
        /// The link name.
        link: String,
    },
    /// A link direction set twice in one setting.
    #[error("settings {setting:?}: link {link:?} {direction} is set twice")]
    SetTwice {
        /// The settings.
        setting: String,
        /// The link.
        link: String,
        /// The direction.
        direction: Direction,
    },
    /// A percentage above 100 %.
    #[error("{at}: {field} {value} is more than 100%")]
    OverHundred {
        /// Where.
        at: String,
        /// Which field.
        field: &'static str,
        /// The value.
        value: Percent,
    },
    /// A value that must be positive is zero.
    #[error("{at}: {field} must be more than zero")]
    Zero {
        /// Where.
        at: String,
        /// Which field.
        field: &'static str,
    },
    /// A field that only makes sense with another.
    #[error("{at}: {field} needs {needs}")]
    Needs {
        /// Where.
        at: String,
        /// The field set.
        field: &'static str,
        /// The field it needs.
        needs: &'static str,
    },
    /// Two fields that exclude each other.
    #[error("{at}: {a} and {b} cannot both be set")]
    Conflict {
        /// Where.
        at: String,
        /// One field.
        a: &'static str,
        /// The other.
        b: &'static str,
    },
    /// A test's client or server that is not a host.
    #[error("test {test:?}: {role} {node:?} is not a host")]
    UnknownHost {
        /// The test.
        test: String,
        /// Client or server.
        role: &'static str,
        /// The node named.
        node: String,
    },
    /// A test that sets neither or both of `sonde` and `command`, or an empty command.
    #[error("test {test:?}: set exactly one of `sonde` (arguments) or `command` (a program and its arguments, not empty)")]
    TestKind {
        /// The test.
        test: String,
    },
    /// A `{placeholder}` the lab does not fill in.
    #[error("test {test:?}: unknown placeholder {{{name}}} (known: {})", PLACEHOLDERS.join(", "))]
    UnknownPlaceholder {
        /// The test.
        test: String,
        /// The placeholder's name.
        name: String,
    },
    /// The matrix names a setting or test that does not exist.
    #[error("matrix: unknown {kind} {name:?}")]
    MatrixUnknown {
        /// Settings or test.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// Zero repetitions.
    #[error("matrix: repetitions must be at least 1")]
    NoRepetitions,
    /// A value above what the lab accepts.
    #[error("{at}: {field} {value} is more than the most allowed, {max}")]
    TooLarge {
        /// Where.
        at: String,
        /// Which field.
        field: &'static str,
        /// The value.
        value: u64,
        /// The most allowed.
        max: u64,
    },
    /// A family's MTU below what the family allows or above the link's.
    #[error("{at}: mtu {mtu} must be between {min} and the link's MTU {max}")]
    FamilyMtu {
        /// Where, the family named.
        at: String,
        /// The MTU given.
        mtu: u32,
        /// The family's minimum.
        min: u32,
        /// The link's MTU.
        max: u32,
    },
    /// A half-duplex link whose two directions do not share one rate.
    #[error("settings {setting:?}, link {link:?}: duplex = \"half\" {reason}")]
    HalfDuplex {
        /// The settings.
        setting: String,
        /// The link.
        link: String,
        /// What is missing.
        reason: &'static str,
    },
}

/// The placeholders a test's arguments may use.
pub const PLACEHOLDERS: [&str; 6] = [
    "server", "server4", "server6", "client", "client4", "client6",
];

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

/// [`ValidationError::Needs`] at `at`: `field` is set without `needs`.
pub(crate) fn needs(at: &str, field: &'static str, needs: &'static str) -> ValidationError {
    ValidationError::Needs {
        at: at.to_owned(),
        field,
        needs,
    }
}

/// [`ValidationError::Zero`] at `at`: `field` is zero where it must be more.
pub(crate) fn zero(at: &str, field: &'static str) -> ValidationError {
    ValidationError::Zero {
        at: at.to_owned(),
        field,
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
