//! Time in a session: when the driver must next call [`Session::handle_timeout`], and what
//! happens then: a PING on a quiet active path, the failure verdict on a silent one, and the
//! end of old paths whose MOVED never came.

use super::{Frame, Path, PathId, PathState, Session, REWIND_SPACING};
use std::time::Instant;

impl Session {
    /// When [`Session::handle_timeout`] should next run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let drain = self
            .paths
            .iter()
            .filter_map(|p| p.draining_since)
            .min()
            .map(|t| t + self.cfg.moved_timeout);
        let silent = self
            .paths
            .iter()
            .filter(|p| !p.moved_recv)
            .filter_map(|p| p.draining_since.map(|t| p.last_recv.max(t)))
            .min()
            .map(|t| t + self.cfg.dead_after);
        let rewind = self
            .rewind_owed
            .then_some(self.active)
            .flatten()
            .map(|_| self.last_rewind.map_or(self.start, |t| t + REWIND_SPACING));
        [
            self.ack_deadline,
            drain,
            silent,
            rewind,
            self.heartbeat_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The active path, when heartbeats watch it (open, and the stream not complete).
    fn watched(&self) -> Option<&Path> {
        let p = self.active.and_then(|a| self.path(a))?;
        (p.state == PathState::Open && !self.complete()).then_some(p)
    }

    /// The next PING or the failure verdict of the active path, whichever comes first.
    fn heartbeat_deadline(&self) -> Option<Instant> {
        let p = self.watched()?;
        let ping = p.last_ping.unwrap_or(p.last_recv) + self.cfg.heartbeat_idle;
        Some(ping.min(p.last_recv + self.cfg.dead_after))
    }

    /// Closes old paths whose peer never sent MOVED, queues a PING on a quiet active path,
    /// and closes the active path when nothing arrived on it for [`Config::dead_after`](crate::session::Config::dead_after)
    /// (then [`Session::needs_path`] says so, as after [`Session::path_failed`]). Returns the
    /// paths it declared failed, whose sockets the driver should close. (A due ACK goes out
    /// with the next [`Session::poll_transmit`] of the active path.)
    pub fn handle_timeout(&mut self, now: Instant) -> Vec<PathId> {
        let mut dead = Vec::new();
        let (idle, dead_after) = (self.cfg.heartbeat_idle, self.cfg.dead_after);
        if let Some((id, last_recv, last_ping)) =
            self.watched().map(|p| (p.id, p.last_recv, p.last_ping))
        {
            if now >= last_recv + dead_after {
                self.stats.heartbeat_failures += 1;
                self.lose_path(id);
                dead.push(id);
            } else if now >= last_ping.unwrap_or(last_recv) + idle {
                self.ping_token += 1;
                let token = self.ping_token;
                if let Some(p) = self.path_mut(id) {
                    Frame::Ping { token }.emit(&mut p.ctrl);
                    p.last_ping = Some(now);
                }
            }
        }
        // An old path whose MOVED did not come: given up after the drain timeout, or once
        // nothing arrived on it for the heartbeat deadline (its sender would still be sending
        // what it wrote before MOVED).
        let expired: Vec<(PathId, bool)> = self
            .paths
            .iter()
            .filter_map(|p| {
                let since = p.draining_since?;
                let timed_out = p.ctrl.is_empty() && now >= since + self.cfg.moved_timeout;
                let silent = !p.moved_recv && now >= p.last_recv.max(since) + dead_after;
                (timed_out || silent).then_some((p.id, silent))
            })
            .collect();
        for (id, silent) in expired {
            self.lose_path(id);
            if silent {
                dead.push(id);
            }
        }
        dead
    }
}
