//! The sending half of a [`Session`]: what each path sends when polled (its control frames,
//! an ACK when one is due, and on the path carrying the stream the DATA from the replay
//! buffer), with the per-family, replay and first-byte counters that sending updates.

use super::{PathId, PathState, Session, Transmit};
use crate::stats::Family;
use crate::wire::{emit_data_header, Frame};
use std::time::Instant;

/// The largest DATA payload of a path's first frame (three segments of a 1500-byte MTU).
const FIRST_FRAME: usize = 4096;

impl Session {
    /// Appends to `out` what path `id` should send now, up to about `max` bytes.
    pub fn poll_transmit(
        &mut self,
        id: PathId,
        now: Instant,
        out: &mut Vec<u8>,
        max: usize,
    ) -> Transmit {
        let start = out.len();
        if self.active == Some(id) && self.rewind_due(now) {
            self.emit_owed_rewind(id, now);
        }
        let ack = self.ack_due(now) && self.active == Some(id);
        let Some(p) = self.path_mut(id) else {
            return Transmit::Done;
        };
        out.append(&mut p.ctrl);
        let (state, family) = (p.state, p.family);
        if ack {
            let fin = self.peer_fin == Some(self.recv_next);
            self.fin_ack_sent |= fin;
            Frame::Ack {
                offset: self.recv_next + u64::from(fin),
            }
            .emit(out);
            self.ack_sent = self.recv_next;
            self.ack_deadline = None;
        }
        if state == PathState::Open && self.active == Some(id) {
            self.emit_data(id, family, now, out, start + max);
        }
        if state == PathState::Draining {
            self.maybe_close(id);
        }
        if out.len() > start {
            Transmit::Some
        } else if state == PathState::Draining {
            Transmit::Done
        } else {
            Transmit::Idle
        }
    }

    fn emit_data(
        &mut self,
        id: PathId,
        family: Family,
        now: Instant,
        out: &mut Vec<u8>,
        limit: usize,
    ) {
        let written = self.written();
        // Bytes confirmed meanwhile (through the old path) need no resending.
        let Some((mut next, mut sent)) =
            self.path(id).map(|p| (p.send_next.max(self.acked), p.sent))
        else {
            return;
        };
        let before = next;
        while next < written && out.len() < limit {
            let from = (next - self.acked) as usize;
            // A new connection sends about ten segments per round trip at first, and the
            // receiver can use a frame only once all of it is in: so a path's frames start
            // small and grow with what it has sent, and the first bytes of a switch arrive
            // within one trip instead of after several.
            let size = usize::try_from(sent)
                .unwrap_or(usize::MAX)
                .clamp(FIRST_FRAME, self.cfg.max_data.max(FIRST_FRAME))
                .min(self.cfg.max_data);
            let n = ((written - next) as usize).min(size);
            emit_data_header(next, n, out);
            let (a, b) = self.replay.as_slices();
            let to = from + n;
            if from < a.len() {
                out.extend_from_slice(a.get(from..to.min(a.len())).unwrap_or(&[]));
            }
            if to > a.len() {
                let s = from.saturating_sub(a.len());
                out.extend_from_slice(b.get(s..to - a.len()).unwrap_or(&[]));
            }
            next += n as u64;
            sent += n as u64;
        }
        self.stats.sent_by_family[family.index()] += next - before;
        let again = next.min(self.sent_high).saturating_sub(before);
        self.sent_high = self.sent_high.max(next);
        if again > 0 {
            self.stats.replayed += again;
            if let Some(r) = self.stats.switches.last_mut() {
                r.replayed += again;
            }
        }
        if next > before {
            if let Some((record, path, requested)) = self.first_sent_pending {
                if path == id {
                    if let Some(r) = self.stats.switches.get_mut(record) {
                        r.first_sent = Some(now.saturating_duration_since(requested));
                    }
                    self.first_sent_pending = None;
                }
            }
        }
        let fin = self.fin_local && next == written;
        if let Some(p) = self.path_mut(id) {
            p.send_next = next;
            p.sent = sent;
            if fin && !p.fin_sent {
                p.fin_sent = true;
                Frame::Fin { offset: written }.emit(out);
            }
        }
    }

    fn ack_due(&self, now: Instant) -> bool {
        let unacked = self.recv_next - self.ack_sent;
        let fin = self.peer_fin == Some(self.recv_next) && !self.fin_ack_sent;
        fin || (unacked > 0
            && (unacked >= self.cfg.ack_every || self.ack_deadline.is_some_and(|d| now >= d)))
    }
}
