//! The byte-stream tests' helpers (`sonde-switch`, its C ABI, `sonde switch-test`): the test
//! stream's contents, receiving loops that measure the longest gap the application saw, and
//! polling two descriptors.

use std::time::{Duration, Instant};

/// Byte `i` of the test stream.
pub fn byte_at(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Calls `recv` until it returns 0 (the peer finished), handing each chunk to `f`; returns
/// the longest time between two receives.
pub fn receive_all(mut recv: impl FnMut(&mut [u8]) -> usize, f: impl FnMut(&[u8])) -> Duration {
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
            let n = recv(b);
            note();
            n
        },
        f,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_chunk_is_handed_on_until_the_end() {
        let mut chunks = vec![3usize, 5, 0].into_iter();
        let mut got = 0;
        receive_all(|b| chunks.next().unwrap().min(b.len()), |b| got += b.len());
        assert_eq!(got, 8);
        assert_eq!(byte_at(0), 0);
    }
}
