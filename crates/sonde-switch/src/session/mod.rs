//! The switch state machine: one byte stream each way over a changing set of paths.
//!
//! TCP acknowledgements only prove the peer's kernel has the bytes, and a connection cannot
//! change address family; so the stream carries its own 64-bit offsets, the receiver confirms
//! what it has taken (ACK), and the sender keeps everything unconfirmed in a bounded replay
//! buffer. Moving the stream (make-before-break) is: the client dials the other family and
//! sends JOIN {next offset it expects}; the server answers JOIN_OK {next offset it expects};
//! each end then writes MOVED {X, the offset it stops at} on the old path and goes on from X
//! on the new one, so nothing is sent twice while the old path drains. The receiver holds
//! bytes the new path brings before the old path's last ones in a reorder stash (see
//! `recv.rs`) and delivers them once the old path's bytes reach them; a receiver
//! keeps only bytes beyond its next offset, so bytes that arrive twice are counted and
//! dropped, never delivered twice. When the old path fails before its MOVED is read, the
//! bytes below X are resent (see `drain.rs`). When the path carrying the stream
//! failed, the same JOIN repairs it (break-before-make): the new path then starts at the
//! offset the other end expects.
//!
//! Sans-IO (in the manner of quinn-proto): the session owns no socket and reads no clock.
//! Calling order for a driver:
//! 1. create with [`Session::client`] or [`Session::server`];
//! 2. for each connected socket, [`Session::open_path`] (client) or
//!    [`Session::accept_hello`] / [`Session::accept_join`] (server, after the first frame);
//! 3. feed each frame read from path P to [`Session::handle`];
//! 4. send what [`Session::poll_transmit`] gives for P on P's socket (`send.rs`);
//! 5. call [`Session::handle_timeout`] at [`Session::poll_timeout`];
//! 6. drain [`Session::poll_event`]: a closed path's socket can go.
//!
//! The application side is [`Session::write`], [`Session::read`] and [`Session::finish`].
//!
//! By job: this file holds the state and the frame dispatch; `switch.rs` the handshakes and
//! the moves between paths, `recv.rs` and `send.rs` the two halves of the stream, `drain.rs`
//! the rewind after a path lost mid-drain, and `timers.rs` the heartbeats and time-outs.

pub use crate::path::PathId;
use crate::stash::Stash;
use crate::stats::{Family, Stats};
use crate::wire::{Frame, SessionId, VERSION};
use std::collections::VecDeque;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The least time between two REWINDs a receiver sends because it dropped DATA.
const REWIND_SPACING: Duration = Duration::from_millis(5);

/// Sizes and times of a session.
#[derive(Debug, Clone)]
pub struct Config {
    /// Bytes written but not yet confirmed that the sender keeps (backpressure beyond).
    pub replay_capacity: usize,
    /// Bytes received but not yet read by the application.
    pub recv_capacity: usize,
    /// The largest DATA payload this end sends.
    pub max_data: usize,
    /// Confirm at least every this many received bytes...
    pub ack_every: u64,
    /// ...or this long after the first unconfirmed byte.
    pub ack_delay: Duration,
    /// An old path whose MOVED has not arrived after this long is closed anyway.
    pub moved_timeout: Duration,
    /// When nothing arrived on the active path for this long, send a PING (the peer's PONG
    /// proves the path alive; another PING follows every such interval of quiet).
    pub heartbeat_idle: Duration,
    /// When nothing arrived on the active path for this long, it has failed (silently: no
    /// error, no close - a dropped route, a firewall): it is closed and the stream waits for
    /// a JOIN, as after a socket error.
    pub dead_after: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            replay_capacity: 8 << 20,
            recv_capacity: 8 << 20,
            max_data: 64 * 1024,
            ack_every: 256 * 1024,
            ack_delay: Duration::from_millis(5),
            moved_timeout: Duration::from_secs(2),
            // A path cut must be recovered within 300 ms plus one round trip. Recovery after
            // detection is a dial and a JOIN exchange (two round trips) and the replay: with
            // 200 ms of silence as the verdict, a cut is repaired within 200 ms + 2 RTT, which
            // meets the target while the round trip stays under about 90 ms. A live path
            // answers a PING sent after 50 ms of quiet within one round trip, so paths with a
            // round trip below 150 ms are never declared dead by mistake; slower paths need
            // larger values.
            heartbeat_idle: Duration::from_millis(50),
            dead_after: Duration::from_millis(200),
        }
    }
}

