//! A peer entry that stands for every address its name resolves to (`every_address = true`).
//!
//! A fleet whose members come and go (a Kubernetes DaemonSet, an autoscaled rack) cannot keep
//! one list of them by hand, but its DNS can: a headless Service, a round-robin name or a
//! service registry answers one name with every member's address. Such an entry is resolved
//! again whenever one of its runs is due, and each address it gives is a peer of its own,
//! labelled `LABEL/ADDRESS`, measured in turn. A member that joins is measured from its next
//! due run; one that leaves is no longer measured. The agent's own address among them is left
//! out like any entry that is the agent itself (crate::own).
//!
//! Pure: the addresses come in, the members and what changed go out; the agent resolves.

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use crate::config::{FamilyChoice, Peer};

/// The most addresses one entry stands for: a name that answers with more (a wrong name, a
/// hostile resolver) measures the first ones in address order, and the log says so.
pub const MAX_MEMBERS: usize = 256;

/// One address of an entry, as a peer of its own.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Where its runs go.
    pub addr: SocketAddr,
    /// The concrete peer: the address as its host, labelled `LABEL/ADDRESS`.
    pub peer: Peer,
}

/// The peers an entry stands for now.
#[derive(Debug, Clone, PartialEq)]
pub struct Members {
    /// One member per address, in address order.
    pub list: Vec<Member>,
    /// How many addresses were left out over [`MAX_MEMBERS`].
    pub dropped: usize,
}

/// The members of `entry` from the addresses its name resolved to: duplicates removed, only
/// the entry's family when it names one, sorted, at most [`MAX_MEMBERS`].
pub fn members(entry: &Peer, resolved: &[SocketAddr]) -> Members {
    let ips: BTreeSet<IpAddr> = resolved
        .iter()
        .map(SocketAddr::ip)
        .filter(|ip| match entry.family {
            FamilyChoice::Any => true,
            FamilyChoice::Ipv4 => ip.is_ipv4(),
            FamilyChoice::Ipv6 => ip.is_ipv6(),
        })
        .collect();
    let dropped = ips.len().saturating_sub(MAX_MEMBERS);
    let list = ips
        .into_iter()
        .take(MAX_MEMBERS)
        .map(|ip| Member {
            addr: SocketAddr::new(ip, entry.port),
            peer: member(entry, ip),
        })
        .collect();
    Members { list, dropped }
}

/// The concrete peer at `ip` of `entry`: the address as its host, so its runs go there and
/// nowhere else, and its family fixed to the address's.
fn member(entry: &Peer, ip: IpAddr) -> Peer {
    Peer {
        name: Some(format!("{}/{ip}", entry.label())),
        host: ip.to_string(),
        family: if ip.is_ipv4() {
            FamilyChoice::Ipv4
        } else {
            FamilyChoice::Ipv6
        },
        every_address: false,
        ..entry.clone()
    }
}

/// The order in which one due run visits `n` members: a rotation that starts `offset + seq`
/// along, so that agents sharing one list (each with its own offset) do not all measure the
/// same member first, and one agent's first member changes from run to run.
pub fn visit_order(n: usize, seq: u64, offset: u64) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let start = (offset.wrapping_add(seq) % n as u64) as usize;
    (0..n).map(|i| (start + i) % n).collect()
}

