//! Interval rows that say what they mean, through the real binary on loopback: a timed test
//! ends at the time asked (`0.00-2.00`), both ends cut their intervals on one clock so the
//! server's live rows agree with the client's, a short run is received at the rate it was
//! sent, the server's last interval is shown too (also
//! with `-P`), and iperf3's output options `-f`, `-V` and `--json-stream-full-output` do what
//! they do there.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, num, Server};
use serde_json::Value;
use std::time::Duration;

const CLIENT_DEADLINE: Duration = Duration::from_secs(30);

/// `[  1]   0.50-1.00   sec ...` or `server received   0.50-1.00   sec ...`: the span.
fn span(line: &str) -> Option<(f64, f64)> {
    let before_sec = line.split("sec").next()?;
    let range = before_sec.split_whitespace().last()?;
    let (a, b) = range.split_once('-')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

#[test]
fn a_timed_test_ends_at_the_time_asked_and_both_ends_report_every_interval() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // 2000 datagrams/s, 4 intervals of 0.5 s, two streams.
    let out = server.client(
        &[
            "-u", "-b", "11.6m", "-l", "1448", "-t", "2", "-i", "0.5", "-P", "2",
        ],
        CLIENT_DEADLINE,
    );
    out.expect_code(0);
    let text = &out.stdout;
    let sums: Vec<(f64, f64, u64)> = text
        .lines()
        .filter(|l| l.starts_with("[SUM]") && !l.contains("sender") && !l.contains("receiver"))
        .map(|l| {
            let (a, b) = span(l).unwrap();
            let datagrams = l.split_whitespace().last().unwrap().parse().unwrap();
            (a, b, datagrams)
        })
        .collect();
    let received: Vec<(f64, f64, u64)> = text
        .lines()
        .filter(|l| l.contains("server received"))
        .map(|l| {
            let (a, b) = span(l).unwrap();
            let total = l.split("lost ").nth(1).unwrap().split(' ').next().unwrap();
            let packets = total.split('/').nth(1).unwrap().parse().unwrap();
            (a, b, packets)
        })
        .collect();
    let spans = |v: &[(f64, f64, u64)]| v.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>();
    let want = vec![(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0)];
    assert_eq!(spans(&sums), want, "client intervals\n{text}");
    assert_eq!(
        spans(&received),
        want,
        "one server row per interval, the last included\n{text}"
    );
    // Each server row follows the client's row of the same interval.
    let order: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("[SUM]") || l.contains("server received"))
        .filter(|l| !l.contains("sender") && !l.contains("receiver"))
        .collect();
    for pair in order.chunks(2) {
        assert!(
            pair[0].starts_with("[SUM]") && pair[1].contains("server received"),
            "{text}"
        );
    }
    // One clock: what the server received in an interval is what the client sent in it, give
    // or take the datagrams of the milliseconds either end is late at a boundary on a busy
    // machine (2000/s: 50 in 25 ms; two clocks started a second apart would differ by 2000).
    for (s, r) in sums.iter().zip(&received) {
        assert!(
            s.2.abs_diff(r.2) <= 50,
            "{:.2}-{:.2}: sent {} but the server counted {}\n{text}",
            s.0,
            s.1,
            s.2,
            r.2
        );
    }
    let summary: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with('[') && l.ends_with("sender"))
        .collect();
    assert_eq!(summary.len(), 3, "{text}");
    // The summary's span is the time the senders took. It ends at 2.00 unless sonde says its
    // sender fell behind its schedule (a busy host: seen, 2.01 with the sender 26 times late
    // by up to 5 ms); then a late stop is the host's doing too, and 50 ms is allowed, far
    // short of one more interval.
    let behind = text.contains("fell behind its schedule");
    for l in &summary {
        let (from, to) = span(l).unwrap();
        let ok = from == 0.0
            && if behind {
                (2.0..=2.05).contains(&to)
            } else {
                to == 2.0
            };
        assert!(
            ok,
            "the senders' summary ends at 2.00 (sender behind: {behind})\n{text}"
        );
    }
}

