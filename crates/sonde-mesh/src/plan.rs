//! The mesh made concrete, before anything is created: the star topology as a lab scenario,
//! each node's addresses, and each node's agent configuration listing every other node as a
//! peer once per family.
//!
//! Why a star through a router namespace rather than one bridge: the lab's links are veth
//! pairs, each its own subnet, and [`sonde_lab::Layout`] computes the routes through routers.
//! N links to one `hub` router give every pair of nodes a path of two links with nothing new
//! in the lab, and each node's access link is where a later setting would impair that node.
//!
//! Peers are named, not numbered: each agent's configuration lists `host = "n02"` with the
//! family to use, and the lab gives every namespace a hosts file ([`MeshPlan::hosts_file`])
//! naming each node's IPv4 and IPv6 address, so the agents resolve their peers through the
//! system resolver as a fleet resolves DNS names (an A and an AAAA record per name). Where
//! that file cannot be written the plan falls back to addresses ([`MeshPlan::peers_by_name`]).
//!
//! Pure: the layout comes from [`sonde_lab::Layout::new`], which only computes, so the names,
//! addresses and configurations are unit-tested without root.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use sonde_lab::Layout;
use sonde_scenario::{Link, LinkSetting, Matrix, Scenario, Settings};

use crate::error::MeshError;
use crate::spec::{node_index, node_name, Family, MeshSpec};

/// The router every node's link ends at.
pub const HUB: &str = "hub";
/// How often a mesh's agents copy to PostgreSQL (the agent's fastest): a mesh is minutes
/// long, and the database is watched while it runs.
pub const LIVE_SYNC_SECS: f64 = 1.0;

/// One node of the mesh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeshNode {
    /// `n01`, `n02`, ...
    pub name: String,
    pub ipv4: Ipv4Addr,
    pub ipv6: Ipv6Addr,
}

/// A peer entry of some agent: which node, over which family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerRef {
    /// The label in that agent's metrics and results (`n02-v4`).
    pub label: String,
    /// Index of the node measured.
    pub node: usize,
    pub family: Family,
}

/// Everything the mesh will create and run.
#[derive(Debug, Clone)]
pub struct MeshPlan {
    pub spec: MeshSpec,
    /// The star as a lab scenario (topology only: no tests).
    pub scenario: Scenario,
    pub nodes: Vec<MeshNode>,
    /// True (the default) when agents name their peers (`host = "n02"`) and resolve them
    /// from [`MeshPlan::hosts_file`]; false when they are given addresses.
    pub peers_by_name: bool,
}

/// The name of the link between node `i` and the router.
pub(crate) fn link_name(i: usize) -> String {
    format!("l{:02}", i + 1)
}

/// The settings the lab applies: the spec's impaired links, or none.
pub const SETTINGS: &str = "mesh";

/// The label under which other agents know node `node` over `family`.
pub fn peer_label(node: &str, family: Family) -> String {
    format!("{node}-{}", family.suffix())
}

fn star(spec: &MeshSpec) -> Scenario {
    let hosts: Vec<String> = (0..spec.nodes).map(node_name).collect();
    let links = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| Link {
            name: link_name(i),
            a: h.clone(),
            b: HUB.into(),
            mtu: 1500,
            ipv4: None,
            ipv6: None,
        })
        .collect();
    Scenario {
        name: spec.name.clone(),
        description: spec.description.clone(),
        seed: 1,
        hosts,
        routers: vec![HUB.into()],
        links,
        settings: vec![Settings {
            name: SETTINGS.into(),
            links: spec
                .links
                .iter()
                .filter_map(|l| {
                    Some(LinkSetting {
                        link: link_name(node_index(&l.node)?),
                        direction: l.direction.selector(),
                        impair: l.impair.clone(),
                    })
                })
                .collect(),
        }],
        tests: Vec::new(),
        matrix: Matrix {
            settings: None,
            tests: None,
            repetitions: 1,
        },
    }
}

