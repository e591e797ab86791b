//! CoDel (RFC 8289): drop at dequeue once packets have waited above `target` for `interval`.
//!
//! Each packet is stamped when it is queued; its sojourn time is read when it is dequeued, on
//! the caller's virtual clock. While the sojourn stays under `target` (or less than a packet
//! is left behind it) nothing happens. Once it has stayed above for a whole `interval`, CoDel
//! enters the dropping state: it drops the packet at hand and then one more each time the
//! control law `interval / sqrt(count)` says, until the sojourn falls below `target`. On
//! re-entering the dropping state soon after leaving it (within 16 intervals), `count` starts
//! from how far it had climbed the last time, as the RFC's pseudocode does, so a persistent
//! queue is not given a fresh slow start.
//!
//! [`Codel`] is the state machine alone, over a [`FlowQueue`]; FQ-CoDel runs one per flow.
//! [`CodelQueue`] is a single CoDel queue with a tail-drop limit.

use std::collections::VecDeque;
use std::time::Duration;

use super::managed::Queue;
use super::{QueueLimit, StageStats};
use crate::packet::Packet;
use crate::time::{duration_nanos, Instant};

/// The largest packet CoDel assumes (RFC 8289's MAXPACKET: an Ethernet frame).
pub(crate) const MAX_PACKET: u64 = 1514;

/// Packets with the instant each was queued, and their byte count.
#[derive(Debug, Default)]
pub struct FlowQueue {
    packets: VecDeque<(Instant, Packet)>,
    bytes: u64,
}

impl FlowQueue {
    /// Queues `pkt`, stamped `now`.
    pub fn push(&mut self, pkt: Packet, now: Instant) {
        self.bytes += pkt.len() as u64;
        self.packets.push_back((now, pkt));
    }

    /// The head with its stamp.
    pub fn pop(&mut self) -> Option<(Instant, Packet)> {
        let (t, pkt) = self.packets.pop_front()?;
        self.bytes -= pkt.len() as u64;
        Some((t, pkt))
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// CoDel's two parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodelParams {
    /// Acceptable standing queue delay (RFC default 5 ms).
    pub target: Duration,
    /// How long the delay may stay above target before dropping starts (RFC default 100 ms).
    pub interval: Duration,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        }
    }
}

/// CoDel's state (RFC 8289 section 5). See the module docs.
#[derive(Debug, Clone, Default)]
pub struct Codel {
    params: CodelParams,
    /// When the sojourn time will have been above target for an interval; `None` while it
    /// is below.
    first_above: Option<Instant>,
    /// When the next drop is due in the dropping state.
    drop_next: Instant,
    count: u32,
    last_count: u32,
    dropping: bool,
    /// The instants of the drops this state machine made, when recording (tests).
    drop_log: Option<Vec<Instant>>,
}

impl Codel {
    /// A state machine with `params`, not dropping.
    pub fn new(params: CodelParams) -> Self {
        Codel {
            params,
            ..Codel::default()
        }
    }

    /// Keeps the instant of every drop from now on (for tests and traces).
    pub fn record_drops(&mut self) {
        self.drop_log = Some(Vec::new());
    }

    /// The instants of the drops since [`record_drops`](Codel::record_drops).
    pub fn drops(&self) -> &[Instant] {
        self.drop_log.as_deref().unwrap_or_default()
    }

    /// The drop count of the current (or last) dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// True in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// `t + interval / sqrt(count)`: the control law.
    fn control_law(&self, t: Instant, count: u32) -> Instant {
        let interval = duration_nanos(self.params.interval) as f64;
        t.add_nanos((interval / f64::from(count.max(1)).sqrt()) as u64)
    }

    /// RFC 8289's `dodequeue`: the head and whether it may be dropped.
    fn do_dequeue(&mut self, q: &mut FlowQueue, now: Instant) -> (Option<Packet>, bool) {
        let Some((stamp, pkt)) = q.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now - stamp;
        let mut ok_to_drop = false;
        if sojourn < self.params.target || q.bytes() <= MAX_PACKET {
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + self.params.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        (Some(pkt), ok_to_drop)
    }

    fn drop_one(&mut self, pkt: &Packet, now: Instant, stats: &mut StageStats) {
        stats.on_drop(pkt);
        if let Some(log) = self.drop_log.as_mut() {
            log.push(now);
        }
    }

    /// RFC 8289's `dequeue`: the next packet of `q` to send at `now`, after the drops the
    /// state machine makes (counted in `stats`).
    pub fn dequeue(
        &mut self,
        q: &mut FlowQueue,
        now: Instant,
        stats: &mut StageStats,
    ) -> Option<Packet> {
        let (mut pkt, mut ok_to_drop) = self.do_dequeue(q, now);
        if pkt.is_none() {
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                if let Some(p) = pkt.as_ref() {
                    self.drop_one(p, now, stats);
                }
                self.count = self.count.saturating_add(1);
                (pkt, ok_to_drop) = self.do_dequeue(q, now);
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            if let Some(p) = pkt.as_ref() {
                self.drop_one(p, now, stats);
            }
            (pkt, _) = self.do_dequeue(q, now);
            self.dropping = true;
            let delta = self.count.saturating_sub(self.last_count);
            let recent = now - self.drop_next < self.params.interval * 16;
            self.count = if delta > 1 && recent { delta } else { 1 };
            self.drop_next = self.control_law(now, self.count);
            self.last_count = self.count;
        }
        pkt
    }
}

/// One CoDel queue with a tail-drop limit: `aqm = "codel"`.
#[derive(Debug)]
pub struct CodelQueue {
    codel: Codel,
    queue: FlowQueue,
    limit: QueueLimit,
}

impl CodelQueue {
    /// CoDel with `params` and `limit` (packets or bytes; a time limit resolved already).
    pub fn new(params: CodelParams, limit: QueueLimit) -> Self {
        CodelQueue {
            codel: Codel::new(params),
            queue: FlowQueue::default(),
            limit,
        }
    }

