//! The mesh's description (`mesh.toml`): how many nodes, how long, which families, and the
//! schedule every agent runs. Parsed and checked before anything is built, so a bad value is
//! refused with its field named; `--nodes` and `-t` override the file's values the same way.

use serde::{Deserialize, Serialize};
use sonde_agent::config::ThroughputProtocol;
use sonde_scenario::{validate_impairments, DirectionSel, Impairments};

use crate::error::MeshError;

/// The built-in mesh's text (`sonde lab show mesh`).
pub const BUILTIN_TEXT: &str = include_str!("../mesh.toml");

/// The built-in's name, as `sonde lab run` and `sonde lab list` know it.
pub const BUILTIN_NAME: &str = "mesh";

/// Most nodes a mesh may have: each node is a link of its own subnet (`10.77.<n>.0/24`), and
/// every agent measures all the others, at most four latency runs at a time, so past this a
/// round of latency runs no longer fits in a few seconds.
pub const MAX_NODES: usize = 64;

/// The name of node `i` (from 0).
pub fn node_name(i: usize) -> String {
    format!("n{:02}", i + 1)
}

/// The index of the node named `name` (`n03` is 2), whatever the mesh's size: how the spec's
/// tables name a node, checked here and used by the plan.
pub fn node_index(name: &str) -> Option<usize> {
    let digits = name.strip_prefix('n')?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_sub(1)
}

/// A mesh description, as written.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshSpec {
    /// Always `"mesh"`: what tells a mesh file from a matrix scenario file.
    pub kind: String,
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Nodes (agents), 2..=[`MAX_NODES`].
    pub nodes: usize,
    /// How long the agents run, seconds.
    pub duration_secs: f64,
    /// The families each other node is measured over (`ipv4`, `ipv6`).
    pub families: Vec<Family>,
    #[serde(default = "default_agent_port")]
    pub agent_port: u16,
    #[serde(default = "default_metrics_port")]
    pub metrics_port: u16,
    #[serde(default = "default_jitter")]
    pub jitter: f64,
    pub latency: Latency,
    pub throughput: Option<Throughput>,
    /// Impaired links (none by default: a clean star).
    #[serde(default, rename = "link")]
    pub links: Vec<NodeLink>,
    /// Times a node's link is down during the run (none by default).
    #[serde(default, rename = "outage")]
    pub outages: Vec<Outage>,
}

/// A node's link to the router taken down for a while and brought back, as a pulled and
/// replugged cable: the router's end loses its carrier and the node's with it; the
/// addresses and routes stay, so measuring resumes once it is back. What every agent
/// records meanwhile shows how the mesh sees a site go away.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    /// The node whose link goes down (`n03`).
    pub node: String,
    /// When, seconds after the agents answer.
    pub at_secs: f64,
    /// For how long, seconds; back before the run ends.
    pub for_secs: f64,
}

/// Impairments of one node's link to the router, with the lab's impairment keys (`delay`,
/// `jitter`, `loss`, `rate`, ...): every pair through that node then shows what was set, and
/// the matrix can be checked against it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeLink {
    /// The node whose link it is (`n03`).
    pub node: String,
    /// Which way: `to-router`, `from-router`, or `both` (the default; each way draws its own
    /// losses).
    #[serde(default)]
    pub direction: LinkDirection,
    pub impair: Impairments,
}

/// The direction of an impaired link, seen from its node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkDirection {
    ToRouter,
    FromRouter,
    #[default]
    Both,
}

impl LinkDirection {
    /// The lab's selector for a link whose `a` end is the node and `b` end the router.
    pub fn selector(self) -> DirectionSel {
        match self {
            LinkDirection::ToRouter => DirectionSel::AToB,
            LinkDirection::FromRouter => DirectionSel::BToA,
            LinkDirection::Both => DirectionSel::Both,
        }
    }
}

/// An address family of the mesh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Ipv4,
    Ipv6,
}

