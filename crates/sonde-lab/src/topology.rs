//! The lab's layout, computed before anything is created: namespace and interface names,
//! addresses and routes.
//!
//! Keeping this pure (no commands run) means the naming rules, the address plan and the route
//! computation are unit-tested without root, and [`crate::Lab::build`] is a straight list of
//! steps that apply a finished plan.
//!
//! - A node `N` is namespace `PREFIX-N`. A link `L` between `a` and `b` is interface `s-L` in
//!   both (names only need to be unique within a namespace, and `s-` plus at most 10
//!   characters fits the kernel's 15-character `IFNAMSIZ` limit).
//! - A link whose impairments need the userspace engine gets an impairment box: namespace
//!   `PREFIX-L.imp` (a `.` never appears in node names, so the two cannot collide) holding
//!   `s-L-a` (cabled to `a`) and `s-L-b` (cabled to `b`). The box is a transparent L2 bump in
//!   the wire: `a` and `b` still share one subnet and see each other's MAC addresses, so no
//!   address or route changes when a link is boxed.
//! - `a` gets the first address of the link's subnets, `b` the second (the scenario's subnets
//!   or its defaults, `10.77.<n>.0/24` and `fd00:77:0:<n>::/64`).
//! - Routes: each node reaches every subnet it is not on through the first hop of a shortest
//!   path, where only routers forward (a host is never a transit node).

use std::collections::{BTreeSet, VecDeque};
use std::net::{Ipv4Addr, Ipv6Addr};

use sonde_scenario::{Ipv4Subnet, Ipv6Subnet, Scenario};

use crate::error::LabError;

/// The prefix every lab namespace starts with; `clean_leftovers` refuses anything else.
pub const PREFIX_ROOT: &str = "sonde-";

/// Checks a lab prefix: `sonde-` then a-z, 0-9 or '-'.
///
/// # Errors
/// [`LabError::BadPrefix`] otherwise.
pub fn check_prefix(prefix: &str) -> Result<(), LabError> {
    let ok = prefix.len() > PREFIX_ROOT.len()
        && prefix.len() <= 40
        && prefix.starts_with(PREFIX_ROOT)
        && prefix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(LabError::BadPrefix(prefix.to_owned()))
    }
}

/// A fresh prefix, `sonde-<6 hex digits>` from the process id and the clock.
pub fn fresh_prefix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32))
        .unwrap_or_default();
    let mixed = sonde_emu::seed::splitmix64(u64::from(std::process::id()) << 32 | u64::from(nanos));
    format!("{PREFIX_ROOT}{:06x}", mixed & 0xff_ffff)
}

/// One address of a node on a link, with the peer's.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Iface {
    /// The link.
    pub link: String,
    /// The interface name inside the node's namespace.
    pub name: String,
    /// The node's IPv4 address on the link.
    pub ipv4: Ipv4Addr,
    /// IPv4 prefix length.
    pub prefix4: u8,
    /// The node's IPv6 address on the link.
    pub ipv6: Ipv6Addr,
    /// IPv6 prefix length.
    pub prefix6: u8,
    /// The other end's IPv4 address.
    pub peer4: Ipv4Addr,
    /// The other end's IPv6 address.
    pub peer6: Ipv6Addr,
    /// The link's MTU.
    pub mtu: u32,
}

/// A route to a subnet the node is not on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Route {
    /// Destination, IPv4.
    pub dest4: String,
    /// Next hop, IPv4.
    pub via4: Ipv4Addr,
    /// Destination, IPv6.
    pub dest6: String,
    /// Next hop, IPv6.
    pub via6: Ipv6Addr,
}

/// A host or router: one namespace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Node {
    /// The scenario's name for it.
    pub name: String,
    /// Its namespace.
    pub netns: String,
    /// True for routers (IP forwarding on).
    pub router: bool,
    /// Its interfaces, in link order.
    pub ifaces: Vec<Iface>,
    /// Its routes.
    pub routes: Vec<Route>,
}

/// A link: one veth pair, or two with an impairment box between.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LinkLayout {
    /// The link's name.
    pub name: String,
    /// Node at end `a`.
    pub a: String,
    /// Node at end `b`.
    pub b: String,
    /// The interface name at both ends.
    pub iface: String,
    /// MTU.
    pub mtu: u32,
    /// The impairment box's namespace, when the userspace engine impairs this link.
    pub imp_box: Option<ImpBox>,
}