/// Which end of the session this is: the client dials, the server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// The peer broke the protocol; the session cannot go on.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SessionError {
    #[error("the peer sent {0} where it is not allowed")]
    Unexpected(&'static str),
    #[error("DATA at offset {offset} leaves a gap: {next} is the next byte expected")]
    Gap { offset: u64, next: u64 },
    #[error("the peer confirmed or expects offset {offset}, but only {written} bytes were sent")]
    BeyondSent { offset: u64, written: u64 },
    #[error("the peer sent {0} bytes more than the receive buffer holds")]
    Overrun(usize),
    #[error("the peer sent data beyond the end of its stream at {0}")]
    BeyondFin(u64),
    #[error("the peer refused the session: {0}")]
    Rejected(crate::wire::RejectReason),
    #[error("the peer speaks protocol version {0}, this end {VERSION}")]
    Version(u8),
}

/// What happened that the driver (or the application) may act on.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The first path completed its HELLO.
    Established,
    /// The stream now runs on this path.
    Switched(PathId),
    /// This path is finished or failed: its socket can be closed.
    PathClosed(PathId),
}

/// What [`Session::poll_transmit`] says about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transmit {
    /// Bytes were appended to the buffer.
    Some,
    /// Nothing to send now.
    Idle,
    /// Nothing will ever be sent on this path again.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathState {
    /// HELLO or JOIN sent, the answer not yet in.
    Opening,
    Open,
    /// MOVED queued or sent; waiting for the peer's MOVED.
    Draining,
}

#[derive(Debug)]
struct Path {
    id: PathId,
    family: Family,
    state: PathState,
    ctrl: Vec<u8>,
    /// The next stream offset to send on this path.
    send_next: u64,
    /// DATA payload bytes sent on this path so far (its frames grow with it).
    sent: u64,
    fin_sent: bool,
    moved_recv: bool,
    draining_since: Option<Instant>,
    /// When a frame (or part of one) last arrived on this path.
    last_recv: Instant,
    /// When the last PING went out on this path, if one did since `last_recv`.
    last_ping: Option<Instant>,
}

impl Path {
    /// Whether stream bytes may still arrive on this path (it is past its handshake and its
    /// peer's MOVED has not been read).
    fn may_deliver(&self) -> bool {
        self.state != PathState::Opening && !self.moved_recv
    }
}

/// A switch in progress: the receive-gap window and the sender's first write.
#[derive(Debug)]
struct Window {
    record: usize,
    requested: Instant,
    old: Option<PathId>,
    new: PathId,
    max_gap: Option<Duration>,
    old_done: bool,
}

/// One end of a switching byte stream (see the module documentation).
#[derive(Debug)]
pub struct Session {
    role: Role,
    id: SessionId,
    cfg: Config,
    start: Instant,
    paths: Vec<Path>,
    next_path: u32,
    active: Option<PathId>,
    established: bool,
    // Sending.
    replay: VecDeque<u8>,
    acked: u64,
    fin_local: bool,
    fin_confirmed: bool,
    /// The highest offset ever sent: bytes below it sent again are replays.
    sent_high: u64,
    // Receiving.
    recv: VecDeque<u8>,
    recv_next: u64,
    ack_sent: u64,
    ack_deadline: Option<Instant>,
    peer_fin: Option<u64>,
    fin_ack_sent: bool,
    last_delivery: Option<Instant>,
    /// Bytes that arrived ahead of `recv_next` while another path may still fill the gap.
    stash: Stash,
    /// A path was lost before its MOVED: bytes below what the others carry may be missing,
    /// so DATA ahead of `recv_next` is taken (held or dropped) until the resent bytes come.
    rewind_wait: bool,
    /// A REWIND must go out on the active path (a path was lost, or DATA was dropped).
    rewind_owed: bool,
    last_rewind: Option<Instant>,
    // Switching.
    requested: Option<Instant>,
    window: Option<Window>,
    first_sent_pending: Option<(usize, PathId, Instant)>,
    events: VecDeque<Event>,
    stats: Stats,
    ping_token: u64,
}

impl Session {
    /// The dialing end, with a fresh session id.
    pub fn client(id: SessionId, cfg: Config, now: Instant) -> Self {
        Self::new(Role::Client, id, cfg, now)
    }

    /// The accepting end of the session a HELLO named.
    pub fn server(id: SessionId, cfg: Config, now: Instant) -> Self {
        Self::new(Role::Server, id, cfg, now)
    }

    fn new(role: Role, id: SessionId, cfg: Config, now: Instant) -> Self {
        Self {
            role,
            id,
            cfg,
            start: now,
            paths: Vec::new(),
            next_path: 0,
            active: None,
            established: false,
            replay: VecDeque::new(),
            acked: 0,
            fin_local: false,
            sent_high: 0,
            fin_confirmed: false,
            fin_ack_sent: false,
            recv: VecDeque::new(),
            recv_next: 0,
            ack_sent: 0,
            ack_deadline: None,
            peer_fin: None,
            last_delivery: None,
            stash: Stash::default(),
            rewind_wait: false,
            rewind_owed: false,
            last_rewind: None,
            requested: None,
            window: None,
            first_sent_pending: None,
            events: VecDeque::new(),
            stats: Stats::default(),
            ping_token: 0,
        }
    }