impl MeshPlan {
    /// Plans `spec`'s mesh; `prefix` is the lab's namespace prefix.
    ///
    /// # Errors
    /// [`MeshError::Lab`] for a prefix the lab refuses; [`MeshError::AgentConfig`] when a
    /// generated configuration is one the agent would refuse.
    pub fn new(spec: MeshSpec, prefix: &str) -> Result<MeshPlan, MeshError> {
        let scenario = star(&spec);
        let layout = Layout::new(&scenario, prefix, &BTreeSet::new())?;
        let nodes = scenario
            .hosts
            .iter()
            .map(|h| {
                let iface = layout.node(h).and_then(|n| n.ifaces.first());
                MeshNode {
                    name: h.clone(),
                    ipv4: iface.map_or(Ipv4Addr::UNSPECIFIED, |f| f.ipv4),
                    ipv6: iface.map_or(Ipv6Addr::UNSPECIFIED, |f| f.ipv6),
                }
            })
            .collect();
        let plan = MeshPlan {
            spec,
            scenario,
            nodes,
            peers_by_name: true,
        };
        for i in 0..plan.nodes.len() {
            let text = plan.agent_config(i, None);
            if let Err(e) = sonde_agent::config::AgentConfig::parse(&text) {
                return Err(MeshError::AgentConfig {
                    node: node_name(i),
                    reason: e.to_string(),
                });
            }
        }
        Ok(plan)
    }

    /// The peers of node `me`: every other node, once per family, in node order.
    pub fn peers_of(&self, me: usize) -> Vec<PeerRef> {
        let mut v = Vec::new();
        for (i, n) in self.nodes.iter().enumerate().filter(|(i, _)| *i != me) {
            for &family in &self.spec.families {
                v.push(PeerRef {
                    label: peer_label(&n.name, family),
                    node: i,
                    family,
                });
            }
        }
        v
    }

    /// Where node `i`'s agent serves its metrics (its IPv4 address).
    pub fn metrics_addr(&self, i: usize) -> Option<SocketAddr> {
        let n = self.nodes.get(i)?;
        Some(SocketAddr::from((n.ipv4, self.spec.metrics_port)))
    }

    /// The hosts file every namespace of the mesh gets: `localhost`, then each node's name
    /// on its IPv4 and its IPv6 address.
    pub fn hosts_file(&self) -> String {
        let mut t = format!(
            "# the nodes of the mesh {:?}, written by sonde lab\n127.0.0.1 localhost\n::1 localhost\n",
            self.spec.name
        );
        for n in &self.nodes {
            let _ = write!(t, "{} {}\n{} {}\n", n.ipv4, n.name, n.ipv6, n.name);
        }
        t
    }

