//! iperf3's server-side options through the real binary on loopback: `-D` with `-I` (detach,
//! pid file removed on SIGTERM), `--idle-timeout` (a one-off server that nobody uses exits),
//! and `--rcv-timeout` on both ends (a test whose data stops fails instead of waiting).
//! A stopped process (SIGSTOP) stands in for a sender that hangs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{free_port, run, Server, TempDir};
use std::time::{Duration, Instant};

/// Kills a process by id when dropped (a daemon the test started must not outlive it).
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill(2) with a pid this test read from the daemon's pid file.
        unsafe {
            libc::kill(self.0, libc::SIGCONT);
            libc::kill(self.0, libc::SIGKILL);
        }
    }
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_daemon_detaches_logs_to_its_file_and_removes_its_pid_file_on_sigterm() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("daemon");
    let (pidfile, logfile) = (dir.file("sonde.pid"), dir.file("sonde.log"));
    let port = free_port().to_string();
    let (pid_s, log_s) = (
        pidfile.to_string_lossy().into_owned(),
        logfile.to_string_lossy().into_owned(),
    );
    // The parent returns at once, 0, once the ports are bound.
    let started = run(
        &["-s", "-p", &port, "-D", "-I", &pid_s, "--logfile", &log_s],
        Duration::from_secs(10),
    );
    started.expect_code(0);
    wait_for("the pid file", Duration::from_secs(5), || pidfile.exists());
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _guard = KillOnDrop(pid);
    assert_ne!(pid, std::process::id() as i32);
    let client = run(
        &["-c", "127.0.0.1", "-p", &port, "-t", "1"],
        Duration::from_secs(30),
    );
    client.expect_code(0);
    wait_for(
        "the server's summary in its log",
        Duration::from_secs(5),
        || std::fs::read_to_string(&logfile).is_ok_and(|l| l.contains("receiver")),
    );
    let log = std::fs::read_to_string(&logfile).unwrap();
    assert!(
        log.contains("accepted a TCP upload"),
        "the server's own messages are logged too:\n{log}"
    );
    // SAFETY: SIGTERM to the daemon this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    wait_for("the pid file to go", Duration::from_secs(5), || {
        !pidfile.exists()
    });
}

#[test]
fn a_one_off_server_that_nobody_uses_exits_after_its_idle_timeout() {
    let _turn = crate::turns::take(module_path!());
    let port = free_port().to_string();
    let t0 = Instant::now();
    let out = run(
        &["-s", "-1", "-p", &port, "--idle-timeout", "1"],
        Duration::from_secs(20),
    );
    out.expect_code(0);
    let took = t0.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert!(out.stderr.contains("--idle-timeout"), "{}", out.describe());
}

#[test]
fn a_client_receiving_nothing_fails_after_its_rcv_timeout() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&[]);
    let client = server.spawn_client(&["-R", "-t", "30", "--rcv-timeout", "1500"]);
    std::thread::sleep(Duration::from_millis(1000));
    server.proc().signal(libc::SIGSTOP);
    let t0 = Instant::now();
    let out = client.wait(Duration::from_secs(20));
    server.proc().signal(libc::SIGCONT);
    out.expect_code(1);
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "ended by the timeout, not the test's 30 s"
    );
    assert!(out.stderr.contains("--rcv-timeout"), "{}", out.describe());
    assert!(
        out.stdout.contains("bits/sec"),
        "the partial result is shown\n{}",
        out.describe()
    );
}

#[test]
fn a_server_receiving_nothing_ends_the_test_after_its_rcv_timeout() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&["--rcv-timeout", "1s"]);
    let client = server.spawn_client(&["-t", "30"]);
    std::thread::sleep(Duration::from_millis(1000));
    client.signal(libc::SIGSTOP);
    wait_for("the server to give up", Duration::from_secs(15), || {
        server.output_so_far().contains("--rcv-timeout")
    });
    client.signal(libc::SIGCONT);
    let out = client.wait(Duration::from_secs(20));
    out.expect_code(1);
    assert!(
        out.stderr.contains("--rcv-timeout"),
        "the client hears why\n{}",
        out.describe()
    );
}

#[test]
fn a_server_labels_each_tests_lines_while_tests_overlap() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let long = server.spawn_client(&["-t", "3", "-b", "10m"]);
    std::thread::sleep(Duration::from_millis(500));
    server
        .client(&["-t", "1", "-b", "10m"], Duration::from_secs(30))
        .expect_code(0);
    long.wait(Duration::from_secs(30)).expect_code(0);
    server
        .client(&["-t", "1", "-b", "10m"], Duration::from_secs(30))
        .expect_code(0);
    wait_for("the last summary", Duration::from_secs(5), || {
        server.output_so_far().matches("receiver").count() >= 3
    });
    let out = server.output_so_far();
    let stdout = out
        .split("--- server stderr ---")
        .next()
        .unwrap_or_default();
    let labels: std::collections::BTreeSet<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("[127.0.0.1:"))
        .filter_map(|l| l.split(']').next())
        .collect();
    assert_eq!(
        labels.len(),
        2,
        "both overlapping tests are labelled\n{out}"
    );
    // Once labelled, a test stays labelled: every summary row of the two is.
    let summaries: Vec<&str> = stdout.lines().filter(|l| l.ends_with("receiver")).collect();
    assert_eq!(summaries.len(), 3, "{out}");
    assert!(
        summaries[..2].iter().all(|l| l.starts_with("[127.0.0.1:")),
        "{out}"
    );
    // The test that ran alone is not.
    assert!(summaries[2].starts_with("[  1]"), "{out}");
}
