//! The receiver's reorder buffer: bytes that arrived ahead of the next expected offset.
//!
//! A planned switch starts the new path where the old one stops (the offset in its MOVED), so
//! for a while both paths deliver at once and the new one's bytes can arrive before the old
//! one's last. They wait here, by offset, until the old path's bytes reach them. Overlapping
//! pieces are kept once (the overlap is counted as duplicate), and a piece that continues a
//! held one is appended to it, so one path's run of frames is one segment however many
//! frames it took. The session bounds what may be held (against its receive capacity) and
//! how many separate segments; this type only keeps them in order.

use crate::path::PathId;
use std::collections::BTreeMap;

/// At most this many separate segments; a piece that would start another one does not fit.
pub(crate) const MAX_SEGMENTS: usize = 256;

#[derive(Debug)]
struct Segment {
    bytes: Vec<u8>,
    /// The path the segment's first bytes came on (it counts as that path's delivery).
    path: PathId,
}

/// Held bytes by stream offset; segments never overlap.
#[derive(Debug, Default)]
pub(crate) struct Stash {
    segs: BTreeMap<u64, Segment>,
    bytes: usize,
}

impl Stash {
    /// Bytes held.
    pub(crate) fn len(&self) -> usize {
        self.bytes
    }

    /// Whether nothing is held.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// One past the highest byte held.
    pub(crate) fn high(&self) -> Option<u64> {
        self.segs
            .iter()
            .next_back()
            .map(|(o, s)| o + s.bytes.len() as u64)
    }

    /// Whether a piece at `offset` would fit without a new segment (it continues one, or
    /// the segment count allows another).
    pub(crate) fn has_room_at(&self, offset: u64) -> bool {
        self.segs.len() < MAX_SEGMENTS
            || self
                .segs
                .range(..=offset)
                .next_back()
                .is_some_and(|(o, s)| o + s.bytes.len() as u64 >= offset)
    }

    /// Holds `bytes` at `offset` (from path `path`); returns how many of them were already
    /// held. The caller checked [`Stash::has_room_at`].
    pub(crate) fn insert(&mut self, offset: u64, bytes: &[u8], path: PathId) -> u64 {
        let end = offset + bytes.len() as u64;
        let mut at = offset;
        let mut dup = 0;
        // Walk the held segments that touch [offset, end), adding the pieces between them.
        let touching: Vec<(u64, u64)> = self
            .segs
            .range(..end)
            .rev()
            .map(|(o, s)| (*o, o + s.bytes.len() as u64))
            .take_while(|(_, e)| *e >= offset)
            .collect();
        for (start, seg_end) in touching.into_iter().rev() {
            if start > at {
                self.put(at, slice(bytes, offset, at, start), path);
            }
            let covered_to = seg_end.min(end);
            dup += covered_to.saturating_sub(at.max(start));
            at = at.max(covered_to);
        }
        if at < end {
            self.put(at, slice(bytes, offset, at, end), path);
        }
        dup
    }

    /// Adds a piece that overlaps nothing held, appending it to a segment it continues.
    fn put(&mut self, at: u64, piece: &[u8], path: PathId) {
        if piece.is_empty() {
            return;
        }
        self.bytes += piece.len();
        let before = self.segs.range_mut(..at).next_back();
        if let Some((o, s)) = before {
            if o + s.bytes.len() as u64 == at {
                s.bytes.extend_from_slice(piece);
                let o = *o;
                self.join_next(o);
                return;
            }
        }
        self.segs.insert(
            at,
            Segment {
                bytes: piece.to_vec(),
                path,
            },
        );
        self.join_next(at);
    }

    /// Merges the segment after the one at `start` into it when they now touch.
    fn join_next(&mut self, start: u64) {
        let Some(end) = self.segs.get(&start).map(|s| start + s.bytes.len() as u64) else {
            return;
        };
        if let Some(next) = self.segs.remove(&end) {
            if let Some(s) = self.segs.get_mut(&start) {
                s.bytes.extend_from_slice(&next.bytes);
            }
        }
    }

    /// Takes the held bytes that continue the stream at `next`: the part of the first
    /// segment at or beyond `next`, with the path it came on, and how many of its bytes lay
    /// below `next` (already delivered: duplicates). `None` when the first segment starts
    /// beyond `next`.
    pub(crate) fn take_at(&mut self, next: u64) -> Option<(Vec<u8>, PathId, u64)> {
        let (&start, _) = self.segs.iter().next()?;
        if start > next {
            return None;
        }
        let seg = self.segs.remove(&start)?;
        self.bytes -= seg.bytes.len();
        let skip = ((next - start) as usize).min(seg.bytes.len());
        let mut bytes = seg.bytes;
        bytes.drain(..skip);
        Some((bytes, seg.path, skip as u64))
    }
}

/// The part [from, to) of `bytes`, which start at stream offset `base`.
fn slice(bytes: &[u8], base: u64, from: u64, to: u64) -> &[u8] {
    bytes
        .get((from - base) as usize..(to - base) as usize)
        .unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: PathId = PathId(1);

    #[test]
    fn contiguous_pieces_make_one_segment_and_come_out_in_order() {
        let mut s = Stash::default();
        assert_eq!(s.insert(10, b"abc", P), 0);
        assert_eq!(s.insert(13, b"def", P), 0);
        assert_eq!(s.segs.len(), 1);
        assert_eq!((s.len(), s.high()), (6, Some(16)));
        assert_eq!(s.take_at(9), None);
        assert_eq!(s.take_at(12), Some((b"cdef".to_vec(), P, 2)));
        assert!(s.is_empty());
        assert_eq!(s.len(), 0);
    }

    #[test]
    fn overlaps_are_kept_once_and_counted() {
        let mut s = Stash::default();
        s.insert(10, b"cd", P);
        s.insert(20, b"mn", P);
        // Covers a gap, the first segment, another gap, the second segment and beyond.
        let all = b"abcdefghijklmnopq";
        assert_eq!(s.insert(8, &all[..], PathId(2)), 4);
        assert_eq!(s.len(), all.len());
        assert_eq!(s.segs.len(), 1, "{:?}", s.segs.keys());
        assert_eq!(s.take_at(8), Some((all.to_vec(), PathId(2), 0)));
    }

    #[test]
    fn the_segment_count_is_bounded() {
        let mut s = Stash::default();
        for i in 0..MAX_SEGMENTS as u64 {
            assert!(s.has_room_at(i * 10));
            s.insert(i * 10, b"x", P);
        }
        assert!(!s.has_room_at(5_000));
        assert!(s.has_room_at(1), "continuing a segment needs none");
        assert_eq!(s.len(), MAX_SEGMENTS);
        assert!(s.take_at(0).is_some());
        assert!(s.has_room_at(5_000));
    }
}
