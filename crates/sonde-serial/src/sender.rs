//! The sending side: stop-and-wait ARQ (one frame in flight, acknowledged before the next),
//! with a timeout per frame, a bounded number of retries and an immediate resend on a `Nak`.
//!
//! Sans-IO in the quinn-proto manner: the driver feeds received bytes with
//! [`Sender::handle_input`], sends what [`Sender::poll_transmit`] returns, sleeps until
//! [`Sender::poll_timeout`] and then calls [`Sender::handle_timeout`], until [`Sender::status`]
//! is no longer `Running`. Time is always an argument; nothing here reads a clock or sleeps.
//!
//! Sequence numbers are unique within a transfer (`Begin` 0, blocks 1..=n, `End` n + 1), so
//! a late acknowledgement of a resent frame is never taken for the next one's.
//!
//! With [`AckMode::Echo`] the far end is a device that echoes every byte: a frame counts as
//! delivered when it comes back intact and identical, and at the end the SHA-256 of the
//! echoed blocks is compared with the file's.

use crate::control::{Begin, End, EndAck, Verdict};
use crate::frame::{Deframer, Frame, Kind, MAX_PAYLOAD};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Who confirms a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckMode {
    /// A `sonde serial --serve` far end acknowledges each frame.
    Peer,
    /// The device echoes what it receives; the echo is the acknowledgement.
    Echo,
}

/// How one transfer is run.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    /// Payload bytes per block, 1..=[`MAX_PAYLOAD`].
    pub block: usize,
    /// Resends allowed per frame after the first try.
    pub retries: u32,
    /// How long to wait for a frame's acknowledgement.
    pub timeout: Duration,
    pub mode: AckMode,
    /// Identifies this transfer (a new one per block size and per run).
    pub transfer: u16,
    /// The file name the far end may store the file under.
    pub name: String,
}

/// The frame that got no answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Begin,
    /// Block `index` (1-based) holding file bytes `offset..offset + len`.
    Block {
        index: u32,
        offset: u64,
        len: usize,
    },
    End,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Begin => write!(f, "the start-of-transfer frame"),
            Step::Block { index, offset, len } => write!(
                f,
                "block {index} (file bytes {offset}..{})",
                offset + *len as u64
            ),
            Step::End => write!(f, "the end-of-transfer frame (length and SHA-256)"),
        }
    }
}

/// Why a transfer failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("{step} was not acknowledged after {tries} tries, {} ms each: the far end stopped answering{}", timeout.as_millis(), if *echoed { " (but the device sent our own frames back: is it an echo or loopback? then use --loopback)" } else { "" })]
    NoAnswer {
        step: Step,
        tries: u32,
        timeout: Duration,
        /// Our own frame came back instead of an answer.
        echoed: bool,
    },
    #[error("block size {0} is outside 1..={MAX_PAYLOAD}")]
    BlockSize(usize),
    #[error("the file has {0} blocks, more than a transfer can number")]
    TooManyBlocks(u64),
}

/// Counters of one transfer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendStats {
    /// Blocks acknowledged (or echoed intact).
    pub blocks: u32,
    /// File bytes acknowledged.
    pub bytes: u64,
    /// Frames written, first tries and resends.
    pub frames_sent: u64,
    /// Bytes written to the line, framing included.
    pub wire_bytes: u64,
    /// Resends (after a timeout, a `Nak` or a broken echo).
    pub retries: u32,
    /// Waits for an acknowledgement that ran out.
    pub timeouts: u32,
    /// `Nak`s from the far end (it saw a broken frame).
    pub naks: u32,
    /// Broken frames this side received (bad CRC, bad layout).
    pub crc_errors: u32,
    /// Intact frames that answered nothing in flight (late duplicates, stale echoes).
    pub stray: u32,
    /// Of those, copies of our own frame (an echoing device answered a `--serve` sender).
    pub echoes: u32,
}

/// Where a transfer stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Running,
    Done(Outcome),
    Failed(SendError),
}

/// How a finished transfer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The far end's length and SHA-256 match the file's (in echo mode: the echoed blocks').
    pub hash_ok: bool,
    /// The far end's own verdict (`None` in echo mode).
    pub far: Option<EndAck>,
    /// From the first byte written to the final acknowledgement.
    pub elapsed: Duration,
}

/// One file transfer over a serial line; see the module doc for the calling order.
#[derive(Debug)]
pub struct Sender {
    cfg: SenderConfig,
    data: Arc<[u8]>,
    sha256: [u8; 32],
    blocks: u32,
    /// Seq of the frame in flight (0 = `Begin`, n + 1 = `End`).
    seq: u32,
    frame: Frame,
    tries: u32,
    resend: bool,
    deadline: Option<Instant>,
    deframer: Deframer,
    echo_hash: Sha256,
    started: Option<Instant>,
    status: Status,
    stats: SendStats,
}

impl Sender {
    /// A transfer of `data`, ready to send its `Begin` frame.
    ///
    /// # Errors
    /// [`SendError::BlockSize`] or [`SendError::TooManyBlocks`].
    pub fn new(cfg: SenderConfig, data: Arc<[u8]>) -> Result<Sender, SendError> {
        if cfg.block == 0 || cfg.block > MAX_PAYLOAD {
            return Err(SendError::BlockSize(cfg.block));
        }
        let n = (data.len() as u64).div_ceil(cfg.block as u64);
        let blocks = u32::try_from(n)
            .ok()
            .filter(|b| *b < u32::MAX - 1)
            .ok_or(SendError::TooManyBlocks(n))?;
        let sha256: [u8; 32] = Sha256::digest(&data).into();
        let begin = Begin {
            block: cfg.block as u16,
            total: data.len() as u64,
            name: cfg.name.clone(),
        };
        let frame = Frame {
            kind: Kind::Begin,
            transfer: cfg.transfer,
            seq: 0,
            payload: begin.emit(),
        };
        Ok(Sender {
            cfg,
            data,
            sha256,
            blocks,
            seq: 0,
            frame,
            tries: 0,
            resend: true,
            deadline: None,
            deframer: Deframer::new(),
            echo_hash: Sha256::new(),
            started: None,
            status: Status::Running,
            stats: SendStats::default(),
        })
    }

