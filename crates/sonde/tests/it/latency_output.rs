//! What `sonde latency` prints, through the real binary over loopback: a row for every
//! interval of the run (the last one included), ping-like lines with `-v`, per-probe records in
//! `-J` (a probe dropped by a scripted responder flagged as lost), `--tcp-rr` back to back by
//! default, the summary as a table, and help that describes sonde's own JSON.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{arr, at, num, run, text, uint, Server};
use serde_json::Value;
use sonde_proto::probe::{Probe, ProbeKind, HEADER_LEN};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const DEADLINE: Duration = Duration::from_secs(30);

/// `sonde latency ARGS` (exit 0): stdout.
#[track_caller]
fn latency_out(args: &[&str]) -> String {
    let mut a = vec!["latency"];
    a.extend_from_slice(args);
    let out = run(&a, DEADLINE);
    out.expect_code(0);
    out.stdout
}

/// `sonde latency ARGS -J` (exit 0): the document.
#[track_caller]
fn latency_doc(args: &[&str]) -> Value {
    let mut a = vec!["latency"];
    a.extend_from_slice(args);
    a.push("-J");
    let out = run(&a, DEADLINE);
    out.expect_code(0);
    out.json()
}

/// The interval rows of a table: lines starting with "A.AA-B.BB s".
fn table_rows(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| {
            let first = l.split_whitespace().next().unwrap_or("");
            let mut p = first.split('-');
            let ok = |x: Option<&str>| x.is_some_and(|v| v.parse::<f64>().is_ok());
            ok(p.next()) && ok(p.next()) && l.split_whitespace().nth(1) == Some("s")
        })
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn every_interval_of_the_run_gets_its_row() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let port = srv.port.to_string();
    // By time: 2 s at 50 ms in 0.5 s rows = four rows of ten probes, the last one included.
    let doc = latency_doc(&[
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "2",
        "-i",
        "50ms",
        "--report-interval",
        "0.5",
    ]);
    let ivs = arr(&doc, "intervals");
    assert_eq!(ivs.len(), 4, "{doc}");
    for (i, iv) in ivs.iter().enumerate() {
        assert!((num(iv, "start") - i as f64 * 0.5).abs() < 1e-9, "{iv}");
        assert!((num(iv, "end") - (i + 1) as f64 * 0.5).abs() < 1e-9, "{iv}");
        assert_eq!(uint(iv, "sent"), 10, "{iv}");
        assert_eq!(uint(iv, "received"), 10, "{iv}");
        assert_eq!(uint(iv, "lost"), 0, "{iv}");
        assert!(num(iv, "rtt.p99_ms") >= num(iv, "rtt.min_ms"), "{iv}");
    }
    assert!((num(&doc, "end.seconds") - 2.0).abs() < 1e-9);

    // By count: 25 probes at 100 ms are 2.5 s, rows of 10, 10 and 5; the table shows them all.
    let table = latency_out(&["127.0.0.1", "-p", &port, "-c", "25", "-i", "100ms"]);
    let rows = table_rows(&table);
    let got: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[2].as_str(), r[3].as_str(), r[4].as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("0.00-1.00", "10", "10", "0"),
            ("1.00-2.00", "10", "10", "0"),
            ("2.00-2.50", "5", "5", "0")
        ],
        "{table}"
    );
    assert!(
        table.contains("Interval           sent   recv   lost    min ms"),
        "{table}"
    );
    for r in &rows {
        assert_eq!(
            r.len(),
            9,
            "every row has sent, recv, lost and four RTTs: {r:?}"
        );
    }
}

#[test]
fn verbose_prints_a_line_per_answered_probe() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let port = srv.port.to_string();
    let out = latency_out(&[
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "7",
        "-i",
        "10ms",
        "-v",
        "--clock-synced",
    ]);
    let lines: Vec<&str> = out.lines().filter(|l| l.contains(" bytes from ")).collect();
    assert_eq!(lines.len(), 7, "{out}");
    for (i, l) in lines.iter().enumerate() {
        let head = format!("56 bytes from 127.0.0.1:{port}: seq={} rtt=", i + 1);
        assert!(l.starts_with(&head), "{l}");
        let rtt: f64 = l[head.len()..]
            .split(' ')
            .next()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("an RTT in {l}"));
        assert!((0.0..50.0).contains(&rtt), "{l}");
        assert!(
            l.contains(" ms up=") && l.contains(" ms down=") && l.ends_with(" ms"),
            "{l}"
        );
    }
    // Without -v: no per-probe lines; without --clock-synced: no one-way figures in them.
    let quiet = latency_out(&["127.0.0.1", "-p", &port, "-c", "3", "-i", "10ms"]);
    assert!(!quiet.contains("bytes from"), "{quiet}");
    let plain = latency_out(&["127.0.0.1", "-p", &port, "-c", "3", "-i", "10ms", "-v"]);
    assert_eq!(plain.matches("bytes from").count(), 3, "{plain}");
    assert!(!plain.contains("up="), "{plain}");

    // --json-stream -v: a round_trip event per answered probe.
    let stream = latency_out(&[
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "5",
        "-i",
        "10ms",
        "-v",
        "--json-stream",
    ]);
    let seqs: Vec<u64> = stream
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line"))
        .filter(|e| e["event"] == "round_trip")
        .map(|e| uint(&e, "data.seq"))
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "{stream}");
}

