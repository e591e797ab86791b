//! A deterministic two-endpoint harness: sender and receiver joined by a simulated link
//! (rate, delay, seeded random or burst loss, a drop-tail queue) on a virtual clock.

use crate::pattern;
use crate::receiver::{FeedbackMode, Receiver, ReceiverConfig};
use crate::sender::{PatternSource, Sender, SenderConfig};
use std::collections::VecDeque;
use std::time::Duration;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Loss on a link: independent, or Gilbert–Elliott (good/bad states).
#[derive(Clone, Copy)]
pub enum LossModel {
    Random(f64),
    /// Mean loss and mean burst length in packets (all packets in the bad state are lost).
    Bursts {
        mean: f64,
        burst: f64,
    },
}

struct Link {
    rate_bps: f64,
    delay: Duration,
    loss: LossModel,
    bad: bool,
    rng: Rng,
    busy_until: Duration,
    queue_limit: usize,
    queue: VecDeque<(Duration, Vec<u8>)>,
    corrupt_every: Option<u64>,
    sent: u64,
}

impl Link {
    fn new(rate_bps: f64, delay: Duration, loss: LossModel, seed: u64) -> Self {
        Self {
            rate_bps,
            delay,
            loss,
            bad: false,
            rng: Rng(seed | 1),
            busy_until: Duration::ZERO,
            queue_limit: 200,
            queue: VecDeque::new(),
            corrupt_every: None,
            sent: 0,
        }
    }

    fn lost(&mut self) -> bool {
        match self.loss {
            LossModel::Random(p) => self.rng.next() < p,
            LossModel::Bursts { mean, burst } => {
                // Leave bad with 1/burst; enter it so the bad share is `mean`.
                let leave = 1.0 / burst;
                let enter = leave * mean / (1.0 - mean);
                let flip = if self.bad { leave } else { enter };
                if self.rng.next() < flip {
                    self.bad = !self.bad;
                }
                self.bad
            }
        }
    }

    fn send(&mut self, now: Duration, mut p: Vec<u8>) {
        self.sent += 1;
        if let Some(n) = self.corrupt_every {
            if self.sent.is_multiple_of(n) {
                let i = (self.rng.next() * p.len() as f64) as usize % p.len();
                p[i] ^= 0x40;
            }
        }
        let in_queue = self
            .queue
            .iter()
            .filter(|(t, _)| *t > now + self.delay)
            .count();
        if in_queue >= self.queue_limit || self.lost() {
            return;
        }
        let start = self.busy_until.max(now);
        self.busy_until = start + Duration::from_secs_f64(p.len() as f64 * 8.0 / self.rate_bps);
        self.queue.push_back((self.busy_until + self.delay, p));
    }

    fn due(&mut self, now: Duration) -> Option<Vec<u8>> {
        if self.queue.front().is_some_and(|(t, _)| *t <= now) {
            return self.queue.pop_front().map(|(_, p)| p);
        }
        None
    }

    fn next(&self) -> Option<Duration> {
        self.queue.front().map(|(t, _)| *t)
    }
}

/// What one simulated transfer gave.
pub struct Outcome {
    pub delivered: u64,
    pub bad_bytes: u64,
    pub blocks: Vec<u32>,
    pub elapsed: Duration,
    pub sender: crate::wire::SenderReport,
    pub receiver: crate::wire::ReceiverReport,
    pub finished: bool,
    /// Each end's comparison of the two SHA-256 digests (sender's, receiver's).
    pub digest_checks: (Option<bool>, Option<bool>),
}

impl Outcome {
    pub fn goodput_bps(&self) -> f64 {
        self.delivered as f64 * 8.0 / self.elapsed.as_secs_f64()
    }
}

pub struct Setup {
    pub len: u64,
    pub link_bps: f64,
    pub delay: Duration,
    pub loss: LossModel,
    pub sender: SenderConfig,
    pub mode: FeedbackMode,
    pub corrupt_every: Option<u64>,
}

impl Setup {
    pub fn new(len: u64, loss: LossModel) -> Self {
        Self {
            len,
            link_bps: 100e6,
            delay: Duration::from_millis(1),
            loss,
            sender: SenderConfig::default(),
            mode: FeedbackMode::Unrestricted,
            corrupt_every: None,
        }
    }

