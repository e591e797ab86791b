//! Planned switches whose old path drains while the new one already delivers, and old paths
//! lost during that drain, on the virtual-clock harness of `session::tests`.

use super::*;

/// Which end learns that a cut path failed (the other finds out by itself, or never).
#[derive(Debug, Clone, Copy)]
enum Told {
    Client,
    Server,
    Both,
    Neither,
}

impl Pair {
    /// Cuts link `i` (both directions, bytes in flight lost) and tells `told` about it.
    fn cut(&mut self, i: usize, told: Told) {
        let l = &mut self.links[i];
        l.alive = false;
        l.c2s.clear();
        l.s2c.clear();
        let (cp, sp) = (l.cp, l.sp);
        if matches!(told, Told::Client | Told::Both) {
            self.c.path_failed(cp);
        }
        if let (Some(s), Some(sp), Told::Server | Told::Both) = (self.s.as_mut(), sp, told) {
            s.path_failed(sp);
        }
    }

    /// Steps (writing `data` from the client) until the server has all of it, redialing
    /// when the client has lost every path; at most `steps` steps.
    fn run(&mut self, data: &[u8], written: &mut usize, steps: usize) {
        for _ in 0..steps {
            *written += self.c.write(&data[*written..]);
            if self.c.needs_path() {
                let fam = self.c.family().unwrap_or(Family::V4).other();
                self.dial(fam);
            }
            self.step();
            if self.s_got.len() == data.len() {
                break;
            }
        }
    }
}

/// A pair whose links carry 20 KB a step in 8 KB frames: a switch leaves bytes in flight.
fn pair_8k() -> Pair {
    let cfg = Config {
        max_data: 8192,
        ..Config::default()
    };
    Pair::new(cfg, 20_000)
}

/// A transfer with one planned switch to IPv6; the old IPv4 link is cut `after` steps
/// into the switch (with bytes in flight), `told` learning of it.
fn switch_then_cut(after: usize, told: Told) -> Pair {
    let mut p = pair_8k();
    let data = pattern(3_000_000, 7);
    let mut i = 0;
    p.run(&data, &mut i, 20);
    p.c.request_switch(p.now);
    p.dial(Family::V6);
    p.run(&data, &mut i, after);
    assert!(
        !p.links[0].c2s.is_empty(),
        "the old path has bytes in flight"
    );
    p.cut(0, told);
    p.run(&data, &mut i, 2000);
    assert_eq!(p.s_got.len(), data.len(), "{told:?}: bytes missing");
    assert!(p.s_got == data, "{told:?}: stream differs");
    p
}

#[test]
fn a_healthy_drain_resends_nothing_and_delivers_the_new_path_in_order() {
    let mut p = pair_8k();
    let data = pattern(2_000_000, 8);
    let mut i = 0;
    p.run(&data, &mut i, 20);
    p.c.request_switch(p.now);
    p.dial(Family::V6);
    p.run(&data, &mut i, 2000);
    p.settle();
    assert!(p.s_got == data);
    let (cs, ss) = (p.c.stats(), p.server().stats());
    assert_eq!((cs.replayed, ss.duplicates), (0, 0));
    assert!(
        ss.held_ahead > 0,
        "the new path delivered before the old one drained"
    );
    let r = &ss.switches[0];
    assert_eq!(r.kind, SwitchKind::Planned);
    // The receiver never waited more than a harness step or two for the next byte.
    assert!(r.stall.unwrap() <= Duration::from_millis(2), "{r:?}");
    assert_eq!(p.server().paths().count(), 1, "the old path closed");
}

#[test]
fn an_old_path_lost_before_its_moved_is_resent_whoever_notices() {
    for told in [Told::Server, Told::Client, Told::Both] {
        for after in [1, 2, 3] {
            let p = switch_then_cut(after, told);
            let (cs, ss) = (p.c.stats(), p.server().stats());
            assert!(
                cs.replayed > 0,
                "{told:?} {after}: the lost bytes went again"
            );
            assert_eq!(cs.heartbeat_failures + ss.heartbeat_failures, 0);
            if matches!(told, Told::Server) {
                assert!(ss.switches.len() == 1 && cs.switches.len() == 1);
            }
        }
    }
}

#[test]
fn an_old_path_that_goes_silent_during_the_drain_is_given_up_and_resent() {
    let mut p = switch_then_cut(2, Told::Neither);
    // Found by the drain's silence deadline, not by a socket error or the 2 s drain timeout.
    assert!(p.c.stats().replayed > 0);
    for _ in 0..300 {
        p.step();
    }
    // The server gave up its old path; the client had read the server's MOVED before the
    // cut, so it only waits for its own MOVED to leave (a real socket would fail the write).
    assert_eq!(p.server().paths().count(), 1);
}

#[test]
fn an_old_path_lost_after_its_moved_needs_nothing_resent() {
    let mut p = Pair::new(Config::default(), 1 << 20);
    let data = pattern(500_000, 9);
    let mut i = 0;
    p.run(&data, &mut i, 10);
    p.dial(Family::V6);
    // Step until the server has read the client's MOVED on the old path (it then stops
    // reading it), then cut that path at the server: it lost nothing and asks for nothing.
    let sp = p.links[0].sp.unwrap();
    for _ in 0..50 {
        p.step();
        if !p.server().path_readable(sp) {
            break;
        }
    }
    assert!(!p.server().path_readable(sp));
    if let Some(k) = p.links.iter().position(|l| l.sp == Some(sp)) {
        p.cut(k, Told::Server);
    }
    p.run(&data, &mut i, 500);
    assert!(p.s_got == data);
    assert_eq!(p.c.stats().replayed, 0);
}