/// A UDP responder that answers every probe but `drop_seq` (and the count query, with the
/// requests it answered): a loss the test controls.
struct DroppingResponder {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<thread::JoinHandle<()>>,
}

impl DroppingResponder {
    fn start(drop_seq: u64) -> Self {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let port = sock.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let done = stop.clone();
        let thread = thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            let mut answered = 0;
            while !done.load(Ordering::Relaxed) {
                let Ok((n, from)) = sock.recv_from(&mut buf) else {
                    continue;
                };
                let Ok(p) = Probe::parse(&buf[..n]) else {
                    continue;
                };
                if p.kind == ProbeKind::Request {
                    if p.seq == drop_seq {
                        continue;
                    }
                    answered += 1;
                }
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64;
                if let Some(a) = p.answer(now, now, answered) {
                    let mut out = vec![0u8; n.max(HEADER_LEN)];
                    a.emit(&mut out).unwrap();
                    let _ = sock.send_to(&out, from);
                }
            }
        });
        Self {
            port,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for DroppingResponder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn json_has_a_record_per_probe_and_flags_the_lost_one() {
    let _turn = crate::turns::take(module_path!());
    let r = DroppingResponder::start(3);
    let doc = latency_doc(&[
        "127.0.0.1",
        "-p",
        &r.port.to_string(),
        "-c",
        "6",
        "-i",
        "20ms",
        "--wait",
        "200ms",
    ]);
    let rts = arr(&doc, "round_trips");
    assert_eq!(rts.len(), 6, "{doc}");
    assert_eq!(uint(&doc, "round_trips_omitted"), 0);
    for (i, rt) in rts.iter().enumerate() {
        let seq = i as u64 + 1;
        assert_eq!(uint(rt, "seq"), seq, "{rt}");
        let sent = uint(rt, "sent_unix_ns");
        assert!(sent > 1_600_000_000_000_000_000, "a Unix time in ns: {rt}");
        if seq == 3 {
            assert_eq!(at(rt, "lost"), &Value::Bool(true), "{rt}");
            assert!(at(rt, "rtt_ms").is_null() && at(rt, "received_unix_ns").is_null());
        } else {
            assert_eq!(at(rt, "lost"), &Value::Bool(false), "{rt}");
            assert!(uint(rt, "received_unix_ns") >= sent, "{rt}");
            assert!((0.0..1000.0).contains(&num(rt, "rtt_ms")), "{rt}");
        }
        if i > 0 {
            assert!(
                sent > uint(&rts[i - 1], "sent_unix_ns"),
                "send times in order"
            );
        }
    }
    assert_eq!(uint(&doc, "end.loss.lost"), 1);
    assert_eq!(
        uint(&doc, "end.loss.lost_up"),
        1,
        "the responder never saw it"
    );
    let lost_in_rows: u64 = arr(&doc, "intervals").iter().map(|i| uint(i, "lost")).sum();
    assert_eq!(lost_in_rows, 1);
    assert!(text(&doc, "start.mode") == "udp");
    // The binned distribution holds every answered probe, each inside its bin.
    assert_eq!(text(&doc, "end.rtt_histogram.unit"), "ms");
    let bins = arr(&doc, "end.rtt_histogram.bins");
    let counted: u64 = bins.iter().map(|b| uint(b, "2")).sum();
    assert_eq!(counted, 5, "{bins:?}");
    assert_eq!(counted, uint(&doc, "end.rtt.samples"));
    for rt in rts
        .iter()
        .filter(|rt| at(rt, "lost") == &Value::Bool(false))
    {
        let ms = num(rt, "rtt_ms");
        assert!(
            bins.iter()
                .any(|b| num(b, "0") <= ms + 1e-6 && ms <= num(b, "1") + 1e-6),
            "{ms} ms in no bin: {bins:?}"
        );
    }
}

#[test]
fn tcp_rr_runs_back_to_back_unless_an_interval_is_given() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let port = srv.port.to_string();
    // A count, not a time: back to back keeps both cores busy, and the other tests run
    // beside this one.
    let doc = latency_doc(&["--tcp-rr", "127.0.0.1", "-p", &port, "-c", "3000"]);
    assert_eq!(at(&doc, "start.flood"), &Value::Bool(true));
    let rate = num(&doc, "end.rate_per_second");
    // The default interval would be 1 transaction/s, and the 3000 would take 50 minutes.
    // Back to back on loopback is thousands a second on a quiet host, but this module shares
    // the machine (`turns::SHARING`) and asserts no speed of it: fifty times the default
    // tells the two apart on any host.
    assert!(rate > 50.0, "transactions/s {rate}");
    assert_eq!(uint(&doc, "end.loss.sent"), uint(&doc, "end.loss.received"));
    assert_eq!(uint(&doc, "end.loss.sent"), 3000);

    // An explicit interval still paces: 1 s at 50 ms is 20 transactions.
    let doc = latency_doc(&[
        "--tcp-rr",
        "127.0.0.1",
        "-p",
        &port,
        "-t",
        "1",
        "-i",
        "50ms",
    ]);
    assert_eq!(at(&doc, "start.flood"), &Value::Bool(false));
    assert_eq!(uint(&doc, "end.loss.sent"), 20);
    assert!((num(&doc, "end.rate_per_second") - 20.0).abs() < 1.0);

    // The table names the rate for what it is.
    let table = latency_out(&["--tcp-rr", "127.0.0.1", "-p", &port, "-c", "300"]);
    assert!(table.contains("back to back"), "{table}");
    let rate_line = table
        .lines()
        .find(|l| l.starts_with("rate: "))
        .unwrap_or_else(|| panic!("a rate line: {table}"));
    assert!(rate_line.ends_with(" transactions/s"), "{rate_line}");
}

