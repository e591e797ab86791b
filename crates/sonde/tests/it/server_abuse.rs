//! Issue 16, a server that trusts no peer, through the real binary on loopback:
//!
//! - idle connections must not cost a legitimate client its test: a process opens thousands
//!   of TCP connections to `sonde server` and sends nothing; a normal client test must still
//!   pass meanwhile at full speed, with no thread per idle connection; when the server cannot
//!   hold more (a low descriptor limit) it closes the oldest idle ones, says so in its log,
//!   and still serves the client;
//! - a `--tcp-rr` run takes a `--max-clients` slot like any test, and one beyond the limit is
//!   refused with the server's reason.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{free_port, num, run, sonde_bin, Server, TempDir};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Raises this process's descriptor limit to its hard limit; returns the soft limit.
fn raise_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
    }
    lim.rlim_cur
}

/// A number from /proc/PID/status (`Threads`, `VmRSS` in kB).
fn status(pid: i32, key: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}

fn open_fds(pid: i32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Opens `n` connections that send nothing; returns them and the rate they were opened at.
fn open_idle(addr: SocketAddr, n: usize) -> (Vec<TcpStream>, f64) {
    let t0 = Instant::now();
    let conns: Vec<TcpStream> = (0..n)
        .map(|i| {
            TcpStream::connect_timeout(&addr, Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("idle connection {i} of {n} failed: {e}"))
        })
        .collect();
    let rate = n as f64 / t0.elapsed().as_secs_f64();
    (conns, rate)
}

/// True when the server still holds `s` open (nothing to read yet, no FIN, no reset).
fn still_open(s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 1];
    matches!((&*s).read(&mut b), Err(e) if e.kind() == ErrorKind::WouldBlock)
}

fn rate_of(out: &common::Output) -> f64 {
    num(&out.json(), "end.sum_received.bits_per_second")
}

#[test]
fn issue16_ten_thousand_idle_connections_do_not_cost_a_client_its_test() {
    let _turn = crate::turns::take(module_path!());
    let limit = raise_nofile();
    let n = 10_000.min(limit.saturating_sub(512) as usize);
    assert!(n >= 1000, "descriptor limit {limit} too low for this test");
    let mut server = Server::start(&[]);
    let pid = server.proc().pid();
    let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
    let before = server.client(&["-t", "1", "-J"], Duration::from_secs(20));
    before.expect_code(0);
    let rss_before = status(pid, "VmRSS");

    let (idle, rate) = open_idle(addr, n);
    wait_for(
        "the server to accept every idle connection",
        Duration::from_secs(20),
        || open_fds(pid) >= n,
    );
    let threads = status(pid, "Threads");
    let rss_held = status(pid, "VmRSS");
    // With idle connections held the gate runs on its own: no thread per connection.
    assert!(
        threads < 16,
        "{threads} threads while holding {n} idle connections"
    );

    let during = server.client(&["-t", "2", "-J"], Duration::from_secs(30));
    during.expect_code(0);
    let (b, d) = (rate_of(&before), rate_of(&during));
    eprintln!(
        "{n} idle connections opened at {rate:.0}/s; server: {threads} threads, RSS {rss_before} kB -> {rss_held} kB; client test {:.2} Gbit/s before, {:.2} Gbit/s while they were held",
        b / 1e9,
        d / 1e9
    );
    // Full speed meanwhile: the same order as without them (loopback on a shared host varies).
    assert!(
        d >= b * 0.25,
        "{d} bit/s with idle connections held vs {b} before"
    );
    let open = idle.iter().filter(|s| still_open(s)).count();
    assert_eq!(
        open, n,
        "the server closed idle connections it had room for"
    );
    drop(idle);
    wait_for(
        "the server to let the idle connections go",
        Duration::from_secs(10),
        || open_fds(pid) < 100,
    );
}

/// Connections that send a valid control preamble and then nothing (or half a hello) are held
/// by the gate like idle ones, not given a session thread each, and a client is served
/// meanwhile.
#[test]
fn issue16_preambles_without_a_hello_hold_no_threads() {
    let _turn = crate::turns::take(module_path!());
    let limit = raise_nofile();
    let n = 2_000.min(limit.saturating_sub(512) as usize);
    let mut server = Server::start(&[]);
    let pid = server.proc().pid();
    let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
    let (mut silent, _) = open_idle(addr, n);
    for (i, s) in silent.iter_mut().enumerate() {
        s.write_all(sonde_proto::preamble::CONTROL_MAGIC).unwrap();
        if i % 2 == 1 {
            // A length prefix that promises a 100-byte hello, and 10 bytes of it.
            s.write_all(&100u32.to_be_bytes()).unwrap();
            s.write_all(&[b'{'; 10]).unwrap();
        }
    }
    wait_for(
        "the server to accept every silent connection",
        Duration::from_secs(20),
        || open_fds(pid) >= n,
    );
    std::thread::sleep(Duration::from_millis(300));
    let threads = status(pid, "Threads");
    assert!(
        threads < 16,
        "{threads} threads while holding {n} connections that sent a preamble and no hello"
    );
    let out = server.client(&["-t", "1", "-J"], Duration::from_secs(20));
    out.expect_code(0);
    let open = silent.iter().filter(|s| still_open(s)).count();
    assert_eq!(open, n, "the server closed connections it had room for");
}

