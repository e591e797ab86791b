//! FQ-CoDel (RFC 8290): flows hashed to queues, served by deficit round robin, each with CoDel.
//!
//! A packet's 5-tuple (addresses, protocol, ports of an IPv4 or IPv6 frame; the Ethernet
//! header for anything else) is hashed with the stage's seed into one of `flows` queues, so a
//! run seed fixes which flows share a queue. A queue that becomes active joins the *new* list
//! with a `quantum` of credit; the scheduler serves the new list first, then the *old* list,
//! moving a queue to the end of the old list when its credit is spent (and topping the credit
//! up by a quantum). A new queue that empties moves to the old list, an old one that empties
//! leaves. This is what gives a sparse flow (a ping, a DNS query) its near-zero delay beside a
//! bulk flow. Each queue runs its own [`Codel`]. When the total limit is reached, the packet
//! at the head of the queue holding the most bytes is dropped (RFC 8290 section 4.1), until
//! the new packet fits.

use std::collections::VecDeque;

use super::codel::{Codel, CodelParams, FlowQueue};
use super::managed::Queue;
use super::{QueueLimit, StageStats};
use crate::packet::Packet;
use crate::seed::splitmix64;
use crate::time::Instant;

/// Settings of an [`FqCodel`] queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FqCodelConfig {
    /// Per-flow CoDel parameters.
    pub codel: CodelParams,
    /// Number of flow queues (RFC default 1024).
    pub flows: u32,
    /// DRR credit per round in bytes (RFC default 1514).
    pub quantum: u32,
    /// The limit over all queues.
    pub limit: QueueLimit,
    /// Seed of the flow hash.
    pub seed: u64,
}

#[derive(Debug, Default)]
struct Flow {
    queue: FlowQueue,
    codel: Codel,
    deficit: i64,
    /// On the new or old list.
    listed: bool,
}

/// The FQ-CoDel queue: `aqm = "fq_codel"`. See the module docs.
#[derive(Debug)]
pub struct FqCodel {
    flows: Vec<Flow>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    quantum: i64,
    limit: QueueLimit,
    seed: u64,
    packets: usize,
    bytes: u64,
}