/// The bump-in-the-wire namespace of a link impaired in userspace.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImpBox {
    /// Its namespace.
    pub netns: String,
    /// The interface cabled to end `a`.
    pub a_iface: String,
    /// The interface cabled to end `b`.
    pub b_iface: String,
}

/// Everything the lab will create.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layout {
    /// The namespace prefix.
    pub prefix: String,
    /// Hosts and routers, hosts first, in scenario order.
    pub nodes: Vec<Node>,
    /// Links, in scenario order.
    pub links: Vec<LinkLayout>,
}

impl Layout {
    /// Lays out `scenario` under `prefix`, boxing the links in `boxed`.
    ///
    /// # Errors
    /// [`LabError::BadPrefix`] for a prefix `clean_leftovers` could not find again.
    pub fn new(
        scenario: &Scenario,
        prefix: &str,
        boxed: &BTreeSet<String>,
    ) -> Result<Layout, LabError> {
        check_prefix(prefix)?;
        let mut nodes: Vec<Node> = scenario
            .hosts
            .iter()
            .map(|h| (h, false))
            .chain(scenario.routers.iter().map(|r| (r, true)))
            .map(|(name, router)| Node {
                name: name.clone(),
                netns: format!("{prefix}-{name}"),
                router,
                ifaces: Vec::new(),
                routes: Vec::new(),
            })
            .collect();
        let mut links = Vec::new();
        for (i, l) in scenario.links.iter().enumerate() {
            let (s4, s6) = (l.ipv4_subnet(i), l.ipv6_subnet(i));
            let iface = format!("s-{}", l.name);
            let ends = [(&l.a, 1, 2), (&l.b, 2, 1)];
            for (node, me, peer) in ends {
                if let Some(n) = nodes.iter_mut().find(|n| &n.name == node) {
                    n.ifaces.push(Iface {
                        link: l.name.clone(),
                        name: iface.clone(),
                        ipv4: s4.host(me),
                        prefix4: s4.prefix,
                        ipv6: s6.host(u128::from(me)),
                        prefix6: s6.prefix,
                        peer4: s4.host(peer),
                        peer6: s6.host(u128::from(peer)),
                        mtu: l.mtu,
                    });
                }
            }
            links.push(LinkLayout {
                name: l.name.clone(),
                a: l.a.clone(),
                b: l.b.clone(),
                mtu: l.mtu,
                imp_box: boxed.contains(&l.name).then(|| ImpBox {
                    netns: format!("{prefix}-{}.imp", l.name),
                    a_iface: format!("{iface}-a"),
                    b_iface: format!("{iface}-b"),
                }),
                iface,
            });
        }
        let routes: Vec<Vec<Route>> = (0..nodes.len())
            .map(|i| routes_of(scenario, &nodes, i))
            .collect();
        for (n, r) in nodes.iter_mut().zip(routes) {
            n.routes = r;
        }
        Ok(Layout {
            prefix: prefix.to_owned(),
            nodes,
            links,
        })
    }

    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// Every namespace, nodes first, then boxes.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.nodes.iter().map(|n| n.netns.as_str()).chain(
            self.links
                .iter()
                .filter_map(|l| l.imp_box.as_ref().map(|b| b.netns.as_str())),
        )
    }
}

