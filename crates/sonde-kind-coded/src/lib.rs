//! The coded transport (`--coded`) on a real UDP socket: the runtime half of `sonde-coded`,
//! measuring a transfer that forward error correction carries over a lossy path (its time to
//! complete, the repair it needed, the sender's view of the path).
//!
//! The protocol logic is sans-IO in `sonde-coded`; [`endpoint`] only moves datagrams between
//! a connected UDP socket and the sender or receiver, sleeping until either says it needs the
//! clock. [`client`] runs a coded test against a sonde server through the usual control
//! session (hello, request, one UDP stream, start, stop, results); [`server`] is the server's
//! side, which `sonde_runtime::server` hands an admitted coded test.
//!
//! This kind stands on the runtime core (`sonde-runtime-core`) alone; `sonde-runtime`
//! re-exports it as `sonde_runtime::coded`.
//!
//! ```
//! // 1200-byte datagrams: the symbol is what is left after the coded header, made even.
//! let s = sonde_kind_coded::symbol_size(1200);
//! assert!(s <= 1200 - sonde_kind_coded::HEADER);
//! assert_eq!(s % 2, 0);
//! ```

pub mod client;
pub mod data;
pub mod endpoint;
pub mod server;

pub use endpoint::{CodedFigures, Side};

/// Source symbols per block (both ends use it; the offset of block `i` is `i * K * symbol`).
pub const K: u16 = 128;
/// Bytes of the coded header before each symbol.
pub const HEADER: usize = sonde_coded::wire::SYMBOL_HEADER_LEN;

/// Payload bytes per symbol for datagrams of `length` bytes (even, as the codec needs).
pub fn symbol_size(length: u32) -> usize {
    (length as usize).saturating_sub(HEADER) & !1
}
