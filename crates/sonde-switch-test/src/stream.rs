//! The client's stream: pseudo-random chunks, hashed whole as they are made, so the server's
//! SHA-256 of what it received can be compared with what was sent.

use sha2::{Digest, Sha256};
use sonde_switch::{AnyConn, Error};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Bytes per chunk.
const CHUNK: usize = 128 * 1024;

/// Fast pseudo-random filler (xorshift64), so the hash sees varied bytes.
pub(crate) fn fill(buf: &mut [u8], state: &mut u64) {
    for chunk in buf.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let b = state.to_le_bytes();
        chunk.copy_from_slice(b.get(..chunk.len()).unwrap_or(&[]));
    }
}

/// What the client sends, and its hash so far.
pub(crate) struct Stream {
    pub(crate) hash: Sha256,
    buf: Vec<u8>,
    seed: u64,
    /// What of the current chunk is still to send.
    pending: std::ops::Range<usize>,
    /// Bytes sent.
    pub(crate) bytes: u64,
}

impl Stream {
    pub(crate) fn new() -> Self {
        Self {
            hash: Sha256::new(),
            buf: vec![0u8; CHUNK],
            seed: 0x9e37_79b9_7f4a_7c15u64,
            pending: 0..0,
            bytes: 0,
        }
    }

    /// The next bytes to send: the rest of the current chunk, or a new one (hashed now).
    fn next(&mut self) -> &[u8] {
        if self.pending.is_empty() {
            fill(&mut self.buf, &mut self.seed);
            self.hash.update(&self.buf);
            self.pending = 0..self.buf.len();
        }
        self.buf.get(self.pending.clone()).unwrap_or(&[])
    }

    /// `k` bytes of [`Stream::next`] went.
    fn sent(&mut self, k: usize) {
        self.pending.start = (self.pending.start + k).min(self.pending.end);
        self.bytes += k as u64;
    }

    /// Sends until `end`, Ctrl-C or `stop`.
    pub(crate) fn send_until(
        &mut self,
        c: &AnyConn,
        end: Instant,
        interrupt: &AtomicBool,
        stop: &AtomicBool,
    ) -> Result<(), Error> {
        while Instant::now() < end
            && !interrupt.load(Ordering::SeqCst)
            && !stop.load(Ordering::SeqCst)
        {
            let k = c.send(self.next())?;
            self.sent(k);
        }
        Ok(())
    }

    /// The hash covers whole chunks: sends the rest of the current one.
    pub(crate) fn send_rest(&mut self, c: &AnyConn) -> Result<(), Error> {
        c.send_all(self.buf.get(self.pending.clone()).unwrap_or(&[]))?;
        self.bytes += self.pending.len() as u64;
        self.pending.start = self.pending.end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filler_is_xorshift64_from_its_seed() {
        let mut state = 1u64;
        let mut b = [0u8; 10];
        fill(&mut b, &mut state);
        // 1 -> 0x40822041 (13, 7, 17), then its successor; little-endian, the tail cut.
        assert_eq!(&b[..8], &0x4082_2041u64.to_le_bytes());
        let mut next = 0x4082_2041u64;
        next ^= next << 13;
        next ^= next >> 7;
        next ^= next << 17;
        assert_eq!(&b[8..], &next.to_le_bytes()[..2]);
        assert_eq!(state, next);
    }

    #[test]
    fn the_hash_covers_each_chunk_once_however_it_is_sent() {
        let mut s = Stream::new();
        let first = s.next().to_vec();
        assert_eq!(first.len(), CHUNK);
        s.sent(1000);
        assert_eq!(s.next(), &first[1000..]);
        s.sent(CHUNK - 1000);
        assert_eq!(s.bytes, CHUNK as u64);
        let second = s.next().to_vec();
        assert_ne!(second, first);
        let mut h = Sha256::new();
        h.update(&first);
        h.update(&second);
        assert_eq!(s.hash.finalize(), h.finalize());
    }
}