    /// The sizes and times this session runs with.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// How many heartbeat PINGs this end has queued.
    pub fn pings_sent(&self) -> u64 {
        self.ping_token
    }

    /// The session's id.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Client or server.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Whether the first HELLO exchange is done.
    pub fn is_established(&self) -> bool {
        self.established
    }

    fn add_path(&mut self, family: Family, state: PathState, now: Instant) -> PathId {
        let id = PathId(self.next_path);
        self.next_path += 1;
        self.paths.push(Path {
            id,
            family,
            state,
            ctrl: Vec::new(),
            send_next: self.acked,
            sent: 0,
            fin_sent: false,
            moved_recv: false,
            draining_since: None,
            last_recv: now,
            last_ping: None,
        });
        id
    }

    fn path_mut(&mut self, id: PathId) -> Option<&mut Path> {
        self.paths.iter_mut().find(|p| p.id == id)
    }

    fn path(&self, id: PathId) -> Option<&Path> {
        self.paths.iter().find(|p| p.id == id)
    }

    fn written(&self) -> u64 {
        self.acked + self.replay.len() as u64
    }

    /// Handles one frame read from path `id` at `now`.
    ///
    /// # Errors
    /// The peer broke the protocol; end the session.
    pub fn handle(
        &mut self,
        id: PathId,
        frame: Frame<'_>,
        now: Instant,
    ) -> Result<(), SessionError> {
        let Some(state) = self.path(id).map(|p| p.state) else {
            return Ok(()); // a path already closed: late frames are harmless
        };
        self.path_alive(id, now);
        match frame {
            Frame::HelloOk { version, .. } => {
                if self.role != Role::Client || state != PathState::Opening || self.established {
                    return Err(SessionError::Unexpected("HELLO_OK"));
                }
                if version != VERSION {
                    return Err(SessionError::Version(version));
                }
                self.established = true;
                self.events.push_back(Event::Established);
                self.activate(id, 0, false, now)
            }
            Frame::JoinOk { next } => {
                if self.role != Role::Client || state != PathState::Opening || !self.established {
                    return Err(SessionError::Unexpected("JOIN_OK"));
                }
                self.activate(id, next, true, now)
            }
            Frame::Data { offset, bytes } => self.on_data(id, offset, bytes, now),
            Frame::Ack { offset } => self.on_ack(offset),
            Frame::Moved { .. } => {
                if let Some(p) = self.path_mut(id) {
                    p.moved_recv = true;
                }
                self.maybe_close(id);
                Ok(())
            }
            Frame::Fin { offset } => {
                if offset < self.recv_next
                    || self.peer_fin.is_some_and(|f| f != offset)
                    || self.held_high().is_some_and(|h| h > offset)
                {
                    return Err(SessionError::Unexpected("an inconsistent FIN"));
                }
                self.peer_fin = Some(offset);
                Ok(())
            }
            Frame::Ping { token } => {
                if let Some(p) = self.path_mut(id) {
                    Frame::Pong { token }.emit(&mut p.ctrl);
                }
                Ok(())
            }
            Frame::Pong { .. } => Ok(()),
            Frame::Reject { reason } => Err(SessionError::Rejected(reason)),
            Frame::Rewind { offset } => self.on_rewind(offset),
            Frame::Hello { .. } => Err(SessionError::Unexpected("HELLO")),
            Frame::Join { .. } => Err(SessionError::Unexpected("JOIN")),
        }
    }

    /// Bytes arrived on path `id` at `now` that are not yet a whole frame, or that the driver
    /// holds back because the receive buffer is full: the path is alive all the same.
    pub fn path_alive(&mut self, id: PathId, now: Instant) {
        if let Some(p) = self.path_mut(id) {
            p.last_recv = p.last_recv.max(now);
            p.last_ping = None;
        }
    }

    fn on_ack(&mut self, mut offset: u64) -> Result<(), SessionError> {
        let written = self.written();
        // One past the last byte confirms the FIN too (it takes an offset, as in TCP).
        if self.fin_local && offset == written + 1 {
            self.fin_confirmed = true;
            offset = written;
        }
        if offset > written {
            return Err(SessionError::BeyondSent { offset, written });
        }
        if offset > self.acked {
            let n = (offset - self.acked) as usize;
            self.replay.drain(..n);
            self.acked = offset;
            self.stats.acked = offset;
        }
        Ok(())
    }

    /// Closes a draining path once both MOVED markers are through.
    fn maybe_close(&mut self, id: PathId) {
        let done = self
            .path(id)
            .is_some_and(|p| p.state == PathState::Draining && p.moved_recv && p.ctrl.is_empty());
        if done {
            self.remove_path(id);
        }
    }

