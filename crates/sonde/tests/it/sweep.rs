//! `sonde sweep` through the real binary on loopback: a rate list gives one row per rate and
//! the knee, a search terminates with its steps listed, a refusal names its step, Ctrl-C keeps
//! the steps done, and usage errors are clear. (The found rate against a device's packet
//! ceiling is checked as root in `sweep_lab.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Proc, Server};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

fn sweep_args(server: &Server, extra: &[&str]) -> Vec<String> {
    let mut v = vec![
        "sweep".to_string(),
        "127.0.0.1".to_string(),
        "-p".to_string(),
        server.port.to_string(),
    ];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn rate_list_gives_one_row_per_rate_and_the_knee() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // Loopback follows 5 and 20 Mbit/s; no host moves 1 Tbit/s through one TCP stream, so
    // achieved stops following there.
    let out = run(
        &sweep_args(
            &server,
            &["-b", "1000g,20m,5m", "-l", "8K", "--step-time", "0.5", "-J"],
        ),
        DEADLINE,
    );
    out.expect_code(0);
    let doc = out.json();
    let steps = doc["steps"].as_array().unwrap();
    let asked: Vec<u64> = steps
        .iter()
        .map(|s| s["offered_bps"].as_u64().unwrap())
        .collect();
    assert_eq!(asked, vec![1_000_000_000_000, 20_000_000, 5_000_000]);
    for s in steps {
        assert_eq!(s["kind"], "listed");
        assert!(s["achieved_bps"].as_f64().unwrap() > 1e6, "{s}");
    }
    // The knee is the lowest asked rate more than 2 % short (on a loaded host even 5 Mbit/s
    // may fall short; 1 Tbit/s always does).
    let short = |s: &serde_json::Value| {
        s["achieved_bps"].as_f64().unwrap() < s["offered_bps"].as_f64().unwrap() * 0.98
    };
    assert!(short(&steps[0]), "{}", out.describe());
    let lowest_short = steps
        .iter()
        .filter(|s| short(s))
        .map(|s| s["offered_bps"].as_u64().unwrap())
        .min();
    assert_eq!(doc["sweep"]["protocol"], "tcp");
    assert_eq!(doc["knees"][0]["knee_bps"].as_u64(), lowest_short);
    assert_eq!(doc["partial"], false);

    // The table: one row per rate and the sentence naming the knee. A UDP step whose sender
    // fell short while the receiver got what it sent (1 Tbit/s on a quiet loopback, or 5 Mbit/s
    // on a busy host) has rerun rows before it, marked "again (sender short)".
    let out = run(
        &sweep_args(
            &server,
            &["-u", "-b", "1000g,5m", "--step-time", "0.5", "-l", "1000"],
        ),
        DEADLINE,
    );
    out.expect_code(0);
    let all: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("up ") && l.contains("bits/sec"))
        .collect();
    let rows: Vec<&str> = all
        .iter()
        .copied()
        .filter(|l| !l.ends_with("again (sender short)"))
        .collect();
    assert_eq!(rows.len(), 2, "{}", out.describe());
    assert!(all.len() <= 2 * 3, "at most two reruns per rate: {all:?}");
    // 1 Tbit/s does not follow; where the sender put out less and the receiver got it all
    // (no host sends 1 Tbit/s), the row says the sender was short.
    assert!(
        rows[0].ends_with("no") || rows[0].ends_with("no (sender short)"),
        "{rows:?}"
    );
    let knee = if rows[1].ends_with("yes") {
        "1.00 Tbits/sec"
    } else {
        "5.00 Mbits/sec"
    };
    assert!(
        out.stdout
            .contains(&format!("up: achieved stops following asked at {knee}")),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains("rate 2/2 done"), "{}", out.describe());
}