#[test]
fn summary_is_a_table_with_aligned_columns() {
    let _turn = crate::turns::take(module_path!());
    let srv = Server::start(&[]);
    let out = latency_out(&[
        "127.0.0.1",
        "-p",
        &srv.port.to_string(),
        "-c",
        "10",
        "-i",
        "10ms",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    for (head, rows) in [("probes ", 1), ("delay ms ", 3)] {
        let h = lines
            .iter()
            .position(|l| l.starts_with(head))
            .unwrap_or_else(|| panic!("a {head:?} header: {out}"));
        // Each value ends where its column's header ends.
        let ends = |l: &str| -> Vec<usize> {
            let mut v = Vec::new();
            let b = l.as_bytes();
            for i in 0..b.len() {
                if b[i] != b' ' && (i + 1 == b.len() || b[i + 1] == b' ') {
                    v.push(i);
                }
            }
            v
        };
        let head_ends = ends(lines[h]);
        for row in &lines[h + 1..h + 1 + rows] {
            let e = ends(row);
            assert!(e.len() >= 9, "{row:?}");
            for end in &e[e.len() - 9..] {
                assert!(
                    head_ends.contains(end),
                    "a value of {row:?} ends at {end}, under no header end of {:?}\n{out}",
                    lines[h]
                );
            }
        }
    }
    let delay = lines
        .iter()
        .position(|l| l.starts_with("delay ms"))
        .unwrap();
    let head: Vec<&str> = lines[delay].split_whitespace().collect();
    assert_eq!(
        head,
        [
            "delay", "ms", "samples", "min", "avg", "median", "p90", "p99", "p99.9", "max",
            "stddev"
        ]
    );
    let rtt: Vec<&str> = lines[delay + 1].split_whitespace().collect();
    assert_eq!(rtt[0], "RTT");
    assert_eq!(rtt[1], "10");
    let v: Vec<f64> = rtt[2..].iter().map(|x| x.parse().unwrap()).collect();
    assert!(
        v[0] <= v[2] && v[2] <= v[4] && v[4] <= v[6],
        "min <= median <= p99 <= max: {rtt:?}"
    );
    assert!(
        lines[delay + 2].starts_with("up (est.)") && lines[delay + 3].starts_with("down (est.)")
    );
}

#[test]
fn json_help_describes_sondes_own_schemas() {
    let _turn = crate::turns::take(module_path!());
    for (cmd, keys) in [
        (
            "latency",
            &["intervals", "round_trips", "lost", "rate_per_second"][..],
        ),
        ("rrul", &["phases", "median_inflation_ms"][..]),
        ("compare-ip", &["ipv4", "verdict"][..]),
    ] {
        let out = run(&[cmd, "--help"], DEADLINE);
        out.expect_code(0);
        let help = out.stdout.replace('\n', " ");
        assert!(help.contains("(not iperf3's)"), "{cmd}: {help}");
        assert!(!help.contains("iperf3's -J schema"), "{cmd}: {help}");
        for k in keys {
            assert!(help.contains(k), "{cmd} -J help names {k}: {help}");
        }
    }
    let out = run(&["--help"], DEADLINE);
    out.expect_code(0);
    assert!(out.stdout.contains("`sonde -s`"), "{}", out.stdout);
    assert!(out.stdout.contains("`sonde -c HOST`"), "{}", out.stdout);
}
