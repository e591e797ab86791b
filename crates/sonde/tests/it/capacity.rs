//! `sonde capacity` through the real binary on loopback: every train of the plan arrives
//! with kernel stamps, and since nothing on a loopback path slows a train below the sender's
//! pace the verdict is that the host is the limit, not a capacity figure; usage errors come
//! first. (Shaped links are checked as root in `capacity_lab.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Proc, Server};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

/// A small plan (5 short trains, one long train of 100) against `host`.
fn small_run(host: &str, port: &str, extra: &[&str]) -> common::Output {
    let mut args = vec![
        "capacity",
        host,
        "-p",
        port,
        "--short-trains",
        "5",
        "--long-trains",
        "1",
        "--long-len",
        "100",
    ];
    args.extend_from_slice(extra);
    run(&args, DEADLINE)
}

#[test]
fn loopback_trains_all_arrive_and_the_host_is_the_limit() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let t0 = Instant::now();
    let out = server.command(
        "capacity",
        &[
            "--short-trains",
            "20",
            "--long-trains",
            "3",
            "--long-len",
            "300",
            "-J",
        ],
        DEADLINE,
    );
    out.expect_code(0);
    let took = t0.elapsed();
    let doc = out.json();
    let e = &doc["estimate"];
    assert_eq!(e["short"]["trains"], 20, "{}", out.describe());
    assert_eq!(e["long"]["trains"], 3);
    // Loopback loses nothing.
    assert_eq!(e["short"]["clean"], 20);
    assert_eq!(e["long"]["clean"], 3);
    assert_eq!(doc["family"], "IPv4");
    assert_eq!(doc["ip_bytes"], 1500);
    assert_eq!(doc["payload_bytes"], 1472);
    assert_eq!(doc["partial"], false);
    // Loopback passes a train as fast as the sender hands it over.
    assert_eq!(doc["verdict"], "host-limited", "{}", out.describe());
    let adr = e["adr_bps"].as_f64().unwrap();
    let dep = e["departure_bps"].as_f64().unwrap();
    eprintln!(
        "loopback: ADR {:.0} Mbit/s, departure {:.0} Mbit/s, arrival share {}, short-train CoV {}, {:.2} s",
        adr / 1e6,
        dep / 1e6,
        e["arrival_share"],
        e["cov"],
        took.as_secs_f64()
    );
    assert!(adr > 100e6 && dep > 100e6, "{adr} {dep}");
    // The table says its verdict in words, with the overhead model: one run. (Which verdict
    // is the JSON run's above: a table run's one long train of 100 can be slowed by the
    // receiver losing the CPU to a busy host, noise that only hides the host limit.)
    let table = small_run("127.0.0.1", &server.port.to_string(), &[]);
    table.expect_code(0);
    let verdict = table
        .stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Verdict: "))
        .unwrap_or_else(|| panic!("no verdict line: {}", table.describe()));
    assert!(
        // The words for each verdict (a link is "one rate throughout").
        [
            "host-limited",
            "shaped",
            "one rate throughout",
            "unmeasured"
        ]
        .iter()
        .any(|v| verdict.starts_with(v)),
        "{verdict}"
    );
    assert!(table
        .stdout
        .contains("Overhead model: IP = UDP payload 1472 B"));
}

#[test]
fn over_ipv6_the_default_datagram_still_makes_1500_byte_packets() {
    let _turn = crate::turns::take(module_path!());
    if !common::ipv6_loopback_or_skip("capacity over ::1") {
        return;
    }
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let out = small_run("::1", &port, &["-J"]);
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(doc["family"], "IPv6");
    assert_eq!(doc["payload_bytes"], 1452);
    assert_eq!(doc["ip_bytes"], 1500);
    assert_eq!(doc["estimate"]["long"]["clean"], 1);
}

#[test]
fn usage_errors_come_before_any_traffic() {
    let _turn = crate::turns::take(module_path!());
    for bad in [
        &["capacity", "127.0.0.1", "--short-len", "1"][..],
        &["capacity", "127.0.0.1", "--long-trains", "0"],
        &["capacity", "127.0.0.1", "--spacing", "0"],
        &["capacity", "127.0.0.1", "-4", "-6"],
    ] {
        run(bad, DEADLINE).expect_code(2);
    }
    // Nothing listening: exit 1, and the document says why.
    let closed = common::free_port().to_string();
    let out = run(&["capacity", "127.0.0.1", "-p", &closed, "-J"], DEADLINE);
    out.expect_code(1);
    assert_eq!(out.json()["partial"], true);
}

