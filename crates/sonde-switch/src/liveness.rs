//! Noticing a path that fails silently: packets dropped without an error or a close (a route
//! withdrawn, a firewall rule, a dead middlebox) leave a TCP socket open and blocked for
//! minutes. Two guards, both ending in the same break-before-make recovery as a socket error:
//! the session's heartbeat (a PING after a quiet spell, the path declared failed when nothing
//! arrived for [`Config::dead_after`](crate::session::Config::dead_after)), driven here by a
//! timer thread per session because the path's own writer may be stuck in a full socket;
//! and TCP_USER_TIMEOUT on every path's socket, so data the kernel cannot get acknowledged
//! fails the socket.

use super::{orphaned, spawn, Shared, State, TICK};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs the session's timers at `now`; closes the sockets of paths the heartbeat declared
/// failed and starts their recovery.
pub(super) fn handle_timeout(shared: &Arc<Shared>, st: &mut State, now: Instant) {
    let family = st.session.family();
    let dead = st.session.handle_timeout(now);
    if dead.is_empty() {
        return;
    }
    for id in dead {
        if let Some(s) = st.sockets.remove(&id) {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
    while st.session.poll_event().is_some() {}
    if let Some(family) = family {
        let quiet = st.session.config().dead_after;
        orphaned(
            shared,
            st,
            family,
            format!(
                "nothing arrived on the {} path for {} ms",
                family.name(),
                quiet.as_millis()
            ),
        );
    }
    shared.cv.notify_all();
}

/// Starts the thread that runs the session's timers until it closes (a PING is due or the
/// heartbeat deadline passes even while every writer is blocked) and keeps the pollable
/// descriptor, once there is one, in step with the session (it then wakes on every change).
pub(super) fn spawn_timer(shared: &Arc<Shared>) {
    let shared = shared.clone();
    spawn(move || {
        let mut st = shared.lock();
        while !st.closed {
            // Every state change notifies; this thread mirrors it on the pollable descriptor.
            st.sync_ready();
            let pings = st.session.pings_sent();
            handle_timeout(&shared, &mut st, Instant::now());
            if st.session.pings_sent() != pings {
                shared.cv.notify_all(); // the PING's writer may be idle
            }
            let until = st
                .session
                .poll_timeout()
                .map(|t| t.saturating_duration_since(Instant::now()));
            let d = until.unwrap_or(TICK).clamp(Duration::from_millis(1), TICK);
            // Every change notifies `cv`; only the pollable descriptor needs to see them all.
            let cv = if st.ready.is_some() {
                &shared.cv
            } else {
                &shared.timer_cv
            };
            st = Shared::wait_on(cv, st, d);
        }
        st.sync_ready();
    });
}

/// Sets TCP_USER_TIMEOUT on `sock` (best effort: a system without it keeps its default).
pub(super) fn set_user_timeout(sock: &TcpStream, timeout: Option<Duration>) {
    if timeout.is_some() {
        let _ = socket2::SockRef::from(sock).set_tcp_user_timeout(timeout);
    }
}
