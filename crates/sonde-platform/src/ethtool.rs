//! Asking an interface's driver through the kernel's ethtool ioctl (`SIOCETHTOOL`): whether
//! auto-negotiation is on, and whether GSO, GRO and TSO are; and [`value_command`], the one
//! call of the single-value commands (gets and sets), which the lab switches offloads with.
//!
//! The legacy single-value commands (`ETHTOOL_GGSO`, `ETHTOOL_GGRO`, `ETHTOOL_GTSO`) and
//! `ETHTOOL_GSET` (of `include/uapi/linux/ethtool.h`) are what every kernel since 2.6
//! answers, mapping them onto the newer feature and link-settings calls, so no netlink
//! family is needed. A driver that does not implement one (loopback has no link settings)
//! answers `EOPNOTSUPP`; each reader turns any error into `None`, never a guess.

use std::io;

/// The three offloads read, as (GSO, GRO, TSO); each `None` when the driver would not say.
pub type Offloads = (Option<bool>, Option<bool>, Option<bool>);

#[cfg(target_os = "linux")]
mod linux {
    use super::{io, Offloads};
    use std::os::fd::AsRawFd;

    const SIOCETHTOOL: libc::c_ulong = 0x8946;
    const ETHTOOL_GSET: u32 = 0x01;
    const ETHTOOL_GTSO: u32 = 0x1e;
    const ETHTOOL_GGSO: u32 = 0x23;
    const ETHTOOL_GGRO: u32 = 0x2b;

    /// `struct ethtool_value`.
    #[repr(C)]
    struct Value {
        cmd: u32,
        data: u32,
    }

    /// `struct ethtool_cmd` (what `ETHTOOL_GSET` fills), 44 bytes.
    #[repr(C)]
    #[derive(Default)]
    struct LinkCmd {
        cmd: u32,
        supported: u32,
        advertising: u32,
        speed: u16,
        duplex: u8,
        port: u8,
        phy_address: u8,
        transceiver: u8,
        autoneg: u8,
        mdio_support: u8,
        maxtxpkt: u32,
        maxrxpkt: u32,
        speed_hi: u16,
        eth_tp_mdix: u8,
        eth_tp_mdix_ctrl: u8,
        lp_advertising: u32,
        reserved: [u32; 2],
    }

    /// `struct ifreq` with its `ifr_data` member, padded to the kernel's 40 bytes.
    #[repr(C)]
    struct Request {
        name: [libc::c_char; libc::IFNAMSIZ],
        data: *mut libc::c_void,
        _pad: [u8; 16],
    }

    /// Issues `SIOCETHTOOL` for `ifname` with `data`, the command's own structure.
    fn ioctl(ifname: &str, data: *mut libc::c_void) -> io::Result<()> {
        let bytes = ifname.as_bytes();
        if bytes.is_empty() || bytes.len() >= libc::IFNAMSIZ || bytes.contains(&0) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not an interface name",
            ));
        }
        let sock = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None)?;
        let mut name = [0 as libc::c_char; libc::IFNAMSIZ];
        for (d, s) in name.iter_mut().zip(bytes) {
            *d = *s as libc::c_char;
        }
        let mut req = Request {
            name,
            data,
            _pad: [0; 16],
        };
        // SAFETY: a live socket, a NUL-terminated name and `data` pointing at the structure
        // the command reads and fills, owned by the caller for the call's duration.
        let rc = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCETHTOOL as _, &mut req) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    pub fn value_command(ifname: &str, cmd: u32, data: u32) -> io::Result<u32> {
        let mut v = Value { cmd, data };
        ioctl(ifname, (&mut v as *mut Value).cast())?;
        Ok(v.data)
    }

    fn flag(ifname: &str, cmd: u32) -> Option<bool> {
        value_command(ifname, cmd, 0).ok().map(|d| d != 0)
    }

    pub fn autoneg(ifname: &str) -> Option<bool> {
        let mut c = LinkCmd {
            cmd: ETHTOOL_GSET,
            ..LinkCmd::default()
        };
        ioctl(ifname, (&mut c as *mut LinkCmd).cast()).ok()?;
        // AUTONEG_DISABLE 0, AUTONEG_ENABLE 1; anything else is not a known answer.
        match c.autoneg {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    pub fn offloads(ifname: &str) -> Offloads {
        (
            flag(ifname, ETHTOOL_GGSO),
            flag(ifname, ETHTOOL_GGRO),
            flag(ifname, ETHTOOL_GTSO),
        )
    }

    #[cfg(test)]
    pub fn checked_name(ifname: &str) -> io::Result<()> {
        value_command(ifname, ETHTOOL_GGSO, 0).map(drop)
    }

    #[cfg(test)]
    pub const SIZES: (usize, usize) = (
        std::mem::size_of::<LinkCmd>(),
        std::mem::size_of::<Request>(),
    );
}

/// Issues one single-value ethtool command (`struct ethtool_value`: a legacy get such as
/// `ETHTOOL_GGRO` or set such as `ETHTOOL_SGRO`, of `include/uapi/linux/ethtool.h`) for
/// `ifname` in the calling thread's network namespace; returns the value the kernel left.
///
/// # Errors
/// `InvalidInput` for a name that is not an interface name (refused before the kernel), the
/// kernel's error otherwise (`EOPNOTSUPP` from a driver without the feature, `ENODEV`).
pub fn value_command(ifname: &str, cmd: u32, data: u32) -> io::Result<u32> {
    #[cfg(target_os = "linux")]
    return linux::value_command(ifname, cmd, data);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (ifname, cmd, data);
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// Whether auto-negotiation is on for `ifname`; `None` when the driver would not say.
pub fn autoneg(ifname: &str) -> Option<bool> {
    #[cfg(target_os = "linux")]
    return linux::autoneg(ifname);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = ifname;
        None
    }
}

/// GSO, GRO and TSO of `ifname`.
pub fn offloads(ifname: &str) -> Offloads {
    #[cfg(target_os = "linux")]
    return linux::offloads(ifname);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = ifname;
        (None, None, None)
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn structures_have_the_kernels_sizes() {
        assert_eq!(linux::SIZES.0, 44);
        assert!(linux::SIZES.1 >= std::mem::size_of::<libc::ifreq>());
    }

    #[test]
    fn bad_names_are_refused_before_the_kernel() {
        for name in ["", "a-name-far-too-long", "nul\0"] {
            let e = linux::checked_name(name);
            assert!(e.is_err_and(|e| e.kind() == io::ErrorKind::InvalidInput));
        }
    }

    #[test]
    fn an_absent_interface_is_unknown() {
        assert_eq!(autoneg("sonde-none0"), None);
        assert_eq!(offloads("sonde-none0"), (None, None, None));
    }
}