    fn remove_path(&mut self, id: PathId) {
        self.paths.retain(|p| p.id != id);
        if self.active == Some(id) {
            self.active = None;
        }
        if let Some(w) = self.window.as_mut() {
            if w.old == Some(id) {
                w.old_done = true;
            }
        }
        self.events.push_back(Event::PathClosed(id));
    }

    /// The socket of path `id` failed (error, reset, timeout): forget it. When it carried the
    /// stream, nothing moves until a new path joins; no byte is lost meanwhile.
    pub fn path_failed(&mut self, id: PathId) {
        self.lose_path(id);
    }

    /// Whether the stream has no path to run on and none is being opened: the path carrying
    /// it failed. The client should then dial and JOIN (break-before-make); the server waits
    /// for that JOIN. Nothing is lost meanwhile: unconfirmed bytes stay in the replay buffer.
    /// A session whose streams both ended and were confirmed needs none.
    pub fn needs_path(&self) -> bool {
        self.established
            && !self.complete()
            && self.active.is_none()
            && !self.paths.iter().any(|p| p.state == PathState::Opening)
    }

    /// Whether frames may still arrive on path `id` (false after its MOVED or its close).
    pub fn path_readable(&self, id: PathId) -> bool {
        self.path(id).is_some_and(|p| !p.moved_recv)
    }

    /// Whether both streams ended and were confirmed.
    fn complete(&self) -> bool {
        self.fin_confirmed && self.fin_ack_sent && self.peer_fin == Some(self.recv_next)
    }

    /// The next thing that happened.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// Free room in the replay buffer: how much [`Session::write`] takes now.
    pub fn send_room(&self) -> usize {
        self.cfg.replay_capacity.saturating_sub(self.replay.len())
    }

    /// Whether [`Session::write`] would take a byte now.
    pub fn can_write(&self) -> bool {
        !self.fin_local && self.send_room() > 0
    }

    /// Whether [`Session::read`] has bytes, or the peer's stream has ended.
    pub fn can_read(&self) -> bool {
        !self.recv.is_empty() || self.peer_fin == Some(self.recv_next)
    }

    /// Takes as much of `data` as the replay buffer has room for; returns how much.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.fin_local {
            return 0;
        }
        let n = data.len().min(self.send_room());
        self.replay.extend(data.get(..n).unwrap_or(&[]));
        self.stats.written = self.written();
        n
    }

    /// Ends this end's stream after the bytes written so far (FIN follows them).
    pub fn finish(&mut self) {
        self.fin_local = true;
    }

    /// Whether everything written (and the end of the stream, once finished) is confirmed.
    pub fn all_acked(&self) -> bool {
        self.replay.is_empty() && (!self.fin_local || self.fin_confirmed)
    }

    /// Copies received bytes into `buf`; 0 when nothing is buffered (see
    /// [`Session::peer_finished`]).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.recv.len());
        let (a, b) = self.recv.as_slices();
        let from_a = n.min(a.len());
        if let (Some(d), Some(s)) = (buf.get_mut(..from_a), a.get(..from_a)) {
            d.copy_from_slice(s);
        }
        if let (Some(d), Some(s)) = (buf.get_mut(from_a..n), b.get(..n - from_a)) {
            d.copy_from_slice(s);
        }
        self.recv.drain(..n);
        n
    }

    /// Whether the peer's end of stream arrived and its confirmation was handed out for sending.
    pub fn peer_fin_confirmed(&self) -> bool {
        self.fin_ack_sent
    }

    /// Whether the peer's stream has ended and every byte of it was read.
    pub fn peer_finished(&self) -> bool {
        self.peer_fin == Some(self.recv_next) && self.recv.is_empty()
    }

    /// A snapshot of the counters; a switch still in progress shows what it has so far.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats.clone();
        if let Some(w) = &self.window {
            if let Some(r) = s.switches.get_mut(w.record) {
                r.stall = w.max_gap.filter(|_| r.first_received.is_some());
            }
        }
        s
    }

    /// The family of the path the stream is sent on now.
    pub fn family(&self) -> Option<Family> {
        self.active.and_then(|a| self.path(a)).map(|p| p.family)
    }

    /// The family of path `id`, while it is open.
    pub fn path_family(&self, id: PathId) -> Option<Family> {
        self.path(id).map(|p| p.family)
    }

    /// The path the stream is sent on now.
    pub fn active_path(&self) -> Option<PathId> {
        self.active
    }

    /// The paths still open.
    pub fn paths(&self) -> impl Iterator<Item = PathId> + '_ {
        self.paths.iter().map(|p| p.id)
    }
}

mod drain;
mod recv;
mod send;
mod switch;
mod timers;

#[cfg(test)]
mod tests;