impl FqCodel {
    /// A queue with `config`; at least one flow queue.
    pub fn new(config: FqCodelConfig) -> Self {
        let n = config.flows.max(1) as usize;
        FqCodel {
            flows: (0..n)
                .map(|_| Flow {
                    codel: Codel::new(config.codel),
                    ..Flow::default()
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            quantum: i64::from(config.quantum.max(1)),
            limit: config.limit,
            seed: config.seed,
            packets: 0,
            bytes: 0,
        }
    }

    /// The queue `frame` is hashed to.
    pub fn flow_of(&self, frame: &[u8]) -> usize {
        let mut h = splitmix64(self.seed);
        for chunk in flow_key(frame).chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            h = splitmix64(h ^ u64::from_le_bytes(word));
        }
        (h % self.flows.len() as u64) as usize
    }

    /// Bytes held by flow queue `i`.
    pub fn flow_bytes(&self, i: usize) -> u64 {
        self.flows.get(i).map_or(0, |f| f.queue.bytes())
    }

    /// Drops the head of the queue holding the most bytes.
    fn drop_from_fattest(&mut self, stats: &mut StageStats) {
        let fattest = self.flows.iter_mut().max_by_key(|f| f.queue.bytes());
        if let Some(flow) = fattest {
            if let Some((_, pkt)) = flow.queue.pop() {
                self.packets -= 1;
                self.bytes -= pkt.len() as u64;
                stats.on_drop(&pkt);
            }
        }
    }

    /// The next queue to serve, with whether it came from the new list.
    fn head_flow(&self) -> Option<(usize, bool)> {
        match self.new_flows.front() {
            Some(&i) => Some((i, true)),
            None => self.old_flows.front().map(|&i| (i, false)),
        }
    }

    fn pop_list(&mut self, new: bool) {
        if new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

impl Queue for FqCodel {
    fn name(&self) -> &'static str {
        "fq_codel"
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, stats: &mut StageStats) {
        let i = self.flow_of(&pkt.data);
        while self.packets > 0 && self.limit.overflows(self.packets, self.bytes, pkt.len()) {
            self.drop_from_fattest(stats);
        }
        if self.limit.overflows(self.packets, self.bytes, pkt.len()) {
            stats.on_drop(&pkt);
            return;
        }
        self.packets += 1;
        self.bytes += pkt.len() as u64;
        let quantum = self.quantum;
        if let Some(flow) = self.flows.get_mut(i) {
            flow.queue.push(pkt, now);
            if !flow.listed {
                flow.listed = true;
                flow.deficit = quantum;
                self.new_flows.push_back(i);
            }
        }
    }

    fn dequeue(&mut self, now: Instant, stats: &mut StageStats) -> Option<Packet> {
        loop {
            let (i, new) = self.head_flow()?;
            let quantum = self.quantum;
            let flow = self.flows.get_mut(i)?;
            if flow.deficit <= 0 {
                flow.deficit += quantum;
                self.pop_list(new);
                self.old_flows.push_back(i);
                continue;
            }
            let (before_p, before_b) = (flow.queue.len(), flow.queue.bytes());
            let pkt = flow.codel.dequeue(&mut flow.queue, now, stats);
            self.packets -= before_p - flow.queue.len();
            self.bytes -= before_b - flow.queue.bytes();
            match pkt {
                Some(p) => {
                    flow.deficit -= p.len() as i64;
                    return Some(p);
                }
                None => {
                    let to_old = new && !self.old_flows.is_empty();
                    flow.listed = to_old;
                    self.pop_list(new);
                    if to_old {
                        self.old_flows.push_back(i);
                    }
                }
            }
        }
    }

    fn len(&self) -> usize {
        self.packets
    }
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const ETHERNET_HEADER: usize = 14;

/// The bytes that name a frame's flow: source and destination address, protocol and the
/// first four bytes after the IP header (the ports of TCP and UDP); the Ethernet header for a
/// frame that is not IP (or too short).
fn flow_key(frame: &[u8]) -> Vec<u8> {
    let ether = frame.get(12..14).map(|b| u16::from_be_bytes([b[0], b[1]]));
    let ip = frame.get(ETHERNET_HEADER..).unwrap_or_default();
    let parts = match ether {
        Some(ETHERTYPE_IPV4) => ip.first().map(|&v| {
            let ihl = usize::from(v & 0x0f) * 4;
            (ip.get(9..10), ip.get(12..20), ip.get(ihl..ihl + 4))
        }),
        Some(ETHERTYPE_IPV6) => Some((ip.get(6..7), ip.get(8..40), ip.get(40..44))),
        _ => None,
    };
    match parts {
        Some((Some(proto), Some(addrs), ports)) => {
            let mut key = Vec::with_capacity(48);
            key.extend_from_slice(proto);
            key.extend_from_slice(addrs);
            key.extend_from_slice(ports.unwrap_or_default());
            key
        }
        _ => frame.get(..ETHERNET_HEADER).unwrap_or(frame).to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Ethernet + IPv4 + UDP frame of `len` bytes from source port `port`.
    fn udp(port: u16, len: usize, seq: u64) -> Packet {
        let mut f = vec![0u8; len.max(42)];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        f[14] = 0x45;
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&port.to_be_bytes());
        f[36..38].copy_from_slice(&5201u16.to_be_bytes());
        Packet::new(f, seq)
    }

    fn config(limit: QueueLimit, seed: u64) -> FqCodelConfig {
        FqCodelConfig {
            codel: CodelParams::default(),
            flows: 1024,
            quantum: 1514,
            limit,
            seed,
        }
    }

    fn fq(limit: QueueLimit) -> FqCodel {
        FqCodel::new(config(limit, 7))
    }

    #[test]
    fn flows_hash_by_five_tuple_and_seed() {
        let q = fq(QueueLimit::Packets(10));
        let a = q.flow_of(&udp(1000, 100, 0).data);
        assert_eq!(a, q.flow_of(&udp(1000, 1500, 1).data));
        assert_ne!(a, q.flow_of(&udp(1001, 100, 2).data));
        let other = FqCodel::new(config(QueueLimit::Packets(10), 8));
        let moved = (1000..1010).any(|p| {
            let d = udp(p, 100, 0).data;
            q.flow_of(&d) != other.flow_of(&d)
        });
        assert!(moved, "the seed changes nothing");
    }

    #[test]
    fn overflow_drops_the_fattest_flows_head() {
        let mut q = fq(QueueLimit::Packets(10));
        let mut stats = StageStats::default();
        let now = Instant::ZERO;
        for i in 0..8 {
            q.enqueue(udp(1000, 1500, i), now, &mut stats);
        }
        for i in 8..10 {
            q.enqueue(udp(2000, 100, i), now, &mut stats);
        }
        let (fat, thin) = (
            q.flow_of(&udp(1000, 1, 0).data),
            q.flow_of(&udp(2000, 1, 0).data),
        );
        // The thin flow's packet fits: the fat flow's head (seq 0) makes room.
        q.enqueue(udp(2000, 100, 10), now, &mut stats);
        assert_eq!(stats.dropped, 1);
        assert_eq!(q.flow_bytes(fat), 7 * 1500);
        assert_eq!(q.flow_bytes(thin), 3 * 100);
        let first = q.dequeue(now, &mut stats).map(|p| p.meta.seq);
        assert_eq!(first, Some(1), "the dropped packet was not the head");
    }
}
