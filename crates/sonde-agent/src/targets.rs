//! What one due run measures: its peer entry, or every member of an `every_address` entry
//! (crate::group) in turn, with the entry or member that is this agent itself left out
//! (crate::own), each said once in the log.
//!
//! This is where the agent resolves its peers' names, before each run, so a peer that moves
//! is followed; the run is handed the address found (the one the agent checked is not
//! itself), under the entry's label.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;

use crate::config::Peer;
use crate::group::{self, Members};
use crate::names::Names;
use crate::own::{self, Identity};
use crate::schedule::Job;
use sonde_runtime::RunError;

/// What the agent knows about its entries between runs.
#[derive(Debug)]
pub struct Targets {
    /// The names' last answers.
    names: Names,
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
            names: Names::default(),
            groups: vec![None; entries],
            identities: HashMap::new(),
            offset: seed,
        }
    }

    /// The peers `job` of `entry` measures now, each at the address its name has now (or
    /// had last, while the name servers do not answer: crate::names). An `every_address`
    /// entry's members are found again and their change logged; members that left are
    /// returned in `left`.
    pub fn due(
        &mut self,
        entry: &Peer,
        job: Job,
        own_port: u16,
        left: &mut Vec<Left>,
        log: &dyn Fn(&str),
        interrupt: &AtomicBool,
    ) -> Due {
        let family = crate::runner::family(entry.family);
        let resolved: Vec<SocketAddr> =
            match self
                .names
                .lookup(&entry.host, entry.port, family, interrupt, log)
            {
                Ok(found) => found.addrs().to_vec(),
                // Stopping: nothing to measure, and nothing failed.
                Err(RunError::Interrupted) => return Due::Peers(vec![]),
                Err(e) => return Due::Unresolved(e.to_string()),
            };
        if !entry.every_address {
            let Some(&addr) = resolved.first() else {
                return Due::Unresolved(format!("{} has no address", entry.host));
            };
            let is_own = self.is_own(entry.label(), log, || {
                own::identify(&entry.host, addr, own_port, own::is_local_address)
            });
            return Due::Peers(if is_own {
                vec![]
            } else {
                vec![at_address(entry, addr)]
            });
        }
        let now = group::members(entry, &resolved);
        let before = self.groups.get(job.peer).and_then(Option::as_ref);
        if let Some(line) = group::change_line(entry.label(), before, &now) {
            log(&line);
        }
        if let Some(before) = before {
            let addrs: HashSet<SocketAddr> = now.list.iter().map(|m| m.addr).collect();
            for gone in before
                .list
                .iter()
                .filter(|m| !addrs.contains(&m.addr))
                .map(|m| &m.peer)
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
        let order = group::visit_order(now.list.len(), job.seq, self.offset);
        let mut peers = Vec::with_capacity(order.len());
        for i in order {
            let Some(member) = now.list.get(i) else {
                continue;
            };
            let is_own = self.is_own(member.peer.label(), log, || {
                own::identify(&entry.host, member.addr, own_port, own::is_local_address)
            });
            if !is_own {
                peers.push(member.peer.clone());
            }
        }
        Due::Peers(peers)
    }

    /// After a reload to `entries`, where `was(i)` is entry i's index before (None for a new
    /// entry): what is known of the entries that stay carries over, and the members of the
    /// `every_address` entries that went are returned in `left`. Names keep their last
    /// answers.
    pub fn retarget(
        &mut self,
        entries: &[Peer],
        was: impl Fn(usize) -> Option<usize>,
        left: &mut Vec<Left>,
    ) {
        let mut old = std::mem::take(&mut self.groups);
        self.groups = (0..entries.len())
            .map(|i| was(i).and_then(|w| old.get_mut(w)?.take()))
            .collect();
        for gone in old.into_iter().flatten() {
            for m in gone.list {
                left.push(Left {
                    label: m.peer.label().to_string(),
                    family: crate::runner::family_label(m.peer.family),
                });
            }
        }
        let kept: Vec<&str> = (0..entries.len())
            .filter(|&i| was(i).is_some())
            .filter_map(|i| entries.get(i).map(Peer::label))
            .collect();
        self.identities.retain(|label, _| {
            kept.iter().any(|k| {
                label == k
                    || label
                        .strip_prefix(k)
                        .is_some_and(|rest| rest.starts_with('/'))
            })
        });
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

/// `entry` to be measured at `addr`, still under its label.
fn at_address(entry: &Peer, addr: SocketAddr) -> Peer {
    let host = match addr {
        // A link-local address keeps its interface.
        SocketAddr::V6(v6) if v6.scope_id() != 0 => format!("{}%{}", v6.ip(), v6.scope_id()),
        _ => addr.ip().to_string(),
    };
    Peer {
        name: Some(entry.label().to_string()),
        host,
        port: addr.port(),
        ..entry.clone()
    }
}
