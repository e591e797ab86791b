//! The coded protocol (sonde-coded): its datagrams, and its receiver and sender state machines
//! fed hostile datagrams.
//!
//! Every coded datagram carries a CRC, so random bytes almost never get past `classify`. The
//! state machine targets therefore let each input record choose between raw bytes and a
//! well-formed datagram built from the record's fields and sealed with a valid CRC: hostile
//! *contents* (absurd `k`, block lengths, feedback entries, counters) then reach the logic
//! behind the checksum.

use std::cell::RefCell;
use std::time::Duration;

use sonde_coded::receiver::{FeedbackMode, Receiver, ReceiverConfig};
use sonde_coded::sender::{PatternSource, Sender, SenderConfig};
use sonde_coded::wire::{
    classify, Feedback, Kind, Need, ReceiverReport, SenderReport, Symbol, SymbolHeader,
};

use crate::input::{Fields, Records};

/// Largest datagram the runtime reads (a UDP payload).
const MAX_DATAGRAM: usize = 65_536;

/// Each parser on arbitrary bytes; whatever parses emits exactly the input again.
pub fn coded_wire(data: &[u8]) {
    let Ok(kind) = classify(data) else {
        return;
    };
    let mut out = vec![0u8; data.len()];
    match kind {
        Kind::Symbol => {
            if let Ok(s) = Symbol::parse(data) {
                let n = Symbol::emit(&s.header, s.payload, &mut out).unwrap();
                assert_eq!(&out[..n], data);
            }
        }
        Kind::Feedback => {
            if let Ok(f) = Feedback::parse(data) {
                let n = f.emit(&mut out).unwrap();
                assert_eq!(&out[..n], data);
            }
        }
        Kind::Done => {
            if let Ok(r) = ReceiverReport::parse(data) {
                let n = r.emit(&mut out).unwrap();
                assert_eq!(&out[..n], data);
            }
        }
        Kind::DoneAck => {
            if let Ok(r) = SenderReport::parse(data) {
                let n = r.emit(&mut out).unwrap();
                assert_eq!(&out[..n], data);
            }
        }
    }
}

/// A symbol datagram with the record's header fields and the rest as payload.
fn sealed_symbol(f: &mut Fields<'_>, buf: &mut [u8]) -> Option<usize> {
    let h = SymbolHeader {
        block: f.u32() % 256,
        esi: f.u16(),
        k: f.u16(),
        block_len: f.u32(),
        seq: f.u64(),
        last: f.u8() & 1 != 0,
    };
    Symbol::emit(&h, f.rest(), buf).ok()
}

fn sealed_feedback(f: &mut Fields<'_>, buf: &mut [u8]) -> Option<usize> {
    let mut fb = Feedback {
        serial: f.u32(),
        cumulative: f.u32(),
        covered: f.u32(),
        highest_seq: f.u64(),
        received: f.u64(),
        ack_delay_us: f.u32(),
        needs: Vec::new(),
    };
    let rest = f.rest();
    fb.needs = rest
        .chunks_exact(6)
        .map(|e| {
            let mut g = Fields::new(e);
            Need {
                block: g.u32(),
                needed: g.u16(),
            }
        })
        .collect();
    fb.emit(buf).ok()
}

/// A done or done-ack datagram (`emitted` is the result of emitting a default one into
/// `buf`) whose nine counters come from the record, resealed with the wire's checksum
/// (CRC-32 over the datagram without the checksum field).
fn sealed_report(
    emitted: Result<usize, sonde_coded::wire::WireError>,
    f: &mut Fields<'_>,
    buf: &mut [u8],
) -> Option<usize> {
    let n = emitted.ok()?;
    let d = buf.get_mut(..n)?;
    for c in d.get_mut(8..)?.chunks_exact_mut(8) {
        c.copy_from_slice(&f.u64().to_be_bytes());
    }
    let mut h = crc32fast::Hasher::new();
    h.update(&d[0..4]);
    h.update(&d[8..]);
    d[4..8].copy_from_slice(&h.finalize().to_be_bytes());
    Some(n)
}

/// The record as a datagram: its first byte picks raw bytes or a sealed datagram of a kind.
fn datagram<'a>(rec: &'a [u8], buf: &'a mut [u8]) -> &'a [u8] {
    let Some((&pick, body)) = rec.split_first() else {
        return rec;
    };
    let mut f = Fields::new(body);
    let n = match pick % 5 {
        0 => sealed_symbol(&mut f, buf),
        1 => sealed_feedback(&mut f, buf),
        2 => sealed_report(ReceiverReport::default().emit(buf), &mut f, buf),
        3 => sealed_report(SenderReport::default().emit(buf), &mut f, buf),
        _ => return body,
    };
    match n {
        Some(n) => &buf[..n],
        None => body,
    }
}

/// Largest datagram [`datagram`] builds: a record is at most 255 bytes (one length byte), so
/// a sealed symbol or feedback made from it stays far below this.
const MAX_BUILT: usize = 1024;

thread_local! {
    /// The datagram being built and the one a state machine writes, reused across inputs:
    /// zeroing two fresh 64 KiB buffers per input cost the receiver target a quarter of its
    /// time. What is read from them is always what was just written.
    static BUFS: RefCell<(Vec<u8>, Vec<u8>)> =
        RefCell::new((vec![0u8; MAX_BUILT], vec![0u8; MAX_DATAGRAM]));
}

