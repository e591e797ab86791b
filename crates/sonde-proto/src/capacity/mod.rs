//! Capacity probing (`sonde capacity`): the plan the client asks the server to send, the probe
//! datagram header and the receiver's per-train acknowledgement.
//!
//! The server sends trains of back-to-back datagrams on the test's one UDP stream. After each
//! train the client acknowledges it on the same stream; the server then stays idle at least
//! as long as the train took (send to acknowledgement) and at least the plan's spacing, so a
//! shaper's queue has drained and its bucket refilled before the next train. A lost
//! acknowledgement costs the server one bounded wait (the runtime's), never a stall.
//!
//! Layouts (network byte order):
//! - probe: `SNCP` (4), train (u32), seq (u32), train length (u32), send time ns (u64):
//!   24 bytes, then padding up to the datagram length;
//! - ack: `SNCA` (4), train (u32): 8 bytes;
//! - departure report (with `tx_timestamps`, server to client after each acknowledged train):
//!   `SNCD` (4), train (u32), stamped (u32), span, least, median and largest gap (u64 ns
//!   each): 44 bytes.

pub mod sizes;

use serde::{Deserialize, Serialize};
pub use sizes::{ProbeSizes, SizesError};
pub use sonde_stats::capacity::departure::Departure;
use thiserror::Error;

/// Named byte ranges of the probe header.
mod field {
    use core::ops::Range;
    pub const MAGIC: Range<usize> = 0..4;
    pub const TRAIN: Range<usize> = 4..8;
    pub const SEQ: Range<usize> = 8..12;
    pub const COUNT: Range<usize> = 12..16;
    pub const SEND_NS: Range<usize> = 16..24;
    pub const ACK_TRAIN: Range<usize> = 4..8;
}

const PROBE_MAGIC: &[u8; 4] = b"SNCP";
const ACK_MAGIC: &[u8; 4] = b"SNCA";
const DEPARTURE_MAGIC: &[u8; 4] = b"SNCD";
/// Bytes of a departure report.
pub const DEPARTURE_LEN: usize = 44;
/// Bytes of the probe header.
pub const PROBE_HEADER_LEN: usize = field::SEND_NS.end;
/// Bytes of an acknowledgement.
pub const ACK_LEN: usize = field::ACK_TRAIN.end;

/// Limits of a plan (they bound what a client can make a server send).
pub mod limits {
    /// Datagrams in a short train.
    pub const SHORT_LEN: core::ops::RangeInclusive<u32> = 2..=64;
    /// Datagrams in a long train (a 1000-packet shaper queue holds 1.5 MB of them).
    pub const LONG_LEN: core::ops::RangeInclusive<u32> = 16..=4000;
    /// Short trains per test.
    pub const MAX_SHORT_TRAINS: u32 = 1000;
    /// Long trains per test.
    pub const MAX_LONG_TRAINS: u32 = 50;
    /// Least and most idle time between trains, ms.
    pub const SPACING_MS: core::ops::RangeInclusive<u32> = 1..=2000;
}

/// The trains a capacity test asks for: first the short ones, then the long ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapacityPlan {
    pub short_trains: u32,
    pub short_len: u32,
    pub long_trains: u32,
    pub long_len: u32,
    /// Least idle time between trains, ms.
    pub spacing_ms: u32,
    /// Ask the server for its kernel's transmit stamps: after each acknowledged train it
    /// sends the train's departure gaps ([`emit_departure`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tx_timestamps: bool,
    /// Short trains' UDP payloads, in turn (`--sizes`); empty: all of the run's length. A
    /// server from before them ignores the field and sends every train at the run's
    /// length, which the client sees in the datagrams it receives.
    #[serde(default, skip_serializing_if = "ProbeSizes::is_empty")]
    pub sizes: ProbeSizes,
}

impl Default for CapacityPlan {
    fn default() -> Self {
        Self {
            short_trains: 40,
            short_len: 10,
            long_trains: 5,
            long_len: 500,
            spacing_ms: 10,
            tx_timestamps: false,
            sizes: ProbeSizes::default(),
        }
    }
}