/// A server whose descriptor limit lets it hold only a few idle connections closes the oldest
/// to hear a new client, and its log says why.
#[test]
fn issue16_a_server_out_of_room_closes_its_oldest_idle_connections_and_serves_the_client() {
    let _turn = crate::turns::take(module_path!());
    raise_nofile();
    let dir = TempDir::new("idle-flood");
    let log = dir.file("server.log");
    let port = free_port();
    let mut cmd = Command::new(sonde_bin());
    cmd.args(["server", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 1200,
                rlim_max: 1200,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = Kill(&mut child);
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    wait_for("the server to listen", Duration::from_secs(5), || {
        TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
    });
    // 1200 descriptors less 1024 kept for tests: it holds 176 unidentified connections.
    let (idle, _) = open_idle(addr, 400);
    let pid = guard.0.id() as i32;
    wait_for(
        "the server to reach its limit",
        Duration::from_secs(10),
        || {
            std::fs::read_to_string(&log)
                .unwrap()
                .contains("closed as the oldest")
        },
    );
    let out = common::run(
        &[
            "client",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "1",
            "-J",
        ],
        Duration::from_secs(20),
    );
    out.expect_code(0);
    assert!(rate_of(&out) > 0.0);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("lets this server hold only 176 unidentified connections"),
        "{text}"
    );
    // The oldest were closed, the newest are still held.
    assert!(
        !still_open(&idle[0]),
        "the oldest idle connection is still open"
    );
    assert!(
        still_open(&idle[399]),
        "the newest idle connection was closed"
    );
    let held = idle.iter().filter(|s| still_open(s)).count();
    assert!((100..=176).contains(&held), "{held} idle connections held");
    assert!(
        open_fds(pid) < 400,
        "server holds {} descriptors",
        open_fds(pid)
    );
}

#[test]
fn issue16_tcp_rr_takes_a_max_clients_slot_and_is_refused_beyond_it() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&["--max-clients", "1"]);
    let port = server.port.to_string();
    let rr = |count: &str| {
        vec![
            "latency",
            "--tcp-rr",
            "127.0.0.1",
            "-p",
            &port,
            "-c",
            count,
            "-i",
            "100ms",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    // 40 transactions 100 ms apart: it holds its slot for about 4 s.
    let first = common::Proc::spawn(&rr("40"));
    std::thread::sleep(Duration::from_millis(800));
    let busy = server.client(&["-t", "1"], Duration::from_secs(20));
    busy.expect_code(1);
    assert!(busy.stderr_lc().contains("busy"), "{}", busy.describe());
    let second = run(&rr("3"), Duration::from_secs(20));
    assert_ne!(second.code(), Some(0), "{}", second.describe());
    let err = second.stderr_lc();
    assert!(
        err.contains("refused") && err.contains("at most 1 clients"),
        "{}",
        second.describe()
    );
    first.wait(Duration::from_secs(20)).expect_code(0);
    // The slot is given back when the run ends.
    server
        .client(&["-t", "1"], Duration::from_secs(20))
        .expect_code(0);
    assert!(server
        .proc()
        .stderr_so_far()
        .contains("refused tcp-rr from"));
}

/// The server serves at most 4096 identified connections at once, a thread each; when many
/// addresses (here one, with the per-source limit off) hold that many, a further one is
/// closed as it identifies itself and the log says why, while the held ones stay open; once
/// they end, clients are served again.
#[test]
fn issue16_identified_connections_beyond_the_thread_cap_are_closed_and_logged() {
    let _turn = crate::turns::take(module_path!());
    const CAP: usize = 4096;
    const EXTRA: usize = 8;
    let limit = raise_nofile();
    assert!(
        limit as usize > CAP + 512,
        "descriptor limit {limit} too low for this test"
    );
    let mut server = Server::start(&["--max-sessions-per-source", "0"]);
    let pid = server.proc().pid();
    let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
    // Each sends a tcp-rr preamble and no transaction size: its thread waits up to 60 s.
    let (mut conns, _) = open_idle(addr, CAP + EXTRA);
    for s in &mut conns {
        s.write_all(sonde_proto::preamble::RR_MAGIC).unwrap();
    }
    let closed = |conns: &[TcpStream]| conns.iter().filter(|s| !still_open(s)).count();
    wait_for(
        "the connections beyond the cap to be closed",
        Duration::from_secs(30),
        || closed(&conns) >= EXTRA,
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(closed(&conns), EXTRA, "only those beyond {CAP} are closed");
    let threads = status(pid, "Threads") as usize;
    assert!(
        (CAP..CAP + 16).contains(&threads),
        "{threads} server threads for {CAP} served connections"
    );
    wait_for("the log line", Duration::from_secs(5), || {
        server
            .output_so_far()
            .contains("because 4096 connections were being served already")
    });
    drop(conns);
    wait_for(
        "the served connections to end",
        Duration::from_secs(20),
        || status(pid, "Threads") < 16,
    );
    server
        .client(&["-t", "1"], Duration::from_secs(20))
        .expect_code(0);
}