impl Family {
    /// `ipv4` / `ipv6`, as the agent's configuration and its results name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Ipv4 => "ipv4",
            Family::Ipv6 => "ipv6",
        }
    }

    /// The suffix of a peer's label: `v4` / `v6`.
    pub fn suffix(self) -> &'static str {
        match self {
            Family::Ipv4 => "v4",
            Family::Ipv6 => "v6",
        }
    }
}

/// The latency schedule (as the agent's `[latency]`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub every_secs: f64,
    pub probes: u64,
    pub probe_interval_ms: f64,
}

/// The throughput schedule (as the agent's `[throughput]`, with the link rate of every peer).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Throughput {
    pub every_mins: f64,
    pub duration_secs: f64,
    pub share: f64,
    pub link_rate: String,
    /// `tcp` (the default) or `udp` (datagrams at the paced rate: loss and jitter per pair).
    #[serde(default)]
    pub protocol: ThroughputProtocol,
}

fn default_agent_port() -> u16 {
    5201
}
fn default_metrics_port() -> u16 {
    9464
}
fn default_jitter() -> f64 {
    0.2
}

/// Whether `text` is a mesh description (`kind = "mesh"`) rather than a matrix scenario.
pub fn is_mesh(text: &str) -> bool {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| t.get("kind").and_then(|k| k.as_str().map(|k| k == "mesh")))
        .unwrap_or(false)
}

impl MeshSpec {
    /// The built-in mesh.
    ///
    /// # Errors
    /// Never in a released sonde (a unit test parses it); [`MeshError::Spec`] otherwise.
    pub fn builtin() -> Result<MeshSpec, MeshError> {
        MeshSpec::parse(BUILTIN_TEXT)
    }

    /// Parses and checks a mesh description.
    ///
    /// # Errors
    /// [`MeshError::Spec`] naming the key that is missing, unknown or out of range.
    pub fn parse(text: &str) -> Result<MeshSpec, MeshError> {
        MeshSpec::parse_with(text, None, None)
    }

    /// Parses a mesh description, replaces `nodes` and `duration_secs` where given, and only
    /// then checks it: an outage the file places beyond its own duration is fine when `-t`
    /// makes the run long enough.
    ///
    /// # Errors
    /// [`MeshError::Spec`] naming the key that is missing, unknown or out of range.
    pub fn parse_with(
        text: &str,
        nodes: Option<usize>,
        duration_secs: Option<f64>,
    ) -> Result<MeshSpec, MeshError> {
        let spec: MeshSpec = toml::from_str(text).map_err(|e| MeshError::Spec(e.to_string()))?;
        spec.with(nodes, duration_secs)
    }

    /// This description with `nodes` and `duration_secs` replaced where given, checked again.
    ///
    /// # Errors
    /// [`MeshError::Spec`] for a value out of range.
    pub fn with(
        mut self,
        nodes: Option<usize>,
        duration_secs: Option<f64>,
    ) -> Result<MeshSpec, MeshError> {
        if let Some(n) = nodes {
            self.nodes = n;
        }
        if let Some(d) = duration_secs {
            self.duration_secs = d;
        }
        self.check()?;
        Ok(self)
    }

    fn check(&self) -> Result<(), MeshError> {
        let bad = |m: String| Err(MeshError::Spec(m));
        if self.kind != "mesh" {
            return bad(format!("kind must be \"mesh\", got {:?}", self.kind));
        }
        if !(2..=MAX_NODES).contains(&self.nodes) {
            return bad(format!("nodes must be 2..={MAX_NODES}, got {}", self.nodes));
        }
        if !(self.duration_secs >= 1.0 && self.duration_secs <= 86_400.0) {
            return bad(format!(
                "duration_secs must be 1..=86400, got {}",
                self.duration_secs
            ));
        }
        let mut fams = self.families.clone();
        fams.sort();
        fams.dedup();
        if fams.is_empty() || fams.len() != self.families.len() {
            return bad("families must list ipv4, ipv6 or both, each once".into());
        }
        if self.agent_port == 0 || self.metrics_port == 0 || self.agent_port == self.metrics_port {
            return bad("agent_port and metrics_port must be two distinct non-zero ports".into());
        }
        self.check_links()?;
        self.check_outages()
    }

