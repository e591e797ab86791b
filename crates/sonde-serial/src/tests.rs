//! Sender and receiver on a virtual clock, joined by an in-memory line that can drop whole
//! frames, flip chosen bytes, or corrupt bytes at random (seeded, so a failure repeats).

use crate::control::{End, Verdict};
use crate::frame::{Frame, Kind, FLAG};
use crate::{AckMode, Event, Receiver, SendError, Sender, SenderConfig, Status, Step};
use std::time::{Duration, Instant};

/// One direction of the line: counts frames (flag-delimited) and impairs the chosen ones.
#[derive(Default)]
struct Line {
    frames: usize,
    drop: Vec<usize>,
    flip: Vec<usize>,
    /// Corrupt each byte with this probability (per million).
    noise_ppm: u32,
    rng: u64,
    dead_after: Option<usize>,
}

impl Line {
    fn carry(&mut self, bytes: Vec<u8>) -> Vec<u8> {
        let n = self.frames;
        self.frames += 1;
        if self.drop.contains(&n) || self.dead_after.is_some_and(|d| n >= d) {
            return Vec::new();
        }
        let mut b = bytes;
        if self.flip.contains(&n) {
            let mid = b.len() / 2;
            b[mid] = if b[mid] == 0x55 { 0x56 } else { 0x55 };
        }
        if self.noise_ppm > 0 {
            for x in b.iter_mut() {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                if (self.rng % 1_000_000) < u64::from(self.noise_ppm) {
                    *x ^= 1 << (self.rng % 8);
                }
            }
        }
        b
    }
}

const TIMEOUT: Duration = Duration::from_millis(50);

fn cfg(block: usize, mode: AckMode) -> SenderConfig {
    SenderConfig {
        block,
        retries: 5,
        timeout: TIMEOUT,
        mode,
        transfer: 77,
        name: "test.bin".into(),
    }
}

fn file(len: usize) -> Vec<u8> {
    // Every byte value, flags and escapes included.
    (0..len).map(|i| (i * 7 + i / 256) as u8).collect()
}

struct Run {
    sender: Sender,
    delivered: Vec<u8>,
    events: Vec<Event>,
    clock: Duration,
}

/// Runs a transfer to its end; `up` carries sender to receiver, `down` the answers.
fn run(cfg: SenderConfig, data: &[u8], up: &mut Line, down: &mut Line) -> Run {
    let t0 = Instant::now();
    let mut now = t0;
    let mut tx = Sender::new(cfg, data.to_vec().into()).unwrap();
    let mut rx = Receiver::new();
    let mut delivered = Vec::new();
    let mut events = Vec::new();
    for _ in 0..100_000 {
        if *tx.status() != Status::Running {
            break;
        }
        if let Some(bytes) = tx.poll_transmit(now) {
            rx.handle_input(&up.carry(bytes));
            while let Some(ans) = rx.poll_transmit() {
                tx.handle_input(&down.carry(ans), now);
            }
            while let Some(e) = rx.poll_event() {
                if let Event::Data(d) = &e {
                    delivered.extend_from_slice(d);
                }
                events.push(e);
            }
            now += Duration::from_micros(100);
            continue;
        }
        let Some(deadline) = tx.poll_timeout() else {
            panic!("sender waits without a deadline");
        };
        now = now.max(deadline);
        tx.handle_timeout(now);
    }
    Run {
        sender: tx,
        delivered,
        events,
        clock: now - t0,
    }
}

fn echo_run(cfg: SenderConfig, data: &[u8], line: &mut Line) -> Sender {
    let mut now = Instant::now();
    let mut tx = Sender::new(cfg, data.to_vec().into()).unwrap();
    for _ in 0..100_000 {
        if *tx.status() != Status::Running {
            break;
        }
        if let Some(bytes) = tx.poll_transmit(now) {
            let back = line.carry(bytes);
            tx.handle_input(&back, now);
            continue;
        }
        now = now.max(tx.poll_timeout().unwrap());
        tx.handle_timeout(now);
    }
    tx
}

fn done(r: &Run) -> crate::Outcome {
    match r.sender.status() {
        Status::Done(o) => *o,
        other => panic!("transfer did not finish: {other:?}"),
    }
}

