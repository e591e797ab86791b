//! The data a memory-to-memory transfer carries: a pseudo-random byte stream that depends only
//! on the byte's offset, so the receiver checks every delivered byte without a copy of the
//! sender's buffer (and a block delivered at the wrong offset fails the check).

/// SplitMix64: a well-mixed 64-bit word for each 8-byte word of the stream.
fn word(i: u64) -> u64 {
    let mut z = i
        .wrapping_add(0x9E37_79B9_7F4A_7C15)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Fills `buf` with the stream's bytes from `offset` on.
pub fn fill(offset: u64, buf: &mut [u8]) {
    let mut o = offset;
    let mut i = 0;
    while i < buf.len() {
        let w = word(o / 8).to_le_bytes();
        let from = (o % 8) as usize;
        let n = (8 - from).min(buf.len() - i);
        buf[i..i + n].copy_from_slice(&w[from..from + n]);
        i += n;
        o += n as u64;
    }
}

/// Bytes of `buf` that differ from the stream at `offset`.
pub fn mismatches(offset: u64, buf: &[u8]) -> u64 {
    let mut want = vec![0u8; buf.len()];
    fill(offset, &mut want);
    want.iter().zip(buf).filter(|(a, b)| a != b).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_split_gives_the_same_stream() {
        let mut whole = [0u8; 40];
        fill(3, &mut whole);
        let mut parts = [0u8; 40];
        fill(3, &mut parts[..11]);
        fill(14, &mut parts[11..]);
        assert_eq!(whole, parts);
        assert_eq!(mismatches(3, &whole), 0);
        assert_eq!(
            mismatches(4, &whole),
            40 - whole.windows(2).filter(|w| w[0] == w[1]).count() as u64
        );
        let mut bad = whole;
        bad[7] ^= 1;
        assert_eq!(mismatches(3, &bad), 1);
    }
}
