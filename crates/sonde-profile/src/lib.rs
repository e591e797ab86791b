//! Traffic profiles: several concurrent UDP streams, each a train of bursts (so many datagrams
//! of one size, back to back or a gap apart, every period, from an offset, in one direction),
//! as a device's real traffic looks: small status messages every 200 ms, a bulk transfer every
//! few seconds, the host's own traffic the other way. A profile shows what averaged throughput tests hide: whether each
//! burst arrives whole and in time.
//!
//! Everything here is pure: the model and its TOML form ([`spec`]), the built-in profiles
//! ([`builtin`]), when each burst and each datagram of it is due ([`schedule`]) and the receive accounting that turns
//! arrivals (sequence number, send time, receive time) into per-stream and per-burst figures
//! ([`receive`], [`result`]). The runtime sends and receives; this crate counts.
//!
//! ```
//! use sonde_profile::{builtin, spec::Direction};
//! let p = builtin::get("monitoring").unwrap();
//! assert_eq!(p.streams.len(), 3);
//! assert!(p.streams.iter().all(|s| s.direction == Direction::FromServer));
//! assert_eq!(p.streams[0].gap_ns(), 1_000_000);
//! ```

pub mod builtin;
pub mod receive;
pub mod result;
pub mod schedule;
pub mod spec;

pub use spec::{Profile, ProfileError, StreamSpec};
