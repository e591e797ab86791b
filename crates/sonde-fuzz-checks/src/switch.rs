//! The switching library (sonde-switch): its frames, and its session fed hostile frames.

use std::time::{Duration, Instant};

use sonde_switch::session::{Config, PathId, Session};
use sonde_switch::wire::{Frame, Header, HEADER_LEN};
use sonde_switch::Family;

use crate::input::Records;

/// The next frame at the start of `b` and the bytes after it; `None` at the end of the
/// input or on a malformed frame (which ends the path in the library too).
fn next_frame(b: &[u8]) -> Option<(Frame<'_>, &[u8])> {
    let hb: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
    let h = Header::parse(hb).ok()?;
    let end = HEADER_LEN.checked_add(h.len)?;
    let payload = b.get(HEADER_LEN..end)?;
    let f = Frame::parse(h, payload).ok()?;
    Some((f, b.get(end..)?))
}

/// A byte stream read frame by frame as a path reads it: every frame that parses emits its
/// exact bytes again and says its own length.
pub fn switch_frames(data: &[u8]) {
    let mut rest = data;
    let mut out = Vec::new();
    while let Some((f, after)) = next_frame(rest) {
        out.clear();
        f.emit(&mut out);
        assert_eq!(out.len(), f.len());
        assert_eq!(&out[..], &rest[..f.len()]);
        rest = after;
    }
}

/// One record's action on the session: the first byte picks a frame on a path or an
/// application or timer event.
fn act(s: &mut Session, paths: &mut Vec<PathId>, rec: &[u8], now: Instant) -> bool {
    let Some((&pick, body)) = rec.split_first() else {
        return true;
    };
    let path = paths
        .get(usize::from(pick >> 4) % paths.len().max(1))
        .copied();
    match pick % 8 {
        0..=2 => {
            let Some(id) = path else { return true };
            let mut rest = body;
            while let Some((f, after)) = next_frame(rest) {
                if s.handle(id, f, now).is_err() {
                    return false;
                }
                rest = after;
            }
        }
        3 => {
            let fam = if body.first().is_some_and(|b| b & 1 == 1) {
                Family::V6
            } else {
                Family::V4
            };
            if paths.len() < 8 {
                paths.push(s.open_path(fam, now));
            }
        }
        4 => s.request_switch(now),
        5 => {
            if let Some(id) = path {
                s.path_failed(id);
            }
        }
        6 => {
            let _ = s.write(body);
            if body.first() == Some(&0) {
                s.finish();
            }
        }
        _ => {
            let mut buf = [0u8; 4096];
            while s.read(&mut buf) > 0 {}
            s.handle_timeout(now);
        }
    }
    true
}

/// Hostile frames, path changes and application calls into a client and a server session;
/// after each step everything each path wants to send is drained and events are polled.
/// The session must stay within its buffers and never panic.
pub fn switch_session(data: &[u8]) {
    let start = Instant::now();
    let id = sonde_switch::wire::SessionId([7; 16]);
    let mut client = Session::client(id, Config::default(), start);
    let mut cpaths = vec![client.open_path(Family::V4, start)];
    let mut server = Session::server(id, Config::default(), start);
    let mut spaths = Vec::new();
    if let Ok(p) = server.accept_hello(Family::V4, sonde_switch::wire::VERSION, start) {
        spaths.push(p);
    }
    let mut now = start;
    let mut out = Vec::new();
    let (mut c_alive, mut s_alive) = (true, true);
    for (i, rec) in Records::new(data).enumerate() {
        now += Duration::from_millis(rec.len() as u64 * 3);
        for (s, paths, alive) in [
            (&mut client, &mut cpaths, &mut c_alive),
            (&mut server, &mut spaths, &mut s_alive),
        ] {
            if !*alive || (i % 2 == 1) == (s.role() == sonde_switch::session::Role::Client) {
                continue;
            }
            *alive = act(s, paths, rec, now);
            for &p in paths.iter() {
                out.clear();
                let _ = s.poll_transmit(p, now, &mut out, 1 << 16);
            }
            while s.poll_event().is_some() {}
            let _ = (s.poll_timeout(), s.stats(), s.send_room(), s.recv_room());
        }
    }
}