    /// Each outage names a node of the mesh, lies within the run, and does not overlap
    /// another of the same node.
    fn check_outages(&self) -> Result<(), MeshError> {
        let mut windows: Vec<(usize, f64, f64)> = Vec::new();
        for o in &self.outages {
            let i = self.node_of(&o.node, "outage")?;
            let (from, to) = (o.at_secs, o.at_secs + o.for_secs);
            if !(o.at_secs.is_finite() && o.for_secs.is_finite())
                || o.at_secs < 0.0
                || o.for_secs <= 0.0
                || to > self.duration_secs
            {
                return Err(MeshError::Spec(format!(
                    "outage of {}: at_secs {} and for_secs {} must lie within the run's {} s (at_secs >= 0, for_secs > 0, back by the end)",
                    o.node, o.at_secs, o.for_secs, self.duration_secs
                )));
            }
            if windows
                .iter()
                .any(|&(j, a, b)| j == i && from < b && a < to)
            {
                return Err(MeshError::Spec(format!(
                    "outage of {} at {} s overlaps another of the same node",
                    o.node, o.at_secs
                )));
            }
            windows.push((i, from, to));
        }
        Ok(())
    }

    /// The index of node `name`, checked to be one of the mesh's (`what` names the table).
    fn node_of(&self, name: &str, what: &str) -> Result<usize, MeshError> {
        let Some(i) = node_index(name) else {
            return Err(MeshError::Spec(format!(
                "{what} node {name:?}: nodes are named n01, n02, ..."
            )));
        };
        if i >= self.nodes {
            return Err(MeshError::Spec(format!(
                "{what} node {name}: the mesh has {} nodes",
                self.nodes
            )));
        }
        Ok(i)
    }

    /// Each impaired link names a node of the mesh (after `--nodes`), once, with
    /// impairments the lab accepts.
    fn check_links(&self) -> Result<(), MeshError> {
        let mut seen = Vec::new();
        for l in &self.links {
            let i = self.node_of(&l.node, "link")?;
            if seen.contains(&i) {
                return Err(MeshError::Spec(format!(
                    "link node {}: listed twice (one [[link]] per node; `direction` chooses the ways)",
                    l.node
                )));
            }
            seen.push(i);
            validate_impairments(&format!("link {}", l.node), &l.impair)
                .map_err(|e| MeshError::Spec(e.to_string()))?;
        }
        Ok(())
    }