/// The routes of node `me`: breadth-first over the links, expanding only through routers.
fn routes_of(scenario: &Scenario, nodes: &[Node], me: usize) -> Vec<Route> {
    let index = |name: &str| nodes.iter().position(|n| n.name == name);
    // first_hop[n] = (neighbour of `me` on the path to n, the link to it)
    let mut first_hop: Vec<Option<(usize, usize)>> = vec![None; nodes.len()];
    let mut seen = vec![false; nodes.len()];
    seen[me] = true;
    let mut queue = VecDeque::from([me]);
    while let Some(n) = queue.pop_front() {
        if n != me && !nodes[n].router {
            continue;
        }
        for (li, l) in scenario.links.iter().enumerate() {
            let other = if l.a == nodes[n].name {
                index(&l.b)
            } else if l.b == nodes[n].name {
                index(&l.a)
            } else {
                None
            };
            let Some(o) = other.filter(|&o| !seen[o]) else {
                continue;
            };
            seen[o] = true;
            first_hop[o] = if n == me { Some((o, li)) } else { first_hop[n] };
            queue.push_back(o);
        }
    }
    let attached: BTreeSet<&str> = nodes[me].ifaces.iter().map(|i| i.link.as_str()).collect();
    let mut routes = Vec::new();
    for (i, l) in scenario.links.iter().enumerate() {
        if attached.contains(l.name.as_str()) {
            continue;
        }
        // Through whichever end is reached first (both ends are one hop apart).
        let hop = [&l.a, &l.b]
            .into_iter()
            .filter_map(|end| index(end))
            .filter_map(|end| first_hop[end])
            .next();
        let Some((neigh, via_link)) = hop else {
            continue;
        };
        let via_name = &scenario.links[via_link].name;
        let Some(via) = nodes[neigh].ifaces.iter().find(|f| &f.link == via_name) else {
            continue;
        };
        let (s4, s6): (Ipv4Subnet, Ipv6Subnet) = (l.ipv4_subnet(i), l.ipv6_subnet(i));
        routes.push(Route {
            dest4: String::from(s4),
            via4: via.ipv4,
            dest6: String::from(s6),
            via6: via.ipv6,
        });
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAIN4: &str = r#"
        name = "c4"
        hosts = ["client", "server"]
        routers = ["r1", "r2"]
        [[link]]
        name = "l1"
        a = "client"
        b = "r1"
        [[link]]
        name = "l2"
        a = "r1"
        b = "r2"
        [[link]]
        name = "l3"
        a = "r2"
        b = "server"
        [[settings]]
        name = "clean"
        [[test]]
        name = "t"
        command = ["true"]
    "#;

    fn layout(boxed: &[&str]) -> Layout {
        let s = Scenario::from_toml(CHAIN4).unwrap_or_else(|e| panic!("{e}"));
        let boxed = boxed.iter().map(|s| (*s).to_owned()).collect();
        Layout::new(&s, "sonde-test", &boxed).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn names_fit_and_do_not_collide() {
        let l = layout(&["l2"]);
        let ns: Vec<&str> = l.namespaces().collect();
        assert_eq!(
            ns,
            [
                "sonde-test-client",
                "sonde-test-server",
                "sonde-test-r1",
                "sonde-test-r2",
                "sonde-test-l2.imp"
            ]
        );
        let b = l.links[1].imp_box.as_ref().map(|b| b.a_iface.as_str());
        assert_eq!(b, Some("s-l2-a"));
        assert!(l.links.iter().all(|k| k.iface.len() <= 15));
    }

    #[test]
    fn routes_go_through_routers_only() {
        let l = layout(&[]);
        let client = l.node("client").unwrap_or_else(|| panic!("no client"));
        assert_eq!(client.ifaces[0].ipv4, Ipv4Addr::new(10, 77, 1, 1));
        assert_eq!(client.ifaces[0].peer4, Ipv4Addr::new(10, 77, 1, 2));
        let dests: Vec<(&str, Ipv4Addr)> = client
            .routes
            .iter()
            .map(|r| (r.dest4.as_str(), r.via4))
            .collect();
        let r1 = Ipv4Addr::new(10, 77, 1, 2);
        assert_eq!(dests, [("10.77.2.0/24", r1), ("10.77.3.0/24", r1)]);
        let r2 = l.node("r2").unwrap_or_else(|| panic!("no r2"));
        let dests: Vec<(&str, Ipv4Addr)> = r2
            .routes
            .iter()
            .map(|r| (r.dest4.as_str(), r.via4))
            .collect();
        assert_eq!(dests, [("10.77.1.0/24", Ipv4Addr::new(10, 77, 2, 1))]);
        assert_eq!(
            r2.routes[0].via6,
            "fd00:77:0:2::1"
                .parse::<Ipv6Addr>()
                .unwrap_or(Ipv6Addr::UNSPECIFIED)
        );
    }

    #[test]
    fn prefixes_are_checked() {
        assert!(check_prefix("sonde-abc123").is_ok());
        assert!(check_prefix("sonde-").is_err());
        assert!(check_prefix("other-abc").is_err());
        assert!(check_prefix("sonde-a/b").is_err());
        assert!(check_prefix(&fresh_prefix()).is_ok());
    }
}
