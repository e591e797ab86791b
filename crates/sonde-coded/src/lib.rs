//! sonde's coded transport: a loss-resilient, fully reliable transfer over datagrams.
//!
//! On a link with random loss TCP falls behind because it reads every loss as congestion and
//! halves its window; the best any sender can do is the link rate times (1 − p). This crate
//! gets close to that bound by separating the two concerns: a systematic Reed-Solomon block
//! code ([`block`], reed-solomon-simd) with a little proactive repair sized from the measured
//! loss, repair on feedback until every block decodes, and blocks interleaved against bursts
//! ([`sender`], [`receiver`]); and a rate controller that paces without cutting on random loss
//! but backs off on the queue growth or rate-dependent loss of real congestion ([`rate`]),
//! and that holds its share of a queue another flow keeps full ([`compete`]).
//!
//! Everything here is sans-IO: the [`sender::Sender`] and [`receiver::Receiver`] take
//! datagrams and a time, and give datagrams and the next time they need; the runtime only
//! moves datagrams. Wire formats live in [`wire`].
//!
//! ```
//! use sonde_coded::receiver::{FeedbackMode, Receiver, ReceiverConfig};
//! use sonde_coded::sender::{PatternSource, Sender, SenderConfig};
//! use std::time::Duration;
//!
//! let cfg = SenderConfig { k: 4, symbol_size: 64, ..SenderConfig::default() };
//! let mut tx = Sender::new(cfg, Box::new(PatternSource { len: Some(1000) }));
//! let mut rx = Receiver::new(ReceiverConfig::for_mode(FeedbackMode::Unrestricted));
//! let mut buf = [0u8; 1500];
//! let mut now = Duration::ZERO;
//! while !tx.is_done() {
//!     while let Ok(Some(n)) = tx.poll_transmit(now, &mut buf) {
//!         let _ = rx.handle(now, &buf[..n]);
//!     }
//!     while let Some(n) = rx.poll_transmit(now, &mut buf) {
//!         let _ = tx.handle(now, &buf[..n]);
//!     }
//!     now += Duration::from_millis(1);
//! }
//! assert_eq!(rx.report().delivered_bytes, 1000);
//! ```

pub mod block;
pub mod compete;
pub mod loss;
pub mod pattern;
pub mod rate;
pub mod receiver;
pub mod sender;
pub mod wire;

#[cfg(test)]
mod sim;