    /// The state machine (for tests and traces).
    pub fn codel_mut(&mut self) -> &mut Codel {
        &mut self.codel
    }
}

impl Queue for CodelQueue {
    fn name(&self) -> &'static str {
        "codel"
    }

    fn enqueue(&mut self, pkt: Packet, now: Instant, stats: &mut StageStats) {
        if self
            .limit
            .overflows(self.queue.len(), self.queue.bytes(), pkt.len())
        {
            stats.on_drop(&pkt);
            return;
        }
        self.queue.push(pkt, now);
    }

    fn dequeue(&mut self, now: Instant, stats: &mut StageStats) -> Option<Packet> {
        self.codel.dequeue(&mut self.queue, now, stats)
    }

    fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A link sending one packet per millisecond from `q`, with `arrive(ms)` packets arriving
    /// in each millisecond, for `ms` milliseconds; returns the packets sent.
    fn run(q: &mut CodelQueue, from: u64, ms: u64, arrive: impl Fn(u64) -> u64) -> u64 {
        let mut stats = StageStats::default();
        let mut sent = 0;
        for t in from..from + ms {
            let now = Instant::from_nanos(t * MS);
            for i in 0..arrive(t) {
                q.enqueue(Packet::new(vec![0; 1500], t * 10 + i), now, &mut stats);
            }
            sent += u64::from(q.dequeue(now, &mut stats).is_some());
        }
        sent
    }

    fn queue() -> CodelQueue {
        let mut q = CodelQueue::new(CodelParams::default(), QueueLimit::Packets(10_000));
        q.codel_mut().record_drops();
        q
    }

    fn ms(t: Instant) -> f64 {
        t.as_nanos() as f64 / MS as f64
    }

    #[test]
    fn standing_queue_drops_on_the_control_law() {
        // 20 packets queued at once, then one more than the link sends every tenth ms: a
        // standing queue of 20 ms and growing.
        let mut q = queue();
        run(&mut q, 0, 1000, |t| {
            if t == 0 {
                21
            } else {
                1 + u64::from(t % 10 == 0)
            }
        });
        let drops = q.codel_mut().drops().to_vec();
        eprintln!(
            "codel drops at {:?} ms",
            drops.iter().take(9).map(|&t| ms(t)).collect::<Vec<_>>()
        );
        let first = drops.first().map_or(0.0, |&t| ms(t));
        // Above target from 5 ms on: the first drop one interval later.
        assert!((104.0..=106.0).contains(&first), "first drop at {first} ms");
        assert!(drops.len() >= 8, "{} drops", drops.len());
        for (n, pair) in drops.windows(2).take(8).enumerate() {
            let gap = ms(pair[1]) - ms(pair[0]);
            let law = 100.0 / ((n + 1) as f64).sqrt();
            assert!((gap - law).abs() <= 1.0, "gap {n}: {gap} ms, law {law} ms");
        }
    }

    #[test]
    fn falling_below_target_stops_dropping_and_reentry_keeps_count() {
        let mut q = queue();
        run(&mut q, 0, 600, |t| {
            if t == 0 {
                41
            } else {
                1 + u64::from(t % 5 == 0)
            }
        });
        assert!(q.codel_mut().dropping());
        let climbed = q.codel_mut().count();
        eprintln!("codel count before draining {climbed}");
        assert!(climbed > 2, "count {climbed}");
        // No arrivals: the queue drains below target and dropping stops.
        run(&mut q, 600, 200, |_| 0);
        let after_drain = q.codel_mut().drops().len();
        assert!(!q.codel_mut().dropping());
        assert_eq!(q.len(), 0);
        run(&mut q, 800, 50, |_| 1);
        assert_eq!(
            q.codel_mut().drops().len(),
            after_drain,
            "dropped below target"
        );
        // A new standing queue soon after: dropping resumes with the count carried over.
        run(&mut q, 850, 300, |t| {
            if t == 850 {
                41
            } else {
                1 + u64::from(t % 5 == 0)
            }
        });
        assert!(q.codel_mut().drops().len() > after_drain);
        eprintln!("codel count after re-entry {}", q.codel_mut().count());
        assert!(q.codel_mut().count() > 1, "count restarted at 1");
        // The second drop of the new state follows the first at the carried-over count's
        // spacing, not a fresh interval.
        let again = &q.codel_mut().drops()[after_drain..];
        let gap = ms(again[1]) - ms(again[0]);
        eprintln!("codel first gap after re-entry {gap} ms");
        assert!(gap < 50.0, "gap {gap} ms");
    }

    #[test]
    fn short_burst_is_not_dropped() {
        // 60 ms of queue at once, then nothing: above target for 55 ms, under an interval.
        let mut q = queue();
        let sent = run(&mut q, 0, 200, |t| if t == 0 { 60 } else { 0 });
        assert_eq!(sent, 60);
        assert!(q.codel_mut().drops().is_empty());
    }
}
