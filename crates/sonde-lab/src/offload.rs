//! Checksum and segmentation offloads of lab interfaces, switched with the kernel's ethtool
//! ioctl (`SIOCETHTOOL`), so the lab needs no `ethtool` program.
//!
//! The lab turns offloads off, as test beds usually do, for two reasons:
//!
//! - **Counters count wire packets.** With TSO/GSO on, a veth sender's `tx_packets` counts
//!   each super-packet (up to 64 KiB) once, while the far side of a shaped link counts the
//!   MTU-sized frames it was cut into (1.16 k against 7.99 k packets/s for one TCP test). With
//!   segmentation off on every lab interface each end counts the frames that crossed the
//!   link. GRO is off too, so no interface hands aggregated frames up (to the stack, or to a
//!   box's AF_PACKET socket); a veth counts what it receives before GRO anyway (one end's
//!   `rx` is the other end's `tx`).
//! - **The userspace engine sees real frames.** Frames towards an impairment box must be
//!   checksummed and no larger than the MTU, since the box forwards them as raw bytes: those
//!   interfaces also get transmit checksumming off.
//!
//! Each switch is a legacy single-feature command (`ETHTOOL_STXCSUM`, `ETHTOOL_STSO`,
//! `ETHTOOL_SGSO`, `ETHTOOL_SGRO`, all of `include/uapi/linux/ethtool.h`), which every kernel
//! since 2.6 maps onto its feature flags the way `ethtool -K DEV tx off tso off gso off gro
//! off` does, through the platform crate's one call of them
//! ([`sonde_platform::ethtool::value_command`]). The ioctl acts on the namespace of the
//! socket it is issued on, and that call makes its socket on the calling thread, so it is
//! called on a thread that has entered the namespace ([`crate::netns::run_in`]).

use std::io;

use sonde_platform::ethtool::value_command;

use crate::error::LabError;
pub use crate::ethtool::{Offload, OffloadError};
use crate::netns;

/// Turns `offload` off on `ifname`. A feature the device cannot change counts as done when it
/// reads as off.
fn turn_off(ifname: &str, offload: Offload) -> io::Result<()> {
    let (get, set) = offload.commands();
    match value_command(ifname, set, 0) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            match value_command(ifname, get, 0) {
                Ok(0) => Ok(()),
                _ => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// Whether `offload` is on for `ifname` in `netns` (for tests and diagnostics).
///
/// # Errors
/// [`LabError::Os`] when the namespace cannot be entered, [`LabError::Offload`] when the
/// device cannot be asked.
pub fn is_on(netns: &str, ifname: &str, offload: Offload) -> Result<bool, LabError> {
    netns::run_in(netns, || {
        value_command(ifname, offload.commands().0, 0)
            .map(|v| v != 0)
            .map_err(|source| LabError::from(OffloadError::new(netns, ifname, offload, source)))
    })?
}

/// Turns every offload of `offloads` off on each interface of `ifnames` in `netns`.
///
/// # Errors
/// [`LabError::Os`] when the namespace cannot be entered or the socket made,
/// [`LabError::Offload`] for the first interface and offload that could not be switched.
pub fn disable(netns: &str, ifnames: &[&str], offloads: &[Offload]) -> Result<(), LabError> {
    if ifnames.is_empty() || offloads.is_empty() {
        return Ok(());
    }
    netns::run_in(netns, || {
        for ifname in ifnames {
            for &o in offloads {
                turn_off(ifname, o)
                    .map_err(|source| OffloadError::new(netns, ifname, o, source))?;
            }
        }
        Ok::<(), LabError>(())
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_the_kernels() {
        // include/uapi/linux/ethtool.h
        assert_eq!(Offload::TxChecksum.commands(), (0x16, 0x17));
        assert_eq!(Offload::Tso.commands(), (0x1e, 0x1f));
        assert_eq!(Offload::Gso.commands(), (0x23, 0x24));
        assert_eq!(Offload::Gro.commands(), (0x2b, 0x2c));
    }
}