    pub fn run(self, seed: u64) -> Outcome {
        let block_symbols = u64::from(self.sender.k);
        let arq = self.sender.arq;
        let mut tx = Sender::new(
            self.sender,
            Box::new(PatternSource {
                len: Some(self.len),
            }),
        );
        let rx_cfg = ReceiverConfig::for_mode(self.mode);
        let mut rx = Receiver::new(if arq { rx_cfg.arq() } else { rx_cfg });
        let mut fwd = Link::new(self.link_bps, self.delay, self.loss, seed);
        fwd.corrupt_every = self.corrupt_every;
        let mut back = Link::new(self.link_bps, self.delay, self.loss, seed.wrapping_mul(7));
        let symbol = 1420usize;
        let mut out = Outcome {
            delivered: 0,
            bad_bytes: 0,
            blocks: Vec::new(),
            elapsed: Duration::ZERO,
            sender: Default::default(),
            receiver: Default::default(),
            finished: false,
            digest_checks: (None, None),
        };
        let mut buf = vec![0u8; 2048];
        let mut now = Duration::ZERO;
        let limit = Duration::from_secs(60);
        while now < limit && !(tx.is_done() && rx.peer_report().is_some()) {
            while let Some(p) = fwd.due(now) {
                let _ = rx.handle(now, &p);
            }
            while let Some(p) = back.due(now) {
                let _ = tx.handle(now, &p);
            }
            while let Some(b) = rx.poll_block() {
                let k = block_symbols * symbol as u64;
                out.bad_bytes += pattern::mismatches(u64::from(b.index) * k, &b.data);
                out.delivered += b.data.len() as u64;
                out.blocks.push(b.index);
            }
            if tx.is_done() && out.elapsed == Duration::ZERO {
                out.elapsed = now;
            }
            while let Ok(Some(n)) = tx.poll_transmit(now, &mut buf) {
                fwd.send(now, buf[..n].to_vec());
            }
            while let Some(n) = rx.poll_transmit(now, &mut buf) {
                back.send(now, buf[..n].to_vec());
            }
            let next = [
                tx.poll_timeout(now),
                rx.poll_timeout(now),
                fwd.next(),
                back.next(),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(now + Duration::from_millis(1));
            now = next.max(now + Duration::from_micros(1));
        }
        out.finished = tx.is_done() && rx.peer_report().is_some();
        out.sender = rx.peer_report().unwrap_or_default();
        out.receiver = tx.peer_report().unwrap_or_default();
        out.digest_checks = (tx.digest_check(), rx.digest_check());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: u64 = 6_000_000;

    fn check_every_byte(o: &Outcome, len: u64) {
        assert!(o.finished, "transfer did not finish");
        assert_eq!(o.delivered, len);
        assert_eq!(o.bad_bytes, 0);
        let in_order: Vec<u32> = (0..o.blocks.len() as u32).collect();
        assert_eq!(
            o.blocks, in_order,
            "blocks are handed on once each, in order"
        );
        assert_eq!(o.digest_checks, (Some(true), Some(true)), "SHA-256 digests");
        assert_eq!(o.receiver.delivered_bytes, len);
    }

    #[test]
    fn every_byte_arrives_at_0_5_10_20_percent_random_loss() {
        for (p, floor) in [(0.0, 0.90), (0.05, 0.88), (0.10, 0.86), (0.20, 0.82)] {
            let o = Setup::new(LEN, LossModel::Random(p)).run(42);
            check_every_byte(&o, LEN);
            // Goodput against the bound: link × payload share × (1 − p).
            let payload_share = 1420.0 / 1448.0;
            let bound = 100e6 * payload_share * (1.0 - p);
            let eff = o.goodput_bps() / bound;
            eprintln!(
                "p={p}: goodput {:.1} Mbit/s = {:.3} of bound, repair {}+{}, rounds {}, delay p99 {} us",
                o.goodput_bps() / 1e6,
                eff,
                o.sender.proactive_repair,
                o.sender.feedback_repair,
                o.sender.feedback_rounds,
                o.receiver.decode_delay_p99_us
            );
            assert!(eff >= floor, "p={p}: efficiency {eff:.3} below {floor}");
        }
    }

    #[test]
    fn selective_repeat_arq_delivers_every_byte_and_sends_each_loss_again() {
        for (p, floor) in [(0.0, 0.90), (0.05, 0.85), (0.10, 0.80), (0.20, 0.70)] {
            let mut s = Setup::new(LEN, LossModel::Random(p));
            s.sender = SenderConfig::default().arq();
            let o = s.run(42);
            check_every_byte(&o, LEN);
            assert_eq!(o.sender.proactive_repair, 0, "ARQ sends no repair ahead");
            let source = LEN.div_ceil(1420);
            assert_eq!(o.sender.source_symbols, source);
            let resent = o.sender.feedback_repair as f64;
            let bound = 100e6 * 1420.0 / 1448.0 * (1.0 - p);
            let eff = o.goodput_bps() / bound;
            eprintln!(
                "arq p={p}: goodput {:.1} Mbit/s = {eff:.3} of bound, resent {resent} \
                 ({:.1} % of source), rounds {}, delay p99 {} us",
                o.goodput_bps() / 1e6,
                resent / source as f64 * 100.0,
                o.sender.feedback_rounds,
                o.receiver.decode_delay_p99_us
            );
            // Every loss costs one more send of the datagram, and a lost resend another: about
            // p / (1 - p) of the source, never the proactive surplus of the code.
            let expected = p / (1.0 - p);
            assert!(
                resent / source as f64 <= expected * 1.3 + 0.005,
                "p={p}: resent {resent} of {source}"
            );
            assert!(eff >= floor, "p={p}: efficiency {eff:.3} below {floor}");
        }
    }

    #[test]
    fn bursts_of_loss_are_repaired() {
        let o = Setup::new(
            LEN,
            LossModel::Bursts {
                mean: 0.05,
                burst: 6.0,
            },
        )
        .run(7);
        check_every_byte(&o, LEN);
    }

    #[test]
    fn restricted_feedback_and_long_delay_still_deliver_everything() {
        let mut s = Setup::new(2_000_000, LossModel::Random(0.1));
        s.mode = FeedbackMode::Restricted;
        s.delay = Duration::from_millis(20);
        check_every_byte(&s.run(3), 2_000_000);
    }

    #[test]
    fn corrupted_datagrams_never_reach_delivered_bytes() {
        let mut s = Setup::new(2_000_000, LossModel::Random(0.02));
        s.corrupt_every = Some(13);
        let o = s.run(5);
        check_every_byte(&o, 2_000_000);
    }

    #[test]
    fn a_slower_link_than_the_cap_is_found_without_collapse() {
        let mut s = Setup::new(3_000_000, LossModel::Random(0.05));
        s.link_bps = 20e6;
        s.sender.max_rate_bps = 200_000_000;
        let o = s.run(9);
        check_every_byte(&o, 3_000_000);
        let eff = o.goodput_bps() / (20e6 * 0.95 * 1420.0 / 1448.0);
        eprintln!(
            "20M link, 200M cap: {:.1} Mbit/s, {eff:.3}",
            o.goodput_bps() / 1e6
        );
        assert!(eff > 0.7, "{eff}");
    }

    #[test]
    fn a_short_transfer_and_a_tail_of_one_byte_complete() {
        for len in [1u64, 1420, 1421, 128 * 1420, 128 * 1420 + 1] {
            let o = Setup::new(len, LossModel::Random(0.1)).run(len);
            check_every_byte(&o, len);
        }
    }
}

#[cfg(test)]
mod digest_tests {
    use crate::receiver::{FeedbackMode, Receiver, ReceiverConfig};
    use crate::sender::{PatternSource, Sender, SenderConfig};
    use std::time::Duration;

    #[test]
    fn a_digest_that_differs_is_reported_as_a_mismatch() {
        let cfg = SenderConfig {
            k: 4,
            symbol_size: 64,
            ..SenderConfig::default()
        };
        let mut tx = Sender::new(cfg, Box::new(PatternSource { len: Some(1000) }));
        let mut rx = Receiver::new(ReceiverConfig::for_mode(FeedbackMode::Unrestricted));
        let mut buf = [0u8; 1500];
        let mut now = Duration::ZERO;
        while rx.peer_report().is_none() && now < Duration::from_secs(5) {
            while let Ok(Some(n)) = tx.poll_transmit(now, &mut buf) {
                let _ = rx.handle(now, &buf[..n]);
            }
            while let Some(n) = rx.poll_transmit(now, &mut buf) {
                let _ = tx.handle(now, &buf[..n]);
            }
            now += Duration::from_millis(1);
        }
        assert_eq!(tx.digest_check(), Some(true));
        assert_eq!(rx.digest_check(), Some(true));
        let mut forged = tx.report();
        forged.sha256 = Some([0; 32]);
        let n = forged.emit(&mut buf).unwrap();
        rx.handle(now, &buf[..n]).unwrap();
        assert_eq!(rx.digest_check(), Some(false));
    }
}
