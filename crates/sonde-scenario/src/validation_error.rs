//! What can be wrong with a scenario, one variant per inconsistency with what it names, and the
//! two errors every check of a setting's fields raises (`needs`, `zero`).

use crate::Direction;
use crate::Percent;

/// Longest node or link name: interface names (`IFNAMSIZ` = 16 with the NUL) are built as a
/// short prefix, the name and a suffix.
pub const MAX_NAME: usize = 10;

/// The placeholders a test's arguments may use.
pub const PLACEHOLDERS: [&str; 6] = [
    "server", "server4", "server6", "client", "client4", "client6",
];

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