#[test]
fn ctrl_c_keeps_the_estimate_of_the_trains_that_arrived() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // Two seconds between trains: 20 short trains would take 40 s.
    let proc = Proc::spawn(&server.command_args(
        "capacity",
        &["--short-trains", "20", "--spacing", "2000", "-J"],
    ));
    std::thread::sleep(Duration::from_millis(2500));
    proc.signal(libc::SIGINT);
    let out = proc.wait(Duration::from_secs(20));
    out.expect_code(1);
    let doc = out.json();
    assert_eq!(doc["partial"], true);
    let got = doc["estimate"]["short"]["trains"].as_u64().unwrap();
    assert!((1..20).contains(&got), "{got} trains: {}", out.describe());
    assert_eq!(doc["estimate"]["long"]["trains"], 0);
}

/// `--tx-timestamps` on loopback: the server reports every train's departure gaps from its
/// kernel's transmit stamps, every datagram stamped, the gaps ordered and as short as a
/// host hands datagrams to loopback; the table says it; on loopback the receiver stamps
/// each datagram right after it leaves, so the arrival gaps are the departure gaps and the
/// trains are flagged as spaced by the sender, in agreement with the host-limited verdict.
#[test]
fn tx_timestamps_give_every_trains_departure_spread() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let out = small_run("127.0.0.1", &port, &["--tx-timestamps", "-J"]);
    out.expect_code(0);
    let doc = out.json();
    let d = &doc["departures"];
    eprintln!(
        "loopback departures: median gap {} ns, largest {} ns, {} flagged",
        d["median_gap_ns"],
        d["max_gap_ns"],
        d["not_back_to_back"].as_array().map_or(0, Vec::len)
    );
    assert_eq!(d["reported"], 6, "{}", out.describe());
    let trains = d["trains"].as_array().unwrap();
    for (i, t) in trains.iter().enumerate() {
        let len = if i < 5 { 10 } else { 100 };
        assert_eq!(t["train"], i, "{t}");
        assert_eq!(t["stamped"], len, "{t}");
        let (lo, med, hi, span) = (
            t["min_gap_ns"].as_u64().unwrap(),
            t["median_gap_ns"].as_u64().unwrap(),
            t["max_gap_ns"].as_u64().unwrap(),
            t["span_ns"].as_u64().unwrap(),
        );
        assert!(lo <= med && med <= hi && hi <= span, "{t}");
        // Handing a 1500-byte datagram to loopback takes well under 200 µs; a train of 100
        // leaves in under 50 ms even on a busy 2-core machine.
        assert!(med < 200_000 && span < 50_000_000, "{t}");
    }
    assert_eq!(doc["verdict"], "host-limited");
    assert!(!d["not_back_to_back"].as_array().unwrap().is_empty());
    let table = small_run(
        "127.0.0.1",
        &Server::start(&[]).port.to_string(),
        &["--tx-timestamps"],
    );
    table.expect_code(0);
    assert!(
        table
            .stdout
            .contains("Departures (server's kernel transmit stamps): 6 of 6 trains reported"),
        "{}",
        table.describe()
    );
    // Without the flag, no departures are asked for.
    let plain = small_run("127.0.0.1", &Server::start(&[]).port.to_string(), &["-J"]);
    assert!(plain.json().get("departures").is_none());
}

/// `--quick` on loopback: the long trains arrive at the sender's pace, so the first two
/// that do settle the verdict (host-limited) and the run stops there, fewer trains than its
/// plan of 6 long ones; the document says it was quick and how many trains the server sent.
#[test]
fn quick_stops_at_the_first_stable_estimate() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let args = [
        "--short-trains",
        "10",
        "--long-trains",
        "6",
        "--long-len",
        "300",
        "--quick",
        "-J",
    ];
    let out = server.command("capacity", &args, DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    let es = &doc["early_stop"];
    eprintln!(
        "loopback --quick: {} of {} trains sent, after {} long trains, {}",
        doc["trains_sent"], doc["trains_planned"], es["after_long_trains"], es["last"]
    );
    assert_eq!(doc["quick"], true, "{}", out.describe());
    assert_eq!(doc["trains_planned"], 16);
    assert_eq!(es["rule"]["window"], 2);
    assert_eq!(es["stopped"], true, "{}", out.describe());
    let after = es["after_long_trains"].as_u64().unwrap();
    assert!((2..6).contains(&after), "{after}");
    assert_eq!(doc["estimate"]["long"]["trains"], after);
    // The server may start one more train before it sees the stop; never the whole plan.
    let sent = doc["trains_sent"].as_u64().unwrap();
    assert!(
        sent >= 10 + after && sent <= 11 + after && sent < 16,
        "{sent}"
    );
    assert_ne!(doc["verdict"], "unmeasured");
    assert!(doc["verdict"].is_string());
    // Quick and the whole plan contradict each other.
    run(
        &["capacity", "127.0.0.1", "--quick", "--no-early-stop"],
        DEADLINE,
    )
    .expect_code(2);
}

