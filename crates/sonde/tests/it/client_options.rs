//! iperf3's client options through the real binary on loopback, each checked where the OS
//! shows its effect: `-A n,m` in the threads' CPU masks (/proc), `-m` in the kernel's
//! Multipath TCP counters, `--fq-rate` with `-R` in the rate the server's kernel paced to,
//! `-b` in the rate a TCP sender reports.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{notes, num, require_all, Server};
use std::time::{Duration, Instant};

const CLIENT_DEADLINE: Duration = Duration::from_secs(30);

/// The CPU list (`Cpus_allowed_list`) of each `sonde-stream-*` thread of process `pid`.
fn stream_thread_cpus(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.starts_with("sonde-stream"))
        })
        .filter_map(|t| {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_owned())
        })
        .collect()
}

#[test]
fn affinity_pins_this_end_and_the_servers_side_of_the_test() {
    let _turn = crate::turns::take(module_path!());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Two different cores where there are two, else both on core 0.
    let (mine, theirs) = if cores > 1 { (1, 0) } else { (0, 0) };
    let mut server = Server::start(&[]);
    let server_pid = server.proc().pid() as u32;
    let client = server.spawn_client(&[
        "-t",
        "3",
        "-P",
        "2",
        "-b",
        "10m",
        "-A",
        &format!("{mine},{theirs}"),
    ]);
    let client_pid = client.pid() as u32;
    // Sample the stream threads of both ends while the test runs.
    let t0 = Instant::now();
    let (mut at_client, mut at_server) = (Vec::new(), Vec::new());
    while t0.elapsed() < Duration::from_secs(10) && (at_client.len() < 2 || at_server.len() < 2) {
        at_client = stream_thread_cpus(client_pid);
        at_server = stream_thread_cpus(server_pid);
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = client.wait(CLIENT_DEADLINE);
    out.expect_code(0);
    assert_eq!(at_client, vec![mine.to_string(); 2], "{}", out.describe());
    assert_eq!(
        at_server,
        vec![theirs.to_string(); 2],
        "{}",
        server.output_so_far()
    );
    // A core this machine does not have is an error, not a silent no-op.
    let bad = server.client(&["-t", "1", "-A", "1000"], CLIENT_DEADLINE);
    bad.expect_code(1);
    assert!(bad.stderr.contains("-A"), "{}", bad.describe());
    let usage = server.client(&["-t", "1", "-A", "x"], CLIENT_DEADLINE);
    usage.expect_code(2);
}

/// The kernel's count of MPTCP connections that this host's SYN-ACKs accepted as such
/// (`MPTcpExtMPCapableSYNACKRX` in /proc/net/netstat), or None without MPTCP counters.
fn mptcp_capable_synacks() -> Option<u64> {
    let netstat = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = netstat.lines().filter(|l| l.starts_with("MPTcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    let i = names
        .split_whitespace()
        .position(|n| n == "MPCapableSYNACKRX")?;
    values.split_whitespace().nth(i)?.parse().ok()
}

#[test]
fn mptcp_connections_are_multipath_when_both_ends_ask() {
    let _turn = crate::turns::take(module_path!());
    let enabled =
        std::fs::read_to_string("/proc/sys/net/mptcp/enabled").is_ok_and(|v| v.trim() == "1");
    if !enabled || mptcp_capable_synacks().is_none() {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but this kernel has no MPTCP enabled"
        );
        eprintln!("no MPTCP in this kernel (net.mptcp.enabled): -m not checked");
        return;
    }
    let server = Server::start(&["-m"]);
    let before = mptcp_capable_synacks().unwrap();
    let out = server.client(&["-t", "1", "-m", "-P", "2", "-J"], CLIENT_DEADLINE);
    out.expect_code(0);
    let after = mptcp_capable_synacks().unwrap();
    // The control connection and the two data streams, at least (other tests may add more).
    assert!(
        after - before >= 3,
        "MPCapableSYNACKRX {before} -> {after}\n{}",
        out.describe()
    );
    assert!(num(&out.json(), "end.sum_received.bytes") > 0.0);
    // An MPTCP client of a plain-TCP server still runs (the kernel falls back).
    let plain = Server::start(&[]);
    plain
        .client(&["-t", "1", "-m"], CLIENT_DEADLINE)
        .expect_code(0);
}

#[test]
fn fq_rate_paces_the_servers_senders_in_reverse() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let out = server.client(
        &["-t", "2", "-R", "--fq-rate", "20m", "-J"],
        CLIENT_DEADLINE,
    );
    out.expect_code(0);
    let got = num(&out.json(), "end.sum_received.bits_per_second");
    // The server's kernel paces every data socket to 20 Mbit/s. On loopback (64 KiB segments)
    // the first window of ten segments leaves before pacing holds: 5 Mbit more over 2 s, so
    // up to 23 Mbit/s. Unpaced, loopback moves gigabits.
    assert!(
        (15e6..=23e6).contains(&got),
        "{got} bit/s with --fq-rate 20m\n{}",
        out.describe()
    );
}

#[test]
fn a_paced_tcp_sender_keeps_the_rate_within_a_chunk_not_a_block() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    // Whole 128 KiB blocks sent when due once made `-b 10m -t 1` 10.5 Mbit/s (ten blocks);
    // in writes of a millisecond of the rate the sender runs ahead by about 0.1 %. Per
    // stream, so -P 4 is 40 Mbit/s; with -R the server's sender is paced alike.
    for (extra, want) in [
        (&["-P", "1"][..], 10e6),
        (&["-P", "4"], 40e6),
        (&["-R"], 10e6),
    ] {
        let mut args = vec!["-b", "10m", "-t", "1", "-J"];
        args.extend_from_slice(extra);
        let out = server.client(&args, CLIENT_DEADLINE);
        out.expect_code(0);
        let doc = out.json();
        let got = num(&doc, "end.sum_sent.bits_per_second");
        // Running ahead is the defect this guards against, on any host.
        assert!(
            got / want - 1.0 <= 0.02,
            "{extra:?}: {got} bit/s sent for -b 10m per stream\n{}",
            out.describe()
        );
        // Falling short is the host's doing only when the sender says it was held up (on a
        // loaded 2-core host, -P 4 once sent 37.8 of 40 Mbit/s); then it must still have
        // paced, not stalled. Without such a note, short is as wrong as ahead.
        let held_up = notes(&doc).iter().any(|n| n.contains("sender fell behind"));
        let floor = if held_up { 0.5 } else { 0.98 };
        assert!(
            got / want >= floor,
            "{extra:?}: {got} bit/s sent for -b 10m per stream (held up: {held_up})\n{}",
            out.describe()
        );
    }
}

