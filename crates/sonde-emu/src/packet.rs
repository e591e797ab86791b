//! The unit the engine moves: a frame's bytes plus what the engine knows about it.

use crate::time::Instant;

/// Metadata carried with a packet through a [`Chain`](crate::impair::Chain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// A number the driver assigns (for example a per-direction counter). Stages keep it, so
    /// tests and traces can tell which packet came out; duplicates share their original's.
    pub seq: u64,
    /// When the packet entered the chain; lets the driver measure the delay it applied.
    pub entered: Instant,
    /// Set on the copy a duplication stage made.
    pub duplicate: bool,
    /// Set when a corruption stage flipped a bit.
    pub corrupted: bool,
}

/// A packet: the bytes as they were read from (and will be written to) the interface.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Packet {
    /// The frame or IP packet, as the forwarder handles it.
    pub data: Vec<u8>,
    /// What the engine tracks about it.
    pub meta: Meta,
}

impl Packet {
    /// A packet with `data`, sequence number `seq` and default metadata.
    pub fn new(data: Vec<u8>, seq: u64) -> Self {
        Packet {
            data,
            meta: Meta {
                seq,
                ..Meta::default()
            },
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True when the packet has no bytes.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}