/// A plan outside [`limits`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlanError {
    #[error("short trains must have {lo}..={hi} datagrams, got {0}", lo = limits::SHORT_LEN.start(), hi = limits::SHORT_LEN.end())]
    ShortLen(u32),
    #[error("long trains must have {lo}..={hi} datagrams, got {0}", lo = limits::LONG_LEN.start(), hi = limits::LONG_LEN.end())]
    LongLen(u32),
    #[error("at most {max} short trains, got {0}", max = limits::MAX_SHORT_TRAINS)]
    ShortTrains(u32),
    #[error("1..={max} long trains, got {0}", max = limits::MAX_LONG_TRAINS)]
    LongTrains(u32),
    #[error("spacing must be {lo}..={hi} ms, got {0}", lo = limits::SPACING_MS.start(), hi = limits::SPACING_MS.end())]
    Spacing(u32),
    #[error("{0}")]
    Sizes(#[from] SizesError),
    #[error("{sizes} probe sizes need at least as many short trains, got {trains}")]
    TooFewShortTrains { sizes: usize, trains: u32 },
}

impl CapacityPlan {
    /// Checks the plan against [`limits`].
    ///
    /// # Errors
    /// The first field out of its range.
    pub fn validate(&self) -> Result<(), PlanError> {
        if !limits::SHORT_LEN.contains(&self.short_len) {
            return Err(PlanError::ShortLen(self.short_len));
        }
        if !limits::LONG_LEN.contains(&self.long_len) {
            return Err(PlanError::LongLen(self.long_len));
        }
        if self.short_trains > limits::MAX_SHORT_TRAINS {
            return Err(PlanError::ShortTrains(self.short_trains));
        }
        if !(1..=limits::MAX_LONG_TRAINS).contains(&self.long_trains) {
            return Err(PlanError::LongTrains(self.long_trains));
        }
        if !limits::SPACING_MS.contains(&self.spacing_ms) {
            return Err(PlanError::Spacing(self.spacing_ms));
        }
        self.sizes.validate()?;
        let sizes = self.sizes.as_slice().len();
        if (self.short_trains as usize) < sizes {
            return Err(PlanError::TooFewShortTrains {
                sizes,
                trains: self.short_trains,
            });
        }
        Ok(())
    }

    /// Trains in all.
    pub fn trains(&self) -> u32 {
        self.short_trains + self.long_trains
    }

    /// UDP payload of train `id`'s datagrams: its probe size for a short train when the
    /// plan varies them, else `length`.
    pub fn train_payload(&self, id: u32, length: u32) -> u32 {
        if id < self.short_trains {
            self.sizes.of_short_train(id).unwrap_or(length)
        } else {
            length
        }
    }

    /// Datagrams in train `id` (0-based; the short trains come first); None past the end.
    pub fn train_len(&self, id: u32) -> Option<u32> {
        if id < self.short_trains {
            Some(self.short_len)
        } else if id < self.trains() {
            Some(self.long_len)
        } else {
            None
        }
    }
}

/// The header of one probe datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub train: u32,
    /// Position in the train, below `count`.
    pub seq: u32,
    /// Datagrams in the train.
    pub count: u32,
    /// The sender's wall clock (ns since the Unix epoch) when it handed the datagram's batch
    /// to its kernel.
    pub send_ns: u64,
}

/// Why a datagram is not a probe or acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProbeError {
    #[error("{0}-byte datagram is too short for a capacity probe header")]
    Short(usize),
    #[error("datagram does not start with the capacity probe magic")]
    BadMagic,
    #[error("probe {seq} of a {count}-datagram train")]
    BadSeq { seq: u32, count: u32 },
    #[error("buffer of {0} bytes cannot hold the header")]
    NoRoom(usize),
}

fn u32_at(buf: &[u8], r: core::ops::Range<usize>) -> u32 {
    let mut b = [0u8; 4];
    if let Some(s) = buf.get(r) {
        b.copy_from_slice(s);
    }
    u32::from_be_bytes(b)
}

impl Probe {
    /// Reads the header at the start of `buf`.
    ///
    /// # Errors
    /// Too short, wrong magic, or a sequence number not below the train length.
    pub fn parse(buf: &[u8]) -> Result<Self, ProbeError> {
        if buf.len() < PROBE_HEADER_LEN {
            return Err(ProbeError::Short(buf.len()));
        }
        if buf.get(field::MAGIC) != Some(&PROBE_MAGIC[..]) {
            return Err(ProbeError::BadMagic);
        }
        let mut ns = [0u8; 8];
        if let Some(s) = buf.get(field::SEND_NS) {
            ns.copy_from_slice(s);
        }
        let p = Self {
            train: u32_at(buf, field::TRAIN),
            seq: u32_at(buf, field::SEQ),
            count: u32_at(buf, field::COUNT),
            send_ns: u64::from_be_bytes(ns),
        };
        if p.seq >= p.count {
            return Err(ProbeError::BadSeq {
                seq: p.seq,
                count: p.count,
            });
        }
        Ok(p)
    }

