//! Random bytes for session cookies: the kernel's generator, with a weaker fallback (hashes
//! seeded per process by the standard library, mixed with the time) where it is unreadable.
//! Cookies only tie data streams to a test; they are not secrets.

use std::hash::{BuildHasher, Hasher};
use std::io::Read;

/// Fills `buf` with random bytes.
pub fn fill(buf: &mut [u8]) {
    let from_kernel = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf));
    if from_kernel.is_ok() {
        return;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    for (i, chunk) in buf.chunks_mut(8).enumerate() {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(now);
        h.write_usize(i);
        chunk.copy_from_slice(&h.finish().to_be_bytes()[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn two_fills_differ() {
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        super::fill(&mut a);
        super::fill(&mut b);
        assert_ne!(a, b);
    }
}
