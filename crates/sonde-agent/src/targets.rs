//! What one due run measures: its peer entry, or every member of an `every_address` entry
//! (crate::group) in turn, with the entry or member that is this agent itself left out
//! (crate::own), each said once in the log.
//!
//! This is where the agent resolves names for those two questions; the runs resolve again
//! themselves, so a peer that moves is followed.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use crate::config::Peer;
use crate::group::{self, Members};
use crate::own::{self, Identity};
use crate::schedule::Job;
use sonde_runtime::os::resolve::resolve;

/// What the agent knows about its entries between runs.
#[derive(Debug)]
pub struct Targets {
    /// Per entry, its members as last resolved (`every_address` entries only).
    groups: Vec<Option<Members>>,
    /// Per label (an entry's or a member's), whether it is this agent.
    identities: HashMap<String, Identity>,
    /// Where each agent starts its visits of a group (from its seed): see group::visit_order.
    offset: u64,
}

/// What a due run is to measure.
#[derive(Debug)]
pub enum Due {
    /// These peers, one after another (none: the entry is this agent).
    Peers(Vec<Peer>),
    /// The entry's name gave no address; the reason, for a failed run of the entry.
    Unresolved(String),
}

/// A member that left its group, whose series the metrics may drop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub label: String,
    pub family: &'static str,
}

impl Targets {
    /// For `entries` peer entries; `seed` spreads where group visits start.
    pub fn new(entries: usize, seed: u64) -> Self {
        Self {
            groups: vec![None; entries],
            identities: HashMap::new(),
            offset: seed,
        }
    }

    /// The peers `job` of `entry` measures now. An `every_address` entry is resolved again
    /// and its change logged; members that left are returned in `left`.
    pub fn due(
        &mut self,
        entry: &Peer,
        job: Job,
        own_port: u16,
        left: &mut Vec<Left>,
        log: &dyn Fn(&str),
    ) -> Due {
        if !entry.every_address {
            let is_own = self.is_own(entry.label(), log, || {
                own::identify_peer(entry, crate::runner::family(entry.family), own_port)
            });
            return Due::Peers(if is_own { vec![] } else { vec![entry.clone()] });
        }
        let resolved: Vec<SocketAddr> =
            match resolve(&entry.host, entry.port, crate::runner::family(entry.family)) {
                Ok(a) => a,
                Err(e) => return Due::Unresolved(e.to_string()),
            };
        let now = group::members(entry, &resolved);
        let before = self.groups.get(job.peer).and_then(Option::as_ref);
        if let Some(line) = group::change_line(entry.label(), before, &now) {
            log(&line);
        }
        if let Some(before) = before {
            let hosts: HashSet<&str> = now.peers.iter().map(|p| p.host.as_str()).collect();
            for gone in before
                .peers
                .iter()
                .filter(|p| !hosts.contains(p.host.as_str()))
            {
                self.identities.remove(gone.label());
                left.push(Left {
                    label: gone.label().to_string(),
                    family: crate::runner::family_label(gone.family),
                });
            }
        }
        if let Some(slot) = self.groups.get_mut(job.peer) {
            *slot = Some(now.clone());
        }
        let order = group::visit_order(now.peers.len(), job.seq, self.offset);
        let mut peers = Vec::with_capacity(order.len());
        for i in order {
            let Some(member) = now.peers.get(i) else {
                continue;
            };
            let Ok(ip) = member.host.parse() else {
                continue;
            };
            let addr = SocketAddr::new(ip, member.port);
            let is_own = self.is_own(member.label(), log, || {
                own::identify(&entry.host, addr, own_port, own::is_local_address)
            });
            if !is_own {
                peers.push(member.clone());
            }
        }
        Due::Peers(peers)
    }

    /// Whether `label` is this agent, found once (again while its name does not resolve) and
    /// said once when it is.
    fn is_own(
        &mut self,
        label: &str,
        log: &dyn Fn(&str),
        identify: impl FnOnce() -> Identity,
    ) -> bool {
        let known = self
            .identities
            .get(label)
            .copied()
            .unwrap_or(Identity::Unknown);
        let known = if known == Identity::Unknown {
            let found = identify();
            if let Identity::Own(addr) = found {
                log(&format!(
                    "peer {label} ({addr}) is this agent itself: not measured"
                ));
            }
            self.identities.insert(label.to_string(), found);
            found
        } else {
            known
        };
        matches!(known, Identity::Own(_))
    }
}
