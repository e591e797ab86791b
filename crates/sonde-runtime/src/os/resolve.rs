//! Name resolution: the one place sonde asks the system resolver (`getaddrinfo`, through
//! [`ToSocketAddrs`]) for a host's addresses, restricted to the family `-4` / `-6` asked for.
//!
//! The sonde and iperf3 clients, `sonde latency`, `sonde rrul` and `sonde compare-ip` all
//! resolve here, after their flags are parsed, so every tool filters families and reports a
//! failed lookup the same way.

use crate::error::RunError;
use std::net::{SocketAddr, ToSocketAddrs};

/// Address family restriction (`-4` / `-6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    #[default]
    Any,
    V4,
    V6,
}

/// Resolves `host` to addresses of the wanted family.
///
/// # Errors
/// [`RunError::Resolve`] when nothing matches.
pub fn resolve(host: &str, port: u16, family: Family) -> Result<Vec<SocketAddr>, RunError> {
    let addrs = (host, port)
        .to_socket_addrs()
        .map_err(|e| RunError::Resolve {
            host: host.to_string(),
            source: e,
        })?;
    let v: Vec<SocketAddr> = addrs
        .filter(|a| match family {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .collect();
    if v.is_empty() {
        let fam = match family {
            Family::V4 => " IPv4",
            Family::V6 => " IPv6",
            Family::Any => "",
        };
        return Err(RunError::Resolve {
            host: host.to_string(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, format!("no{fam} address")),
        });
    }
    Ok(v)
}
