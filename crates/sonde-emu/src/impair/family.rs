//! One link direction whose IPv4 and IPv6 frames take different chains, as a 6in4 tunnel or a
//! different route would treat them (a scenario's `ipv4 = {...}` / `ipv6 = {...}`).
//!
//! Frames are told apart by their EtherType ([`classify`]): 0x0800 IPv4, 0x86DD IPv6, after
//! up to two 802.1Q / 802.1ad tags. A family with a chain of its own goes through it; the
//! other family and every other frame (ARP, a truncated frame) go through the direction's own
//! chain. Each chain keeps its own stages and counters, so a run's record says what each
//! family's stages did.

use super::{Chain, Stage, StageStats};
use crate::packet::Packet;
use crate::time::Instant;
use sonde_scenario::Family;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;
/// Offset of the EtherType of an untagged Ethernet frame.
const ETHERTYPE_AT: usize = 12;
/// Bytes of one VLAN tag (its TPID is the EtherType just read, its TCI the next two).
const TAG_LEN: usize = 4;
/// Most VLAN tags skipped (802.1ad: a service tag, then a customer tag).
const MAX_TAGS: usize = 2;

/// The IP family of an Ethernet frame by its EtherType, VLAN tags skipped; `None` for
/// anything else (ARP, a frame too short to have an EtherType, more than two tags).
pub fn classify(frame: &[u8]) -> Option<Family> {
    let mut at = ETHERTYPE_AT;
    for _ in 0..=MAX_TAGS {
        let bytes = frame.get(at..at + 2)?;
        match u16::from_be_bytes([bytes[0], bytes[1]]) {
            ETHERTYPE_IPV4 => return Some(Family::Ipv4),
            ETHERTYPE_IPV6 => return Some(Family::Ipv6),
            ETHERTYPE_VLAN | ETHERTYPE_QINQ => at += TAG_LEN,
            _ => return None,
        }
    }
    None
}

/// A direction's own chain, and a chain per family that has one.
#[derive(Debug, Default)]
pub struct FamilySplit {
    default: Chain,
    /// IPv4's chain, then IPv6's.
    families: [Option<Chain>; 2],
}

fn slot(f: Family) -> usize {
    usize::from(f == Family::Ipv6)
}

impl From<Chain> for FamilySplit {
    fn from(default: Chain) -> Self {
        FamilySplit {
            default,
            families: [None, None],
        }
    }
}

impl FamilySplit {
    /// `default` for every frame, until [`with_family`](FamilySplit::with_family) gives a
    /// family a chain of its own.
    pub fn new(default: Chain) -> Self {
        FamilySplit::from(default)
    }

    /// Sends `family`'s frames through `chain`.
    #[must_use]
    pub fn with_family(mut self, family: Family, chain: Chain) -> Self {
        self.families[slot(family)] = Some(chain);
        self
    }

    /// True when some family has a chain of its own.
    pub fn splits(&self) -> bool {
        self.families.iter().any(Option::is_some)
    }

    fn chains(&self) -> impl Iterator<Item = &Chain> {
        std::iter::once(&self.default).chain(self.families.iter().flatten())
    }

    /// Hands a frame to its family's chain, or to the direction's own.
    pub fn push(&mut self, pkt: Packet, now: Instant) {
        let own = classify(&pkt.data).map(slot);
        match own.and_then(|i| self.families[i].as_mut()) {
            Some(chain) => chain.push(pkt, now),
            None => self.default.push(pkt, now),
        }
    }

    /// The next frame due by `now` from any chain.
    pub fn poll(&mut self, now: Instant) -> Option<Packet> {
        if let Some(p) = self.default.poll(now) {
            return Some(p);
        }
        self.families.iter_mut().flatten().find_map(|c| c.poll(now))
    }

    /// The earliest instant any chain announced.
    pub fn next_wakeup(&self) -> Option<Instant> {
        self.chains().filter_map(Stage::next_wakeup).min()
    }

    /// Each stage's name and counters, the direction's own chain first under the stages'
    /// names, then each family's chain with the family before the name (`ipv6 delay`).
    pub fn stage_stats(&self) -> Vec<(String, StageStats)> {
        let mut out: Vec<(String, StageStats)> = self
            .default
            .stage_stats()
            .into_iter()
            .map(|(n, s)| (n.to_owned(), s))
            .collect();
        for (family, chain) in Family::BOTH.iter().zip(&self.families) {
            let Some(chain) = chain else { continue };
            out.extend(
                chain
                    .stage_stats()
                    .into_iter()
                    .map(|(n, s)| (format!("{family} {n}"), s)),
            );
        }
        out
    }