    /// Writes the header at the start of `buf` (the rest is left as it is).
    ///
    /// # Errors
    /// `buf` shorter than the header.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), ProbeError> {
        let len = buf.len();
        let h = buf
            .get_mut(..PROBE_HEADER_LEN)
            .ok_or(ProbeError::NoRoom(len))?;
        h[field::MAGIC].copy_from_slice(PROBE_MAGIC);
        h[field::TRAIN].copy_from_slice(&self.train.to_be_bytes());
        h[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        h[field::COUNT].copy_from_slice(&self.count.to_be_bytes());
        h[field::SEND_NS].copy_from_slice(&self.send_ns.to_be_bytes());
        Ok(())
    }
}

/// The receiver's acknowledgement of a train: `SNCA` and the train number.
pub fn emit_ack(train: u32) -> [u8; ACK_LEN] {
    let mut b = [0u8; ACK_LEN];
    b[field::MAGIC].copy_from_slice(ACK_MAGIC);
    b[field::ACK_TRAIN].copy_from_slice(&train.to_be_bytes());
    b
}

/// The train an acknowledgement names; None for anything else.
pub fn parse_ack(buf: &[u8]) -> Option<u32> {
    (buf.len() == ACK_LEN && buf.get(field::MAGIC) == Some(&ACK_MAGIC[..]))
        .then(|| u32_at(buf, field::ACK_TRAIN))
}

/// A train's departure report: its transmit-stamp gaps as the server's kernel gave them.
pub fn emit_departure(d: &Departure) -> [u8; DEPARTURE_LEN] {
    let mut b = [0u8; DEPARTURE_LEN];
    b[field::MAGIC].copy_from_slice(DEPARTURE_MAGIC);
    b[4..8].copy_from_slice(&d.train.to_be_bytes());
    b[8..12].copy_from_slice(&d.stamped.to_be_bytes());
    let ns = [d.span_ns, d.min_gap_ns, d.median_gap_ns, d.max_gap_ns];
    for (i, v) in ns.iter().enumerate() {
        b[12 + 8 * i..20 + 8 * i].copy_from_slice(&v.to_be_bytes());
    }
    b
}

