//! The RFC 864 character generator pattern.
//!
//! Lines of 72 printable ASCII characters and CR LF; each line starts one character further
//! along the ring of the 95 printable characters (space to `~`), as BSD inetd's chargen does, so
//! the pattern repeats every 95 lines (7030 bytes). The stress client sends the same pattern to
//! discard and echo servers, which lets it check an echo byte for byte.

/// Characters per line before CR LF.
const LINE_CHARS: usize = 72;
/// Bytes per line with CR LF.
const LINE_BYTES: usize = LINE_CHARS + 2;
/// The printable ASCII characters, 0x20 to 0x7e.
const RING: usize = 95;
/// Bytes until the pattern repeats.
pub const CYCLE_LEN: usize = LINE_BYTES * RING;

/// One full cycle of the pattern, built at compile time.
static CYCLE: [u8; CYCLE_LEN] = build_cycle();

const fn build_cycle() -> [u8; CYCLE_LEN] {
    let mut out = [0u8; CYCLE_LEN];
    let mut line = 0;
    while line < RING {
        let mut c = 0;
        while c < LINE_CHARS {
            out[line * LINE_BYTES + c] = 0x20 + ((line + c) % RING) as u8;
            c += 1;
        }
        out[line * LINE_BYTES + LINE_CHARS] = b'\r';
        out[line * LINE_BYTES + LINE_CHARS + 1] = b'\n';
        line += 1;
    }
    out
}

/// The pattern's byte at stream offset `offset`.
pub fn byte_at(offset: u64) -> u8 {
    CYCLE[(offset % CYCLE_LEN as u64) as usize]
}

/// The pattern repeated to at least `len` bytes plus one cycle, so that any offset's next `len`
/// bytes are one contiguous slice of it (see [`Pattern::at`]).
#[derive(Debug, Clone)]
pub struct Pattern {
    bytes: Vec<u8>,
    len: usize,
}

impl Pattern {
    /// A pattern from which slices of up to `len` bytes can be taken at any offset.
    pub fn new(len: usize) -> Self {
        let cycles = len.div_ceil(CYCLE_LEN) + 1;
        Self {
            bytes: CYCLE.repeat(cycles),
            len: len.max(1),
        }
    }

    /// The next (up to `len`) bytes of the stream from `offset`.
    pub fn at(&self, offset: u64) -> &[u8] {
        let start = (offset % CYCLE_LEN as u64) as usize;
        self.bytes.get(start..start + self.len).unwrap_or(&[])
    }

    /// How many of `got`, received at stream offset `offset`, differ from the pattern.
    pub fn mismatches(&self, offset: u64, got: &[u8]) -> u64 {
        let mut bad = 0u64;
        let mut off = offset;
        for chunk in got.chunks(self.len) {
            let want = self.at(off);
            if want.get(..chunk.len()) != Some(chunk) {
                bad += chunk.iter().zip(want).filter(|(a, b)| a != b).count() as u64;
            }
            off += chunk.len() as u64;
        }
        bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_lines_are_bsd_chargen() {
        let p = Pattern::new(200);
        let first = p.at(0);
        let line1: String = (0x20u8..0x20 + 72).map(char::from).collect();
        assert_eq!(&first[..72], line1.as_bytes());
        assert_eq!(&first[72..74], b"\r\n");
        assert_eq!(first[74], b'!');
        assert_eq!(first[74 + 71], b'h');
    }

    #[test]
    fn cycle_repeats_and_slices_wrap() {
        assert_eq!(byte_at(0), b' ');
        assert_eq!(byte_at(CYCLE_LEN as u64), b' ');
        let p = Pattern::new(100);
        let s = p.at(CYCLE_LEN as u64 - 10);
        assert_eq!(s.len(), 100);
        assert_eq!(s[10], b' ');
        assert!(CYCLE
            .iter()
            .all(|b| (0x20..0x7f).contains(b) || *b == b'\r' || *b == b'\n'));
    }

    #[test]
    fn mismatches_count_changed_bytes() {
        let p = Pattern::new(64);
        let mut got = p.at(5).to_vec();
        got.extend_from_slice(p.at(69));
        assert_eq!(p.mismatches(5, &got), 0);
        got[3] ^= 1;
        got[100] = 0;
        assert_eq!(p.mismatches(5, &got), 2);
    }
}