    /// Totals over every chain.
    pub fn stats(&self) -> StageStats {
        self.chains()
            .map(Stage::stats)
            .fold(StageStats::default(), add)
    }
}

fn add(a: StageStats, b: StageStats) -> StageStats {
    StageStats {
        packets_in: a.packets_in + b.packets_in,
        bytes_in: a.bytes_in + b.bytes_in,
        packets_out: a.packets_out + b.packets_out,
        bytes_out: a.bytes_out + b.bytes_out,
        dropped: a.dropped + b.dropped,
        bytes_dropped: a.bytes_dropped + b.bytes_dropped,
        duplicated: a.duplicated + b.duplicated,
        corrupted: a.corrupted + b.corrupted,
        reordered: a.reordered + b.reordered,
        queued: a.queued + b.queued,
        max_queued: a.max_queued + b.max_queued,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::impair::{Delay, DelayConfig};
    use crate::seed::ChainSeed;
    use std::time::Duration;

    /// An Ethernet header (zero addresses) with `tags` VLAN tags and then `ethertype`.
    fn frame(tags: &[u16], ethertype: u16, payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        for &tpid in tags {
            f.extend_from_slice(&tpid.to_be_bytes());
            f.extend_from_slice(&[0x00, 0x2a]); // VLAN 42
        }
        f.extend_from_slice(&ethertype.to_be_bytes());
        f.resize(f.len() + payload, 0x45);
        f
    }

    #[test]
    fn frames_are_told_apart_by_ethertype() {
        assert_eq!(classify(&frame(&[], 0x0800, 20)), Some(Family::Ipv4));
        assert_eq!(classify(&frame(&[], 0x86dd, 40)), Some(Family::Ipv6));
        assert_eq!(classify(&frame(&[], 0x0806, 28)), None, "ARP");
        assert_eq!(classify(&frame(&[0x8100], 0x86dd, 40)), Some(Family::Ipv6));
        assert_eq!(
            classify(&frame(&[0x88a8, 0x8100], 0x0800, 20)),
            Some(Family::Ipv4)
        );
        assert_eq!(
            classify(&frame(&[0x8100, 0x8100, 0x8100], 0x0800, 20)),
            None,
            "three tags"
        );
        assert_eq!(classify(&frame(&[0x8100], 0x0806, 28)), None, "tagged ARP");
        // Truncated: no EtherType, or a tag without the EtherType after it.
        assert_eq!(classify(&[0u8; 13]), None);
        assert_eq!(classify(&[]), None);
        assert_eq!(classify(&frame(&[0x8100], 0x86dd, 0)[..17]), None);
        // An IPv6 EtherType with nothing after it is still an IPv6 frame to the splitter.
        assert_eq!(classify(&frame(&[], 0x86dd, 0)), Some(Family::Ipv6));
    }

    fn delay(ms: u64, slot: usize) -> Chain {
        let cfg = DelayConfig::fixed(Duration::from_millis(ms));
        Chain::new().with(Delay::new(cfg, ChainSeed::from_raw(3).rng(slot)))
    }

    #[test]
    fn a_family_with_its_own_chain_takes_it_and_the_rest_the_default() {
        let mut split = FamilySplit::new(delay(5, 0)).with_family(Family::Ipv6, delay(25, 1));
        assert!(split.splits());
        split.push(Packet::new(frame(&[], 0x0800, 20), 4), Instant::ZERO);
        split.push(Packet::new(frame(&[], 0x86dd, 40), 6), Instant::ZERO);
        split.push(Packet::new(frame(&[], 0x0806, 28), 0), Instant::ZERO);
        let mut out = Vec::new();
        while let Some(t) = split.next_wakeup() {
            while let Some(p) = split.poll(t) {
                out.push((p.meta.seq, t));
            }
        }
        let ms = Instant::from_millis;
        assert_eq!(out, vec![(4, ms(5)), (0, ms(5)), (6, ms(25))]);
        let names: Vec<String> = split.stage_stats().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["delay", "ipv6 delay"]);
        let stats = split.stage_stats();
        assert_eq!((stats[0].1.packets_out, stats[1].1.packets_out), (2, 1));
        assert_eq!(split.stats().packets_out, 3);
    }
}
