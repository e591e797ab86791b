//! Signals while a result is finished: a second SIGINT (as `timeout` sends, signalling the
//! process and its group) or a third in quick succession must not cut the `-J` document or
//! the `--logfile`; SIGTERM is named SIGTERM; the reason is said once, on stderr.
//!
//! Every repetition must pass: a race that empties stdout one run in ten is the defect.

use crate::common::{at, Proc, Server, TempDir};
use serde_json::Value;
use std::thread;
use std::time::Duration;

/// How many times each race is run within one test.
const REPEATS: usize = 4;

/// Sends `sig` `n` times, 5 ms apart, to `p` (the later ones may find it gone: that is fine).
fn burst(p: &Proc, sig: libc::c_int, n: usize) {
    for i in 0..n {
        if i > 0 {
            thread::sleep(Duration::from_millis(5));
        }
        // SAFETY: kill(2) on the pid of a child not yet reaped.
        let rc = unsafe { libc::kill(p.pid(), sig) };
        assert!(rc == 0 || i > 0, "kill({}, {sig}) failed", p.pid());
    }
}

/// Checks that `text` is one complete partial client document.
#[track_caller]
fn whole_partial(text: &str, what: &str) {
    let doc: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("{what} is not one JSON document ({e}):\n{text}"));
    assert_eq!(at(&doc, "partial"), &Value::Bool(true), "{what}");
    assert!(at(&doc, "error").is_string(), "{what}: no error:\n{text}");
    assert!(
        !doc["intervals"].as_array().is_none_or(Vec::is_empty),
        "{what}: no intervals"
    );
}

/// `n` SIGINTs 5 ms apart, 1.2 s into a 5 s client: stdout (or the log) holds the document.
fn race(server: &Server, n: usize, logfile: Option<&str>) {
    let mut args = vec!["-t", "5", "-J"];
    if let Some(l) = logfile {
        args.extend(["--logfile", l]);
    }
    let client = server.spawn_client(&args);
    thread::sleep(Duration::from_millis(1200));
    burst(&client, libc::SIGINT, n);
    let out = client.wait(Duration::from_secs(15));
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    match logfile {
        None => whole_partial(&out.stdout, &out.describe()),
        Some(l) => {
            let saved = std::fs::read_to_string(l).unwrap_or_default();
            whole_partial(&saved, &format!("--logfile {l}\n{}", out.describe()));
            std::fs::remove_file(l).ok();
        }
    }
}

#[test]
fn a_second_sigint_does_not_throw_the_result_away() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    for _ in 0..REPEATS {
        race(&server, 2, None);
    }
}

#[test]
fn three_sigints_in_quick_succession_still_write_the_whole_result() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let dir = TempDir::new("three-sigints");
    let log = dir.file("run.json");
    let log = log.to_string_lossy();
    for i in 0..REPEATS {
        race(&server, 3, (i % 2 == 1).then_some(&*log));
    }
}

#[test]
fn sigterm_is_named_sigterm_and_said_once_on_stderr() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // The table on a pipe: its partial mark stays, the reason is said on stderr only.
    let client = server.spawn_client(&["-t", "5"]);
    thread::sleep(Duration::from_millis(1200));
    burst(&client, libc::SIGTERM, 1);
    let out = client.wait(Duration::from_secs(15));
    assert_eq!(out.code(), Some(1), "{}", out.describe());
    assert!(out.stderr.contains("SIGTERM"), "{}", out.describe());
    assert!(!out.stderr.contains("Ctrl-C"), "{}", out.describe());
    let said = out.stderr.lines().filter(|l| l.contains("interrupted"));
    assert_eq!(
        said.count(),
        1,
        "the reason once on stderr\n{}",
        out.describe()
    );
    assert!(!out.stdout.contains("sonde: error"), "{}", out.describe());
    assert!(out.stdout.contains("partial result"), "{}", out.describe());
}

/// `sonde SUB 127.0.0.1 -p PORT ARGS -J` stopped by SIGTERM 700 ms in: exit 1, a whole
/// document on stdout marked partial, and the signal named once on stderr, never "error -
/// interrupted" (every command says it through the same message).
#[track_caller]
fn stopped_by_sigterm_says_so_once(server: &Server, sub: &str, args: &[&str]) {
    let mut a = server.command_args(sub, args);
    a.push("-J".into());
    let p = Proc::spawn(&a);
    thread::sleep(Duration::from_millis(700));
    p.signal(libc::SIGTERM);
    let out = p.wait(Duration::from_secs(30));
    assert_eq!(out.code(), Some(1), "{sub}: {}", out.describe());
    let doc: Value = serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{sub}: not one JSON document ({e})\n{}", out.describe()));
    assert_eq!(doc["partial"], true, "{sub}: {}", out.describe());
    let named = out
        .stderr
        .lines()
        .filter(|l| l.contains("interrupted by SIGTERM"))
        .count();
    assert_eq!(named, 1, "{sub}: the signal named once\n{}", out.describe());
    assert!(
        !out.stderr.contains("error - interrupted"),
        "{sub}: {}",
        out.describe()
    );
}

#[test]
fn every_command_names_the_signal_that_stopped_it_once_on_stderr() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let runs: [(&str, &[&str]); 5] = [
        ("rrul", &["--phase", "2", "--step", "50ms"]),
        ("compare-ip", &["-c", "200", "--throughput-time", "0"]),
        ("btc", &["--sizes", "1M,1M,1M", "--every", "1s"]),
        ("sweep", &["-u", "-b", "1m,2m,3m", "--step-time", "1"]),
        ("stress", &["--steps", "1m,2m,3m", "--step-time", "1"]),
    ];
    for (sub, args) in runs {
        stopped_by_sigterm_says_so_once(&server, sub, args);
    }
}