/// What changed from `before` to `now`, as one log line; `None` when nothing did. The first
/// resolution (`before` is `None`) lists every member.
pub fn change_line(label: &str, before: Option<&Members>, now: &Members) -> Option<String> {
    let hosts = |m: &Members| -> BTreeSet<IpAddr> { m.list.iter().map(|m| m.addr.ip()).collect() };
    let new = hosts(now);
    let over = if now.dropped > 0 {
        format!(
            "; {} more addresses left out (at most {MAX_MEMBERS})",
            now.dropped
        )
    } else {
        String::new()
    };
    let Some(before) = before else {
        let list: Vec<String> = new.iter().map(IpAddr::to_string).collect();
        return Some(format!(
            "peer {label}: {} addresses ({}){over}",
            list.len(),
            list.join(", ")
        ));
    };
    let old = hosts(before);
    let joined: Vec<&IpAddr> = new.difference(&old).collect();
    let left: Vec<&IpAddr> = old.difference(&new).collect();
    if joined.is_empty() && left.is_empty() && before.dropped == now.dropped {
        return None;
    }
    let list = |v: &[&IpAddr]| {
        v.iter()
            .map(|ip| ip.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !joined.is_empty() {
        parts.push(format!("new {}", list(&joined)));
    }
    if !left.is_empty() {
        parts.push(format!("gone {}", list(&left)));
    }
    Some(format!(
        "peer {label}: {} addresses ({}){over}",
        new.len(),
        parts.join("; ")
    ))
}

/// A warning when one round of `kind` over `members` members, each run taking about
/// `per_run` and `at_once` of them going side by side (latency runs: crate::inflight; other
/// kinds one at a time), cannot fit in the kind's `period`: the rounds would overrun and the
/// runs due meanwhile be skipped (counted in `sonde_schedule_skipped_runs_total`). None when
/// it fits.
pub fn round_warning(
    label: &str,
    kind: &str,
    members: usize,
    at_once: usize,
    per_run: std::time::Duration,
    period: std::time::Duration,
) -> Option<String> {
    let waves = members.div_ceil(at_once.max(1));
    let round = per_run.as_secs_f64() * waves as f64;
    let period = period.as_secs_f64();
    if round <= period {
        return None;
    }
    let side_by_side = if at_once > 1 {
        format!(", {at_once} at a time,")
    } else {
        String::new()
    };
    Some(format!(
        "peer {label}: {members} members x {:.1} s of {kind}{side_by_side} = {round:.1} s a round, more than its period of {period:.0} s: rounds overrun and the runs due meanwhile are skipped; lengthen the period or shorten the runs",
        per_run.as_secs_f64()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(family: FamilyChoice) -> Peer {
        Peer {
            name: Some("fleet".into()),
            host: "sonde-agents.example".into(),
            port: 5300,
            family,
            link_rate: Some("1G".into()),
            psk_file: None,
            every_address: true,
        }
    }

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter()
            .map(|ip| SocketAddr::new(ip.parse().unwrap(), 5300))
            .collect()
    }

    #[test]
    fn each_address_once_in_order_labelled_and_with_its_family() {
        let m = members(
            &entry(FamilyChoice::Any),
            &addrs(&["10.0.0.9", "fd00::2", "10.0.0.3", "10.0.0.9"]),
        );
        let got: Vec<(&str, &str, FamilyChoice)> = m
            .list
            .iter()
            .map(|m| &m.peer)
            .map(|p| (p.label(), p.host.as_str(), p.family))
            .collect();
        assert_eq!(
            got,
            [
                ("fleet/10.0.0.3", "10.0.0.3", FamilyChoice::Ipv4),
                ("fleet/10.0.0.9", "10.0.0.9", FamilyChoice::Ipv4),
                ("fleet/fd00::2", "fd00::2", FamilyChoice::Ipv6),
            ]
        );
        assert_eq!(m.dropped, 0);
        // The rest of the entry carries over; a member is a plain peer.
        assert!(m.list.iter().all(|m| {
            let p = &m.peer;
            m.addr.port() == 5300
                && p.port == 5300
                && p.link_rate.as_deref() == Some("1G")
                && !p.every_address
        }));
    }

    #[test]
    fn a_family_keeps_only_its_addresses() {
        let all = addrs(&["10.0.0.3", "fd00::2"]);
        let v6 = members(&entry(FamilyChoice::Ipv6), &all);
        assert_eq!(v6.list.len(), 1);
        assert_eq!(v6.list[0].peer.host, "fd00::2");
        let v4 = members(&entry(FamilyChoice::Ipv4), &all);
        assert_eq!(v4.list.len(), 1);
        assert_eq!(v4.list[0].peer.host, "10.0.0.3");
    }

    #[test]
    fn more_than_the_most_are_cut_and_counted() {
        let many: Vec<SocketAddr> = (0..300u32)
            .map(|i| {
                SocketAddr::new(
                    IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000u32 + i)),
                    5300,
                )
            })
            .collect();
        let m = members(&entry(FamilyChoice::Any), &many);
        assert_eq!(m.list.len(), MAX_MEMBERS);
        assert_eq!(m.dropped, 300 - MAX_MEMBERS);
        assert_eq!(m.list[0].peer.host, "10.0.0.0");
        let line = change_line("fleet", None, &m).unwrap();
        assert!(
            line.contains("44 more addresses left out (at most 256)"),
            "{line}"
        );
    }

    #[test]
    fn a_round_longer_than_its_period_is_said() {
        let warn = |kind, members, at_once| {
            let s = std::time::Duration::from_secs_f64;
            round_warning("node", kind, members, at_once, s(1.0), s(10.0))
        };
        assert_eq!(warn("throughput", 9, 1), None);
        assert_eq!(warn("throughput", 10, 1), None);
        assert_eq!(
            warn("throughput", 50, 1).unwrap(),
            "peer node: 50 members x 1.0 s of throughput = 50.0 s a round, more than its period of 10 s: rounds overrun and the runs due meanwhile are skipped; lengthen the period or shorten the runs"
        );
        // Four at a time: 40 members in ten waves fit, 41 in eleven do not.
        assert_eq!(warn("latency", 40, 4), None);
        assert_eq!(
            warn("latency", 41, 4).unwrap(),
            "peer node: 41 members x 1.0 s of latency, 4 at a time, = 11.0 s a round, more than its period of 10 s: rounds overrun and the runs due meanwhile are skipped; lengthen the period or shorten the runs"
        );
    }

    #[test]
    fn every_member_once_per_run_starting_further_along_each_run() {
        assert_eq!(visit_order(0, 5, 7), Vec::<usize>::new());
        assert_eq!(visit_order(3, 0, 0), [0, 1, 2]);
        assert_eq!(visit_order(3, 1, 0), [1, 2, 0]);
        assert_eq!(visit_order(3, 0, 5), [2, 0, 1]);
        assert_eq!(visit_order(1, 9, u64::MAX), [0]);
        for seq in 0..10 {
            let mut v = visit_order(4, seq, 3);
            v.sort_unstable();
            assert_eq!(v, [0, 1, 2, 3]);
        }
    }

    #[test]
    fn the_log_says_who_joined_and_who_left_and_nothing_when_nothing_changed() {
        let e = entry(FamilyChoice::Any);
        let first = members(&e, &addrs(&["10.0.0.1", "10.0.0.2"]));
        assert_eq!(
            change_line("fleet", None, &first).unwrap(),
            "peer fleet: 2 addresses (10.0.0.1, 10.0.0.2)"
        );
        assert_eq!(change_line("fleet", Some(&first), &first), None);
        let next = members(&e, &addrs(&["10.0.0.2", "10.0.0.3", "10.0.0.4"]));
        assert_eq!(
            change_line("fleet", Some(&first), &next).unwrap(),
            "peer fleet: 3 addresses (new 10.0.0.3, 10.0.0.4; gone 10.0.0.1)"
        );
        let empty = members(&e, &[]);
        assert_eq!(
            change_line("fleet", Some(&next), &empty).unwrap(),
            "peer fleet: 0 addresses (gone 10.0.0.2, 10.0.0.3, 10.0.0.4)"
        );
    }
}
