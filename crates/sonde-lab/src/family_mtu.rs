//! A family's MTU on a link direction (`ipv6 = { mtu = 1480 }`): the route MTU of that family
//! on the sending end, on every route over the link's interface.
//!
//! An impairment box sits on the wire and cannot shrink a frame; a real tunnel's smaller MTU
//! shows to the hosts as a path MTU they know. So the lab sets it where a host would learn
//! it: `ip -6 route change ... mtu 1480` on each IPv6 route through the interface (the
//! link's subnet, link-local, routes via the peer), in the namespace of the direction's
//! sending end. That end then sends no larger packet of that family over the link (larger
//! UDP is fragmented by the sender, TCP's MSS follows), and a router there answers a larger
//! forwarded packet with Packet Too Big / Fragmentation Needed, as in front of a tunnel. The
//! other family keeps the link's MTU.

use sonde_scenario::{Direction, Family, Settings};

use crate::cmd;
use crate::error::LabError;
use crate::topology::Layout;

/// Sets each family MTU of `settings` on the routes of the sending end.
///
/// # Errors
/// [`LabError::Command`] when `ip route show` or `ip route change` fails.
pub(crate) fn apply(layout: &Layout, settings: &Settings) -> Result<(), LabError> {
    for (link, direction, imp) in settings.directions() {
        let Some(l) = layout.links.iter().find(|l| l.name == link) else {
            continue;
        };
        let sender = match direction {
            Direction::AToB => &l.a,
            Direction::BToA => &l.b,
        };
        let Some(node) = layout.nodes.iter().find(|n| &n.name == sender) else {
            continue;
        };
        for family in Family::BOTH {
            let Some(mtu) = imp.family(family).and_then(|o| o.mtu) else {
                continue;
            };
            set_route_mtu(&node.netns, family, &l.iface, mtu)?;
        }
    }
    Ok(())
}

/// `ip -n NETNS -4|-6 route change ROUTE dev IFACE mtu MTU` for each route `ip route show dev
/// IFACE` lists in the main table.
fn set_route_mtu(netns: &str, family: Family, iface: &str, mtu: u32) -> Result<(), LabError> {
    let flag = match family {
        Family::Ipv4 => "-4",
        Family::Ipv6 => "-6",
    };
    let routes = cmd::ip_in(netns, &[flag, "route", "show", "dev", iface])?;
    let mtu = mtu.to_string();
    for line in routes.lines().filter(|l| !l.trim().is_empty()) {
        let mut args = vec![flag, "route", "change"];
        args.extend(route_keys(line));
        args.extend(["dev", iface, "mtu", &mtu]);
        cmd::ip_in(netns, &args)?;
    }
    Ok(())
}

/// The words of a route as `ip route show` prints it that `ip route change` takes back: all
/// but the state flags it only reports.
fn route_keys(line: &str) -> impl Iterator<Item = &str> {
    line.split_whitespace()
        .filter(|w| !matches!(*w, "linkdown" | "dead" | "offload" | "trap" | "rt_offload"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_route_becomes_the_words_of_its_change() {
        let keys: Vec<&str> =
            route_keys("fd00:77:0:1::/64 proto kernel metric 256 linkdown pref medium").collect();
        assert_eq!(
            keys,
            [
                "fd00:77:0:1::/64",
                "proto",
                "kernel",
                "metric",
                "256",
                "pref",
                "medium"
            ]
        );
    }
}
