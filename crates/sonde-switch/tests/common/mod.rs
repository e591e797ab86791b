//! Helpers shared by the socket tests: the test stream's contents and a receiving loop that
//! measures the longest gap the application saw.

#![allow(dead_code, clippy::unwrap_used)] // each test uses some; test code may fail loudly

use sonde_switch::Conn;
use std::time::{Duration, Instant};

/// Says why a test does not run; fails instead under `SONDE_REQUIRE_ALL=1`.
pub fn skip(why: &str) {
    assert!(
        std::env::var("SONDE_REQUIRE_ALL").as_deref() != Ok("1"),
        "SONDE_REQUIRE_ALL=1 but {why}"
    );
    eprintln!("skipped: {why}");
}

/// Byte `i` of the test stream.
pub fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Receives until the peer finishes, handing each chunk to `f`; returns the longest time
/// between two receives.
pub fn receive_all(s: &Conn, mut f: impl FnMut(&[u8])) -> Duration {
    let (mut last, mut worst) = (None::<Instant>, Duration::ZERO);
    let mut note = || {
        let now = Instant::now();
        if let Some(t) = last {
            worst = worst.max(now - t);
        }
        last = Some(now);
    };
    receive_all_with(
        |b| {
            let n = s.recv(b).unwrap();
            note();
            n
        },
        |b| f(b),
    );
    worst
}

/// Polls two descriptors for `events` each, up to `ms`; returns their `revents`, or `None`
/// when the wait timed out.
pub fn poll_two(fds: [(i32, i16); 2], ms: i32) -> Option<[i16; 2]> {
    let mut p = fds.map(|(fd, events)| libc::pollfd {
        fd,
        events,
        revents: 0,
    });
    // SAFETY: two valid pollfds for the duration of the call.
    let n = unsafe { libc::poll(p.as_mut_ptr(), 2, ms) };
    assert!(n >= 0, "poll failed");
    (n > 0).then(|| p.map(|x| x.revents))
}

/// Calls `recv` until it returns 0, handing each chunk to `f`.
pub fn receive_all_with(mut recv: impl FnMut(&mut [u8]) -> usize, mut f: impl FnMut(&[u8])) {
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = recv(&mut buf);
        if n == 0 {
            return;
        }
        f(&buf[..n]);
    }
}

/// Runs `f` on a thread in a fresh network namespace with loopback up; `None` (after saying
/// why) when that cannot be made.
pub fn in_own_netns<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("a network namespace of its own needs root");
        return None;
    }
    std::thread::spawn(move || {
        // SAFETY: unshare changes only this thread's network namespace.
        if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
            skip(&format!("unshare: {}", std::io::Error::last_os_error()));
            return None;
        }
        let up = std::process::Command::new("ip")
            .args(["link", "set", "lo", "up"])
            .status();
        assert!(up.is_ok_and(|s| s.success()), "cannot bring lo up");
        Some(f())
    })
    .join()
    .unwrap()
}
