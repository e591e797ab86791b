//! Old paths that end before they could deliver: the rewind that makes a planned switch safe.
//!
//! A planned switch leaves the bytes below the old path's MOVED offset to the old path alone.
//! When that path is lost before its MOVED was read (a socket error, a heartbeat verdict, the
//! drain timeout), those bytes may never arrive, and either end may notice first. The sender
//! that notices rewinds its active path to the confirmed offset; the receiver that notices
//! sends REWIND {its next expected offset} on its active path (or right behind the JOIN that
//! replaces it), and the sender resends from there everything it had sent. Until resent bytes
//! come, the receiver takes DATA ahead of the gap (held, or dropped and asked for again with
//! another REWIND), so nothing is lost, and bytes that arrive twice are counted and dropped.

use super::{Frame, PathId, PathState, Session, SessionError, REWIND_SPACING};
use std::time::Instant;

impl Session {
    /// Forgets path `id`, which ended without both MOVED markers through.
    pub(super) fn lose_path(&mut self, id: PathId) {
        let Some((state, moved_recv, send_next)) =
            self.path(id).map(|p| (p.state, p.moved_recv, p.send_next))
        else {
            return;
        };
        self.remove_path(id);
        if state == PathState::Opening || !self.established {
            return;
        }
        if !moved_recv {
            // As a receiver: what it carried may be missing.
            self.rewind_wait = true;
            self.rewind_owed = true;
        }
        if send_next > self.acked {
            // As a sender: bytes sent on it may not have arrived.
            self.rewind_active(self.acked);
        }
    }

    /// The peer lost bytes from `offset` on: resend, on the active path, everything from
    /// there that was already sent.
    pub(super) fn on_rewind(&mut self, offset: u64) -> Result<(), SessionError> {
        let written = self.written();
        if offset > written {
            return Err(SessionError::BeyondSent { offset, written });
        }
        self.rewind_active(offset);
        Ok(())
    }

    /// Moves the active path's next offset back to `to` (never below the confirmed offset).
    /// With no active path, the JOIN that brings the next one says where to resume.
    fn rewind_active(&mut self, to: u64) {
        let to = to.max(self.acked);
        if let Some(p) = self.active.and_then(|a| self.path_mut(a)) {
            if p.state == PathState::Open && p.send_next > to {
                p.send_next = to;
            }
        }
    }

    /// Whether an owed REWIND may go out on the active path now (they are spaced, so a
    /// receiver dropping frames does not answer each one).
    pub(super) fn rewind_due(&self, now: Instant) -> bool {
        self.rewind_owed && self.last_rewind.is_none_or(|t| now >= t + REWIND_SPACING)
    }

    /// Queues the owed REWIND on path `id`.
    pub(super) fn emit_owed_rewind(&mut self, id: PathId, now: Instant) {
        if !self.rewind_owed {
            return;
        }
        let offset = self.recv_next;
        if let Some(p) = self.path_mut(id) {
            Frame::Rewind { offset }.emit(&mut p.ctrl);
            self.rewind_owed = false;
            self.last_rewind = Some(now);
        }
    }
}
