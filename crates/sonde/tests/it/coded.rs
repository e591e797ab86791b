//! `sonde client --coded` through the real binaries on loopback: a sized upload and a timed
//! reverse transfer complete with every byte delivered and checked, and -J carries the
//! figures the table shows; a file moves both ways with its SHA-256 verified.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{num, run, uint, Server, TempDir};
use std::time::Duration;

fn coded(server: &Server, extra: &[&str]) -> serde_json::Value {
    let port = server.port.to_string();
    let (flag, extra) = match extra.first() {
        Some(&"=arq") => ("--coded=arq", &extra[1..]),
        _ => ("--coded", extra),
    };
    let mut args = vec!["client", "127.0.0.1", "-p", &port, flag, "-J"];
    args.extend_from_slice(extra);
    let out = run(&args, Duration::from_secs(40));
    let stdout = &out.stdout;
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        out.stderr
    );
    serde_json::from_str(stdout).unwrap()
}

#[test]
fn sized_upload_delivers_every_byte_checked() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let doc = coded(&server, &["-n", "20M", "-b", "200m"]);
    assert_eq!(doc["complete"].as_bool(), Some(true));
    assert_eq!(uint(&doc, "delivered_bytes"), 20 * 1024 * 1024);
    assert_eq!(uint(&doc, "mismatched_bytes"), 0);
    assert_eq!(num(&doc, "reliability_percent"), 100.0);
    assert!(uint(&doc, "sender.datagrams") >= 20 * 1024 * 1024 / 1420);
    let goodput = num(&doc, "goodput_bits_per_second");
    assert!(
        goodput > 20e6 && goodput <= 200e6 * 1.05,
        "goodput {goodput}"
    );
    assert!(num(&doc, "receiver.decode_delay_p99_ms") > 0.0);
}

#[test]
fn timed_reverse_stays_under_the_rate_cap() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let doc = coded(&server, &["-t", "2", "-b", "50m", "-R"]);
    assert_eq!(doc["direction"].as_str(), Some("reverse"));
    assert_eq!(doc["complete"].as_bool(), Some(true));
    assert_eq!(uint(&doc, "mismatched_bytes"), 0);
    let delivered = uint(&doc, "delivered_bytes");
    assert_eq!(delivered, uint(&doc, "sent_bytes"));
    let wire = num(&doc, "sender.wire_bits_per_second");
    assert!(wire <= 50e6 * 1.05, "wire rate {wire} above -b");
    assert!(
        delivered > 4_000_000,
        "only {delivered} bytes in 2 s at 50 Mbit/s"
    );
}

/// Bytes no simple pattern predicts (a file the protocol must move as it is).
fn file_bytes(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x1234_5678_9abc_def1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn a_file_upload_moves_the_files_bytes_and_the_server_verifies_their_hash() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("coded-file");
    let path = dir.file("in.bin");
    // Not a whole number of blocks or symbols: the last block is short.
    let len = 3_000_001;
    std::fs::write(&path, file_bytes(len)).unwrap();
    let server = Server::start(&[]);
    let doc = coded(
        &server,
        &[
            "-F",
            path.to_str().unwrap(),
            "-b",
            "200m",
            "--feedback",
            "restricted",
        ],
    );
    assert_eq!(doc["complete"].as_bool(), Some(true));
    assert_eq!(doc["sha256_verified"].as_bool(), Some(true));
    assert_eq!(doc["feedback"].as_str(), Some("restricted"));
    assert_eq!(uint(&doc, "delivered_bytes"), len as u64);
    assert_eq!(uint(&doc, "sent_bytes"), len as u64);
    // The pattern check does not apply to a file: its figure is absent, not a false 0.
    assert!(doc["mismatched_bytes"].is_null());
    let log = server.output_so_far();
    assert!(log.contains("3000001 bytes delivered"), "{log}");
    assert!(log.contains("SHA-256 verified"), "{log}");
}

#[test]
fn a_reverse_transfer_writes_the_received_bytes_into_the_file() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("coded-file-r");
    let path = dir.file("out.bin");
    let server = Server::start(&[]);
    let len = 2_000_003u64;
    let n = len.to_string();
    let doc = coded(
        &server,
        &["-R", "-n", &n, "-F", path.to_str().unwrap(), "-b", "200m"],
    );
    assert_eq!(doc["sha256_verified"].as_bool(), Some(true));
    assert_eq!(doc["feedback"].as_str(), Some("unrestricted"));
    let got = std::fs::read(&path).unwrap();
    assert_eq!(got.len() as u64, len);
    let mut want = vec![0u8; got.len()];
    sonde_coded::pattern::fill(0, &mut want);
    assert!(got == want, "the file differs from what the server sent");
}

#[test]
fn arq_baseline_moves_every_byte_without_repair_symbols() {
    let _turn = crate::turns::take(module_path!());
    let server = Server::start(&[]);
    let doc = coded(&server, &["=arq", "-n", "5000000", "-b", "200m"]);
    assert_eq!(doc["scheme"].as_str(), Some("arq"));
    assert_eq!(doc["complete"].as_bool(), Some(true));
    assert_eq!(doc["sha256_verified"].as_bool(), Some(true));
    assert_eq!(uint(&doc, "delivered_bytes"), 5_000_000);
    assert_eq!(uint(&doc, "mismatched_bytes"), 0);
    assert_eq!(uint(&doc, "sender.proactive_repair"), 0);
    // One datagram per block: as many blocks as source symbols.
    assert_eq!(
        uint(&doc, "sender.blocks"),
        uint(&doc, "sender.source_symbols")
    );
}

#[test]
fn feedback_needs_coded() {
    let _turn = crate::turns::take(module_path!());
    let out = run(
        &["client", "127.0.0.1", "-p", "9", "--feedback", "restricted"],
        Duration::from_secs(10),
    );
    out.expect_code(2);
    assert!(out.stderr.contains("--coded"), "{}", out.stderr);
}

/// A server that takes one control connection and never answers: Ctrl-C must end the wait
/// for its welcome at once (exit 1, saying so), not after the 30 s step timeout. `sonde
/// capacity` shares the coded client's control steps and is checked the same way.
#[test]
fn ctrl_c_ends_the_wait_for_a_silent_server() {
    let _turn = crate::turns::take(module_path!());
    for command in [&["client", "--coded", "-t", "5"][..], &["capacity"][..]] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port().to_string();
        let (done, held) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            let (conn, _) = listener.accept().unwrap();
            // Held longer than the test allows (unless the test is done first), so a client
            // that ignored Ctrl-C and ended at the close instead would still fail it.
            let _ = held.recv_timeout(Duration::from_secs(4));
            drop(conn);
        });
        let mut args = vec![command[0], "127.0.0.1", "-p", &port];
        args.extend_from_slice(&command[1..]);
        let client = common::Proc::spawn(&args);
        std::thread::sleep(Duration::from_millis(700));
        client.signal(libc::SIGINT);
        let out = client.wait(Duration::from_secs(20));
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(
            out.elapsed < Duration::from_secs(3),
            "{args:?} took {:?} after Ctrl-C: {out:?}",
            out.elapsed
        );
        assert!(out.stderr_lc().contains("interrupt"), "{args:?}: {out:?}");
        let _ = done.send(());
        holder.join().unwrap();
    }
}