/// Captures IPv6 packets on `lo` (a packet socket: root) for `secs` and returns, per TCP or
/// UDP packet, (source port, destination port, flow label). None without the privilege.
fn capture_ipv6_on_lo(secs: f64) -> Option<std::thread::JoinHandle<Vec<(u16, u16, u32)>>> {
    use sonde_platform::packet_socket;
    use std::io::Read;
    let fd =
        packet_socket::open("lo", packet_socket::ETH_P_IPV6, Duration::from_millis(100)).ok()?;
    let mut file = std::fs::File::from(fd);
    Some(std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buf = vec![0u8; 65_536];
        let t0 = Instant::now();
        while t0.elapsed().as_secs_f64() < secs {
            let Ok(n) = file.read(&mut buf) else {
                continue;
            };
            if n < 44 {
                continue;
            }
            let b = &buf[..n];
            let label = (u32::from(b[1] & 0x0F) << 16) | (u32::from(b[2]) << 8) | u32::from(b[3]);
            if b[6] == 6 || b[6] == 17 {
                let src = u16::from_be_bytes([b[40], b[41]]);
                let dst = u16::from_be_bytes([b[42], b[43]]);
                seen.push((src, dst, label));
            }
        }
        seen
    }))
}

#[test]
fn flow_label_is_on_every_data_packet_over_ipv6() {
    let _turn = crate::turns::take(module_path!());
    if !common::ipv6_loopback_available() {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but there is no IPv6 loopback"
        );
        eprintln!("no IPv6 loopback: -L not checked");
        return;
    }
    let server = Server::start(&[]);
    for (proto, args) in [
        ("TCP", &["-b", "10m"][..]),
        ("UDP", &["-u", "-b", "1m"][..]),
    ] {
        let Some(capture) = capture_ipv6_on_lo(2.5) else {
            assert!(
                !require_all(),
                "SONDE_REQUIRE_ALL=1 but AF_PACKET needs root"
            );
            eprintln!("no AF_PACKET (not root): -L not checked");
            return;
        };
        let mut a = vec!["-t", "1", "-L", "74565", "-J"];
        a.extend_from_slice(args);
        let mut cmd = server.client_args(&a);
        cmd[1] = "::1".into();
        let out = common::run(&cmd, CLIENT_DEADLINE);
        out.expect_code(0);
        let data_port = common::uint(&out.json(), "start.connected.0.local_port") as u16;
        let packets = capture.join().unwrap();
        let data: Vec<u32> = packets
            .iter()
            .filter(|(src, dst, _)| *src == data_port && *dst == server.port)
            .map(|p| p.2)
            .collect();
        assert!(data.len() > 10, "{proto}: {} data packets seen", data.len());
        assert!(
            data.iter().all(|&l| l == 74565),
            "{proto}: labels {:?}",
            data.iter().collect::<std::collections::BTreeSet<_>>()
        );
    }
    // An IPv4 server with -L is a usage error, not a silent no-op.
    let v4 = server.client(&["-t", "1", "-L", "5"], CLIENT_DEADLINE);
    v4.expect_code(2);
    assert!(v4.stderr.contains("-L"), "{}", v4.describe());
}

