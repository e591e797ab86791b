//! The receiving side (`sonde serial --serve`): acknowledges every intact frame, answers a
//! broken one with a `Nak` for the block it still expects, delivers each block exactly once
//! and in order, and checks the whole file's length and SHA-256 against the `End` frame.
//!
//! A block that arrives again (its acknowledgement was lost) is acknowledged again but not
//! delivered twice; an `End` that arrives again gets the same `EndAck` again.
//!
//! Sans-IO: feed bytes with [`Receiver::handle_input`], write what
//! [`Receiver::poll_transmit`] returns, take [`Receiver::poll_event`] until `None`. The
//! receiver only answers, so it has no timers.

use crate::control::{Begin, End, EndAck, Verdict};
use crate::frame::{Deframer, Frame, FrameError, Kind, MAX_PAYLOAD};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;

/// What the receiver tells its driver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A transfer started.
    Begin(Begin),
    /// The next block of the file, in order, once.
    Data(Vec<u8>),
    /// The transfer ended; the verdict was sent back.
    End(Summary),
}

/// One received transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    pub name: String,
    pub block: u16,
    /// The length the sender announced in its `End`.
    pub total: u64,
    pub ack: EndAck,
    pub blocks: u32,
}

#[derive(Debug)]
struct Transfer {
    id: u16,
    begin: Begin,
    /// Seq of the next frame expected (1 = first block).
    next: u32,
    received: u64,
    hasher: Sha256,
    crc_errors: u32,
    duplicates: u32,
    end: Option<EndAck>,
}

/// Counters over the receiver's whole life (all transfers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Broken frames (answered with a `Nak` during a transfer).
    pub crc_errors: u64,
    /// Intact frames that fit no transfer or break its rules (ignored).
    pub stray: u64,
}

/// The far end of a transfer; see the module doc.
#[derive(Debug, Default)]
pub struct Receiver {
    deframer: Deframer,
    current: Option<Transfer>,
    transmit: VecDeque<Vec<u8>>,
    events: VecDeque<Event>,
    stats: ReceiverStats,
}

impl Receiver {
    pub fn new() -> Receiver {
        Receiver::default()
    }

    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    /// Noise bytes seen before the first frame flag.
    pub fn noise(&self) -> u64 {
        self.deframer.noise
    }

    /// Feeds bytes read from the line.
    pub fn handle_input(&mut self, bytes: &[u8]) {
        let mut found = Vec::new();
        self.deframer.push_all(bytes, |r| found.push(r));
        for r in found {
            match r {
                Ok(f) => self.on_frame(f),
                Err(e) => self.on_broken(e),
            }
        }
    }

    /// The next answer to write.
    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.transmit.pop_front()
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn send(&mut self, f: Frame) {
        self.transmit.push_back(f.emit());
    }

    fn on_broken(&mut self, _e: FrameError) {
        self.stats.crc_errors += 1;
        let Some(t) = self.current.as_mut().filter(|t| t.end.is_none()) else {
            return;
        };
        t.crc_errors += 1;
        let nak = Frame::bare(Kind::Nak, t.id, t.next);
        self.send(nak);
    }

    fn on_frame(&mut self, f: Frame) {
        match f.kind {
            Kind::Begin => self.on_begin(f),
            Kind::Data => self.on_data(f),
            Kind::End => self.on_end(f),
            Kind::Ack | Kind::Nak | Kind::EndAck => self.stats.stray += 1,
        }
    }

    fn on_begin(&mut self, f: Frame) {
        let Some(begin) =
            Begin::parse(&f.payload).filter(|b| b.block > 0 && usize::from(b.block) <= MAX_PAYLOAD)
        else {
            self.stats.stray += 1;
            return;
        };
        let repeat = self
            .current
            .as_ref()
            .is_some_and(|t| t.id == f.transfer && t.next == 1 && t.end.is_none());
        if !repeat {
            self.events.push_back(Event::Begin(begin.clone()));
            self.current = Some(Transfer {
                id: f.transfer,
                begin,
                next: 1,
                received: 0,
                hasher: Sha256::new(),
                crc_errors: 0,
                duplicates: 0,
                end: None,
            });
        }
        self.send(Frame::bare(Kind::Ack, f.transfer, 0));
    }

    fn on_data(&mut self, f: Frame) {
        let Some(t) = self
            .current
            .as_mut()
            .filter(|t| t.id == f.transfer && t.end.is_none())
        else {
            self.stats.stray += 1;
            return;
        };
        let answer = if f.seq == t.next {
            let fits = f.payload.len() <= usize::from(t.begin.block)
                && t.received + f.payload.len() as u64 <= t.begin.total;
            if !fits {
                self.stats.stray += 1;
                return;
            }
            t.next += 1;
            t.received += f.payload.len() as u64;
            t.hasher.update(&f.payload);
            self.events.push_back(Event::Data(f.payload));
            Frame::bare(Kind::Ack, f.transfer, f.seq)
        } else if f.seq < t.next {
            t.duplicates += 1;
            Frame::bare(Kind::Ack, f.transfer, f.seq)
        } else {
            Frame::bare(Kind::Nak, f.transfer, t.next)
        };
        self.send(answer);
    }

    fn on_end(&mut self, f: Frame) {
        let (Some(t), Some(end)) = (
            self.current.as_mut().filter(|t| t.id == f.transfer),
            End::parse(&f.payload),
        ) else {
            self.stats.stray += 1;
            return;
        };
        if let Some(ack) = t.end {
            // The sender missed our verdict: the same again, no second event.
            let again = Frame {
                kind: Kind::EndAck,
                transfer: f.transfer,
                seq: f.seq,
                payload: ack.emit(),
            };
            self.send(again);
            return;
        }
        if f.seq != t.next {
            let nak = Frame::bare(Kind::Nak, f.transfer, t.next);
            self.send(nak);
            return;
        }
        let sha256: [u8; 32] = t.hasher.clone().finalize().into();
        let verdict = if t.received != end.total {
            Verdict::LengthMismatch
        } else if sha256 != end.sha256 {
            Verdict::HashMismatch
        } else {
            Verdict::Ok
        };
        let ack = EndAck {
            verdict,
            received: t.received,
            sha256,
            crc_errors: t.crc_errors,
            duplicates: t.duplicates,
        };
        t.end = Some(ack);
        let summary = Summary {
            name: t.begin.name.clone(),
            block: t.begin.block,
            total: end.total,
            ack,
            blocks: t.next - 1,
        };
        self.events.push_back(Event::End(summary));
        let frame = Frame {
            kind: Kind::EndAck,
            transfer: f.transfer,
            seq: f.seq,
            payload: ack.emit(),
        };
        self.send(frame);
    }
}
