//! Hostile-input robustness of the serial protocol: deterministic pseudo-random bytes and
//! mutated valid frames (xorshift, fixed seeds, so a failure repeats) through the deframer,
//! the receiver and the sender. Nothing may panic, every frame that parses must re-emit to
//! a frame that parses the same, and the answers stay bounded (at most one per frame).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_serial::control::{Begin, End, EndAck, Verdict};
use sonde_serial::frame::{Deframer, Frame, Kind, FLAG, MAX_FRAME, MAX_PAYLOAD};
use sonde_serial::{AckMode, Event, Receiver, Sender, SenderConfig};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Valid frames of every kind, as a sender and a receiver would put them on the line.
fn seeds() -> Vec<Vec<u8>> {
    let begin = Begin {
        block: 16,
        total: 40,
        name: "a.bin".into(),
    };
    let end = End {
        total: 40,
        sha256: [3; 32],
    };
    let ack = EndAck {
        verdict: Verdict::Ok,
        received: 40,
        sha256: [3; 32],
        crc_errors: 1,
        duplicates: 0,
    };
    [
        (Kind::Begin, 0, begin.emit()),
        (Kind::Data, 1, (0..16).collect()),
        (Kind::Data, 2, vec![FLAG; 16]),
        (Kind::Ack, 1, vec![]),
        (Kind::Nak, 2, vec![]),
        (Kind::End, 4, end.emit()),
        (Kind::EndAck, 4, ack.emit()),
    ]
    .into_iter()
    .map(|(kind, seq, payload)| {
        Frame {
            kind,
            transfer: 5,
            seq,
            payload,
        }
        .emit()
    })
    .collect()
}

/// The frame a line holds (the last one, if several).
fn parse_line(line: &[u8]) -> Option<Frame> {
    let mut d = Deframer::new();
    let mut got = None;
    d.push_all(line, |r| got = r.ok());
    got
}

fn check_deframer(line: &[u8]) -> usize {
    let mut d = Deframer::new();
    let mut frames = 0;
    d.push_all(line, |r| {
        if let Ok(f) = r {
            frames += 1;
            assert!(f.payload.len() <= MAX_FRAME);
            let mut again = Deframer::new();
            let mut back = Vec::new();
            again.push_all(&f.emit(), |r| back.push(r));
            assert_eq!(back, vec![Ok(f)]);
        }
    });
    frames
}

fn check_receiver(line: &[u8]) {
    let mut rx = Receiver::new();
    for chunk in line.chunks(7) {
        rx.handle_input(chunk);
    }
    let answers = std::iter::from_fn(|| rx.poll_transmit()).count();
    assert!(answers <= line.iter().filter(|&&b| b == FLAG).count());
    while let Some(e) = rx.poll_event() {
        if let Event::Data(d) = e {
            assert!(d.len() <= MAX_PAYLOAD);
        }
    }
}

fn check_sender(line: &[u8]) {
    let cfg = SenderConfig {
        block: 16,
        retries: 2,
        timeout: Duration::from_millis(10),
        mode: AckMode::Peer,
        transfer: 5,
        name: "a.bin".into(),
    };
    let now = Instant::now();
    let mut tx = Sender::new(cfg, vec![7u8; 40].into()).unwrap();
    let _ = tx.poll_transmit(now);
    tx.handle_input(line, now);
    let _ = tx.poll_transmit(now);
    assert!(tx.stats().blocks <= tx.blocks());
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x5EED_1234);
    for i in 0..3000 {
        let n = (rng.next() % 600) as usize;
        let mut line = rng.bytes(n);
        // Sprinkle flags so the deframer sees many candidate frames.
        for _ in 0..(i % 8) {
            let at = (rng.next() as usize) % line.len().max(1);
            if let Some(b) = line.get_mut(at) {
                *b = FLAG;
            }
        }
        check_deframer(&line);
        check_receiver(&line);
        check_sender(&line);
    }
}

#[test]
fn mutated_valid_frames_never_panic_and_never_pass_as_intact_when_changed() {
    let mut rng = Rng(0xC0FF_EE00);
    let seeds = seeds();
    for seed in &seeds {
        assert_eq!(check_deframer(seed), 1);
    }
    for _ in 0..20_000 {
        let seed = &seeds[(rng.next() as usize) % seeds.len()];
        let mut line = seed.clone();
        for _ in 0..1 + rng.next() % 3 {
            let at = (rng.next() as usize) % line.len();
            line[at] = rng.next() as u8;
        }
        check_deframer(&line);
        check_receiver(&line);
        check_sender(&line);
        if line != *seed {
            let original = parse_line(seed);
            let mut d = Deframer::new();
            d.push_all(&line, |r| {
                assert!(r.ok() != original, "a changed frame passed as the original");
            });
        }
    }
}

#[test]
fn endless_bytes_without_a_flag_stay_bounded() {
    let mut d = Deframer::new();
    let mut rng = Rng(77);
    let mut line = vec![FLAG];
    line.extend(
        rng.bytes(200_000)
            .into_iter()
            .map(|b| if b == FLAG { 0 } else { b }),
    );
    let mut results = Vec::new();
    d.push_all(&line, |r| results.push(r));
    assert!(results.is_empty());
    d.push_all(&[FLAG], |r| results.push(r));
    assert_eq!(results.len(), 1);
    assert!(results[0].is_err());
}
