//! The coded transport (`--coded`) on a real UDP socket: the runtime half of `sonde-coded`.
//!
//! The protocol logic is sans-IO in `sonde-coded`; [`endpoint`] only moves datagrams between
//! a connected UDP socket and the sender or receiver, sleeping until either says it needs the
//! clock. [`client`] runs a coded test against a sonde server through the usual control
//! session (hello, request, one UDP stream, start, stop, results); the server's side is in
//! `server::session`.

pub mod client;
pub mod data;
pub mod endpoint;

pub use endpoint::{CodedFigures, Side};

/// Source symbols per block (both ends use it; the offset of block `i` is `i * K * symbol`).
pub const K: u16 = 128;
/// Bytes of the coded header before each symbol.
pub const HEADER: usize = sonde_coded::wire::SYMBOL_HEADER_LEN;

/// Payload bytes per symbol for datagrams of `length` bytes (even, as the codec needs).
pub fn symbol_size(length: u32) -> usize {
    (length as usize).saturating_sub(HEADER) & !1
}
