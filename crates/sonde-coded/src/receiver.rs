//! The receiving end: collects symbols, decodes blocks, reports what it still needs.
//!
//! Calling order: feed every datagram to [`Receiver::handle`]; take decoded blocks with
//! [`Receiver::poll_block`]; send what [`Receiver::poll_transmit`] gives (feedback every
//! feedback interval while data arrives, then the done report until the sender answers it);
//! sleep until [`Receiver::poll_timeout`]. `now` is time since an origin the caller chooses.
//!
//! What a peer can make it hold is bounded: only blocks within `max_open_blocks` of the first
//! undecoded one are kept, and never more than `max_held_bytes` of symbols. A datagram that
//! fails its checks, or contradicts what earlier symbols of its block said, is dropped and
//! counted; it never reaches a decoder.

use crate::block::{Added, BlockDecoder};
use crate::wire::{
    classify, Feedback, Kind, Need, ReceiverReport, SenderReport, Symbol, WireError,
    MAX_FEEDBACK_ENTRIES,
};
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

/// Feedback policy, after the two the lossy-link report compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedbackMode {
    /// Feedback every `interval` while symbols arrive (the default, 2 ms).
    Unrestricted,
    /// At most one feedback per `interval` of 20 ms or more, as on a constrained return path.
    Restricted,
}

/// The receiver's settings.
#[derive(Debug, Clone)]
pub struct ReceiverConfig {
    pub feedback_interval: Duration,
    pub max_open_blocks: u32,
    pub max_held_bytes: usize,
}

impl ReceiverConfig {
    /// Settings for a feedback mode.
    pub fn for_mode(mode: FeedbackMode) -> Self {
        let ms = match mode {
            FeedbackMode::Unrestricted => 2,
            FeedbackMode::Restricted => 20,
        };
        Self {
            feedback_interval: Duration::from_millis(ms),
            max_open_blocks: 256,
            max_held_bytes: 256 << 20,
        }
    }
}

impl ReceiverConfig {
    /// Settings for a selective-repeat ARQ sender (one datagram per block): a receive window
    /// of as many blocks as the sender keeps open.
    pub fn arq(self) -> Self {
        Self {
            max_open_blocks: crate::sender::ARQ_WINDOW as u32,
            ..self
        }
    }
}

/// A block restored from its symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedBlock {
    pub index: u32,
    pub data: Vec<u8>,
}

struct Partial {
    dec: BlockDecoder,
    first_arrival: Duration,
}

/// The receiving state machine.
pub struct Receiver {
    cfg: ReceiverConfig,
    symbol_size: Option<usize>,
    cumulative: u32,
    partial: BTreeMap<u32, Partial>,
    /// Blocks decoded above `cumulative`, held until the blocks before them decode so that
    /// blocks are handed on (and hashed) in order.
    decoded_above: BTreeMap<u32, Vec<u8>>,
    /// SHA-256 over the blocks handed on, until the last one.
    hasher: Option<Sha256>,
    highest_block: Option<u32>,
    last_block: Option<u32>,
    highest_seq: Option<(u64, Duration)>,
    held: usize,
    ready: VecDeque<DecodedBlock>,
    delays_us: Vec<u64>,
    dirty: bool,
    next_feedback: Duration,
    serial: u32,
    next_done: Duration,
    stats: ReceiverReport,
    peer: Option<SenderReport>,
    /// Blocks whose decoding failed (symbols that passed every check but did not decode).
    pub decode_failures: u64,
}