/// `--sizes` on loopback: the short trains take the sizes in turn, every train's size is the
/// one that arrived, and the document has a row per size asked for, each with its trains and
/// an estimate inside its range; the table says it per size. Bad sizes are usage errors.
#[test]
fn sizes_give_an_estimate_per_probe_size() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let sizes = ["--sizes", "600..1488:111", "--short-trains", "18"];
    let out = small_run("127.0.0.1", &port, &[&sizes[..], &["-J"]].concat());
    out.expect_code(0);
    let doc = out.json();
    let rows = doc["by_size"].as_array().unwrap();
    let asked: Vec<u64> = (0..9).map(|i| 600 + 111 * i).collect();
    let got: Vec<u64> = rows
        .iter()
        .map(|r| r["payload_bytes"].as_u64().unwrap())
        .collect();
    assert_eq!(got, asked, "{}", out.describe());
    for r in rows {
        eprintln!("loopback size row: {r}");
        assert_eq!(r["ip_bytes"], r["payload_bytes"].as_u64().unwrap() + 28);
        // Two short trains of each size; loopback loses none.
        assert_eq!(r["trains"], 2, "{r}");
        let (lo, est, hi) = (
            r["low_bps"].as_f64().unwrap(),
            r["estimate_bps"].as_f64().unwrap(),
            r["high_bps"].as_f64().unwrap(),
        );
        assert!(0.0 < lo && lo <= est && est <= hi, "{r}");
    }
    let trains = doc["train_sizes"].as_array().unwrap();
    assert_eq!(trains.len(), 19);
    for (i, t) in trains.iter().enumerate() {
        let want = if i < 18 { asked[i % 9] } else { 1472 };
        assert_eq!(
            (t["train"].as_u64(), t["payload_bytes"].as_u64()),
            (Some(i as u64), Some(want)),
            "{t}"
        );
    }
    let table = small_run("127.0.0.1", &port, &sizes);
    table.expect_code(0);
    assert!(
        table.stdout.contains("Per probe size") && table.stdout.contains("  1488 B: 2 trains"),
        "{}",
        table.describe()
    );
    for bad in [
        &["capacity", "127.0.0.1", "--sizes", "10..1488"][..],
        &["capacity", "127.0.0.1", "--sizes", "1488..600"],
        &["capacity", "127.0.0.1", "--sizes", "600..70000"],
        &[
            "capacity",
            "127.0.0.1",
            "--sizes",
            "600..1488",
            "--short-trains",
            "3",
        ],
    ] {
        let o = run(bad, DEADLINE);
        o.expect_code(2);
        assert!(o.stderr.contains("size"), "{}", o.describe());
    }
}

/// `--longest-train` on loopback: the search doubles from 16 datagrams; loopback (a 16 MB
/// receive buffer) holds a train of 200, so the answer is the bound, said as "at least",
/// with every length tried and what arrived of it.
#[test]
fn longest_train_search_reaches_the_bound_on_loopback() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let search = ["--longest-train", "--max-train", "200"];
    let out = small_run("127.0.0.1", &port, &[&search[..], &["-J"]].concat());
    out.expect_code(0);
    let doc = out.json();
    let l = &doc["longest_loss_free_train"];
    eprintln!("loopback longest train: {l}");
    assert_eq!(l["max_len"], 200, "{}", out.describe());
    let tried = l["tried"].as_array().unwrap();
    let lens: Vec<u64> = tried.iter().map(|t| t["len"].as_u64().unwrap()).collect();
    assert_eq!(&lens[..1], &[16]);
    for t in tried {
        let (len, got, lost) = (
            t["len"].as_u64(),
            t["received"].as_u64(),
            t["lost"].as_u64(),
        );
        assert_eq!(len.zip(got).map(|(a, b)| a - b), lost, "{t}");
    }
    assert_eq!(
        (&l["length"], &l["at_least"]),
        (&200.into(), &true.into()),
        "{l}"
    );
    assert_eq!(lens, [16, 32, 64, 128, 200]);
    assert_eq!(l["time_limited"], false);
    let table = small_run("127.0.0.1", &port, &search);
    table.expect_code(0);
    assert!(
        table.stdout.contains(
            "Longest train without loss: at least 200 datagrams (the bound arrived whole)"
        ),
        "{}",
        table.describe()
    );
    run(&["capacity", "127.0.0.1", "--max-train", "100"], DEADLINE).expect_code(2);
}