    /// Blocks in the file.
    pub fn blocks(&self) -> u32 {
        self.blocks
    }

    /// The file's SHA-256.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    pub fn stats(&self) -> SendStats {
        self.stats
    }

    pub fn status(&self) -> &Status {
        &self.status
    }

    /// When the first byte went out.
    pub fn started(&self) -> Option<Instant> {
        self.started
    }

    /// Bytes to write now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        if self.status != Status::Running || !self.resend {
            return None;
        }
        self.resend = false;
        self.tries += 1;
        self.deadline = Some(now + self.cfg.timeout);
        self.started.get_or_insert(now);
        let wire = self.frame.emit();
        self.stats.frames_sent += 1;
        self.stats.wire_bytes += wire.len() as u64;
        Some(wire)
    }

    /// When [`Sender::handle_timeout`] must be called next (`None` when nothing waits).
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self.status {
            Status::Running => self.deadline,
            _ => None,
        }
    }

    /// Resends or gives up once the wait for an acknowledgement has run out.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.status == Status::Running && self.deadline.is_some_and(|d| d <= now) {
            self.stats.timeouts += 1;
            self.resend_or_fail();
        }
    }

    /// Feeds bytes read from the line.
    pub fn handle_input(&mut self, bytes: &[u8], now: Instant) {
        let mut found = Vec::new();
        self.deframer.push_all(bytes, |r| found.push(r));
        for r in found {
            if self.status != Status::Running {
                return;
            }
            match r {
                Ok(frame) => self.on_frame(frame, now),
                Err(_) => {
                    self.stats.crc_errors += 1;
                    // An echo device tells nothing else: a broken echo means send again now.
                    if self.cfg.mode == AckMode::Echo && !self.resend {
                        self.resend_or_fail();
                    }
                }
            }
        }
    }

    fn resend_or_fail(&mut self) {
        self.deadline = None;
        if self.tries > self.cfg.retries {
            self.status = Status::Failed(SendError::NoAnswer {
                step: self.step(),
                tries: self.tries,
                timeout: self.cfg.timeout,
                echoed: self.stats.echoes > 0,
            });
        } else {
            self.stats.retries += 1;
            self.resend = true;
        }
    }

    fn step(&self) -> Step {
        if self.seq == 0 {
            Step::Begin
        } else if self.seq > self.blocks {
            Step::End
        } else {
            let offset = u64::from(self.seq - 1) * self.cfg.block as u64;
            Step::Block {
                index: self.seq,
                offset,
                len: self.frame.payload.len(),
            }
        }
    }

    fn on_frame(&mut self, f: Frame, now: Instant) {
        let in_flight = !self.resend;
        if self.cfg.mode == AckMode::Echo {
            if in_flight && f == self.frame {
                if f.kind == Kind::Data {
                    self.echo_hash.update(&f.payload);
                }
                self.advance(now, None);
            } else {
                self.stats.stray += 1;
            }
            return;
        }
        if f == self.frame {
            self.stats.stray += 1;
            self.stats.echoes += 1;
            return;
        }
        let mine = f.transfer == self.cfg.transfer && f.seq == self.seq;
        let last = self.seq > self.blocks;
        match f.kind {
            Kind::Ack if mine && !last && in_flight => self.advance(now, None),
            Kind::EndAck if mine && last && in_flight => match EndAck::parse(&f.payload) {
                Some(ack) => self.advance(now, Some(ack)),
                None => self.stats.crc_errors += 1,
            },
            Kind::Nak if mine && in_flight => {
                self.stats.naks += 1;
                self.resend_or_fail();
            }
            _ => self.stats.stray += 1,
        }
    }

    fn advance(&mut self, now: Instant, far: Option<EndAck>) {
        self.deadline = None;
        self.tries = 0;
        self.resend = true;
        if self.seq >= 1 && self.seq <= self.blocks {
            self.stats.blocks += 1;
            self.stats.bytes += self.frame.payload.len() as u64;
        }
        if self.seq > self.blocks {
            let hash_ok = match (&far, self.cfg.mode) {
                (Some(a), _) => {
                    a.verdict == Verdict::Ok
                        && a.sha256 == self.sha256
                        && a.received == self.data.len() as u64
                }
                (None, AckMode::Echo) => {
                    let echoed: [u8; 32] = self.echo_hash.clone().finalize().into();
                    echoed == self.sha256 && self.stats.bytes == self.data.len() as u64
                }
                (None, AckMode::Peer) => false,
            };
            let elapsed = self.started.map(|s| now - s).unwrap_or_default();
            self.status = Status::Done(Outcome {
                hash_ok,
                far,
                elapsed,
            });
            return;
        }
        self.seq += 1;
        self.frame = if self.seq > self.blocks {
            let end = End {
                total: self.data.len() as u64,
                sha256: self.sha256,
            };
            Frame {
                kind: Kind::End,
                transfer: self.cfg.transfer,
                seq: self.seq,
                payload: end.emit(),
            }
        } else {
            let from = (self.seq as usize - 1) * self.cfg.block;
            let to = (from + self.cfg.block).min(self.data.len());
            Frame {
                kind: Kind::Data,
                transfer: self.cfg.transfer,
                seq: self.seq,
                payload: self.data.get(from..to).unwrap_or_default().to_vec(),
            }
        };
    }
}