impl Receiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        Self {
            cfg,
            symbol_size: None,
            cumulative: 0,
            partial: BTreeMap::new(),
            decoded_above: BTreeMap::new(),
            hasher: Some(Sha256::new()),
            highest_block: None,
            last_block: None,
            highest_seq: None,
            held: 0,
            ready: VecDeque::new(),
            delays_us: Vec::new(),
            dirty: false,
            next_feedback: Duration::ZERO,
            serial: 0,
            next_done: Duration::ZERO,
            stats: ReceiverReport::default(),
            peer: None,
            decode_failures: 0,
        }
    }

    /// Whether every block up to the last one decoded.
    pub fn is_complete(&self) -> bool {
        self.last_block.is_some_and(|l| self.cumulative > l)
    }

    /// The sender's final figures, once it answered the done report.
    pub fn peer_report(&self) -> Option<SenderReport> {
        self.peer
    }

    /// This end's figures so far.
    pub fn report(&self) -> ReceiverReport {
        let mut r = self.stats;
        let mut d = self.delays_us.clone();
        d.sort_unstable();
        let at = |q: f64| {
            d.get(((d.len() as f64 - 1.0) * q).round() as usize)
                .copied()
        };
        r.decode_delay_p50_us = at(0.5).unwrap_or(0);
        r.decode_delay_p99_us = at(0.99).unwrap_or(0);
        r
    }

    /// Records bytes of delivered blocks the application found wrong (it checks the data;
    /// this end only reports the count to the sender).
    pub fn note_mismatches(&mut self, bytes: u64) {
        self.stats.mismatched_bytes += bytes;
    }

    /// Whether the sender's SHA-256 of what it sent equals the one of what this end delivered:
    /// `None` until both are known (the sender's answer to the done report carries its own).
    pub fn digest_check(&self) -> Option<bool> {
        let theirs = self.peer?.sha256?;
        Some(theirs == self.stats.sha256?)
    }

    /// The next decoded block, in block order (a block decoded early waits for those before
    /// it, within the receive window).
    pub fn poll_block(&mut self) -> Option<DecodedBlock> {
        self.ready.pop_front()
    }

    fn is_decoded(&self, b: u32) -> bool {
        b < self.cumulative || self.decoded_above.contains_key(&b)
    }

    /// Takes one datagram from the sender.
    ///
    /// # Errors
    /// [`WireError`] when it fails its checks (it is dropped and counted).
    pub fn handle(&mut self, now: Duration, b: &[u8]) -> Result<(), WireError> {
        let r = match classify(b) {
            Ok(Kind::Symbol) => Symbol::parse(b).and_then(|s| self.on_symbol(now, &s)),
            Ok(Kind::DoneAck) => SenderReport::parse(b).map(|r| self.peer = Some(r)),
            Ok(k) => Err(WireError::UnknownType(k as u8)),
            Err(e) => Err(e),
        };
        if r.is_err() {
            self.stats.rejected += 1;
        }
        r
    }

    fn on_symbol(&mut self, now: Duration, s: &Symbol<'_>) -> Result<(), WireError> {
        let h = s.header;
        let size = *self.symbol_size.get_or_insert(s.payload.len());
        if size != s.payload.len() {
            return Err(WireError::BadSymbol("symbol size changed"));
        }
        if self
            .last_block
            .is_some_and(|l| h.block > l || (h.last && h.block != l))
        {
            return Err(WireError::BadSymbol(
                "symbol beyond or against the last block",
            ));
        }
        if h.block >= self.cumulative.saturating_add(self.cfg.max_open_blocks) {
            return Err(WireError::BadSymbol("block beyond the receive window"));
        }
        self.stats.datagrams_received += 1;
        self.dirty = true;
        if self.highest_seq.is_none_or(|(q, _)| h.seq > q) {
            self.highest_seq = Some((h.seq, now));
        }
        if h.last && self.last_block.is_none() {
            self.last_block = Some(h.block);
            self.release();
        }
        self.highest_block = Some(self.highest_block.map_or(h.block, |b| b.max(h.block)));
        if self.is_decoded(h.block) {
            self.stats.useless_symbols += 1;
            return Ok(());
        }
        if !self.partial.contains_key(&h.block) {
            if self.held + size > self.cfg.max_held_bytes {
                return Err(WireError::BadSymbol("receive buffer limit reached"));
            }
            let dec = BlockDecoder::new(h.k, h.block_len, size)
                .map_err(|_| WireError::BadSymbol("k out of range"))?;
            let p = Partial {
                dec,
                first_arrival: now,
            };
            self.partial.insert(h.block, p);
        }
        let Some(p) = self.partial.get_mut(&h.block) else {
            return Ok(());
        };
        if !p.dec.matches(h.k, h.block_len, size) {
            return Err(WireError::BadSymbol("k or length differ from the block's"));
        }
        match p.dec.add(h.esi, s.payload) {
            Added::Duplicate => self.stats.useless_symbols += 1,
            Added::New => self.held += size,
        }
        if p.dec.needed() == 0 {
            self.complete_block(now, h.block);
        }
        Ok(())
    }

    fn complete_block(&mut self, now: Duration, index: u32) {
        let Some(p) = self.partial.remove(&index) else {
            return;
        };
        self.held = self.held.saturating_sub(p.dec.held_bytes());
        self.delays_us
            .push(now.saturating_sub(p.first_arrival).as_micros() as u64);
        match p.dec.decode() {
            Ok(data) => {
                self.stats.delivered_bytes += data.len() as u64;
                self.stats.blocks += 1;
                self.held += data.len();
                self.decoded_above.insert(index, data);
                self.release();
            }
            // Cannot happen with an MDS code and checked symbols; count it and let feedback
            // ask for the block again rather than deliver anything doubtful.
            Err(_) => self.decode_failures += 1,
        }
    }

    /// Hands on the decoded blocks that now follow the delivered ones, hashing them; ends the
    /// digest with the last block.
    fn release(&mut self) {
        while let Some(data) = self.decoded_above.remove(&self.cumulative) {
            self.held = self.held.saturating_sub(data.len());
            if let Some(h) = self.hasher.as_mut() {
                h.update(&data);
            }
            self.ready.push_back(DecodedBlock {
                index: self.cumulative,
                data,
            });
            self.cumulative += 1;
        }
        if self.is_complete() {
            if let Some(h) = self.hasher.take() {
                self.stats.sha256 = Some(h.finalize().into());
            }
        }
    }

    fn feedback(&self, now: Duration) -> Feedback {
        let (seq, at) = self.highest_seq.unwrap_or((0, now));
        let top = self.highest_block.unwrap_or(0).max(self.cumulative);
        let mut needs = Vec::new();
        let mut covered = top;
        for b in self.cumulative..=top {
            if self.is_decoded(b) {
                continue;
            }
            if needs.len() == MAX_FEEDBACK_ENTRIES {
                covered = b.saturating_sub(1);
                break;
            }
            let needed = self.partial.get(&b).map_or(u16::MAX, |p| p.dec.needed());
            needs.push(Need { block: b, needed });
        }
        Feedback {
            serial: self.serial,
            cumulative: self.cumulative,
            covered,
            highest_seq: seq,
            received: self.stats.datagrams_received,
            ack_delay_us: now.saturating_sub(at).as_micros().min(u32::MAX as u128) as u32,
            needs,
        }
    }

    /// The next datagram to send at `now`, written into `buf`, if one is due.
    pub fn poll_transmit(&mut self, now: Duration, buf: &mut [u8]) -> Option<usize> {
        if self.is_complete() {
            if self.peer.is_some() || now < self.next_done {
                return None;
            }
            self.next_done = now + self.cfg.feedback_interval.max(Duration::from_millis(10));
            return self.report().emit(buf).ok();
        }
        if !self.dirty || now < self.next_feedback {
            return None;
        }
        let f = self.feedback(now);
        let n = f.emit(buf).ok()?;
        self.dirty = false;
        self.serial = self.serial.wrapping_add(1);
        self.stats.feedback_sent += 1;
        self.next_feedback = now + self.cfg.feedback_interval;
        Some(n)
    }

    /// When the receiver next has something to send without a datagram arriving.
    pub fn poll_timeout(&self, now: Duration) -> Option<Duration> {
        if self.is_complete() {
            return self.peer.is_none().then_some(self.next_done.max(now));
        }
        self.dirty.then_some(self.next_feedback.max(now))
    }
}
