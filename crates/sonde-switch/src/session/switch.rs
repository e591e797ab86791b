//! Opening paths and moving the stream onto them: the HELLO and JOIN handshakes of each end,
//! the MOVED that hands the old path's part of the stream over, and the record of each
//! switch (when it was asked for, how long setup took, the receive gap it left).

use super::{Event, Frame, PathId, PathState, Role, Session, SessionError, Window, VERSION};
use crate::stats::{Family, SwitchKind, SwitchRecord};
use std::time::Instant;

impl Session {
    /// Notes that the application asked for a switch at `now` (before the dial starts), so
    /// the switch record can say how long setup took.
    pub fn request_switch(&mut self, now: Instant) {
        self.requested = Some(now);
    }

    /// Client: a new connected socket of `family`. Queues HELLO on the first path, JOIN on
    /// later ones; the stream moves there when the answer arrives.
    pub fn open_path(&mut self, family: Family, now: Instant) -> PathId {
        let id = self.add_path(family, PathState::Opening, now);
        let frame = if self.established {
            if self.requested.is_none() {
                self.requested = Some(now);
            }
            Frame::Join {
                session: self.id,
                next: self.recv_next,
            }
        } else {
            Frame::Hello {
                version: VERSION,
                session: self.id,
            }
        };
        if let Some(p) = self.path_mut(id) {
            frame.emit(&mut p.ctrl);
        }
        if self.established {
            // Right behind the JOIN: the peer may still think its old path healthy.
            self.emit_owed_rewind(id, now);
        }
        id
    }

    /// Server: the first path, whose HELLO (with `version`) created this session.
    ///
    /// # Errors
    /// A version this end does not speak (REJECT is queued for the path; send it, then close).
    pub fn accept_hello(
        &mut self,
        family: Family,
        version: u8,
        now: Instant,
    ) -> Result<PathId, SessionError> {
        let id = self.add_path(family, PathState::Open, now);
        if version != VERSION {
            if let Some(p) = self.path_mut(id) {
                Frame::Reject {
                    reason: crate::wire::RejectReason::Version,
                }
                .emit(&mut p.ctrl);
            }
            return Err(SessionError::Version(version));
        }
        let session = self.id;
        if let Some(p) = self.path_mut(id) {
            Frame::HelloOk {
                version: VERSION,
                session,
            }
            .emit(&mut p.ctrl);
        }
        self.established = true;
        self.activate(id, self.acked, false, now)?;
        Ok(id)
    }

    /// Server: a new path whose JOIN says the client expects offset `next`. The stream moves
    /// to it at once.
    ///
    /// # Errors
    /// `next` beyond what this end sent.
    pub fn accept_join(
        &mut self,
        family: Family,
        next: u64,
        now: Instant,
    ) -> Result<PathId, SessionError> {
        let id = self.add_path(family, PathState::Open, now);
        let frame = Frame::JoinOk {
            next: self.recv_next,
        };
        if let Some(p) = self.path_mut(id) {
            frame.emit(&mut p.ctrl);
        }
        self.requested = Some(now);
        self.activate(id, next, true, now)?;
        Ok(id)
    }

    /// Moves sending to `id`, resending from `next`; the old path gets MOVED.
    pub(super) fn activate(
        &mut self,
        id: PathId,
        next: u64,
        is_switch: bool,
        now: Instant,
    ) -> Result<(), SessionError> {
        let written = self.written();
        if next > written {
            return Err(SessionError::BeyondSent {
                offset: next,
                written,
            });
        }
        // A JOIN or JOIN_OK can be older than an ACK that overtook it on the old path: what
        // was confirmed is held by the peer either way.
        let next = next.max(self.acked);
        let old = self.active.filter(|o| *o != id);
        let mut from = None;
        let mut start = next;
        if let Some(o) = old.and_then(|o| self.path_mut(o)) {
            Frame::Moved {
                offset: o.send_next,
            }
            .emit(&mut o.ctrl);
            o.state = PathState::Draining;
            o.draining_since = Some(now);
            from = Some(o.family);
            // A planned switch: the old path carries everything below its MOVED offset, so
            // the new one continues from there and resends nothing. If the old path fails
            // before delivering it, a rewind resends it (see `lose_path`).
            start = start.max(o.send_next);
        }
        let Some(p) = self.path_mut(id) else {
            return Ok(());
        };
        p.state = PathState::Open;
        p.send_next = start;
        let to = p.family;
        self.active = Some(id);
        self.emit_owed_rewind(id, now);
        self.events.push_back(Event::Switched(id));
        self.stats.family = Some(to);
        if is_switch {
            self.begin_record(id, old, from, to, now);
        }
        Ok(())
    }

    fn begin_record(
        &mut self,
        new: PathId,
        old: Option<PathId>,
        from: Option<Family>,
        to: Family,
        now: Instant,
    ) {
        self.close_window();
        let requested = self.requested.take().unwrap_or(now);
        self.stats.switches.push(SwitchRecord {
            at: requested.saturating_duration_since(self.start),
            kind: if old.is_some() {
                SwitchKind::Planned
            } else {
                SwitchKind::Recovery
            },
            from,
            to,
            setup: (self.role == Role::Client).then(|| now.saturating_duration_since(requested)),
            first_sent: None,
            first_received: None,
            stall: None,
            replayed: 0,
            duplicates: 0,
        });
        let record = self.stats.switches.len() - 1;
        let max_gap = self.last_delivery.map(|t| now.saturating_duration_since(t));
        self.window = Some(Window {
            record,
            requested,
            old,
            new,
            max_gap,
            old_done: old.is_none(),
        });
        self.first_sent_pending = Some((record, new, requested));
    }

    pub(super) fn close_window(&mut self) {
        if let Some(w) = self.window.take() {
            if let Some(r) = self.stats.switches.get_mut(w.record) {
                r.stall = w.max_gap.filter(|_| r.first_received.is_some());
            }
        }
    }
}