    /// Node `me`'s agent configuration (`sonde agent --config`), the agent named after its
    /// node. Its `store` is given on the agent's command line instead (one argument, so the
    /// target can change); `store_url`, when given, is the PostgreSQL it copies to as it
    /// measures, every [`LIVE_SYNC_SECS`].
    pub fn agent_config(&self, me: usize, store_url: Option<&str>) -> String {
        let s = &self.spec;
        let l = &s.latency;
        let name = node_name(me);
        let mut t = format!(
            "# node {name} of the mesh {:?}, generated by sonde lab\nname = {name:?}\nlisten_port = {}\njitter = {}\n",
            s.name, s.agent_port, s.jitter,
        );
        if let Some(url) = store_url {
            let _ = writeln!(t, "store_url = {url:?}\nsync_every_secs = {LIVE_SYNC_SECS}");
        }
        let _ = write!(
            t,
            "\n[latency]\nevery_secs = {}\nprobes = {}\nprobe_interval_ms = {}\n",
            l.every_secs, l.probes, l.probe_interval_ms
        );
        if let Some(tp) = &s.throughput {
            let _ = write!(
                t,
                "\n[throughput]\nevery_mins = {}\nduration_secs = {}\nshare = {}\nprotocol = {:?}\n",
                tp.every_mins,
                tp.duration_secs,
                tp.share,
                tp.protocol.as_str()
            );
        }
        let rate = s.throughput.as_ref().map(|tp| tp.link_rate.as_str());
        for p in self.peers_of(me) {
            let Some(n) = self.nodes.get(p.node) else {
                continue;
            };
            let host = match p.family {
                _ if self.peers_by_name => n.name.clone(),
                Family::Ipv4 => n.ipv4.to_string(),
                Family::Ipv6 => n.ipv6.to_string(),
            };
            let _ = write!(
                t,
                "\n[[peer]]\nname = \"{}\"\nhost = \"{host}\"\nport = {}\nfamily = \"{}\"\n",
                p.label,
                s.agent_port,
                p.family.as_str()
            );
            if let Some(r) = rate {
                let _ = writeln!(t, "link_rate = {r:?}");
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_agent::config::{AgentConfig, FamilyChoice};

    fn plan(nodes: usize) -> MeshPlan {
        let spec = MeshSpec::builtin()
            .unwrap()
            .with(Some(nodes), None)
            .unwrap();
        MeshPlan::new(spec, "sonde-meshtest").unwrap()
    }

    #[test]
    fn a_star_with_one_subnet_per_node() {
        let p = plan(16);
        assert_eq!(p.nodes.len(), 16);
        assert_eq!(p.nodes[0].name, "n01");
        assert_eq!(p.nodes[0].ipv4, Ipv4Addr::new(10, 77, 1, 1));
        assert_eq!(p.nodes[15].ipv4, Ipv4Addr::new(10, 77, 16, 1));
        assert_eq!(p.nodes[1].ipv6.to_string(), "fd00:77:0:2::1");
        assert_eq!(p.scenario.routers, [HUB]);
        assert_eq!(
            p.metrics_addr(2).map(|a| a.to_string()).as_deref(),
            Some("10.77.3.1:9464")
        );
    }

    #[test]
    fn every_agent_lists_every_other_node_per_family() {
        let p = plan(4);
        let cfg = AgentConfig::parse(&p.agent_config(1, None)).unwrap();
        assert_eq!(cfg.agent_name(), "n02");
        assert_eq!(cfg.store_url, None);
        let url = "postgres://sonde:pw@127.0.0.1:5432/mesh";
        let live = AgentConfig::parse(&p.agent_config(1, Some(url))).unwrap();
        assert_eq!(live.store_url.as_deref(), Some(url));
        assert_eq!(live.sync_every_secs, LIVE_SYNC_SECS);
        let labels: Vec<&str> = cfg.peers.iter().map(|x| x.label()).collect();
        assert_eq!(
            labels,
            ["n01-v4", "n01-v6", "n03-v4", "n03-v6", "n04-v4", "n04-v6"]
        );
        assert_eq!(cfg.peers[0].host, "n01");
        assert_eq!(cfg.peers[0].family, FamilyChoice::Ipv4);
        assert_eq!(cfg.peers[1].host, "n01");
        assert_eq!(cfg.peers[1].family, FamilyChoice::Ipv6);
        assert_eq!(cfg.peers[0].link_rate.as_deref(), Some("1G"));
        assert!(cfg.throughput.is_some());
        assert_eq!(p.peers_of(1)[2].node, 2);
    }

    #[test]
    fn every_node_is_named_on_both_addresses_and_addresses_are_the_fallback() {
        let mut p = plan(3);
        let hosts = p.hosts_file();
        let lines: Vec<&str> = hosts.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            lines,
            [
                "127.0.0.1 localhost",
                "::1 localhost",
                "10.77.1.1 n01",
                "fd00:77:0:1::1 n01",
                "10.77.2.1 n02",
                "fd00:77:0:2::1 n02",
                "10.77.3.1 n03",
                "fd00:77:0:3::1 n03",
            ]
        );
        p.peers_by_name = false;
        let cfg = AgentConfig::parse(&p.agent_config(0, None)).unwrap();
        let hosts: Vec<&str> = cfg.peers.iter().map(|x| x.host.as_str()).collect();
        assert_eq!(
            hosts,
            ["10.77.2.1", "fd00:77:0:2::1", "10.77.3.1", "fd00:77:0:3::1"]
        );
    }

    #[test]
    fn a_schedule_the_agent_refuses_is_refused_before_the_lab() {
        let mut spec = MeshSpec::builtin().unwrap();
        spec.latency.probes = 1000;
        let e = MeshPlan::new(spec, "sonde-meshtest").unwrap_err();
        assert!(matches!(e, MeshError::AgentConfig { .. }), "{e}");
    }
}
