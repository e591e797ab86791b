//! Outages: a node's link taken down at a set time of the run and brought back, so that what
//! the agents record shows how the mesh sees a site go away and return.
//!
//! The router's end of the node's link is set down, as a pulled cable: the node's end loses
//! its carrier too, and nothing passes either way. Down and up keep every address and
//! route, so measuring resumes by itself: IPv4 keeps its addresses anyway, and the router's
//! interface is told to keep its IPv6 ones (`keep_addr_on_down`; by default Linux drops a
//! link's global IPv6 addresses when it goes down and never gives them back, which would
//! leave the node unreachable over IPv6 for the rest of the run).
//!
//! Each outage's actual start and end are recorded as wall-clock times, so the records of
//! every agent can be set against them.

use std::process::Command;
use std::time::Duration;

use serde::Serialize;
use sonde_lab::Lab;
use sonde_platform::host::unix_now;

use crate::error::MeshError;
use crate::plan::{link_name, MeshPlan, HUB};
use crate::spec::node_index;

/// One outage as planned and as it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutageRecord {
    pub node: String,
    /// Planned start, seconds after the agents answered.
    pub at_secs: f64,
    /// Planned length, seconds.
    pub for_secs: f64,
    /// When the link went down (Unix seconds), if it did.
    pub down_unix: Option<f64>,
    /// When it came back (Unix seconds), if it did.
    pub up_unix: Option<f64>,
    /// What failed, if setting the link down or up did.
    pub error: Option<String>,
    /// Runs to or from the node that began while its link was down: failed, of all.
    pub through: RunTally,
    /// The other runs that began meanwhile: failed, of all.
    pub elsewhere: RunTally,
}

/// Failed runs of all runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunTally {
    pub failed: u64,
    pub runs: u64,
}

impl OutageRecord {
    /// Counts the runs that began during the outage, `node`'s agent's `tests` being one
    /// node's records (a test's `matrix_id` starts with its peer's label, `n03-v4/...`).
    pub fn tally(&mut self, node: &str, tests: &[sonde_store::TestRecord]) {
        let (Some(down), Some(up)) = (self.down_unix, self.up_unix) else {
            return;
        };
        for t in tests {
            if t.started_unix < down || t.started_unix >= up {
                continue;
            }
            let peer = t.matrix_id.split('/').next().unwrap_or("");
            let peer_node = peer.rsplit_once('-').map_or(peer, |(n, _)| n);
            let tally = if node == self.node || peer_node == self.node {
                &mut self.through
            } else {
                &mut self.elsewhere
            };
            tally.runs += 1;
            if t.status != sonde_store::TestStatus::Ok {
                tally.failed += 1;
            }
        }
    }
}

/// The run's outages: the router-side interface of each, and what happened so far.
pub struct Outages {
    netns: String,
    ifaces: Vec<String>,
    records: Vec<OutageRecord>,
}

impl Outages {
    /// Finds the router's interface of each outage's node and has it keep its IPv6
    /// addresses when set down.
    ///
    /// # Errors
    /// [`MeshError::Lab`] when the router is not in the lab; [`MeshError::Spec`] when a node
    /// has no link to it (a bug: the plan makes one per node); [`MeshError::Io`] when the
    /// setting cannot be written.
    pub fn prepare(lab: &Lab, plan: &MeshPlan) -> Result<Outages, MeshError> {
        let hub = lab.node(HUB)?;
        let mut ifaces = Vec::new();
        for o in &plan.spec.outages {
            let link = node_index(&o.node).map(link_name);
            let Some(iface) = hub.ifaces.iter().find(|f| Some(&f.link) == link.as_ref()) else {
                return Err(MeshError::Spec(format!(
                    "outage of {}: the router has no link to it",
                    o.node
                )));
            };
            ifaces.push(iface.name.clone());
        }
        let mut names = ifaces.clone();
        names.sort();
        names.dedup();
        if !names.is_empty() {
            lab.in_node(HUB, || {
                names.iter().try_for_each(|n| {
                    let path = format!("/proc/sys/net/ipv6/conf/{n}/keep_addr_on_down");
                    std::fs::write(&path, "1").map_err(crate::error::io_err(format!(
                        "writing {path} in the router's namespace"
                    )))
                })
            })??;
        }
        let records = plan
            .spec
            .outages
            .iter()
            .map(|o| OutageRecord {
                node: o.node.clone(),
                at_secs: o.at_secs,
                for_secs: o.for_secs,
                down_unix: None,
                up_unix: None,
                error: None,
                through: RunTally::default(),
                elsewhere: RunTally::default(),
            })
            .collect();
        Ok(Outages {
            netns: hub.netns.clone(),
            ifaces,
            records,
        })
    }

