//! The receiving half of a [`Session`]: DATA in order, DATA ahead of order, and the window
//! that bounds both.
//!
//! A planned switch starts the new path at the old path's last offset, so while the old path
//! drains, the new one's bytes can arrive first. They are held in the reorder [`Stash`] and
//! delivered once the old path's bytes reach them. Such a gap is allowed only while another
//! path may still fill it: a path whose MOVED has not been read, or a path lost before its
//! MOVED (its bytes may be gone; a REWIND asks the sender for them). Outside those, a gap is
//! a protocol error as before.
//!
//! The window, as in TCP, is counted from the next expected offset: a frame fits when it
//! ends within `recv_next + (recv_capacity - buffered)`. Held bytes lie inside that window,
//! so the old path's bytes below them always fit, and the new path is the one that waits
//! when the window is full (the driver then does not read it: backpressure). After a lost
//! path the new path's frames ahead of the gap may sit in front of the resent ones on the
//! same connection, so waiting could deadlock: those frames are then taken, and what does
//! not fit is dropped and asked for again with another REWIND.

use super::{PathId, Session, SessionError};
use std::time::Instant;

impl Session {
    /// Free room in the receive buffer for bytes in order: read no DATA frame at the next
    /// expected offset longer than this (see [`Session::recv_room_at`] for any offset).
    pub fn recv_room(&self) -> usize {
        self.cfg.recv_capacity.saturating_sub(self.recv.len())
    }

    /// One past the last offset the receive window admits.
    fn window_end(&self) -> u64 {
        self.recv_next + self.recv_room() as u64
    }

    /// How many bytes a DATA frame at `offset` on path `id` may carry now: the driver reads
    /// no longer frame from that path until this grows (backpressure). Frames this end will
    /// take anyway (to drop them, or to report a protocol error) get `usize::MAX`.
    pub fn recv_room_at(&self, id: PathId, offset: u64) -> usize {
        if offset > self.recv_next {
            if self.rewind_wait || !self.gap_allowed(id) {
                return usize::MAX;
            }
            if !self.stash.has_room_at(offset) {
                return 0;
            }
        }
        usize::try_from(self.window_end().saturating_sub(offset)).unwrap_or(usize::MAX)
    }

    /// Whether DATA on `id` may start beyond the next expected offset: another path may
    /// still deliver the bytes below it.
    fn gap_allowed(&self, id: PathId) -> bool {
        self.rewind_wait || self.paths.iter().any(|p| p.id != id && p.may_deliver())
    }

    pub(super) fn on_data(
        &mut self,
        id: PathId,
        offset: u64,
        bytes: &[u8],
        now: Instant,
    ) -> Result<(), SessionError> {
        let end = offset + bytes.len() as u64;
        if self.peer_fin.is_some_and(|f| end > f) {
            return Err(SessionError::BeyondFin(end));
        }
        if offset > self.recv_next {
            return self.on_data_ahead(id, offset, bytes);
        }
        if end > self.window_end() {
            return Err(SessionError::Overrun((end - self.window_end()) as usize));
        }
        if self.rewind_wait && !self.paths.iter().any(|p| p.id != id && p.may_deliver()) {
            // The only path left delivers in order again: what follows on it is contiguous.
            self.rewind_wait = false;
        }
        let dup = (self.recv_next - offset).min(bytes.len() as u64);
        self.count_duplicates(dup);
        let fresh = bytes.get(dup as usize..).unwrap_or(&[]);
        self.deliver(id, fresh, now);
        self.deliver_held(now);
        Ok(())
    }

    /// DATA beyond the next expected offset: held, dropped (after a lost path), or an error.
    fn on_data_ahead(&mut self, id: PathId, offset: u64, bytes: &[u8]) -> Result<(), SessionError> {
        if !self.gap_allowed(id) {
            return Err(SessionError::Gap {
                offset,
                next: self.recv_next,
            });
        }
        let end = offset + bytes.len() as u64;
        if end > self.window_end() || !self.stash.has_room_at(offset) {
            if self.rewind_wait {
                // Sent before the sender saw this end's next REWIND, so resent after it.
                self.rewind_owed = true;
                return Ok(());
            }
            return Err(SessionError::Overrun((end - self.window_end()) as usize));
        }
        let before = self.stash.len();
        let dup = self.stash.insert(offset, bytes, id);
        self.stats.held_ahead += (self.stash.len() - before) as u64;
        self.count_duplicates(dup);
        Ok(())
    }

    fn count_duplicates(&mut self, dup: u64) {
        self.stats.duplicates += dup;
        if let Some(w) = self.window.as_ref() {
            if let Some(r) = self.stats.switches.get_mut(w.record) {
                r.duplicates += dup;
            }
        }
    }

    /// Appends new in-order bytes that came on path `id`.
    fn deliver(&mut self, id: PathId, fresh: &[u8], now: Instant) {
        if fresh.is_empty() {
            return;
        }
        self.recv.extend(fresh);
        self.recv_next += fresh.len() as u64;
        self.stats.received = self.recv_next;
        if let Some(f) = self.path(id).map(|p| p.family) {
            self.stats.received_by_family[f.index()] += fresh.len() as u64;
        }
        self.note_delivery(id, now);
        if self.ack_deadline.is_none() {
            self.ack_deadline = Some(now + self.cfg.ack_delay);
        }
    }

    /// Delivers held bytes the stream has now reached.
    fn deliver_held(&mut self, now: Instant) {
        while let Some((bytes, path, dup)) = self.stash.take_at(self.recv_next) {
            self.count_duplicates(dup);
            // Counted by the family of the path they came on, while it is known.
            self.deliver(path, &bytes, now);
        }
    }

    /// One past the highest byte held ahead of the gap.
    pub(super) fn held_high(&self) -> Option<u64> {
        self.stash.high()
    }

    pub(super) fn note_delivery(&mut self, id: PathId, now: Instant) {
        let gap = self.last_delivery.map(|t| now.saturating_duration_since(t));
        self.last_delivery = Some(now);
        let Some(w) = self.window.as_mut() else {
            return;
        };
        w.max_gap = match (w.max_gap, gap) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if id == w.new {
            let (record, requested, old_done) = (w.record, w.requested, w.old_done);
            if let Some(r) = self.stats.switches.get_mut(record) {
                if r.first_received.is_none() {
                    r.first_received = Some(now.saturating_duration_since(requested));
                }
            }
            if old_done {
                self.close_window();
            }
        }
    }
}
