//! The offloads the lab switches off, their ethtool command numbers
//! (`include/uapi/linux/ethtool.h`), and [`OffloadError`], the error of switching one.
//!
//! Why apart from [`crate::offload`], which issues the ioctl: [`LabError`](crate::LabError)
//! carries an `OffloadError`, and the ioctl code fails with `LabError` (it runs on a thread
//! inside the namespace, [`crate::netns::run_in`]). With the vocabulary in this leaf, the
//! error type does not import the code that fails with it.

use std::io;

/// One offload the lab can switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offload {
    /// Transmit checksumming (`tx`); TSO depends on it.
    TxChecksum,
    /// TCP segmentation offload (`tso`).
    Tso,
    /// Generic segmentation offload (`gso`).
    Gso,
    /// Generic receive offload (`gro`).
    Gro,
}

impl Offload {
    /// Segmentation on send and aggregation on receive: what lets super-packets through.
    pub const SEGMENTATION: [Offload; 3] = [Offload::Tso, Offload::Gso, Offload::Gro];

    /// The name `ethtool -K` uses.
    pub fn name(self) -> &'static str {
        match self {
            Offload::TxChecksum => "tx",
            Offload::Tso => "tso",
            Offload::Gso => "gso",
            Offload::Gro => "gro",
        }
    }

    /// The (get, set) ethtool commands.
    pub(crate) fn commands(self) -> (u32, u32) {
        match self {
            Offload::TxChecksum => (0x16, 0x17),
            Offload::Tso => (0x1e, 0x1f),
            Offload::Gso => (0x23, 0x24),
            Offload::Gro => (0x2b, 0x2c),
        }
    }
}

/// Why an offload could not be switched off.
#[derive(Debug, thiserror::Error)]
#[error("turning {} off on {ifname} in namespace {netns:?} (ethtool ioctl): {source}", .offload.name())]
pub struct OffloadError {
    /// The namespace.
    pub netns: String,
    /// The interface.
    pub ifname: String,
    /// The offload.
    pub offload: Offload,
    /// The OS error.
    pub source: io::Error,
}

impl OffloadError {
    pub(crate) fn new(netns: &str, ifname: &str, offload: Offload, source: io::Error) -> Self {
        OffloadError {
            netns: netns.to_owned(),
            ifname: ifname.to_owned(),
            offload,
            source,
        }
    }
}
