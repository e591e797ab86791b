//! The sending end: blocks, proactive and feedback repair, interleaving, pacing.
//!
//! Calling order (quinn-proto style): feed every datagram from the peer to
//! [`Sender::handle`]; call [`Sender::poll_transmit`] until it returns `None`; sleep until
//! [`Sender::poll_timeout`] (or a datagram arrives); repeat. `now` is time since any fixed
//! origin the caller chooses; nothing here reads a clock.
//!
//! Sending order: repair that feedback asked for first, then the first symbols of up to
//! `interleave` blocks in turn (so a burst of losses is spread over several blocks), each block
//! followed by proactive repair sized from the measured loss. A block's repair is answered only
//! once the receiver reports a sequence number past the block's last symbol, so symbols still
//! in flight are never counted as lost. When nothing else is left, a tail probe repairs every
//! open block after a probe timeout. The transfer is done when the receiver says every block
//! decoded.

use crate::block::{CodecError, EncodedBlock};
use crate::loss::{proactive_repair, reactive_repair, LossEstimator, RttEstimator};
use crate::rate::{Pacer, RateController};
use crate::wire::{
    classify, Feedback, Kind, ReceiverReport, SenderReport, Symbol, SymbolHeader, WireError,
    SYMBOL_HEADER_LEN,
};
use sha2::{Digest as _, Sha256};
use std::collections::VecDeque;
use std::time::Duration;

/// Where the transferred bytes come from.
pub trait Source {
    /// Fills `buf` with the bytes at `offset`; returns how many (fewer at the end).
    ///
    /// # Errors
    /// An I/O error reading the data.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize>;
}

/// The checkable pseudo-random stream of [`crate::pattern`], `len` bytes or until
/// [`Sender::finish`].
#[derive(Debug, Clone, Copy)]
pub struct PatternSource {
    pub len: Option<u64>,
}

impl Source for PatternSource {
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = match self.len {
            Some(len) => (len.saturating_sub(offset)).min(buf.len() as u64) as usize,
            None => buf.len(),
        };
        crate::pattern::fill(offset, &mut buf[..n]);
        Ok(n)
    }
}

/// The sender's settings.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Payload bytes per symbol (even).
    pub symbol_size: usize,
    /// Source symbols per block.
    pub k: u16,
    /// Highest sending rate, bit/s of UDP payload (`-b`).
    pub max_rate_bps: u64,
    /// Blocks whose first symbols are sent in turn.
    pub interleave: usize,
    /// Blocks kept until acknowledged; no new block starts beyond this.
    pub max_open_blocks: usize,
    /// Margin (standard deviations) of proactive repair; 0 = repair on feedback only.
    pub z: f64,
    /// Let the controller lower the rate on congestion (off: a fixed rate of `max_rate_bps`).
    pub adaptive: bool,
    /// Plain selective-repeat ARQ instead of coding: every datagram is its own block of one
    /// source symbol, no repair symbols exist, and each loss the receiver reports is sent
    /// again once (the baseline that shows what the code adds).
    pub arq: bool,
}

impl SenderConfig {
    /// Settings for selective-repeat ARQ: one symbol per block and a window of blocks as
    /// large as [`ARQ_WINDOW`] datagrams.
    pub fn arq(self) -> Self {
        Self {
            k: 1,
            arq: true,
            z: 0.0,
            interleave: 1,
            max_open_blocks: ARQ_WINDOW,
            ..self
        }
    }
}

/// Datagrams an ARQ sender keeps unacknowledged (each its own block): 4096 datagrams of 1448
/// bytes cover 100 Mbit/s for 470 ms of round trip and repair.
pub const ARQ_WINDOW: usize = 4096;

impl Default for SenderConfig {
    fn default() -> Self {
        Self {
            symbol_size: 1420,
            k: 128,
            max_rate_bps: 100_000_000,
            interleave: 4,
            max_open_blocks: 64,
            // Half a deviation: most blocks decode without a feedback round, and the
            // surplus wasted on the rest stays near a percent of the data.
            z: 0.5,
            adaptive: true,
            arq: false,
        }
    }
}