#[test]
fn every_block_size_delivers_the_file_once_and_in_order() {
    let data = file(1000);
    for block in [1, 8, 16, 32, 64, 128, 256, 4096] {
        let r = run(
            cfg(block, AckMode::Peer),
            &data,
            &mut Line::default(),
            &mut Line::default(),
        );
        let o = done(&r);
        assert!(o.hash_ok, "block {block}");
        assert_eq!(r.delivered, data, "block {block}");
        let s = r.sender.stats();
        assert_eq!(s.retries, 0);
        assert_eq!(s.blocks, r.sender.blocks());
        assert_eq!(s.blocks as usize, data.len().div_ceil(block));
        assert_eq!(o.far.unwrap().verdict, Verdict::Ok);
    }
}

#[test]
fn empty_file_is_a_begin_and_an_end() {
    let r = run(
        cfg(8, AckMode::Peer),
        &[],
        &mut Line::default(),
        &mut Line::default(),
    );
    assert!(done(&r).hash_ok);
    assert_eq!(r.sender.stats().frames_sent, 2);
}

#[test]
fn corrupted_byte_is_caught_by_crc_naked_and_resent() {
    let data = file(200);
    // Frame 0 is the Begin, 1.. the blocks: corrupt block 3.
    let mut up = Line {
        flip: vec![3],
        ..Line::default()
    };
    let r = run(cfg(32, AckMode::Peer), &data, &mut up, &mut Line::default());
    let o = done(&r);
    assert!(o.hash_ok);
    assert_eq!(r.delivered, data);
    let s = r.sender.stats();
    assert_eq!((s.naks, s.retries, s.timeouts), (1, 1, 0));
    assert_eq!(o.far.unwrap().crc_errors, 1);
    assert!(r.clock < TIMEOUT, "a Nak resends at once, no timeout wait");
}

#[test]
fn dropped_block_is_resent_after_the_timeout() {
    let data = file(200);
    let mut up = Line {
        drop: vec![2],
        ..Line::default()
    };
    let r = run(cfg(32, AckMode::Peer), &data, &mut up, &mut Line::default());
    assert!(done(&r).hash_ok);
    assert_eq!(r.delivered, data);
    let s = r.sender.stats();
    assert_eq!((s.timeouts, s.retries, s.naks), (1, 1, 0));
    assert!(r.clock >= TIMEOUT);
}

#[test]
fn lost_ack_gives_a_duplicate_that_is_acked_not_delivered() {
    let data = file(100);
    // Answers: 0 = Begin's Ack, 1.. block Acks: lose the Ack of block 2.
    let mut down = Line {
        drop: vec![2],
        ..Line::default()
    };
    let r = run(
        cfg(16, AckMode::Peer),
        &data,
        &mut Line::default(),
        &mut down,
    );
    let o = done(&r);
    assert!(o.hash_ok);
    assert_eq!(r.delivered, data, "the duplicate block was delivered once");
    assert_eq!(o.far.unwrap().duplicates, 1);
    assert_eq!(r.sender.stats().stray, 0);
}

#[test]
fn lost_begin_ack_and_end_ack_are_survived() {
    let data = file(50);
    let blocks = 50usize.div_ceil(8);
    let mut down = Line {
        drop: vec![0, blocks + 2],
        ..Line::default()
    };
    let r = run(
        cfg(8, AckMode::Peer),
        &data,
        &mut Line::default(),
        &mut down,
    );
    assert!(done(&r).hash_ok);
    assert_eq!(r.delivered, data);
    let begins = r
        .events
        .iter()
        .filter(|e| matches!(e, Event::Begin(_)))
        .count();
    let ends = r
        .events
        .iter()
        .filter(|e| matches!(e, Event::End(_)))
        .count();
    assert_eq!((begins, ends), (1, 1));
}

#[test]
fn random_noise_both_ways_still_delivers_exactly() {
    let data = file(3000);
    for seed in 1..6u64 {
        let mut up = Line {
            noise_ppm: 2000,
            rng: seed * 0x9E37_79B9,
            ..Line::default()
        };
        let mut down = Line {
            noise_ppm: 2000,
            rng: seed * 0x85EB_CA6B,
            ..Line::default()
        };
        let mut c = cfg(64, AckMode::Peer);
        c.retries = 20;
        let r = run(c, &data, &mut up, &mut down);
        assert!(done(&r).hash_ok, "seed {seed}");
        assert_eq!(r.delivered, data, "seed {seed}");
        assert!(
            r.sender.stats().retries > 0,
            "seed {seed}: noise did nothing"
        );
    }
}

