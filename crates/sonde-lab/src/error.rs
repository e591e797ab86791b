//! The lab's errors: what failed, on which namespace or interface, and the tool's own words.

use std::io;

/// Why a lab could not be built, queried or torn down.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The caller lacks the privileges namespaces and qdiscs need.
    #[error(
        "the lab needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create network namespaces, \
         veth links and qdiscs; missing: {missing}. Run as root, e.g. `sudo sonde lab ...`"
    )]
    NotPrivileged {
        /// The capabilities missing from the effective set.
        missing: String,
    },
    /// A helper program could not be started (not installed, not executable).
    #[error("cannot run `{command}`: {source} (is {package} installed?)")]
    Spawn {
        /// The command line.
        command: String,
        /// The Debian package that provides the program.
        package: &'static str,
        /// The OS error.
        source: io::Error,
    },
    /// A helper program ran and failed.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// What it wrote to stderr, trimmed.
        stderr: String,
    },
    /// A helper program's output was not what the lab expected.
    #[error("`{command}` gave unexpected output: {reason}")]
    Output {
        /// The command line.
        command: String,
        /// What was wrong.
        reason: String,
    },
    /// The scenario cannot be laid out (unknown settings, too many links, ...).
    #[error("scenario {scenario:?}: {reason}")]
    Scenario {
        /// The scenario's name.
        scenario: String,
        /// What is wrong.
        reason: String,
    },
    /// A node name that the lab does not have.
    #[error("no node {0:?} in this lab")]
    UnknownNode(String),
    /// A prefix that could match namespaces the lab does not own.
    #[error("prefix {0:?} refused: a lab prefix starts with \"sonde-\" and uses a-z, 0-9, '-'")]
    BadPrefix(String),
    /// A namespace of that name exists already (another lab, or a leftover: `sonde lab clean`).
    #[error("network namespace {0:?} exists already; run `sonde lab clean` if it is a leftover")]
    NamespaceExists(String),
    /// A system call of the forwarder failed.
    #[error("{what} in namespace {netns:?}: {source}")]
    Os {
        /// What was being done.
        what: String,
        /// The namespace.
        netns: String,
        /// The OS error.
        source: io::Error,
    },
    /// A forwarder thread died (panicked) before it could report.
    #[error("forwarder of link {link:?} {direction} stopped abnormally")]
    ForwarderDied {
        /// The link.
        link: String,
        /// The direction.
        direction: sonde_emu::Direction,
    },
    /// A thread running inside a namespace panicked.
    #[error("a thread inside namespace {0:?} panicked")]
    ThreadPanicked(String),
    /// An offload could not be switched off.
    #[error(transparent)]
    Offload(#[from] crate::ethtool::OffloadError),
    /// An impairment chain could not be built.
    #[error(transparent)]
    Build(#[from] sonde_emu::build::BuildError),
}

impl LabError {
    pub(crate) fn os(what: impl Into<String>, netns: &str, source: io::Error) -> Self {
        LabError::Os {
            what: what.into(),
            netns: netns.to_owned(),
            source,
        }
    }
}