/// A departure report; None for anything else, or gaps out of order (least, median and
/// largest must be ordered and the largest within the span).
pub fn parse_departure(buf: &[u8]) -> Option<Departure> {
    if buf.len() != DEPARTURE_LEN || buf.get(field::MAGIC) != Some(&DEPARTURE_MAGIC[..]) {
        return None;
    }
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(buf.get(at..at + 8)?);
        Some(u64::from_be_bytes(b))
    };
    let d = Departure {
        train: u32_at(buf, 4..8),
        stamped: u32_at(buf, 8..12),
        span_ns: u64_at(12)?,
        min_gap_ns: u64_at(20)?,
        median_gap_ns: u64_at(28)?,
        max_gap_ns: u64_at(36)?,
    };
    let ordered = d.min_gap_ns <= d.median_gap_ns
        && d.median_gap_ns <= d.max_gap_ns
        && d.max_gap_ns <= d.span_ns
        && d.stamped >= 2;
    ordered.then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn departure_report_round_trips_with_literal_bytes() {
        let d = Departure {
            train: 2,
            stamped: 10,
            span_ns: 0x100,
            min_gap_ns: 1,
            median_gap_ns: 2,
            max_gap_ns: 0x30,
        };
        let b = emit_departure(&d);
        let mut want = b"SNCD\0\0\0\x02\0\0\0\x0a".to_vec();
        for v in [0x100u64, 1, 2, 0x30] {
            want.extend_from_slice(&v.to_be_bytes());
        }
        assert_eq!(&b[..], &want[..]);
        assert_eq!(parse_departure(&b), Some(d));
        assert_eq!(parse_departure(&b[..43]), None);
        assert_eq!(parse_departure(&emit_ack(2)), None);
        // Gaps out of order: refused.
        let bad = Departure {
            max_gap_ns: 0x200,
            ..d
        };
        assert_eq!(parse_departure(&emit_departure(&bad)), None);
    }

    #[test]
    fn probe_round_trips_with_literal_bytes() {
        let p = Probe {
            train: 2,
            seq: 1,
            count: 10,
            send_ns: 0x0102_0304_0506_0708,
        };
        let mut buf = [0xffu8; 30];
        p.emit(&mut buf).unwrap();
        assert_eq!(
            &buf[..24],
            &[b'S', b'N', b'C', b'P', 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 10, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(buf[24], 0xff, "padding untouched");
        assert_eq!(Probe::parse(&buf).unwrap(), p);
    }

    #[test]
    fn malformed_probes_are_refused() {
        let mut buf = [0u8; 24];
        Probe {
            train: 0,
            seq: 0,
            count: 1,
            send_ns: 0,
        }
        .emit(&mut buf)
        .unwrap();
        assert_eq!(Probe::parse(&buf[..23]), Err(ProbeError::Short(23)));
        let mut bad = buf;
        bad[11] = 1; // seq 1 of a 1-datagram train
        assert_eq!(
            Probe::parse(&bad),
            Err(ProbeError::BadSeq { seq: 1, count: 1 })
        );
        bad = buf;
        bad[0] = b'X';
        assert_eq!(Probe::parse(&bad), Err(ProbeError::BadMagic));
        assert!(Probe::parse(&emit_ack(3)).is_err());
        let p = Probe::parse(&buf).unwrap();
        assert_eq!(p.emit(&mut [0u8; 10]), Err(ProbeError::NoRoom(10)));
    }

    #[test]
    fn acks_name_their_train() {
        let a = emit_ack(0x0a0b0c0d);
        assert_eq!(a, [b'S', b'N', b'C', b'A', 0x0a, 0x0b, 0x0c, 0x0d]);
        assert_eq!(parse_ack(&a), Some(0x0a0b0c0d));
        assert_eq!(parse_ack(&a[..7]), None);
        assert_eq!(parse_ack(b"SNCPxxxx"), None);
    }

    #[test]
    fn plans_are_bounded() {
        let p = CapacityPlan::default();
        assert_eq!(p.validate(), Ok(()));
        assert_eq!(p.train_len(0), Some(10));
        assert_eq!(p.train_len(40), Some(500));
        assert_eq!(p.train_len(45), None);
        assert_eq!(p.train_payload(3, 1472), 1472);
        let varied = CapacityPlan {
            sizes: ProbeSizes::parse("600,900").unwrap(),
            ..p
        };
        assert_eq!(varied.validate(), Ok(()));
        let payloads: Vec<u32> = [0, 1, 2, 40].map(|i| varied.train_payload(i, 1472)).into();
        assert_eq!(payloads, [600, 900, 600, 1472]);
        // Without sizes the field is left out of the plan, so older peers read it unchanged.
        let j = serde_json::to_value(p).unwrap();
        assert!(j.get("sizes").is_none());
        assert_eq!(
            serde_json::to_value(varied).unwrap()["sizes"],
            serde_json::json!([600, 900])
        );
        for (bad, err) in [
            (CapacityPlan { short_len: 1, ..p }, PlanError::ShortLen(1)),
            (
                CapacityPlan {
                    long_len: 5000,
                    ..p
                },
                PlanError::LongLen(5000),
            ),
            (
                CapacityPlan {
                    short_trains: 1001,
                    ..p
                },
                PlanError::ShortTrains(1001),
            ),
            (
                CapacityPlan {
                    long_trains: 0,
                    ..p
                },
                PlanError::LongTrains(0),
            ),
            (CapacityPlan { spacing_ms: 0, ..p }, PlanError::Spacing(0)),
            (
                CapacityPlan {
                    sizes: ProbeSizes::try_from(vec![600, 20]).unwrap(),
                    ..p
                },
                PlanError::Sizes(SizesError::OutOfRange(20)),
            ),
            (
                CapacityPlan {
                    short_trains: 2,
                    sizes: ProbeSizes::parse("600..1488").unwrap(),
                    ..p
                },
                PlanError::TooFewShortTrains {
                    sizes: 9,
                    trains: 2,
                },
            ),
        ] {
            assert_eq!(bad.validate(), Err(err));
        }
    }
}