/// Why the sender cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum SenderError {
    #[error("reading the data to send: {0}")]
    Source(#[from] std::io::Error),
    #[error("encoding a block: {0}")]
    Codec(#[from] CodecError),
}

struct OpenBlock {
    enc: EncodedBlock,
    /// Symbols sent so far (position in the block's send cycle).
    sent: u32,
    /// Symbols of the first transmission: source plus proactive repair.
    initial: u32,
    /// Repair symbols feedback or a probe asked for, not yet sent.
    owed: u32,
    last_seq: u64,
    known_need: Option<u16>,
    decoded: bool,
}

impl OpenBlock {
    fn in_first_pass(&self) -> bool {
        self.sent < self.initial
    }
}

/// Send times of recent sequence numbers, for RTT samples. The ring grows as datagrams go
/// out and wraps once it holds this many, so a short transfer (or a sender that never
/// sends) does not pay for the whole ring up front.
const SEQ_RING: usize = 1 << 14;

/// The sending state machine.
pub struct Sender {
    cfg: SenderConfig,
    source: Box<dyn Source + Send>,
    blocks: VecDeque<OpenBlock>,
    /// Index of `blocks[0]`.
    base: u32,
    next_offset: u64,
    source_done: bool,
    finishing: bool,
    seq: u64,
    sent_at: Vec<Duration>,
    rr: usize,
    pacer: Pacer,
    rate: RateController,
    loss: LossEstimator,
    rtt: RttEstimator,
    last_fb: Option<(Duration, u64)>,
    delivered_bps: Option<f64>,
    last_send: Duration,
    probe_at: Option<Duration>,
    stats: SenderReport,
    peer: Option<ReceiverReport>,
    done_acks_owed: u32,
    /// SHA-256 over the bytes read so far, until the last block was read.
    hasher: Option<Sha256>,
    /// Datagrams from the peer that failed their checks.
    pub rejected: u64,
}

impl Sender {
    /// A sender of the bytes `source` gives.
    pub fn new(cfg: SenderConfig, source: Box<dyn Source + Send>) -> Self {
        let burst = (SYMBOL_HEADER_LEN + cfg.symbol_size) * 4;
        let mut rate = if cfg.adaptive {
            RateController::new(cfg.max_rate_bps)
        } else {
            RateController::fixed(cfg.max_rate_bps)
        };
        rate.set_packet_bytes(SYMBOL_HEADER_LEN + cfg.symbol_size);
        Self {
            pacer: Pacer::new(rate.rate(), burst),
            rate,
            cfg,
            source,
            blocks: VecDeque::new(),
            base: 0,
            next_offset: 0,
            source_done: false,
            finishing: false,
            seq: 0,
            sent_at: Vec::new(),
            rr: 0,
            loss: LossEstimator::default(),
            rtt: RttEstimator::default(),
            last_fb: None,
            delivered_bps: None,
            last_send: Duration::ZERO,
            probe_at: None,
            stats: SenderReport::default(),
            peer: None,
            done_acks_owed: 0,
            hasher: Some(Sha256::new()),
            rejected: 0,
        }
    }

    /// Ends a timed transfer: the next block is the last (one symbol long).
    pub fn finish(&mut self) {
        self.finishing = true;
    }

    /// Whether the receiver reported every block decoded.
    pub fn is_done(&self) -> bool {
        self.peer.is_some()
    }

    /// The receiver's final figures, once it sent them.
    pub fn peer_report(&self) -> Option<ReceiverReport> {
        self.peer
    }

    /// This end's figures so far.
    pub fn report(&self) -> SenderReport {
        self.stats
    }

    /// Whether the receiver's SHA-256 of what it delivered equals the one of what this end
    /// sent: `None` until both are known (the receiver's done report carries its digest).
    pub fn digest_check(&self) -> Option<bool> {
        let theirs = self.peer?.sha256?;
        Some(theirs == self.stats.sha256?)
    }

    /// The current sending rate, smoothed loss and smoothed RTT.
    pub fn path(&self) -> (f64, f64, Option<Duration>) {
        (self.pacer.rate(), self.loss.loss, self.rtt.smoothed)
    }

    /// How many times the rate controller backed off on a congestion signal.
    pub fn backoffs(&self) -> u64 {
        self.rate.backoffs
    }

    /// How many times the rate controller found another flow holding the queue and
    /// competed for its share on loss (see [`crate::compete`]).
    pub fn competitions(&self) -> u64 {
        self.rate.competitions
    }

    /// Takes one datagram from the receiver.
    ///
    /// # Errors
    /// [`WireError`] for a datagram that fails its checks (it is ignored).
    pub fn handle(&mut self, now: Duration, b: &[u8]) -> Result<(), WireError> {
        let r = match classify(b) {
            Ok(Kind::Feedback) => Feedback::parse(b).map(|f| self.on_feedback(now, &f)),
            Ok(Kind::Done) => ReceiverReport::parse(b).map(|r| {
                self.peer = Some(r);
                self.blocks.clear();
                self.done_acks_owed += 1;
            }),
            Ok(k) => Err(WireError::UnknownType(k as u8)),
            Err(e) => Err(e),
        };
        if r.is_err() {
            self.rejected += 1;
        }
        r
    }

    fn on_feedback(&mut self, now: Duration, f: &Feedback) {
        if f.highest_seq < self.seq {
            let sent = self
                .sent_at
                .get((f.highest_seq as usize) % SEQ_RING)
                .copied();
            let held = Duration::from_micros(u64::from(f.ack_delay_us));
            let rtt = sent.and_then(|s| now.checked_sub(s)?.checked_sub(held));
            if let Some(rtt) = rtt {
                if self.seq - f.highest_seq < SEQ_RING as u64 {
                    self.rtt.on_sample(rtt.max(Duration::from_micros(1)));
                }
            }
        }
        self.loss.on_feedback(f.highest_seq, f.received);
        self.measure_delivery(now, f.received);
        if self.cfg.adaptive {
            self.rate
                .on_feedback(now, &self.rtt, &self.loss, self.delivered_bps);
            self.pacer.set_rate(self.rate.rate());
        }
        self.apply_needs(f);
    }

    fn measure_delivery(&mut self, now: Duration, received: u64) {
        match self.last_fb {
            Some((t, n)) if now >= t + Duration::from_millis(10) => {
                let bytes =
                    received.saturating_sub(n) * (SYMBOL_HEADER_LEN + self.cfg.symbol_size) as u64;
                self.delivered_bps = Some(bytes as f64 * 8.0 / (now - t).as_secs_f64());
                self.last_fb = Some((now, received));
            }
            Some(_) => {}
            None => self.last_fb = Some((now, received)),
        }
    }

    fn apply_needs(&mut self, f: &Feedback) {
        let mut listed = f.needs.iter().peekable();
        let mut repaired = false;
        let p = self.loss.loss;
        for (i, b) in self.blocks.iter_mut().enumerate() {
            let index = self.base.wrapping_add(i as u32);
            while listed.peek().is_some_and(|n| n.block < index) {
                listed.next();
            }
            let need = listed.peek().filter(|n| n.block == index).map(|n| n.needed);
            if index < f.cumulative || (index <= f.covered && need.is_none()) {
                b.decoded = true;
                continue;
            }
            let Some(needed) = need else { continue };
            let needed = needed.min(b.enc.k);
            b.known_need = Some(needed);
            if !b.in_first_pass() && b.owed == 0 && f.highest_seq >= b.last_seq && needed > 0 {
                b.owed = if self.cfg.arq {
                    u32::from(needed)
                } else {
                    u32::from(reactive_repair(needed, p))
                };
                repaired = true;
            }
        }
        if repaired {
            self.stats.feedback_rounds += 1;
        }
        while self.blocks.front().is_some_and(|b| b.decoded) {
            self.blocks.pop_front();
            self.base = self.base.wrapping_add(1);
        }
    }

    /// Starts the next block if the window and the interleave set allow.
    fn admit(&mut self) -> Result<bool, SenderError> {
        let first_pass = self.blocks.iter().filter(|b| b.in_first_pass()).count();
        if self.source_done || first_pass >= self.cfg.interleave {
            return Ok(false);
        }
        if self.blocks.len() >= self.cfg.max_open_blocks {
            return Ok(false);
        }
        let full = self.cfg.symbol_size * usize::from(self.cfg.k);
        let want = if self.finishing {
            self.cfg.symbol_size
        } else {
            full
        };
        let mut data = vec![0u8; want];
        let n = self.source.read_at(self.next_offset, &mut data)?;
        data.truncate(n);
        // Read one byte ahead so the block that ends the data is flagged last.
        let more = !self.finishing
            && n == want
            && self
                .source
                .read_at(self.next_offset + n as u64, &mut [0u8; 1])?
                > 0;
        self.source_done = !more;
        if let Some(h) = self.hasher.as_mut() {
            h.update(&data);
        }
        if self.source_done {
            if let Some(h) = self.hasher.take() {
                self.stats.sha256 = Some(h.finalize().into());
            }
        }
        if data.is_empty() {
            return Ok(false);
        }
        let index = self.base.wrapping_add(self.blocks.len() as u32);
        let (enc, extra) = if self.cfg.arq {
            (EncodedBlock::plain(index, data, self.cfg.symbol_size)?, 0)
        } else {
            let enc = EncodedBlock::encode(index, data, self.cfg.symbol_size)?;
            let extra = u32::from(proactive_repair(enc.k, self.loss.loss, self.cfg.z));
            (enc, extra)
        };
        self.next_offset += u64::from(enc.block_len);
        self.stats.blocks += 1;
        self.stats.data_bytes += u64::from(enc.block_len);
        self.blocks.push_back(OpenBlock {
            initial: u32::from(enc.k) + extra,
            enc,
            sent: 0,
            owed: 0,
            last_seq: 0,
            known_need: None,
            decoded: false,
        });
        Ok(true)
    }

    /// The block to send from next, if any.
    fn pick(&mut self, now: Duration) -> Result<Option<usize>, SenderError> {
        if let Some(i) = self.blocks.iter().position(|b| b.owed > 0 && !b.decoded) {
            return Ok(Some(i));
        }
        self.admit()?;
        let first: Vec<usize> = (0..self.blocks.len())
            .filter(|&i| self.blocks[i].in_first_pass() && !self.blocks[i].decoded)
            .collect();
        if !first.is_empty() {
            self.rr = (self.rr + 1) % first.len();
            return Ok(Some(first[self.rr]));
        }
        // Nothing new to send: probe the tail once the receiver had time to answer.
        let pto = self.rtt.smoothed.map_or(Duration::from_millis(100), |s| {
            s * 2 + Duration::from_millis(5)
        });
        if self.blocks.iter().any(|b| !b.decoded) {
            let at = *self.probe_at.get_or_insert(self.last_send + pto);
            if now >= at {
                self.probe_at = Some(now + pto);
                for b in self.blocks.iter_mut().filter(|b| !b.decoded) {
                    b.owed = u32::from(b.known_need.unwrap_or(1).max(1));
                }
                return Ok(self.blocks.iter().position(|b| b.owed > 0));
            }
        }
        Ok(None)
    }

    /// The next datagram to send, written into `buf`, if one may go at `now`.
    ///
    /// # Errors
    /// [`SenderError`] when the source cannot be read or a block cannot be encoded.
    pub fn poll_transmit(
        &mut self,
        now: Duration,
        buf: &mut [u8],
    ) -> Result<Option<usize>, SenderError> {
        if self.done_acks_owed > 0 {
            self.done_acks_owed -= 1;
            return Ok(self.stats.emit(buf).ok());
        }
        if self.peer.is_some() {
            return Ok(None);
        }
        let len = SYMBOL_HEADER_LEN + self.cfg.symbol_size;
        if self.pacer.next_send(now, len) > now {
            return Ok(None);
        }
        let Some(i) = self.pick(now)? else {
            return Ok(None);
        };
        let seq = self.seq;
        let last = self.source_done && i + 1 == self.blocks.len();
        let b = &mut self.blocks[i];
        let esi = b.enc.esi(b.sent);
        let first_pass = b.in_first_pass();
        b.sent += 1;
        if !first_pass {
            b.owed = b.owed.saturating_sub(1);
        }
        b.last_seq = seq;
        let h = SymbolHeader {
            block: b.enc.index,
            esi,
            k: b.enc.k,
            block_len: b.enc.block_len,
            seq,
            last,
        };
        let Some(payload) = b.enc.symbol(esi) else {
            return Ok(None);
        };
        let n = Symbol::emit(&h, payload, buf).map_err(|e| {
            SenderError::Source(std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
        })?;
        match (first_pass, esi < b.enc.k) {
            (true, true) => self.stats.source_symbols += 1,
            (true, false) => self.stats.proactive_repair += 1,
            (false, _) => self.stats.feedback_repair += 1,
        }
        self.stats.datagrams += 1;
        self.stats.wire_bytes += n as u64;
        let slot = (seq as usize) % SEQ_RING;
        if self.sent_at.len() <= slot {
            self.sent_at.resize(slot + 1, Duration::ZERO);
        }
        self.sent_at[slot] = now;
        self.seq += 1;
        self.pacer.on_send(now, n);
        self.last_send = now;
        self.probe_at = None;
        Ok(Some(n))
    }

    /// When the sender next needs [`Self::poll_transmit`] without a datagram arriving.
    pub fn poll_timeout(&mut self, now: Duration) -> Option<Duration> {
        if self.peer.is_some() {
            return None;
        }
        let len = SYMBOL_HEADER_LEN + self.cfg.symbol_size;
        Some(
            self.pacer
                .next_send(now, len)
                .max(now + Duration::from_micros(50)),
        )
    }
}