#[test]
fn a_full_window_stops_reading_the_new_path_and_never_the_old_one() {
    let cfg = Config {
        max_data: 4096,
        recv_capacity: 64 * 1024,
        ..Config::default()
    };
    let mut p = Pair::new(cfg, 8192);
    let data = pattern(1_000_000, 10);
    let mut i = 0;
    p.run(&data, &mut i, 30);
    // The server's application stops reading: the old path fills the window, the new one
    // has to wait for room.
    p.server_paused = true;
    p.dial(Family::V6);
    let mut refused = false;
    for _ in 0..200 {
        i += p.c.write(&data[i..]);
        p.step();
        let s = p.server();
        if let Some(sp) = p.links.get(1).and_then(|l| l.sp) {
            refused |= s.recv_room_at(sp, s.recv_next + 1) < 4096;
        }
        assert!(s.recv.len() + s.stash.len() <= 64 * 1024);
    }
    assert!(refused, "the window never pushed back on the new path");
    p.server_paused = false;
    p.run(&data, &mut i, 2000);
    assert!(p.s_got == data);
    assert_eq!(p.c.stats().replayed, 0);
}

#[test]
fn a_rewind_racing_with_data_and_further_switches_loses_nothing() {
    // Random switches, cuts told to one end, the other or none, both directions streaming,
    // the server's application pausing now and then; every seed must end intact.
    for seed in 1..=40u64 {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let cfg = Config {
            max_data: 4096,
            recv_capacity: 96 * 1024,
            ..Config::default()
        };
        let mut p = Pair::new(cfg, 6000 + (next() % 20_000) as usize);
        let up = pattern(1_500_000, seed as u8);
        let down = pattern(700_000, !(seed as u8));
        let (mut ui, mut di) = (0, 0);
        for step in 0..6000 {
            ui += p.c.write(&up[ui..]);
            if let Some(s) = p.s.as_mut() {
                di += s.write(&down[di..]);
            }
            let r = next() % 100;
            let live = p.links.iter().filter(|l| l.alive).count();
            if step < 1500 && r < 4 && live < 3 && p.c.is_established() {
                p.dial(p.c.family().unwrap_or(Family::V4).other());
            } else if step < 1500 && r == 4 && live > 1 {
                // Cut the oldest live link (usually the one draining).
                let k = p.links.iter().position(|l| l.alive).unwrap();
                let told =
                    [Told::Client, Told::Server, Told::Both, Told::Neither][(next() % 4) as usize];
                p.cut(k, told);
            }
            p.server_paused = step < 1500 && next() % 10 == 0;
            if p.c.needs_path() {
                p.dial(p.c.family().unwrap_or(Family::V4).other());
            }
            p.step();
            if p.s_got.len() == up.len() && p.c_got.len() == down.len() {
                break;
            }
        }
        assert_eq!(p.s_got.len(), up.len(), "seed {seed}: upstream incomplete");
        assert!(p.s_got == up, "seed {seed}: upstream differs");
        assert_eq!(
            p.c_got.len(),
            down.len(),
            "seed {seed}: downstream incomplete"
        );
        assert!(p.c_got == down, "seed {seed}: downstream differs");
    }
}

#[test]
fn a_new_path_starts_with_small_frames_and_grows_them() {
    let mut c = Session::client(SessionId([3; 16]), Config::default(), Instant::now());
    let now = Instant::now();
    let id = c.open_path(Family::V4, now);
    c.handle(
        id,
        Frame::HelloOk {
            version: VERSION,
            session: SessionId([3; 16]),
        },
        now,
    )
    .unwrap();
    c.write(&pattern(1 << 20, 11));
    let mut out = Vec::new();
    c.poll_transmit(id, now, &mut out, 1 << 20);
    let mut sizes = Vec::new();
    let mut q: VecDeque<u8> = out.into_iter().collect();
    drain_frames(&mut q, usize::MAX, |f| {
        if let Frame::Data { bytes, .. } = f {
            sizes.push(bytes.len());
        }
        true
    });
    // 4 KB, 4 KB, 8 KB, ... up to the configured 64 KB.
    assert_eq!(&sizes[..6], &[4096, 4096, 8192, 16384, 32768, 65536]);
    assert!(sizes[6..]
        .iter()
        .all(|n| *n == 65536 || sizes.last() == Some(n)));
}

#[test]
fn a_version_1_peer_is_refused_with_a_reason_not_fed_rewinds() {
    let now = Instant::now();
    let mut s = Session::server(SessionId([4; 16]), Config::default(), now);
    assert_eq!(
        s.accept_hello(Family::V4, 1, now),
        Err(SessionError::Version(1))
    );
    let mut out = Vec::new();
    s.poll_transmit(PathId(0), now, &mut out, 1 << 16);
    let mut q: VecDeque<u8> = out.into_iter().collect();
    let mut c = Session::client(SessionId([4; 16]), Config::default(), now);
    let id = c.open_path(Family::V4, now);
    let mut err = None;
    drain_frames(&mut q, usize::MAX, |f| {
        err = c.handle(id, f, now).err();
        true
    });
    let err = err.expect("the REJECT ends the session");
    assert_eq!(
        err,
        SessionError::Rejected(crate::wire::RejectReason::Version)
    );
    assert_eq!(
        err.to_string(),
        "the peer refused the session: it speaks another protocol version"
    );
}
