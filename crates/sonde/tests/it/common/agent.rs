//! Helpers of the `sonde agent` tests: waiting on a condition with the agents' logs shown on
//! time-out, stopping an agent, reading the metrics endpoint, and counting an agent's runs.

use super::{Output, Proc};
use sonde_store::{Store, TestRecord, TestStatus};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// Polls `cond` every 100 ms for up to `secs`.
#[track_caller]
pub fn wait_for(what: &str, secs: u64, mut cond: impl FnMut() -> bool, procs: &[&Proc]) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if cond() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let logs: Vec<String> = procs.iter().map(|p| p.stderr_so_far()).collect();
    panic!(
        "timed out after {secs} s waiting for {what}; logs:\n{}",
        logs.join("\n---\n")
    );
}

/// A plain HTTP/1.0 GET on loopback: (status line, body).
pub fn http_get(port: u16, path: &str) -> Option<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).ok()?;
    let (head, body) = resp.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

/// The value of the sample `series` (exact name and labels).
pub fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Stops `agent` as a service manager does (SIGTERM) and expects a clean exit (within the
/// agent's 10 s grace for its last copy to PostgreSQL, and some).
pub fn stop(agent: Proc) -> Output {
    agent.signal(libc::SIGTERM);
    let out = agent.wait(Duration::from_secs(20));
    assert_eq!(out.code(), Some(0), "{}", out.describe());
    out
}

/// How many runs of the latest run in the agent database `db` went to `peer` (its label),
/// and how many of them ended ok; none while the database cannot be read yet.
pub fn runs(db: &Path, peer: &str) -> (usize, usize) {
    let tests = latest_tests(db);
    let to: Vec<_> = tests.iter().filter(|t| t.settings == peer).collect();
    let ok = to.iter().filter(|t| t.status == TestStatus::Ok).count();
    (to.len(), ok)
}

/// The tests of the latest run in the agent database `db`, in order; none while the database
/// cannot be read yet (the agent creates it as it starts).
pub fn latest_tests(db: &Path) -> Vec<TestRecord> {
    let Ok(store) = Store::open_read_only(db) else {
        return Vec::new();
    };
    let Ok(Some(run)) = store.latest_run() else {
        return Vec::new();
    };
    store.load_run(run).map(|r| r.tests).unwrap_or_default()
}
