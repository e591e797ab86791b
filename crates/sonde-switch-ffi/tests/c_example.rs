//! The C example (examples/stream_file.c) built with the system C compiler against the
//! static library, then run over 127.0.0.1 and ::1: one process streams a file and is sent
//! SIGUSR1 / SIGUSR2 every few milliseconds to switch family; the other writes what it got.
//! The two files must hash the same.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader};
use std::path::Path;

mod common;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// "name value name value ..." after "who:" into pairs.
fn counters(line: &str) -> Vec<(String, i64)> {
    let words: Vec<&str> = line.split_whitespace().skip(1).collect();
    words
        .chunks(2)
        .map(|p| (p[0].to_string(), p[1].parse().unwrap()))
        .collect()
}

fn get(c: &[(String, i64)], k: &str) -> i64 {
    c.iter().find(|(n, _)| n == k).map(|(_, v)| *v).unwrap()
}

#[test]
fn the_c_example_switches_on_signals_and_loses_nothing() {
    if !common::ipv6_loopback() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("sonde-switch-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("stream_file");
    common::build_c(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/stream_file.c"),
        &exe,
    );

    // 48 MiB that is not all alike, so a misplaced chunk changes the hash.
    let input = dir.join("in.bin");
    let data: Vec<u8> = (0..48u64 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
        .collect();
    std::fs::write(&input, &data).unwrap();
    let output = dir.join("out.bin");

    let mut server = Command::new(&exe)
        .args(["serve", "127.0.0.1:0,[::1]:0"])
        .arg(&output)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut s_out = BufReader::new(server.stdout.take().unwrap());
    let mut addrs = String::new();
    s_out.read_line(&mut addrs).unwrap();

    let mut sender = Command::new(&exe)
        .args(["send", addrs.trim()])
        .arg(&input)
        .arg("300") // µs after each 64 KiB chunk: about 1 s in all, time for many signals
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut c_out = BufReader::new(sender.stdout.take().unwrap());
    let mut line = String::new();
    c_out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "connected");

    let t0 = Instant::now();
    let mut signals = 0u32;
    let pid = sender.id() as libc::pid_t;
    while sender.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(60), "the sender hangs");
        let sig = if signals.is_multiple_of(2) {
            libc::SIGUSR2
        } else {
            libc::SIGUSR1
        };
        // SAFETY: kill(2) on our own child, which handles both signals.
        unsafe { libc::kill(pid, sig) };
        signals += 1;
        std::thread::sleep(Duration::from_millis(10));
    }
    let secs = t0.elapsed().as_secs_f64();
    assert!(sender.wait().unwrap().success(), "the sender failed");
    line.clear();
    c_out.read_line(&mut line).unwrap();
    let sent = counters(&line);
    assert!(server.wait().unwrap().success(), "the receiver failed");
    let mut sline = String::new();
    s_out.read_line(&mut sline).unwrap();
    let got = counters(&sline);

    let out = std::fs::read(&output).unwrap();
    assert_eq!(out.len(), data.len());
    assert_eq!(
        Sha256::digest(&out),
        Sha256::digest(&data),
        "the hashes differ"
    );
    let switches = get(&sent, "switches");
    assert!(
        switches >= 10,
        "only {switches} switches for {signals} signals"
    );
    assert_eq!(
        get(&got, "switches"),
        switches,
        "both ends saw every switch"
    );
    assert!(get(&got, "received_ipv4") > 0 && get(&got, "received_ipv6") > 0);
    assert_eq!(get(&sent, "replayed"), get(&got, "duplicates"));
    eprintln!(
        "C example: {} MiB in {secs:.2} s, {signals} signals, {switches} switches, replayed {} B, worst stall {} µs",
        data.len() >> 20,
        get(&sent, "replayed"),
        get(&got, "max_stall_us")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