#[test]
fn a_search_terminates_with_its_steps_listed() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // A ceiling no loopback sender reaches: the first step falls short, so the search has to
    // look below it.
    let t0 = Instant::now();
    let out = run(
        &sweep_args(
            &server,
            &[
                "-u",
                "-l",
                "1400",
                "--max-rate",
                "1000g",
                "--step-time",
                "0.3",
                "--confirm",
                "1",
                "--max-steps",
                "12",
                "-J",
            ],
        ),
        DEADLINE,
    );
    // A search only the host bounded (every run at the rate above the one found put out too
    // little, with no loss) says so and exits 1, as does one that ran out of steps (no ceiling
    // found); one the path bounded exits 0.
    let limited = out.stdout.contains("\"sender_limited\"");
    let out_of_steps = out.stdout.contains("\"step_limit\"");
    out.expect_code(if limited || out_of_steps { 1 } else { 0 });
    if limited || out_of_steps {
        assert!(out.stderr.contains("lower bound"), "{}", out.describe());
    }
    if out_of_steps {
        assert!(
            out.stderr.contains("ran out of steps"),
            "{}",
            out.describe()
        );
    }
    let doc = out.json();
    let steps = doc["steps"].as_array().unwrap();
    let results = doc["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{}", out.describe());
    let r = &results[0];
    assert_eq!(r["steps"].as_u64().unwrap() as usize, steps.len());
    assert!(steps.len() >= 2 && steps.len() <= 12, "{}", out.describe());
    assert_eq!(steps[0]["offered_bps"], 1_000_000_000_000u64);
    assert_eq!(steps[0]["passed"], false, "{}", out.describe());
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["index"].as_u64(), Some(i as u64 + 1));
        assert!(
            s["loss_percent"].is_f64() && s["achieved_bps"].is_f64(),
            "{s}"
        );
        assert!(s["passed"].is_boolean(), "{s}");
        // What the sender put out is there, and nothing arrives that was not sent.
        let sent = s["sent_bps"]
            .as_f64()
            .unwrap_or_else(|| panic!("no sent_bps: {s}"));
        assert!(sent >= s["achieved_bps"].as_f64().unwrap() * 0.99, "{s}");
        // A step whose sender fell short (a busy host) runs again at the same rate.
        if s["rerun"] == true {
            assert_eq!(steps[i + 1]["offered_bps"], s["offered_bps"], "{s}");
        }
    }
    if r["verdict"] == "found" {
        let rate = r["rate_bps"].as_u64().unwrap();
        // Reruns (the sender fell short) do not count for or against the rate.
        let at_rate: Vec<&serde_json::Value> = steps
            .iter()
            .filter(|s| s["offered_bps"] == rate && s["rerun"] != true)
            .collect();
        assert!(
            at_rate.len() >= 2 && at_rate.iter().all(|s| s["passed"] == true),
            "the rate found passed its search step and its confirmation\n{}",
            out.describe()
        );
        assert_eq!(steps.last().unwrap()["kind"], "confirm");
        let dps = r["datagrams_per_sec"].as_f64().unwrap();
        assert!((dps - rate as f64 / (1400.0 * 8.0)).abs() < 1.0, "{r}");
    } else {
        let v = r["verdict"].as_str().unwrap_or_default();
        assert!(
            v == "step_limit" || v == "sender_limited",
            "{}",
            out.describe()
        );
    }
    assert!(t0.elapsed() < Duration::from_secs(50));
}

/// Issue 34: a search whose first step, --max-rate itself, passes (and is confirmed) never
/// found the ceiling: it says so, in the table and in -J, instead of "found".
#[test]
fn a_search_that_passes_at_its_max_rate_says_it_is_a_lower_bound() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // A 0.3 s step at 2 Mbit/s is about 54 datagrams of 1400 B, so a sender one datagram
    // short on a busy host is 1.9 % below its rate, and two short would be sender-limited at
    // the default 2 % tolerance: this test is about the verdict at --max-rate, so the
    // tolerance is wide enough that no host can trip it (as in the step-limit test below).
    let args = |extra: &[&str]| {
        let mut a = vec!["-u", "-l", "1400", "--max-rate", "2m", "--step-time", "0.3"];
        a.extend_from_slice(&["--confirm", "1", "--tolerance", "50%", "-q"]);
        a.extend_from_slice(extra);
        sweep_args(&server, &a)
    };
    let out = run(&args(&["-J"]), DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    let r = &doc["results"][0];
    assert_eq!(r["verdict"], "at_max_rate", "{}", out.describe());
    assert_eq!(r["rate_bps"], 2_000_000, "{}", out.describe());
    let steps = doc["steps"].as_array().unwrap();
    assert!(
        steps.iter().all(|s| s["offered_bps"] == 2_000_000),
        "{}",
        out.describe()
    );
    let table = run(&args(&[]), DEADLINE);
    table.expect_code(0);
    let row = table
        .stdout
        .lines()
        .find(|l| l.contains("AT --max-rate"))
        .unwrap_or_else(|| panic!("no row says AT --max-rate\n{}", table.describe()));
    assert!(
        row.contains("2.00 Mbits/sec") && row.contains("lower bound"),
        "{row}"
    );
    assert!(
        table.stdout.contains("raise --max-rate"),
        "{}",
        table.describe()
    );
}

