//! What a connection is given, by either backend: sizes and time limits ([`Options`]) and the
//! peer's address in each family ([`Targets`]).
//!
//! Below the path threads ([`crate::paths`]), which read both, and the backends that build
//! them.

use crate::error::Error;
use crate::session::Config;
use crate::stats::Family;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Sizes and time limits.
#[derive(Debug, Clone)]
pub struct Options {
    pub session: Config,
    /// Dial plus handshake of one path.
    pub connect_timeout: Duration,
    /// The longest a send, receive or close waits for the peer.
    pub io_timeout: Duration,
    /// After the path carrying the stream failed: how long the client keeps dialing (and the
    /// server waits for its JOIN) before the session fails.
    pub recovery_timeout: Duration,
    /// TCP_USER_TIMEOUT of every path's socket: data unacknowledged this long fails the path
    /// in the kernel (the write or read errors), a backstop behind the heartbeat deadline
    /// ([`Config::dead_after`]). Longer than that deadline, because on a healthy but lossy path
    /// one lost retransmission already holds data unacknowledged for 600 ms (Linux's minimum
    /// retransmission timeout is 200 ms, doubled at each try). `None` keeps the system default.
    pub user_timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            session: Config::default(),
            connect_timeout: Duration::from_secs(3),
            io_timeout: Duration::from_secs(30),
            recovery_timeout: Duration::from_secs(10),
            user_timeout: Some(Duration::from_secs(1)),
        }
    }
}

/// The peer's address in each family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    pub v4: Option<SocketAddr>,
    pub v6: Option<SocketAddr>,
}

impl Targets {
    /// The first address of each family among `addrs`.
    pub fn from_addrs(addrs: &[SocketAddr]) -> Self {
        Self {
            v4: addrs.iter().copied().find(SocketAddr::is_ipv4),
            v6: addrs.iter().copied().find(SocketAddr::is_ipv6),
        }
    }

    /// Resolves `host` (a name or an address) and keeps one address per family.
    ///
    /// This asks the system resolver and waits as long as it does (with a name server that
    /// does not answer, its own time-outs: 10 s and more). An application that must stay
    /// responsive looks the name up its own way and passes the addresses to [`Self::from_addrs`].
    ///
    /// # Errors
    /// The name does not resolve.
    pub fn resolve(host: &str, port: u16) -> Result<Self, Error> {
        let addrs: Vec<SocketAddr> = (host, port)
            .to_socket_addrs()
            .map_err(|source| Error::Resolve {
                host: host.to_string(),
                source,
            })?
            .collect();
        Ok(Self::from_addrs(&addrs))
    }

    /// The address of `family`.
    ///
    /// # Errors
    /// There is none.
    pub fn get(&self, family: Family) -> Result<SocketAddr, Error> {
        match family {
            Family::V4 => self.v4.ok_or(Error::NoAddress("IPv4")),
            Family::V6 => self.v6.ok_or(Error::NoAddress("IPv6")),
        }
    }
}