/// Hostile datagrams into a receiver, with its feedback and decoded blocks drained after
/// each, time moving on by the record's length in milliseconds.
pub fn coded_receiver(data: &[u8]) {
    BUFS.with_borrow_mut(|(buf, out)| {
        let mut rx = Receiver::new(ReceiverConfig::for_mode(FeedbackMode::Unrestricted));
        let mut now = Duration::ZERO;
        for rec in Records::new(data) {
            now += Duration::from_millis(rec.len() as u64);
            let d = datagram(rec, buf);
            let _ = rx.handle(now, d);
            while rx.poll_transmit(now, out).is_some() {}
            while rx.poll_block().is_some() {}
            let _ = rx.poll_timeout(now);
        }
        let _ = rx.report();
    });
}

/// Most record bytes an input on the default block size may carry: one feedback or done
/// report. Each such input encodes and hashes a 180 KB block; kept this short, they stay a
/// small share of the corpus and of the executions.
const DEFAULT_BLOCK_RECORDS: usize = 96;

/// The sender's settings and the length of its transfer (`None`: a timed transfer, ended by
/// `finish` after that many records), from the input's first three bytes.
///
/// Blocks are kept small (1..=8 symbols of 2..=64 bytes, at most 16 blocks): what is under
/// test is the state machine's handling of feedback, reports and its own window, not the
/// Reed-Solomon codec's throughput, and a full-size block costs a few hundred times more
/// per input. A first byte of 0 with at most [`DEFAULT_BLOCK_RECORDS`] bytes after the
/// settings instead takes the real default settings (`SenderConfig::default()`: 128
/// symbols of 1420 bytes) for one full block, so the path with the block size sonde
/// actually uses stays reachable. Such an input costs about a millisecond (encoding and
/// hashing 180 KB) against tens of microseconds for a small-block one; the length bound
/// keeps long hostile sequences on small blocks, where they are cheap.
fn sender_setup(cfg: &[u8], rest: usize) -> (SenderConfig, Option<u64>, Option<usize>) {
    let mut f = Fields::new(cfg);
    let (a, b, c) = (f.u8(), f.u8(), f.u8());
    if a == 0 && rest <= DEFAULT_BLOCK_RECORDS {
        let cfg = SenderConfig {
            max_rate_bps: 1_000_000_000,
            ..SenderConfig::default()
        };
        let block = cfg.symbol_size as u64 * u64::from(cfg.k);
        return (cfg, Some(block), None);
    }
    let base = SenderConfig {
        k: 1 + u16::from(a & 7),
        symbol_size: 2 * (1 + usize::from((a >> 3) & 31)),
        max_rate_bps: 1_000_000_000,
        interleave: 1 + usize::from(b & 3),
        max_open_blocks: 1 + usize::from((b >> 2) & 7),
        z: if b & 0x20 != 0 { 0.5 } else { 0.0 },
        adaptive: b & 0x40 != 0,
        arq: false,
    };
    let cfg = if b & 0x80 != 0 { base.arq() } else { base };
    let block = cfg.symbol_size as u64 * u64::from(cfg.k);
    if c & 0x80 != 0 {
        // Timed: an endless source, finished after (c & 0x7f) records.
        return (cfg, None, Some(usize::from(c & 0x7f)));
    }
    // 0..=16 blocks and up to a block's worth of bytes more, so the last one is short.
    let len = u64::from(c >> 3) * block + u64::from(c & 7) * block / 8;
    (cfg, Some(len.min(16 * block)), None)
}

/// Hostile datagrams (feedback, done reports, raw bytes) into a sender whose settings the
/// input's first three bytes choose (see `sender_setup`), with what it sends drained
/// between them.
pub fn coded_sender(data: &[u8]) {
    let (cfg, rest) = data.split_at(data.len().min(3));
    let (cfg, len, finish_after) = sender_setup(cfg, rest.len());
    BUFS.with_borrow_mut(|(buf, out)| {
        let mut tx = Sender::new(cfg, Box::new(PatternSource { len }));
        let mut now = Duration::ZERO;
        for (i, rec) in Records::new(rest).enumerate() {
            if finish_after == Some(i) {
                tx.finish();
            }
            now += Duration::from_millis(rec.len() as u64);
            for _ in 0..64 {
                match tx.poll_transmit(now, out) {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
            let d = datagram(rec, buf);
            let _ = tx.handle(now, d);
            let _ = tx.poll_timeout(now);
            let _ = (tx.is_done(), tx.path(), tx.report());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_records_reach_behind_the_checksum() {
        let mut buf = vec![0u8; 512];
        // A done report with counters 1..=9.
        let mut rec = vec![2u8];
        for i in 1..=9u64 {
            rec.extend_from_slice(&i.to_be_bytes());
        }
        let r = ReceiverReport::parse(datagram(&rec, &mut buf)).unwrap();
        assert_eq!((r.delivered_bytes, r.mismatched_bytes), (1, 9));
        // A symbol of k=1 carrying 4 bytes in a 4-byte payload.
        let mut rec = vec![0u8, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 4];
        rec.extend_from_slice(&[0; 9]);
        rec.extend_from_slice(b"abcd");
        let s = Symbol::parse(datagram(&rec, &mut buf)).unwrap();
        assert_eq!(
            (s.header.block, s.header.k, s.payload),
            (3, 1, &b"abcd"[..])
        );
        // A feedback with one need.
        let mut rec = vec![1u8];
        rec.extend_from_slice(&[0; 32]);
        rec.extend_from_slice(&[0, 0, 0, 5, 0, 2]);
        let f = Feedback::parse(datagram(&rec, &mut buf)).unwrap();
        assert_eq!(
            f.needs,
            vec![Need {
                block: 5,
                needed: 2
            }]
        );
    }
}
