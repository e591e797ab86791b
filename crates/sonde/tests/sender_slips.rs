//! A paced sender that another process kept off the CPU says so: the test stops the sending
//! process for 80 ms (SIGSTOP, then SIGCONT) and the output must carry a note naming the
//! stream and a lateness of at least that much, for a client sender and for the server's
//! sender in reverse. (An undisturbed run may carry one too: on a busy machine the sender
//! really is held up; that is what the note is for.)

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{Proc, Server};
use std::time::Duration;

const CLIENT_DEADLINE: Duration = Duration::from_secs(30);

/// Stops `pid` for `ms` milliseconds, one second into the test.
fn pause(pid: i32, ms: u64) {
    std::thread::sleep(Duration::from_millis(1000));
    // SAFETY: signals to a process this test started.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(ms));
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

/// The largest "by up to X ms" in `notes`.
fn worst_ms(notes: &[&str]) -> f64 {
    notes
        .iter()
        .filter_map(|n| {
            n.split("by up to ")
                .nth(1)?
                .split(" ms")
                .next()?
                .parse()
                .ok()
        })
        .fold(0.0, f64::max)
}

#[test]
fn a_sender_kept_off_the_cpu_says_so() {
    let mut server = Server::start(&[]);
    let args = ["-u", "-b", "2m", "-l", "250", "-t", "3", "-J"];
    // The client's sender.
    let client: Proc = server.spawn_client(&args);
    pause(client.pid(), 80);
    let out = client.wait(CLIENT_DEADLINE);
    out.expect_code(0);
    let doc = out.json();
    let notes: Vec<&str> = doc["sonde"]["notes"]
        .as_array()
        .map(|a| a.iter().filter_map(|n| n.as_str()).collect())
        .unwrap_or_default();
    let ours: Vec<&str> = notes
        .iter()
        .copied()
        .filter(|n| n.contains("client sender fell behind"))
        .collect();
    assert!(!ours.is_empty(), "{notes:?}");
    assert!(worst_ms(&ours) >= 70.0, "{ours:?}");
    // The server's sender, in reverse: its note reaches the client.
    let server_pid = server.proc().pid();
    let mut rev = args.to_vec();
    rev.push("-R");
    let client = server.spawn_client(&rev);
    pause(server_pid, 80);
    let out = client.wait(CLIENT_DEADLINE);
    out.expect_code(0);
    let text = out.stdout.clone();
    assert!(
        text.contains("server sender fell behind"),
        "{}",
        out.describe()
    );
}
