//! Block transfer over a serial line, for measuring a UART or a USB CDC-ACM port the way a
//! device team does: send a file in blocks of 8..256 bytes, each acknowledged, and see how
//! fast it goes and how often a block had to be sent again.
//!
//! The protocol is stop-and-wait ARQ: one frame in flight, acknowledged (`Ack`) or refused
//! (`Nak`) by sequence number, resent after a timeout or a `Nak` a bounded number of times.
//! Frames use RFC 1662's byte stuffing and CRC-32 ([`frame`]); the transfer opens with a
//! `Begin` (block size, length, name) and closes with an `End` carrying the file's length and
//! SHA-256, which the receiver checks and answers with its verdict ([`control`]).
//!
//! [`Sender`] and [`Receiver`] are sans-IO state machines: bytes and the time go in, bytes,
//! deadlines and events come out. [`tty`] opens and configures a terminal device and
//! [`driver`] runs either side over it with `poll(2)`. Above them, a whole run of
//! `sonde serial`: [`send_run`] sends a file once per block size and reports each transfer;
//! [`serve_run`] serves transfers until the interrupt, storing the files that check.
//!
//! ```
//! use sonde_serial::{AckMode, Receiver, Sender, SenderConfig, Status};
//! use std::time::{Duration, Instant};
//!
//! let cfg = SenderConfig { block: 8, retries: 3, timeout: Duration::from_millis(100),
//!     mode: AckMode::Peer, transfer: 1, name: "f".into() };
//! let mut tx = Sender::new(cfg, b"hello, serial line".to_vec().into()).unwrap();
//! let mut rx = Receiver::new();
//! let now = Instant::now();
//! while *tx.status() == Status::Running {
//!     if let Some(bytes) = tx.poll_transmit(now) { rx.handle_input(&bytes); }
//!     while let Some(bytes) = rx.poll_transmit() { tx.handle_input(&bytes, now); }
//! }
//! assert!(matches!(tx.status(), Status::Done(o) if o.hash_ok));
//! ```

pub mod control;
pub mod driver;
pub mod frame;
pub mod receiver;
pub mod send_run;
pub mod sender;
pub mod serve_run;
pub mod tty;

pub use receiver::{Event, Receiver, Summary};
pub use sender::{AckMode, Outcome, SendError, SendStats, Sender, SenderConfig, Status, Step};

#[cfg(test)]
mod tests;
