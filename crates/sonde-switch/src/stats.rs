//! What a session measured: per-family byte counts and one record per switch.
//!
//! The session fills these as a side effect of handling frames (times come from the `now`
//! arguments); callers render them. Nothing here reads a clock.

use std::time::Duration;

/// An address family a path runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    V4,
    V6,
}

impl Family {
    /// The other family.
    pub fn other(self) -> Self {
        match self {
            Self::V4 => Self::V6,
            Self::V6 => Self::V4,
        }
    }
    /// "IPv4" or "IPv6".
    pub fn name(self) -> &'static str {
        match self {
            Self::V4 => "IPv4",
            Self::V6 => "IPv6",
        }
    }
    pub(crate) fn index(self) -> usize {
        match self {
            Self::V4 => 0,
            Self::V6 => 1,
        }
    }
    /// The family of a socket address.
    pub fn of(addr: &std::net::SocketAddr) -> Self {
        if addr.is_ipv4() {
            Self::V4
        } else {
            Self::V6
        }
    }
}

/// Why the stream moved to another path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchKind {
    /// Make-before-break: asked for while the old path still worked.
    Planned,
    /// Break-before-make: the old path had failed before the new one joined.
    Recovery,
}

/// One move of the stream from one path to another, as this end saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchRecord {
    /// When the switch was asked for (the client's request, the server's JOIN), from the
    /// session's start.
    pub at: Duration,
    pub kind: SwitchKind,
    /// The family the stream left (None when the old path was already gone).
    pub from: Option<Family>,
    pub to: Family,
    /// Request to the peer's JOIN_OK: dial plus join handshake (the side that dials).
    pub setup: Option<Duration>,
    /// Request to the first DATA written on the new path.
    pub first_sent: Option<Duration>,
    /// Request to the first new byte received on the new path.
    pub first_received: Option<Duration>,
    /// The longest gap between two deliveries of new bytes from the switch until the new path
    /// delivered (None when nothing arrived in that window).
    pub stall: Option<Duration>,
    /// Bytes this end sent twice: sent on the old path, then again on the new one.
    pub replayed: u64,
    /// Bytes received again and dropped during this switch.
    pub duplicates: u64,
}

/// A snapshot of a session's counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// The family the stream is sent on now.
    pub family: Option<Family>,
    /// Bytes the application handed to the session.
    pub written: u64,
    /// Of those, bytes the peer confirmed.
    pub acked: u64,
    /// Bytes received in order (each once).
    pub received: u64,
    /// DATA payload bytes sent per family, replays included: [IPv4, IPv6].
    pub sent_by_family: [u64; 2],
    /// New bytes received per family: [IPv4, IPv6].
    pub received_by_family: [u64; 2],
    /// Bytes sent twice, all switches.
    pub replayed: u64,
    /// Bytes received twice and dropped, all switches.
    pub duplicates: u64,
    /// Bytes that arrived on a new path ahead of the old path's last ones and were held
    /// until those came (a planned switch: both paths deliver for a moment).
    pub held_ahead: u64,
    /// Paths declared failed because nothing arrived on them for the heartbeat deadline.
    pub heartbeat_failures: u64,
    pub switches: Vec<SwitchRecord>,
}
