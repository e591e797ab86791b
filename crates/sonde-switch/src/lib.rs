//! One byte stream over an IPv4 and an IPv6 connection that moves between them on the fly,
//! with no byte lost, duplicated or reordered.
//!
//! A TCP connection cannot change address family, and its acknowledgements only prove that
//! the peer's kernel holds the bytes; so this crate frames the stream with its own offsets,
//! has the receiving application's side confirm what it took, and replays from the confirmed
//! offset on the new connection. [`session`] is the pure state machine (bytes and times in,
//! bytes and events out), [`wire`] the frame format, [`stats`] what a session measured.

pub mod session;
pub mod stats;
pub mod wire;

pub use stats::{Family, Stats, SwitchKind, SwitchRecord};