#[test]
fn file_sends_its_bytes_once_or_receives_into_it() {
    let _turn = crate::turns::take(module_path!());
    let dir = common::TempDir::new("file");
    let src = dir.file("src.bin");
    // 3 000 001 bytes: not a multiple of the 128 KiB write, so the last block is short.
    let data: Vec<u8> = (0..3_000_001u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    std::fs::write(&src, &data).unwrap();
    let src_s = src.to_string_lossy().into_owned();
    let server = Server::start(&[]);
    // Sending: the file's size ends the test, every byte arrives once.
    let out = server.client(&["-F", &src_s, "-J"], CLIENT_DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(common::uint(&doc, "end.sum_sent.bytes"), 3_000_001);
    assert_eq!(common::uint(&doc, "end.sum_received.bytes"), 3_000_001);
    let table = server.client(&["-F", &src_s], CLIENT_DEADLINE);
    table.expect_code(0);
    assert!(table.stdout.contains("(100%) of "), "{}", table.describe());
    // Receiving: what arrives is written, all of it.
    let dst = dir.file("dst.bin");
    let dst_s = dst.to_string_lossy().into_owned();
    let out = server.client(
        &["-R", "-n", "1000000", "-F", &dst_s, "-J"],
        CLIENT_DEADLINE,
    );
    out.expect_code(0);
    let received = common::uint(&out.json(), "end.sum_received.bytes");
    assert_eq!(received, 1_000_000);
    assert_eq!(std::fs::metadata(&dst).unwrap().len(), received);
    // What -F cannot do is said before any traffic.
    for bad in [&["-u"][..], &["-P", "2"], &["-t", "2"]] {
        let mut a = vec!["-F", src_s.as_str()];
        a.extend_from_slice(bad);
        let out = server.client(&a, CLIENT_DEADLINE);
        out.expect_code(2);
        assert!(out.stderr.contains("-F"), "{}", out.describe());
    }
}