    /// Sets down the links whose outage has begun by `elapsed` (time since the agents
    /// answered) and up those whose outage has ended.
    pub fn apply(&mut self, elapsed: Duration) {
        let now = elapsed.as_secs_f64();
        for (i, r) in self.records.iter_mut().enumerate() {
            let Some(iface) = self.ifaces.get(i) else {
                continue;
            };
            if r.down_unix.is_none() && r.error.is_none() && now >= r.at_secs {
                match set_link(&self.netns, iface, "down") {
                    Ok(()) => r.down_unix = Some(unix_now()),
                    Err(e) => r.error = Some(e),
                }
            } else if r.down_unix.is_some() && r.up_unix.is_none() && now >= r.at_secs + r.for_secs
            {
                bring_up(&self.netns, iface, r);
            }
        }
    }

    /// How long after `elapsed` the next planned change is, if any is left.
    pub fn next_change(&self, elapsed: Duration) -> Option<Duration> {
        let now = elapsed.as_secs_f64();
        self.records
            .iter()
            .filter(|r| r.error.is_none() && r.up_unix.is_none())
            .map(|r| {
                if r.down_unix.is_none() {
                    r.at_secs
                } else {
                    r.at_secs + r.for_secs
                }
            })
            .map(|t| Duration::from_secs_f64((t - now).max(0.0)))
            .min()
    }

    /// Brings back every link still down (a run stopped early).
    pub fn restore_all(&mut self) {
        for (i, r) in self.records.iter_mut().enumerate() {
            if let (Some(iface), true) = (self.ifaces.get(i), r.down_unix.is_some()) {
                if r.up_unix.is_none() {
                    bring_up(&self.netns, iface, r);
                }
            }
        }
    }

    /// The outages, as they happened so far.
    pub fn records(&self) -> &[OutageRecord] {
        &self.records
    }
}

fn bring_up(netns: &str, iface: &str, r: &mut OutageRecord) {
    match set_link(netns, iface, "up") {
        Ok(()) => r.up_unix = Some(unix_now()),
        Err(e) => r.error = Some(e),
    }
}

/// `ip -n NETNS link set dev IFACE STATE`.
fn set_link(netns: &str, iface: &str, state: &str) -> Result<(), String> {
    let out = Command::new("ip")
        .args(["-n", netns, "link", "set", "dev", iface, state])
        .output()
        .map_err(|e| format!("ip link set {iface} {state}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip link set {iface} {state}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::tests::rec;
    use serde_json::json;

    #[test]
    fn runs_begun_during_the_outage_are_told_apart_by_whether_they_cross_its_node() {
        let mut o = OutageRecord {
            node: "n03".into(),
            at_secs: 3.0,
            for_secs: 4.0,
            down_unix: Some(100.0),
            up_unix: Some(104.0),
            error: None,
            through: RunTally::default(),
            elsewhere: RunTally::default(),
        };
        let at = |peer: &str, ok: bool, started: f64| {
            let mut t = rec(peer, "latency", ok, json!({}));
            t.started_unix = started;
            t
        };
        // n01's agent: to n03 before, during (failed), at the end (not during), after; to n02
        // during.
        o.tally(
            "n01",
            &[
                at("n03-v4", true, 99.9),
                at("n03-v6", false, 100.5),
                at("n03-v4", false, 103.9),
                at("n03-v6", true, 104.0),
                at("n02-v4", true, 101.0),
            ],
        );
        // n03's own agent: every run of it crosses its link.
        o.tally(
            "n03",
            &[at("n01-v4", false, 102.0), at("n02-v6", true, 102.5)],
        );
        assert_eq!(o.through, RunTally { failed: 3, runs: 4 });
        assert_eq!(o.elsewhere, RunTally { failed: 0, runs: 1 });
        // An outage that never happened counts nothing.
        let mut never = OutageRecord {
            down_unix: None,
            ..o.clone()
        };
        never.through = RunTally::default();
        never.tally("n01", &[at("n03-v4", false, 101.0)]);
        assert_eq!(never.through, RunTally::default());
    }
}