#[test]
fn silent_far_end_fails_naming_the_block_after_the_retries() {
    let data = file(100);
    let mut up = Line {
        dead_after: Some(4),
        ..Line::default()
    };
    let r = run(cfg(16, AckMode::Peer), &data, &mut up, &mut Line::default());
    let Status::Failed(SendError::NoAnswer {
        step,
        tries,
        echoed,
        ..
    }) = r.sender.status().clone()
    else {
        panic!("{:?}", r.sender.status());
    };
    assert_eq!(
        step,
        Step::Block {
            index: 4,
            offset: 48,
            len: 16
        }
    );
    assert_eq!(tries, 6);
    assert_eq!(r.clock.as_millis() / TIMEOUT.as_millis(), 6);
    assert!(!echoed);
    let msg = SendError::NoAnswer {
        step,
        tries,
        timeout: TIMEOUT,
        echoed,
    }
    .to_string();
    assert!(msg.contains("block 4 (file bytes 48..64)"), "{msg}");
}

#[test]
fn echo_mode_checks_the_echo_and_resends_broken_ones() {
    let data = file(500);
    let tx = echo_run(cfg(32, AckMode::Echo), &data, &mut Line::default());
    assert!(matches!(tx.status(), Status::Done(o) if o.hash_ok && o.far.is_none()));
    let mut line = Line {
        flip: vec![5],
        drop: vec![9],
        ..Line::default()
    };
    let tx = echo_run(cfg(32, AckMode::Echo), &data, &mut line);
    assert!(matches!(tx.status(), Status::Done(o) if o.hash_ok));
    let s = tx.stats();
    assert_eq!((s.crc_errors, s.timeouts, s.retries), (1, 1, 2));
    assert_eq!(s.bytes, 500);
}

#[test]
fn peer_mode_on_an_echoing_device_says_so() {
    let mut now = Instant::now();
    let mut tx = Sender::new(cfg(8, AckMode::Peer), file(20).into()).unwrap();
    while *tx.status() == Status::Running {
        if let Some(bytes) = tx.poll_transmit(now) {
            tx.handle_input(&bytes, now);
        } else {
            now = tx.poll_timeout().unwrap();
            tx.handle_timeout(now);
        }
    }
    let Status::Failed(e) = tx.status() else {
        panic!("{:?}", tx.status());
    };
    let msg = e.to_string();
    assert!(
        msg.contains("start-of-transfer frame") && msg.contains("--loopback"),
        "{msg}"
    );
    assert_eq!(tx.stats().echoes, 6);
}

#[test]
fn end_with_a_wrong_hash_or_length_is_refused() {
    let mut rx = Receiver::new();
    let begin = crate::control::Begin {
        block: 4,
        total: 4,
        name: "x".into(),
    };
    let frames = [
        Frame {
            kind: Kind::Begin,
            transfer: 1,
            seq: 0,
            payload: begin.emit(),
        },
        Frame {
            kind: Kind::Data,
            transfer: 1,
            seq: 1,
            payload: vec![1, 2, 3, 4],
        },
        Frame {
            kind: Kind::End,
            transfer: 1,
            seq: 2,
            payload: End {
                total: 4,
                sha256: [0; 32],
            }
            .emit(),
        },
    ];
    let mut line = vec![0x13, 0x37, FLAG];
    for f in &frames {
        line.extend(f.emit());
    }
    rx.handle_input(&line);
    let ends: Vec<_> = std::iter::from_fn(|| rx.poll_event())
        .filter_map(|e| match e {
            Event::End(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0].ack.verdict, Verdict::HashMismatch);
    assert_eq!(rx.noise(), 2);
    // The same End again: the same verdict, no second event.
    rx.handle_input(&frames[2].emit());
    assert!(rx.poll_event().is_none());
    let answers: Vec<_> = std::iter::from_fn(|| rx.poll_transmit()).collect();
    assert_eq!(answers.len(), 4);
    assert_eq!(answers[2], answers[3]);
}

#[test]
fn block_bigger_than_announced_is_not_delivered() {
    let mut rx = Receiver::new();
    let begin = crate::control::Begin {
        block: 4,
        total: 8,
        name: String::new(),
    };
    rx.handle_input(
        &Frame {
            kind: Kind::Begin,
            transfer: 2,
            seq: 0,
            payload: begin.emit(),
        }
        .emit(),
    );
    rx.handle_input(
        &Frame {
            kind: Kind::Data,
            transfer: 2,
            seq: 1,
            payload: vec![0; 5],
        }
        .emit(),
    );
    assert!(matches!(rx.poll_event(), Some(Event::Begin(_))));
    assert_eq!(rx.poll_event(), None);
    assert_eq!(rx.stats().stray, 1);
}