#[test]
fn a_search_out_of_steps_exits_1_and_says_so() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // One step cannot confirm anything: the search ends at its step limit. A busy host may
    // keep the sender of a 0.2 s step a few percent short of its rate (seen: 19.59 of 20
    // Mbit/s), which the default 2 % tolerance would call sender-limited; this test is about
    // the step limit, so the tolerance is wide enough that no host can trip it.
    let out = run(
        &sweep_args(
            &server,
            &[
                "-u",
                "-l",
                "1400",
                "--max-rate",
                "20m",
                "--step-time",
                "0.2",
                "--tolerance",
                "50%",
                "--max-steps",
                "1",
                "-J",
            ],
        ),
        DEADLINE,
    );
    out.expect_code(1);
    assert!(
        out.stderr.contains("ran out of steps"),
        "{}",
        out.describe()
    );
    assert!(
        out.stderr.contains("--max-steps (now 1)"),
        "{}",
        out.describe()
    );
    let doc = out.json();
    assert_eq!(
        doc["results"][0]["verdict"],
        "step_limit",
        "{}",
        out.describe()
    );
    assert_eq!(doc["steps"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_refused_step_is_named_and_the_steps_before_it_are_kept() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&["--max-bitrate", "30m"]);
    let out = run(
        &sweep_args(
            &server,
            &["-u", "-b", "10m,50m,20m", "--step-time", "0.3", "-J"],
        ),
        DEADLINE,
    );
    out.expect_code(1);
    let doc = out.json();
    assert_eq!(doc["partial"], true);
    // One step before the refused one, besides its reruns if its sender fell short.
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.iter().filter(|s| s["rerun"] != true).count(), 1);
    let refused = format!("step {} (", steps.len() + 1);
    let err = doc["error"].as_str().unwrap();
    assert!(
        err.starts_with(&format!("{refused}1448 B, up, 50.0 Mbits/sec)"))
            && err.contains("refused"),
        "{}",
        out.describe()
    );
    assert!(out.stderr.contains(&refused), "{}", out.describe());
}

#[test]
fn ctrl_c_prints_the_steps_done_and_exits_1() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let p = Proc::spawn(&sweep_args(
        &server,
        &["-u", "-b", "5m,5m,5m,5m,5m", "--step-time", "1"],
    ));
    let deadline = Instant::now() + Duration::from_secs(20);
    while !p
        .stdout_so_far()
        .lines()
        .any(|l| l.trim_start().starts_with("1 "))
    {
        assert!(
            Instant::now() < deadline,
            "no step ended: {}",
            p.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    p.signal(libc::SIGINT);
    let out = p.wait(Duration::from_secs(15));
    out.expect_code(1);
    let rows = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("up ") && l.contains("bits/sec"))
        .count();
    assert!((1..5).contains(&rows), "{}", out.describe());
    assert!(
        out.stderr_lc().contains("interrupted"),
        "{}",
        out.describe()
    );
}

#[test]
fn usage_errors_are_clear() {
    let _turn = crate::turns::take(module_path!());
    let cases: &[(&[&str], &str)] = &[
        (&["-u", "-l", "8", "--max-rate", "10m"], "-l 8"),
        (&["-u", "-l", "64,abc", "--max-rate", "10m"], "abc"),
        (
            &["-u", "--max-loss", "lots", "--max-rate", "10m"],
            "not a percentage",
        ),
        (
            &["-u", "--max-loss", "150%", "--max-rate", "10m"],
            "not a percentage",
        ),
        (&["-u", "-l", "64"], "--max-rate"),
        (&["-l", "64", "--max-rate", "10m"], "needs udp"),
        (&["-u", "-b", "10m", "-l", "64,100"], "one length"),
        (
            &["-u", "--max-rate", "10m", "--directions", "sideways"],
            "up, down or bidir",
        ),
        (&["-u", "--max-rate", "50k"], "--min-rate"),
    ];
    for (args, want) in cases {
        let mut v = vec!["sweep", "127.0.0.1", "-p", "9"];
        v.extend_from_slice(args);
        let out = run(&v, Duration::from_secs(10));
        out.expect_code(2);
        assert!(
            out.stderr_lc().contains(&want.to_lowercase()),
            "{args:?}: want {want:?}\n{}",
            out.describe()
        );
    }
}
