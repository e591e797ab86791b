//! Integration tests of `sonde serial`: the real binary on pseudo-terminals. The sender and
//! `sonde serial --serve` each get the slave side of their own pty pair; a relay thread in the
//! test joins the two masters and can corrupt one byte of a chosen frame, drop a chosen frame,
//! or stop carrying anything after a frame (a far end that stops answering). A pty has no
//! baud rate: these tests show the protocol and its error handling, not a line's speed.
//! The whole file takes a few seconds.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, Proc, TempDir};
use nix::poll::{PollFd, PollFlags, PollTimeout};
use sonde_testkit::pty::{pty, read_some, write_all, Pty};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(20);
const FLAG: u8 = 0x7E;

/// What the relay does to the frames going from the sender to the far end.
#[derive(Clone, Copy, Default)]
struct Faults {
    /// Change one byte in the middle of this frame (0 = the first frame, the transfer's start).
    corrupt: Option<usize>,
    /// Do not carry this frame.
    drop: Option<usize>,
    /// Carry nothing either way from this frame on.
    dead_after: Option<usize>,
}

/// Joins two pty masters until dropped; frames from `a` to `b` are impaired by `Faults`.
struct Relay {
    stop: Arc<AtomicBool>,
    /// Frames seen from the sender so far (carried or not).
    frames: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Relay {
    fn start(a: Pty, b: Pty, faults: Faults) -> Relay {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let frames = Arc::new(AtomicUsize::new(0));
        let seen = frames.clone();
        let thread = std::thread::spawn(move || {
            let (mut frame, mut n, mut buf) = (Vec::new(), 0usize, [0u8; 4096]);
            while !flag.load(Ordering::SeqCst) {
                let mut fds = [
                    PollFd::new(a.master.as_fd(), PollFlags::POLLIN),
                    PollFd::new(b.master.as_fd(), PollFlags::POLLIN),
                ];
                if nix::poll::poll(&mut fds, PollTimeout::from(20u16)).unwrap_or(0) <= 0 {
                    continue;
                }
                let ra = fds[0].revents().unwrap().contains(PollFlags::POLLIN);
                let rb = fds[1].revents().unwrap().contains(PollFlags::POLLIN);
                let dead = |n: usize| faults.dead_after.is_some_and(|d| n >= d);
                if ra {
                    let got = read_some(&a.master, &mut buf);
                    for &byte in &buf[..got] {
                        if frame.len() == 1 && byte == FLAG {
                            continue; // a second flag between frames
                        }
                        frame.push(byte);
                        if byte != FLAG || frame.len() < 2 {
                            continue;
                        }
                        let mut f = std::mem::take(&mut frame);
                        if faults.corrupt == Some(n) {
                            let mid = f.len() / 2;
                            f[mid] = if f[mid] == 0x55 { 0x56 } else { 0x55 };
                        }
                        if faults.drop != Some(n) && !dead(n) {
                            write_all(&b.master, &f);
                        }
                        n += 1;
                        seen.store(n, Ordering::SeqCst);
                    }
                }
                if rb {
                    let got = read_some(&b.master, &mut buf);
                    // Answers to the frames carried still go back.
                    let answering = match faults.dead_after {
                        Some(d) => n <= d,
                        None => true,
                    };
                    if answering {
                        write_all(&a.master, &buf[..got]);
                    }
                }
            }
        });
        Relay {
            stop,
            frames,
            thread: Some(thread),
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A sender's pty, a `sonde serial --serve` on the other, the relay between them.
struct Bench {
    dir: TempDir,
    device: String,
    file: PathBuf,
    data: Vec<u8>,
    serve: Proc,
    relay: Relay,
}

fn bench(tag: &str, len: usize, faults: Faults) -> Bench {
    let dir = TempDir::new(tag);
    // Every byte value, including the frame flag and escape.
    let data: Vec<u8> = (0..len).map(|i| (i * 31 + i / 251) as u8).collect();
    let file = dir.file("payload.bin");
    std::fs::write(&file, &data).unwrap();
    std::fs::create_dir(dir.file("out")).unwrap();
    let (near, far) = (pty(), pty());
    let device = near.path.display().to_string();
    let far_path = far.path.display().to_string();
    let out = dir.file("out").display().to_string();
    let serve = Proc::spawn(&["serial", &far_path, "--serve", "--out", &out]);
    let relay = Relay::start(near, far, faults);
    let t0 = Instant::now();
    while !serve.stdout_so_far().contains("serving on") {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "serve did not start: {}",
            serve.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    Bench {
        dir,
        device,
        file,
        data,
        serve,
        relay,
    }
}

impl Bench {
    fn send(&self, extra: &[&str]) -> common::Output {
        let file = self.file.display().to_string();
        let mut args = vec!["serial", &self.device, "--file", &file, "-J"];
        args.extend_from_slice(extra);
        run(&args, DEADLINE)
    }

    fn stored(&self) -> Vec<u8> {
        std::fs::read(self.dir.file("out").join("payload.bin")).unwrap()
    }
}

#[test]
fn every_block_size_transfers_the_file_and_the_hashes_match() {
    let _turn = crate::turns::take(module_path!());
    let b = bench("serial-all", 3000, Faults::default());
    let out = b.send(&["--block", "8,16,32,64,128,256", "--timeout", "2000"]);
    out.expect_code(0);
    let doc = out.json();
    let rows = doc["transfers"].as_array().unwrap();
    assert_eq!(rows.len(), 6, "{}", out.describe());
    for (row, block) in rows.iter().zip([8u64, 16, 32, 64, 128, 256]) {
        assert_eq!(row["block"], block);
        assert_eq!(row["hash_ok"], true, "{row}");
        assert_eq!(row["bytes"], 3000);
        assert_eq!(row["blocks"], 3000u64.div_ceil(block));
        assert!(row["bytes_per_second"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(b.stored(), b.data);
    b.serve.signal(libc::SIGINT);
    let served = b.serve.wait(DEADLINE);
    served.expect_code(0);
    assert_eq!(
        served.stdout.matches("length and sha256 ok").count(),
        6,
        "{}",
        served.describe()
    );
    assert!(
        served.stderr.contains("6 transfers served"),
        "{}",
        served.describe()
    );
}

#[test]
fn corrupted_byte_is_caught_by_crc_and_dropped_block_is_resent() {
    let _turn = crate::turns::take(module_path!());
    // Frame 0 starts the transfer; frames 1.. are the blocks.
    let faults = Faults {
        corrupt: Some(3),
        drop: Some(6),
        ..Faults::default()
    };
    let b = bench("serial-faults", 1000, faults);
    let out = b.send(&["--block", "32", "--timeout", "700"]);
    out.expect_code(0);
    let row = &out.json()["transfers"][0];
    assert_eq!(row["hash_ok"], true, "{}", out.describe());
    assert_eq!(row["crc_errors_far"], 1, "{}", out.describe());
    assert!(row["timeouts"].as_u64().unwrap() >= 1, "{}", out.describe());
    assert!(row["retries"].as_u64().unwrap() >= 2, "{}", out.describe());
    assert_eq!(b.stored(), b.data);
}

#[test]
fn far_end_that_stops_answering_fails_naming_the_block() {
    let _turn = crate::turns::take(module_path!());
    let faults = Faults {
        dead_after: Some(5),
        ..Faults::default()
    };
    let b = bench("serial-dead", 400, faults);
    let out = b.send(&["--block", "16", "--timeout", "200", "--retries", "3"]);
    out.expect_code(1);
    let err = out.stderr_lc();
    assert!(
        err.contains("block 5 (file bytes 64..80) was not acknowledged after 4 tries"),
        "{}",
        out.describe()
    );
    assert!(
        out.elapsed >= Duration::from_millis(800),
        "{}",
        out.describe()
    );
    assert!(out.elapsed < Duration::from_secs(6), "{}", out.describe());
    let row = &out.json()["transfers"][0];
    assert_eq!(row["blocks"], 4);
    assert_eq!(row["hash_ok"], serde_json::Value::Null);
    // An unfinished transfer is never stored under the file's name, and the far end says
    // how far it got when it is stopped.
    assert!(!b.dir.file("out").join("payload.bin").exists());
    b.serve.signal(libc::SIGINT);
    let served = b.serve.wait(DEADLINE);
    served.expect_code(0);
    assert!(
        served
            .stderr
            .contains("64 of 400 bytes received, not stored"),
        "{}",
        served.describe()
    );
    assert!(!b.dir.file("out").join("payload.part").exists());
}

#[test]
fn ctrl_c_prints_what_was_done() {
    let _turn = crate::turns::take(module_path!());
    let faults = Faults {
        dead_after: Some(3),
        ..Faults::default()
    };
    let b = bench("serial-int", 400, faults);
    let file = b.file.display().to_string();
    let p = Proc::spawn(&[
        "serial",
        &b.device,
        "--file",
        &file,
        "--block",
        "8",
        "--timeout",
        "10000",
    ]);
    // Interrupt once the sender waits on the block the relay swallowed (frame 3 = block 3).
    let t0 = Instant::now();
    while b.relay.frames.load(Ordering::SeqCst) < 4 {
        assert!(t0.elapsed() < DEADLINE, "the sender never got to block 3");
        std::thread::sleep(Duration::from_millis(10));
    }
    p.signal(libc::SIGINT);
    let out = p.wait(DEADLINE);
    out.expect_code(1);
    assert!(out.stdout.contains("2/50"), "{}", out.describe());
    assert!(
        out.stderr_lc().contains("interrupted"),
        "{}",
        out.describe()
    );
}

#[test]
fn loopback_checks_an_echoing_device() {
    let _turn = crate::turns::take(module_path!());
    let echo = sonde_testkit::pty::echo();
    let device = echo.path.display().to_string();
    let dir = TempDir::new("serial-echo");
    let file = dir.file("f.bin");
    std::fs::write(
        &file,
        (0..777u32).map(|i| (i % 256) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    let f = file.display().to_string();
    let out = run(
        &[
            "serial",
            &device,
            "--file",
            &f,
            "--loopback",
            "--block",
            "8,64",
            "-J",
        ],
        DEADLINE,
    );
    // Without --loopback the sender waits for answers that never come, and says why.
    let wrong = run(
        &[
            "serial",
            &device,
            "--file",
            &f,
            "--timeout",
            "100",
            "--retries",
            "1",
        ],
        DEADLINE,
    );
    drop(echo);
    wrong.expect_code(1);
    assert!(
        wrong.stderr.contains("use --loopback"),
        "{}",
        wrong.describe()
    );
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(doc["far_end"], "echo");
    for row in doc["transfers"].as_array().unwrap() {
        assert_eq!(row["hash_ok"], true, "{}", out.describe());
        assert_eq!(row["bytes"], 777);
    }
}

#[test]
fn bad_arguments_are_usage_errors() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("serial-args");
    let file = dir.file("f.bin");
    std::fs::write(&file, b"x").unwrap();
    let f = file.display().to_string();
    let near = pty();
    let dev = near.path.display().to_string();
    let cases: [(Vec<&str>, &str); 6] = [
        (
            vec!["serial", &dev, "--file", &f, "--block", "8,0"],
            "not a block size",
        ),
        (
            vec!["serial", &dev, "--file", "/nonexistent/f"],
            "cannot read --file",
        ),
        (
            vec!["serial", "/dev/nonexistent-tty", "--file", &f],
            "cannot open /dev/nonexistent-tty",
        ),
        (vec!["serial", "/dev/null", "--file", &f], "not a terminal"),
        (
            vec!["serial", &dev, "--file", &f, "--baud", "12345"],
            "not a baud rate",
        ),
        (vec!["serial", &dev], "required"),
    ];
    for (args, msg) in cases {
        let out = run(&args, DEADLINE);
        out.expect_code(2);
        assert!(
            out.stderr.contains(msg),
            "wanted {msg:?}\n{}",
            out.describe()
        );
    }
}
