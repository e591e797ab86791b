//! Helpers shared by the socket tests: the test stream's contents and a receiving loop that
//! measures the longest gap the application saw.

#![allow(dead_code, clippy::unwrap_used)] // each test uses some; test code may fail loudly

use sonde_switch::Conn;
use std::time::{Duration, Instant};

/// Byte `i` of the test stream.
pub fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Receives until the peer finishes, handing each chunk to `f`; returns the longest time
/// between two receives.
pub fn receive_all(s: &Conn, mut f: impl FnMut(&[u8])) -> Duration {
    let mut buf = vec![0u8; 256 * 1024];
    let (mut last, mut worst) = (None::<Instant>, Duration::ZERO);
    loop {
        let n = s.recv(&mut buf).unwrap();
        let now = Instant::now();
        if let Some(t) = last {
            worst = worst.max(now - t);
        }
        last = Some(now);
        if n == 0 {
            return worst;
        }
        f(&buf[..n]);
    }
}
