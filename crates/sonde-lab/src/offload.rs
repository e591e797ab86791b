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
//! off` does. The ioctl acts on the namespace of the socket it is issued on, so the socket is
//! made on a thread that has entered the namespace ([`crate::netns::run_in`]).

use std::io;
use std::mem::zeroed;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::LabError;
pub use crate::ethtool::{Offload, OffloadError};
use crate::netns;

const SIOCETHTOOL: libc::c_ulong = 0x8946;

/// `struct ethtool_value`.
#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

/// `struct ifreq` with `ifr_data`, padded to the kernel's size.
#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// Issues one ethtool command carrying a `struct ethtool_value`; returns its `data`.
fn ethtool_value(sock: &OwnedFd, ifname: &str, cmd: u32, data: u32) -> io::Result<u32> {
    let bytes = ifname.as_bytes();
    if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an interface name",
        ));
    }
    let mut value = EthtoolValue { cmd, data };
    // SAFETY: IfreqData is plain data; all-zero is a valid value.
    let mut req: IfreqData = unsafe { zeroed() };
    for (d, s) in req.name.iter_mut().zip(bytes) {
        *d = *s as libc::c_char;
    }
    req.data = (&mut value as *mut EthtoolValue).cast();
    // SAFETY: a valid socket, an ifreq whose name is NUL-terminated and whose data points at
    // a live ethtool_value, which is what the kernel reads (and, for a get, writes) for these
    // commands.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(value.data)
}

/// Turns `offload` off on `ifname`. A feature the device cannot change counts as done when it
/// reads as off.
fn turn_off(sock: &OwnedFd, ifname: &str, offload: Offload) -> io::Result<()> {
    let (get, set) = offload.commands();
    match ethtool_value(sock, ifname, set, 0) {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => {
            match ethtool_value(sock, ifname, get, 0) {
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
        let sock = socket(netns)?;
        ethtool_value(&sock, ifname, offload.commands().0, 0)
            .map(|v| v != 0)
            .map_err(|source| OffloadError::new(netns, ifname, offload, source).into())
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
        let sock = socket(netns)?;
        for ifname in ifnames {
            for &o in offloads {
                turn_off(&sock, ifname, o)
                    .map_err(|source| OffloadError::new(netns, ifname, o, source))?;
            }
        }
        Ok(())
    })?
}

/// A socket to issue ioctls on, in the calling thread's namespace (`netns`, for messages).
fn socket(netns: &str) -> Result<OwnedFd, LabError> {
    // SAFETY: plain socket(2).
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        let e = io::Error::last_os_error();
        return Err(LabError::os("a socket for the ethtool ioctl", netns, e));
    }
    // SAFETY: `raw` is a fresh fd nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
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
        assert!(std::mem::size_of::<IfreqData>() >= std::mem::size_of::<libc::ifreq>());
    }

    #[test]
    fn bad_names_are_refused_before_the_kernel() {
        let Ok(sock) = socket("the test's") else {
            return;
        };
        for name in ["", "a-name-far-too-long", "nul\0"] {
            let e = ethtool_value(&sock, name, Offload::Gro.commands().0, 0);
            assert!(e.is_err_and(|e| e.kind() == io::ErrorKind::InvalidInput));
        }
    }
}
