//! A deterministic two-endpoint harness: a client and a server session joined by in-memory
//! links whose delivery is metered per step, so data can sit "in flight" on an old path while
//! the stream moves. Time advances 1 ms a step.

use super::*;
use crate::stats::SwitchKind;
use crate::wire::{Header, HEADER_LEN};

const SOCKET_BUFFER: usize = 64 * 1024;

struct Link {
    family: Family,
    c2s: VecDeque<u8>,
    s2c: VecDeque<u8>,
    cp: PathId,
    sp: Option<PathId>,
    alive: bool,
}

struct Pair {
    now: Instant,
    c: Session,
    s: Option<Session>,
    links: Vec<Link>,
    s_got: Vec<u8>,
    c_got: Vec<u8>,
    /// Bytes per link and direction delivered per step.
    budget: usize,
    /// The server's application does not read while set.
    server_paused: bool,
}

/// Takes whole frames off `q` up to `budget` bytes and hands them to `f`; a frame `f`
/// refuses (returns false: no room for it) stays, and so does everything behind it.
fn drain_frames(q: &mut VecDeque<u8>, budget: usize, mut f: impl FnMut(Frame<'_>) -> bool) {
    let mut used = 0;
    while q.len() >= HEADER_LEN && used < budget {
        let mut hb = [0u8; HEADER_LEN];
        for (i, b) in q.iter().take(HEADER_LEN).enumerate() {
            hb[i] = *b;
        }
        let h = Header::parse(&hb).unwrap();
        if q.len() < HEADER_LEN + h.len {
            return;
        }
        let bytes: Vec<u8> = q.iter().take(HEADER_LEN + h.len).copied().collect();
        if !f(Frame::parse(h, &bytes[HEADER_LEN..]).unwrap()) {
            return;
        }
        q.drain(..bytes.len());
        used += bytes.len();
    }
}

/// Hands `f` to `s` on path `id` if the receive window has room for it.
fn take(s: &mut Session, id: PathId, f: Frame<'_>, now: Instant) -> bool {
    if let Frame::Data { offset, bytes } = &f {
        if s.recv_room_at(id, *offset) < bytes.len() {
            // The bytes are there; only the application is slow (as the driver does).
            s.path_alive(id, now);
            return false;
        }
    }
    s.handle(id, f, now).unwrap();
    true
}

impl Pair {
    fn new(cfg: Config, budget: usize) -> Self {
        let now = Instant::now();
        let mut p = Self {
            now,
            c: Session::client(SessionId([1; 16]), cfg, now),
            s: None,
            links: Vec::new(),
            s_got: Vec::new(),
            c_got: Vec::new(),
            budget,
            server_paused: false,
        };
        p.dial(Family::V4);
        p
    }

    fn dial(&mut self, family: Family) {
        let cp = self.c.open_path(family, self.now);
        self.links.push(Link {
            family,
            c2s: VecDeque::new(),
            s2c: VecDeque::new(),
            cp,
            sp: None,
            alive: true,
        });
    }

    fn step(&mut self) {
        let now = self.now;
        for l in self.links.iter_mut().filter(|l| l.alive) {
            // Each direction holds at most about a socket buffer in flight.
            let mut out = Vec::new();
            if l.c2s.len() < SOCKET_BUFFER {
                self.c.poll_transmit(l.cp, now, &mut out, SOCKET_BUFFER);
                l.c2s.extend(out.drain(..));
            }
            if let (Some(s), Some(sp)) = (self.s.as_mut(), l.sp) {
                if l.s2c.len() < SOCKET_BUFFER {
                    s.poll_transmit(sp, now, &mut out, SOCKET_BUFFER);
                    l.s2c.extend(out);
                }
            }
            let (s, c) = (&mut self.s, &mut self.c);
            let fam = l.family;
            let sp = &mut l.sp;
            drain_frames(&mut l.c2s, self.budget, |f| match (&mut *s, *sp) {
                (Some(srv), Some(id)) => take(srv, id, f, now),
                (srv, None) => {
                    match f {
                        Frame::Hello { version, session } => {
                            let mut n = Session::server(session, c.cfg.clone(), now);
                            *sp = Some(n.accept_hello(fam, version, now).unwrap());
                            *srv = Some(n);
                        }
                        Frame::Join { next, .. } => {
                            let srv = srv.as_mut().unwrap();
                            *sp = Some(srv.accept_join(fam, next, now).unwrap());
                        }
                        other => panic!("first frame {other:?}"),
                    }
                    true
                }
                (None, Some(_)) => unreachable!(),
            });
            let cp = l.cp;
            drain_frames(&mut l.s2c, self.budget, |f| take(c, cp, f, now));
        }
        let mut buf = vec![0u8; 1 << 20];
        if let Some(s) = self.s.as_mut().filter(|_| !self.server_paused) {
            let n = s.read(&mut buf);
            self.s_got.extend_from_slice(&buf[..n]);
            s.handle_timeout(now);
        }
        let n = self.c.read(&mut buf);
        self.c_got.extend_from_slice(&buf[..n]);
        self.c.handle_timeout(now);
        self.now += Duration::from_millis(1);
        // Forget links both ends have closed once nothing is left in flight.
        let (c, s) = (&self.c, &self.s);
        self.links.retain(|l| {
            let open = c.paths().any(|p| p == l.cp)
                || l.sp
                    .is_some_and(|sp| s.as_ref().is_some_and(|s| s.paths().any(|p| p == sp)));
            open || !l.c2s.is_empty() || !l.s2c.is_empty()
        });
    }

    /// Steps until every link is empty.
    fn settle(&mut self) {
        for _ in 0..1000 {
            self.step();
            if self
                .links
                .iter()
                .all(|l| l.c2s.is_empty() && l.s2c.is_empty())
            {
                return;
            }
        }
    }

    fn server(&self) -> &Session {
        self.s.as_ref().unwrap()
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed ^ (i >> 8) as u8)
        .collect()
}

mod drain;

#[test]
fn hello_then_stream_both_ways() {
    let mut p = Pair::new(Config::default(), 1 << 20);
    let up = pattern(300_000, 1);
    let down = pattern(200_000, 2);
    let (mut ui, mut di) = (0, 0);
    for _ in 0..200 {
        ui += p.c.write(&up[ui..]);
        if let Some(s) = p.s.as_mut() {
            di += s.write(&down[di..]);
        }
        p.step();
    }
    assert!(p.c.is_established());
    assert_eq!(p.s_got, up);
    assert_eq!(p.c_got, down);
    assert!(p.c.all_acked());
    assert!(p.server().all_acked());
    assert!(p.c.stats().switches.is_empty());
    assert_eq!(p.server().stats().received_by_family, [300_000, 0]);
}

#[test]
fn planned_switch_with_data_in_flight_loses_and_duplicates_nothing() {
    // 20 KB per step per link: a 64 KB frame needs several steps, so the old path always
    // has bytes in flight when the stream moves.
    let cfg = Config {
        max_data: 8192,
        ..Config::default()
    };
    let mut p = Pair::new(cfg, 20_000);
    let data = pattern(20_000_000, 3);
    let mut i = 0;
    let mut fam = Family::V4;
    let mut step = 0;
    while p.s_got.len() < data.len() && step < 5000 {
        step += 1;
        i += p.c.write(&data[i..]);
        if step % 50 == 25 {
            fam = fam.other();
            p.c.request_switch(p.now);
            p.dial(fam);
        }
        p.step();
    }
    p.settle();
    assert_eq!(p.s_got.len(), data.len());
    assert!(p.s_got == data, "stream differs");
    let cs = p.c.stats();
    let ss = p.server().stats();
    assert!(cs.switches.len() >= 10, "{} switches", cs.switches.len());
    // The new path starts where the old one stops: nothing is sent twice, nothing arrives
    // twice, and the harness did leave bytes in flight (the new path's came first).
    assert_eq!((cs.replayed, ss.duplicates), (0, 0));
    assert!(
        ss.held_ahead > 0,
        "the harness should leave bytes in flight"
    );
    assert_eq!(ss.received, data.len() as u64);
    for r in &cs.switches {
        assert_eq!(r.kind, SwitchKind::Planned);
        assert!(r.setup.is_some() && r.first_sent.is_some(), "{r:?}");
    }
    let stalls: Vec<_> = ss.switches.iter().filter_map(|r| r.stall).collect();
    assert!(!stalls.is_empty());
    assert!(
        stalls.iter().all(|s| *s < Duration::from_millis(50)),
        "{stalls:?}"
    );
    // Old paths closed: only the current one is left on either side.
    assert_eq!(p.c.paths().count(), 1);
    assert_eq!(p.server().paths().count(), 1);
    assert!(ss.received_by_family[0] > 0 && ss.received_by_family[1] > 0);
}

#[test]
fn a_thousand_switches_in_one_transfer() {
    let cfg = Config {
        max_data: 4096,
        ..Config::default()
    };
    let mut p = Pair::new(cfg, 8192);
    let data = pattern(24_000_000, 4);
    let mut i = 0;
    let mut fam = Family::V4;
    let mut step = 0;
    while (p.s_got.len() < data.len() || p.c.stats().switches.len() < 1000) && step < 20_000 {
        i += p.c.write(&data[i..]);
        if step % 3 == 1 && p.c.is_established() && p.c.stats().switches.len() < 1000 {
            fam = fam.other();
            p.dial(fam);
        }
        p.step();
        step += 1;
    }
    p.settle();
    assert_eq!(p.c.stats().switches.len(), 1000);
    assert!(p.s_got == data);
    assert!(p.c.paths().count() <= 2);
}

#[test]
fn a_failed_path_is_repaired_by_a_join_with_nothing_lost() {
    let mut p = Pair::new(Config::default(), 20_000);
    let data = pattern(1_000_000, 5);
    let mut i = 0;
    for step in 0..400 {
        i += p.c.write(&data[i..]);
        if step == 30 {
            // The IPv4 path dies with bytes in flight both ways.
            let l = &mut p.links[0];
            l.alive = false;
            let (cp, sp) = (l.cp, l.sp.unwrap());
            assert!(!p.c.needs_path());
            p.c.path_failed(cp);
            p.s.as_mut().unwrap().path_failed(sp);
            assert_eq!(p.c.family(), None);
            assert!(p.c.needs_path() && p.server().needs_path());
            p.dial(Family::V6);
            assert!(!p.c.needs_path(), "a JOIN is on its way");
        }
        p.step();
    }
    assert!(p.s_got == data);
    let r = &p.c.stats().switches[0];
    assert_eq!(r.kind, SwitchKind::Recovery);
    assert_eq!((r.from, r.to), (None, Family::V6));
}

#[test]
fn the_replay_buffer_pushes_back() {
    let cfg = Config {
        replay_capacity: 1000,
        ..Config::default()
    };
    let mut p = Pair::new(cfg, 1 << 20);
    assert_eq!(p.c.write(&[0; 1500]), 1000);
    assert_eq!(p.c.write(&[0; 10]), 0);
    for _ in 0..20 {
        p.step();
    }
    // Confirmed bytes leave the buffer, making room again.
    assert!(p.c.all_acked());
    assert_eq!(p.c.write(&[0; 10]), 10);
}

#[test]
fn finish_ends_the_stream_after_its_bytes() {
    let mut p = Pair::new(Config::default(), 1 << 20);
    p.c.write(b"hello");
    p.c.finish();
    assert!(!p.c.all_acked());
    assert_eq!(p.c.write(b"more"), 0);
    for _ in 0..5 {
        p.step();
    }
    assert_eq!(p.s_got, b"hello");
    assert!(p.server().peer_finished());
    assert!(p.c.all_acked(), "the FIN is confirmed too");
    assert!(!p.c.peer_finished());
}

#[test]
fn protocol_violations_are_errors_not_panics() {
    let now = Instant::now();
    let mut s = Session::server(SessionId([2; 16]), Config::default(), now);
    let id = s.accept_hello(Family::V6, VERSION, now).unwrap();
    assert_eq!(
        s.handle(
            id,
            Frame::Data {
                offset: 5,
                bytes: b"x"
            },
            now
        ),
        Err(SessionError::Gap { offset: 5, next: 0 })
    );
    assert!(matches!(
        s.handle(id, Frame::Ack { offset: 1 }, now),
        Err(SessionError::BeyondSent { .. })
    ));
    assert!(s.accept_join(Family::V4, 10, now).is_err());
    assert!(s
        .handle(
            id,
            Frame::Hello {
                version: 1,
                session: SessionId([0; 16])
            },
            now
        )
        .is_err());
    let small = Config {
        recv_capacity: 4,
        ..Config::default()
    };
    let mut s = Session::server(SessionId([2; 16]), small, now);
    let id = s.accept_hello(Family::V4, VERSION, now).unwrap();
    assert_eq!(
        s.handle(
            id,
            Frame::Data {
                offset: 0,
                bytes: b"12345"
            },
            now
        ),
        Err(SessionError::Overrun(1))
    );
    let mut s = Session::server(SessionId([2; 16]), Config::default(), now);
    assert_eq!(
        s.accept_hello(Family::V4, 9, now),
        Err(SessionError::Version(9))
    );
}

#[test]
fn a_quiet_path_is_kept_alive_by_heartbeats() {
    let mut p = Pair::new(Config::default(), 1 << 20);
    // Two virtual seconds with nothing to send: ten times the failure deadline.
    for _ in 0..2000 {
        p.step();
    }
    // One PING per 50 ms of quiet at whichever end notices first; the other end's PING
    // resets the quiet, so together they send about one per interval.
    let (c, s) = (p.c.pings_sent(), p.server().pings_sent());
    assert!(c + s >= 2000 / 50 - 2 && c > 0 && s > 0, "{c} + {s}");
    assert_eq!(p.c.stats().heartbeat_failures, 0);
    assert_eq!(p.server().stats().heartbeat_failures, 0);
    assert_eq!(p.c.family(), Some(Family::V4));
    assert_eq!(p.server().family(), Some(Family::V4));
}

#[test]
fn a_silently_dropping_path_fails_at_the_deadline_and_is_repaired() {
    let cfg = Config::default();
    let dead_after = cfg.dead_after;
    let mut p = Pair::new(cfg, 20_000);
    let data = pattern(2_000_000, 6);
    let mut i = 0;
    for _ in 0..30 {
        i += p.c.write(&data[i..]);
        p.step();
    }
    // The IPv4 link now drops everything, both ways, without an error or a close.
    p.links[0].alive = false;
    let cut = p.now;
    let (cp, sp) = (p.links[0].cp, p.links[0].sp.unwrap());
    let mut client_dead = None;
    let mut server_dead = None;
    while client_dead.is_none() || server_dead.is_none() {
        assert!(p.now < cut + dead_after * 2, "no verdict");
        i += p.c.write(&data[i..]);
        p.step();
        if client_dead.is_none() && !p.c.paths().any(|x| x == cp) {
            client_dead = Some(p.now - cut);
        }
        if server_dead.is_none() && !p.server().paths().any(|x| x == sp) {
            server_dead = Some(p.now - cut);
        }
    }
    for d in [client_dead.unwrap(), server_dead.unwrap()] {
        // The verdict falls dead_after after the last arrival, which was just before the cut.
        assert!(d <= dead_after + Duration::from_millis(2), "{d:?}");
        assert!(d + Duration::from_millis(10) >= dead_after, "{d:?}");
    }
    assert!(p.c.needs_path() && p.server().needs_path());
    assert_eq!(p.c.stats().heartbeat_failures, 1);
    assert_eq!(p.server().stats().heartbeat_failures, 1);
    p.dial(Family::V6);
    for _ in 0..400 {
        i += p.c.write(&data[i..]);
        p.step();
    }
    assert!(p.s_got == data, "{} of {} bytes", p.s_got.len(), data.len());
    let r = &p.server().stats().switches[0];
    assert_eq!((r.kind, r.to), (SwitchKind::Recovery, Family::V6));
    // The receiver's longest gap spans the silence, the verdict and the JOIN.
    assert!(r.stall.unwrap() >= dead_after, "{:?}", r.stall);
}

#[test]
fn handle_timeout_names_the_failed_path_once() {
    let mut p = Pair::new(Config::default(), 1 << 20);
    p.step();
    p.step();
    let cp = p.links[0].cp;
    p.links[0].alive = false;
    let mut failed = Vec::new();
    let mut now = p.now;
    for _ in 0..500 {
        now += Duration::from_millis(1);
        failed.extend(p.c.handle_timeout(now));
    }
    assert_eq!(failed, vec![cp]);
    // Nothing is watched while no path carries the stream.
    assert_eq!(p.c.poll_timeout(), None);
}
