//! The framed backend over real TCP sockets on IPv4 and IPv6 loopback: many make-before-break
//! switches in one transfer, every byte checked against the sent pattern.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly
use sonde_switch::{Conn, Family, Listener, Options, SwitchKind, Targets};
use std::time::{Duration, Instant};

use sonde_testkit::stream::byte_at;

fn pair() -> (Conn, Conn, Listener) {
    let l = Listener::bind(&["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()]).unwrap();
    let t = Targets::from_addrs(&l.local_addrs());
    let c = Conn::connect(&t, Family::V4, Options::default()).unwrap();
    let s = l.accept(Some(Duration::from_secs(5))).unwrap();
    (c, s, l)
}

/// Receives until the end of the stream, checking every byte; returns the count.
fn check_all(s: &Conn) -> u64 {
    let mut buf = vec![0u8; 256 * 1024];
    let mut at = 0u64;
    loop {
        let n = s.recv(&mut buf).unwrap();
        if n == 0 {
            return at;
        }
        for b in &buf[..n] {
            assert_eq!(*b, byte_at(at), "byte {at} differs");
            at += 1;
        }
    }
}

#[test]
fn hundreds_of_switches_lose_nothing() {
    let (c, s, _l) = pair();
    let total: u64 = 200 << 20;
    let switches = 300;
    let reader = std::thread::spawn(move || {
        let n = check_all(&s);
        s.close().unwrap();
        (n, s.stats())
    });
    let mut chunk = vec![0u8; 64 * 1024];
    let mut at = 0u64;
    let mut fam = Family::V4;
    let step = total / (switches + 1);
    let mut next_switch = step;
    let mut done = 0u64;
    let t0 = Instant::now();
    while at < total {
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = byte_at(at + i as u64);
        }
        let n = c.send(&chunk).unwrap();
        at += n as u64;
        if at >= next_switch {
            fam = fam.other();
            let r = c.switch(fam).unwrap();
            assert_eq!(r.kind, SwitchKind::Planned);
            next_switch += step;
            done += 1;
        }
    }
    if let Err(e) = c.close() {
        let s = c.stats();
        panic!(
            "{e}: written {} acked {} switches {}",
            s.written,
            s.acked,
            s.switches.len()
        );
    }
    let (got, ss) = reader.join().unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(got, at);
    let cs = c.stats();
    assert!(done >= switches);
    // A host stalled for longer than the heartbeat deadline (200 ms) makes a path look
    // dead: its recovery is recorded too, next to every planned switch.
    let planned = |st: &sonde_switch::Stats| {
        st.switches
            .iter()
            .filter(|r| r.kind == SwitchKind::Planned)
            .count() as u64
    };
    assert_eq!(planned(&cs), done, "{:?}", cs.switches.len());
    assert_eq!(planned(&ss), done, "{:?}", ss.switches.len());
    assert_eq!(cs.switches.len(), ss.switches.len());
    assert!(ss.received_by_family[0] > 0 && ss.received_by_family[1] > 0);
    let mut stalls: Vec<Duration> = ss.switches.iter().filter_map(|r| r.stall).collect();
    stalls.sort();
    let setups: Vec<Duration> = cs.switches.iter().filter_map(|r| r.setup).collect();
    eprintln!(
        "{} MB, {switches} switches in {secs:.2} s ({:.0} Mbit/s); replayed {} B, duplicates {} B; stall median {:?} max {:?}; setup max {:?}",
        at >> 20,
        at as f64 * 8.0 / secs / 1e6,
        cs.replayed,
        ss.duplicates,
        stalls.get(stalls.len() / 2),
        stalls.last(),
        setups.iter().max()
    );
    assert_eq!(cs.replayed, ss.duplicates);
}

#[test]
fn both_directions_and_switch_back_and_forth() {
    let (c, s, _l) = pair();
    let echo = std::thread::spawn(move || {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = s.recv(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            s.send_all(&buf[..n]).unwrap();
        }
        s.close().unwrap();
    });
    let mut got = Vec::new();
    let mut buf = [0u8; 100];
    for i in 0..50u8 {
        c.send_all(&[i; 100]).unwrap();
        if i % 5 == 0 {
            c.switch(if i % 10 == 0 { Family::V6 } else { Family::V4 })
                .unwrap();
        }
        c.recv_exact(&mut buf).unwrap();
        got.extend_from_slice(&buf);
    }
    assert_eq!(c.family(), Some(Family::V4));
    c.finish().unwrap();
    assert_eq!(c.recv(&mut buf).unwrap(), 0);
    echo.join().unwrap();
    let want: Vec<u8> = (0..50u8).flat_map(|i| [i; 100]).collect();
    assert_eq!(got, want);
}

#[test]
fn a_join_for_an_unknown_session_is_refused_and_nothing_else_breaks() {
    use std::io::{Read, Write};
    let l = Listener::bind(&["127.0.0.1:0".parse().unwrap()]).unwrap();
    let addr = l.local_addrs()[0];
    let mut raw = std::net::TcpStream::connect(addr).unwrap();
    let mut join = vec![5, 0, 0, 0, 24];
    join.extend_from_slice(&[9; 24]);
    raw.write_all(&join).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reply = [0u8; 6];
    raw.read_exact(&mut reply).unwrap();
    assert_eq!(reply, [11, 0, 0, 0, 1, 1]);
    // Garbage instead of HELLO closes that connection only.
    let mut g = std::net::TcpStream::connect(addr).unwrap();
    g.write_all(&[0xff; 64]).unwrap();
    let t = Targets::from_addrs(&[addr]);
    let c = Conn::connect(&t, Family::V4, Options::default()).unwrap();
    let s = l.accept(Some(Duration::from_secs(5))).unwrap();
    c.send_all(b"ok").unwrap();
    let mut b = [0u8; 2];
    s.recv_exact(&mut b).unwrap();
    assert_eq!(&b, b"ok");
    assert!(c.switch(Family::V6).is_err(), "no IPv6 address was given");
}
