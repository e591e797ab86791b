//! Recognises the peer entry that is this agent itself.
//!
//! A fleet often gives every agent the same peer list (a DaemonSet's ConfigMap, one template
//! for every host), which then names each agent among its own peers. Measuring itself would
//! spend its schedule on a path that is not one and put it in the metrics beside the real
//! ones. A peer is this agent when its address is one of this host's and its port is the
//! one this agent serves on: two agents on one host, on two ports, still measure each other,
//! and a peer written as a loopback address or `localhost` is measured as asked (a baseline
//! of the host's own stack, or a test of the agent).

use std::net::{IpAddr, SocketAddr, UdpSocket};

/// What a peer entry turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// This agent, at this address.
    Own(SocketAddr),
    /// Another agent.
    Other,
    /// Not known yet: the name did not resolve (it is tried again at the peer's next run).
    Unknown,
}

/// Whether the peer that `host` names, resolved to `addr`, is the agent serving on
/// `own_port` here, where `is_local` says whether an address is this host's.
pub fn identify(
    host: &str,
    addr: SocketAddr,
    own_port: u16,
    is_local: impl Fn(IpAddr) -> bool,
) -> Identity {
    let loopback_asked = host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if addr.port() == own_port && !loopback_asked && is_local(addr.ip()) {
        Identity::Own(addr)
    } else {
        Identity::Other
    }
}

/// Whether `ip` is an address of this host: one a socket can be bound to.
pub fn is_local_address(ip: IpAddr) -> bool {
    UdpSocket::bind(SocketAddr::new(ip, 0)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_address_and_port_only_unless_loopback_was_asked_for() {
        let local = |ip: IpAddr| ip.is_loopback() || ip == "10.0.0.7".parse::<IpAddr>().unwrap();
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(
            identify("node-a", at("10.0.0.7:5201"), 5201, local),
            Identity::Own(at("10.0.0.7:5201"))
        );
        // Another port of this host: another agent.
        assert_eq!(
            identify("node-a", at("10.0.0.7:5202"), 5201, local),
            Identity::Other
        );
        // Another host.
        assert_eq!(
            identify("node-b", at("10.0.0.8:5201"), 5201, local),
            Identity::Other
        );
        // Loopback written out: measured as asked.
        for host in ["127.0.0.1", "::1", "localhost", "LOCALHOST"] {
            let addr = if host == "::1" {
                at("[::1]:5201")
            } else {
                at("127.0.0.1:5201")
            };
            assert_eq!(identify(host, addr, 5201, local), Identity::Other, "{host}");
        }
        // A host name that resolves to loopback (Debian maps its own name to 127.0.1.1).
        assert_eq!(
            identify("this-host", at("127.0.1.1:5201"), 5201, local),
            Identity::Own(at("127.0.1.1:5201"))
        );
    }

    #[test]
    fn loopback_is_local_and_a_documentation_address_is_not() {
        assert!(is_local_address("127.0.0.1".parse().unwrap()));
        assert!(!is_local_address("192.0.2.1".parse().unwrap()));
    }
}