    /// How long to give the agents to stop after SIGTERM: a test in progress is cut short
    /// and recorded; a throughput test's end exchange may take its duration again.
    pub fn stop_grace_secs(&self) -> f64 {
        10.0 + self.throughput.as_ref().map_or(0.0, |t| t.duration_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_parses_and_overrides_are_checked() {
        let m = MeshSpec::builtin().unwrap();
        assert_eq!(m.nodes, 16);
        assert_eq!(m.families, [Family::Ipv4, Family::Ipv6]);
        assert!(is_mesh(BUILTIN_TEXT));
        assert!(!is_mesh("name = \"quick\"\nhosts = []"));
        let small = m.clone().with(Some(3), Some(5.0)).unwrap();
        assert_eq!((small.nodes, small.duration_secs), (3, 5.0));
        assert!(m.clone().with(Some(1), None).is_err());
        assert!(m.clone().with(Some(65), None).is_err());
        assert!(m.with(None, Some(0.5)).is_err());
    }

    #[test]
    fn refuses_bad_files() {
        let dup = BUILTIN_TEXT.replace("[\"ipv4\", \"ipv6\"]", "[\"ipv4\", \"ipv4\"]");
        assert!(MeshSpec::parse(&dup).is_err());
        let e = MeshSpec::parse(&format!("{BUILTIN_TEXT}\nbogus = 1"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
        let same = BUILTIN_TEXT.replace("metrics_port = 9464", "metrics_port = 5201");
        assert!(MeshSpec::parse(&same).is_err());
    }

    #[test]
    fn impaired_links_name_a_node_once_with_impairments_the_lab_takes() {
        let with = |links: &str| MeshSpec::parse(&format!("{BUILTIN_TEXT}\n{links}"));
        let m = with("[[link]]\nnode = \"n03\"\nimpair = { delay = \"10ms\", loss = \"5%\" }\n")
            .unwrap();
        assert_eq!(m.links.len(), 1);
        assert_eq!(m.links[0].direction, LinkDirection::Both);
        assert!(m.clone().with(Some(3), None).is_ok());
        let e = m.with(Some(2), None).unwrap_err().to_string();
        assert!(e.contains("n03") && e.contains("2 nodes"), "{e}");
        for (bad, want) in [
            ("node = \"x3\"\nimpair = {}", "n01"),
            ("node = \"n99\"\nimpair = {}", "16 nodes"),
            ("node = \"n02\"\nimpair = { jitter = \"1ms\" }", "n02"),
            (
                "node = \"n02\"\ndirection = \"sideways\"\nimpair = {}",
                "direction",
            ),
        ] {
            let e = with(&format!("[[link]]\n{bad}\n")).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        let twice =
            "[[link]]\nnode = \"n02\"\nimpair = {}\n[[link]]\nnode = \"n02\"\nimpair = {}\n";
        assert!(with(twice).unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn outages_lie_within_the_run_on_a_node_of_the_mesh_without_overlapping() {
        let with = |extra: &str| {
            MeshSpec::parse_with(&format!("{BUILTIN_TEXT}\n{extra}"), Some(3), Some(20.0))
        };
        let outage = |node: &str, at: f64, len: f64| {
            format!("[[outage]]\nnode = \"{node}\"\nat_secs = {at:?}\nfor_secs = {len:?}\n")
        };
        let two = format!("{}{}", outage("n03", 2.0, 3.0), outage("n03", 5.0, 15.0));
        let m = with(&two).unwrap();
        assert_eq!(m.outages.len(), 2);
        assert_eq!(m.outages[1].for_secs, 15.0);
        // Shortened by -t below an outage's end: refused too.
        let e = m.with(None, Some(10.0)).unwrap_err().to_string();
        assert!(e.contains("within the run"), "{e}");
        // Beyond the file's own duration but within the run -t makes: accepted.
        let text = BUILTIN_TEXT.replacen("duration_secs = 60\n", "duration_secs = 10\n", 1);
        let text = format!("{text}\n{}", outage("n02", 30.0, 5.0));
        let e = MeshSpec::parse(&text).unwrap_err().to_string();
        assert!(e.contains("within the run's 10 s"), "{e}");
        let long = MeshSpec::parse_with(&text, None, Some(40.0)).unwrap();
        assert_eq!((long.duration_secs, long.outages[0].at_secs), (40.0, 30.0));
        for (bad, want) in [
            (outage("n04", 1.0, 1.0), "3 nodes"),
            (outage("x1", 1.0, 1.0), "n01"),
            // One message for the three: each case is told by the values it names.
            (
                outage("n01", -1.0, 1.0),
                "at_secs -1 and for_secs 1 must lie",
            ),
            (outage("n01", 1.0, 0.0), "at_secs 1 and for_secs 0 must lie"),
            (
                outage("n01", 15.0, 6.0),
                "at_secs 15 and for_secs 6 must lie",
            ),
            (
                format!("{}{}", outage("n01", 1.0, 5.0), outage("n01", 4.0, 2.0)),
                "overlaps",
            ),
        ] {
            let e = with(&bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad}: {e}");
        }
        assert!(with(&format!(
            "{}{}",
            outage("n01", 1.0, 5.0),
            outage("n02", 1.0, 5.0)
        ))
        .is_ok());
    }
}