#[test]
fn a_short_run_is_received_at_the_rate_it_was_sent() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // Both ends' clocks start at their first data: a server clock started only when it read
    // the client's Start credited what arrived before to a shorter span, and 0.3 s runs on a
    // busy host were received up to 1.6 % faster than they were sent. The server's receiver
    // span ends where the client stopped its senders (or at the last arrival), not when the
    // server read the Stop: that came milliseconds late under load, up to 3 % too slow.
    // Unpaced, so that every millisecond of skew shows.
    for run in 0..4 {
        let out = server.client(
            &["-u", "-b", "1000g", "-l", "1400", "-t", "0.3", "-J"],
            CLIENT_DEADLINE,
        );
        out.expect_code(0);
        let doc = out.json();
        let (sent, received) = (&doc["end"]["sum_sent"], &doc["end"]["sum_received"]);
        if num(received, "lost_packets") > 0.0 {
            continue; // a full socket buffer: the rates differ for that reason
        }
        assert_eq!(num(sent, "bytes"), num(received, "bytes"), "run {run}");
        // The fine figure (every lossless run within 0.02 % under three busy loops) is
        // bench/short-run-skew.sh's, in bench/RESULTS.md: a CI run on 2026-12-04 with the
        // build's own clippy and packaging beside it saw one run at 1.012, its receiver span
        // 3.6 ms short, unexplained. Here the bound is 3 % either way, which a span started
        // or ended at the wrong event (the Start's or the Stop's reading, as before the two
        // fixes: up to 1.6 % fast and 3.2 % slow on a busy host) passes only in part; the
        // percent-level check is the bench's.
        let ratio = num(received, "bits_per_second") / num(sent, "bits_per_second");
        assert!(
            (0.97..=1.03).contains(&ratio),
            "run {run}: received {ratio:.4} times the rate sent\nsent {sent}\nreceived {received}"
        );
    }
}

#[test]
fn the_json_document_has_every_server_interval() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(&["-u", "-b", "10m", "-t", "3", "-J"], CLIENT_DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    let peer = arr(&doc, "sonde.peer_intervals");
    assert_eq!(peer.len(), 3, "{peer:?}");
    let ends: Vec<f64> = peer.iter().map(|iv| num(iv, "sum.end")).collect();
    for (end, want) in ends.iter().zip([1.0, 2.0, 3.0]) {
        assert!((end - want).abs() < 0.05, "{ends:?}");
    }
}

#[test]
fn format_letters_fix_the_rate_unit_and_verbose_adds_the_test_details() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(&["-t", "1", "-b", "20m", "-f", "K", "-V"], CLIENT_DEADLINE);
    out.expect_code(0);
    let text = &out.stdout;
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" sec ")).collect();
    assert!(!rows.is_empty(), "{text}");
    assert!(
        rows.iter()
            .all(|l| l.contains("KBytes/sec") && !l.contains("bits/sec")),
        "every rate in KBytes/sec\n{text}"
    );
    for needle in [
        "sonde ",
        "Time: ",
        "      Cookie: ",
        "Test Complete. Summary Results:",
    ] {
        assert!(text.contains(needle), "-V prints {needle:?}\n{text}");
    }
    let bad = server.client(&["-t", "1", "-f", "x"], CLIENT_DEADLINE);
    bad.expect_code(2);
    assert!(bad.stderr.contains("k, m, g, t"), "{}", bad.describe());
}

#[test]
fn json_stream_full_output_ends_with_the_whole_document() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(
        &[
            "-t",
            "1",
            "-b",
            "10m",
            "--json-stream",
            "--json-stream-full-output",
        ],
        CLIENT_DEADLINE,
    );
    out.expect_code(0);
    let text = &out.stdout;
    // The events, one per line, then one multi-line document.
    let first_doc_line = text.lines().position(|l| l == "{").expect("a document");
    let events: Vec<Value> = text
        .lines()
        .take(first_doc_line)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"start"), "{text}");
    assert_eq!(kinds.last(), Some(&"end"), "{text}");
    let rest: String = text
        .lines()
        .skip(first_doc_line)
        .collect::<Vec<_>>()
        .join("\n");
    let doc: Value = serde_json::from_str(&rest).unwrap();
    assert!(
        doc["start"].is_object() && doc["end"]["sum_sent"].is_object(),
        "{doc}"
    );
    // Without the flag, only the events.
    let plain = server.client(&["-t", "1", "-b", "10m", "--json-stream"], CLIENT_DEADLINE);
    plain.expect_code(0);
    assert!(
        !plain.stdout.lines().any(|l| l == "{"),
        "{}",
        plain.describe()
    );
}

#[test]
fn get_server_output_shows_the_servers_rows_and_document() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(
        &["-u", "-b", "10m", "-t", "2", "--get-server-output"],
        CLIENT_DEADLINE,
    );
    out.expect_code(0);
    let text = &out.stdout;
    let (_, theirs) = text
        .split_once("\nServer output:\n")
        .expect("a server section");
    assert!(
        theirs.contains("Accepted connection from 127.0.0.1"),
        "{text}"
    );
    // The server's interval rows are its receive rows, one per second.
    let rows: Vec<&str> = theirs
        .lines()
        .filter(|l| l.starts_with("[  1]") && l.contains("0/") && !l.ends_with("receiver"))
        .collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(theirs.contains("local/receiver"), "{text}");

    let out = server.client(&["-t", "1", "--get-server-output", "-J"], CLIENT_DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    let theirs = &doc["server_output_json"];
    assert_eq!(theirs["sonde"]["role"], "server", "{doc}");
    assert_eq!(
        theirs["end"]["sum_received"]["bytes"], doc["end"]["sum_received"]["bytes"],
        "one test, one byte count"
    );
    assert_eq!(
        theirs["start"]["connected"][0]["local_port"].as_u64(),
        Some(u64::from(server.port))
    );
}
