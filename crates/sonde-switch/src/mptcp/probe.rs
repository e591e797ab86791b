//! Whether this host can run the MPTCP backend, and if not, why - said plainly instead of
//! quietly using plain TCP.

use std::fmt;

/// Why MPTCP cannot be used here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No `/proc/sys/net/mptcp`: the kernel was built without MPTCP (before Linux 5.6, or
    /// `CONFIG_MPTCP` off).
    NotInKernel,
    /// `net.mptcp.enabled` is 0 in this network namespace.
    Disabled,
    /// Creating an MPTCP socket failed.
    Socket(String),
}

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotInKernel => write!(
                f,
                "this kernel has no MPTCP (no /proc/sys/net/mptcp; it needs Linux 5.6 or later \
                 built with CONFIG_MPTCP)"
            ),
            Self::Disabled => write!(
                f,
                "MPTCP is disabled in this network namespace (sysctl net.mptcp.enabled=1 turns \
                 it on)"
            ),
            Self::Socket(e) => write!(f, "cannot create an MPTCP socket: {e}"),
        }
    }
}

/// Reads the sysctl and creates (and drops) one dual-stack MPTCP socket.
///
/// # Errors
/// What stands in the way.
pub fn check() -> Result<(), Unavailable> {
    socket().map(drop)
}

/// Reads the sysctl and creates an MPTCP socket (AF_INET6, not yet dual-stack).
///
/// # Errors
/// What stands in the way.
pub(crate) fn socket() -> Result<socket2::Socket, Unavailable> {
    match std::fs::read_to_string("/proc/sys/net/mptcp/enabled") {
        Err(_) => return Err(Unavailable::NotInKernel),
        Ok(v) if v.trim() == "0" => return Err(Unavailable::Disabled),
        Ok(_) => {}
    }
    socket2::Socket::new(
        socket2::Domain::IPV6,
        socket2::Type::STREAM,
        Some(socket2::Protocol::MPTCP),
    )
    .map_err(|e| Unavailable::Socket(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_say_what_to_do() {
        assert!(Unavailable::Disabled
            .to_string()
            .contains("net.mptcp.enabled=1"));
        assert!(Unavailable::NotInKernel
            .to_string()
            .contains("CONFIG_MPTCP"));
    }
}
