//! Writes the committed seed corpora, `fuzz/seeds/<target>/`, from real encoded messages.
//!
//! Run from the workspace root when a wire format changes:
//! `cargo run --release -p sonde-fuzz-checks --example write_seeds`. Reproducers of past
//! crashes live next to the seeds (named `crash-*`) and are never overwritten.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sonde_coded::receiver::{FeedbackMode, Receiver, ReceiverConfig};
use sonde_coded::sender::{PatternSource, Sender, SenderConfig};
use sonde_proto::message::{Hello, Message};
use sonde_proto::{capacity, datagram, datagram_format, icmp, preamble, probe, udp_hello};

type Seeds = Vec<(&'static str, Vec<u8>)>;
/// Seed files by their path under `fuzz/seeds/`.
pub type SeedFiles = Vec<(PathBuf, Vec<u8>)>;

/// One record of a state-machine target's input: length byte, selector byte, bytes.
fn record(pick: u8, bytes: &[u8]) -> Vec<u8> {
    let mut r = vec![(bytes.len() + 1).min(255) as u8, pick];
    r.extend_from_slice(&bytes[..bytes.len().min(254)]);
    r
}

fn proto_seeds(s: &mut Seeds) -> Result<(), Box<dyn std::error::Error>> {
    let msgs = [
        Message::Hello(Hello {
            version: 1,
            min_version: 1,
            software: "sonde 0.1".into(),
            caps: vec!["udp".into()],
        }),
        Message::StreamsReady,
        Message::Start,
        Message::Done,
    ];
    let mut stream = vec![7u8];
    for m in &msgs {
        let wire = m.encode()?;
        stream.extend_from_slice(&wire);
        // The frame header is 5 bytes: type, then the body length.
        let mut typed = vec![wire[0]];
        typed.extend_from_slice(&wire[5..]);
        s.push(("message_decode", typed));
    }
    s.push(("frame_decoder", stream));
    let cookie = [0x5a; preamble::COOKIE_LEN];
    s.push(("preamble", preamble::CONTROL_MAGIC.to_vec()));
    s.push(("preamble", preamble::RR_MAGIC.to_vec()));
    s.push(("preamble", preamble::data_preamble(&cookie, 3).to_vec()));
    // foreign_peer: a byte saying how many of ours follow, ours, then the peer's.
    let with_sent = |sent: &[u8], received: &[u8]| {
        let mut v = vec![sent.len() as u8];
        v.extend_from_slice(sent);
        v.extend_from_slice(received);
        v
    };
    s.push(("foreign_peer", with_sent(preamble::CONTROL_MAGIC, &[9])));
    s.push((
        "foreign_peer",
        with_sent(preamble::CONTROL_MAGIC, preamble::CONTROL_MAGIC),
    ));
    s.push((
        "foreign_peer",
        with_sent(&[], b"abcdefghijklmnopqrstuvwxyz234567abcd\0"),
    ));
    let iperf2 = [
        0x40, 1, 0, 0x78, 0, 0, 0, 1, 0, 0, 0x62, 0xd5, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
        0x9c,
    ];
    s.push(("foreign_peer", with_sent(&[], &iperf2)));
    let mut d = [0u8; 64];
    datagram::DatagramHeader {
        seq: 42,
        send_ns: 1_000_000_007,
    }
    .emit(&mut d)?;
    s.push(("datagram", d.to_vec()));
    for f in [
        datagram_format::DatagramFormat::Sonde,
        datagram_format::DatagramFormat::Iperf3 { wide: false },
        datagram_format::DatagramFormat::Iperf3 { wide: true },
    ] {
        let mut b = vec![0u8; 128];
        f.emit(9, 2_000_000_000, &mut b)?;
        s.push(("datagram_format", b.clone()));
        s.push(("iperf3_udp", b));
    }
    let h = udp_hello::Hello {
        cookie,
        stream_id: 1,
    };
    let a = udp_hello::HelloAck {
        cookie,
        stream_id: 1,
    };
    s.push(("udp_hello", h.emit().to_vec()));
    s.push(("udp_hello", a.emit().to_vec()));
    s.push(("iperf3_udp", b"9876".to_vec()));
    Ok(())
}

fn latency_seeds(s: &mut Seeds) -> Result<(), Box<dyn std::error::Error>> {
    let p = probe::Probe {
        kind: probe::ProbeKind::Request,
        token: 0x1234,
        seq: 5,
        client_send_ns: 77,
        server_recv_ns: 0,
        server_send_ns: 0,
        server_count: 0,
    };
    // A request (with some payload) and the answer to it.
    for (q, extra) in [(Some(p), 8), (p.answer(100, 200, 1), 0)] {
        let Some(q) = q else { continue };
        let mut b = vec![0u8; probe::HEADER_LEN + extra];
        q.emit(&mut b)?;
        s.push(("probe", b.clone()));
        s.push(("latency_replies", b));
    }
    for (fam, reply) in [(icmp::Family::V4, 0u8), (icmp::Family::V6, 129)] {
        let mut m = icmp::echo_request(fam, 7, 3, 99, 16);
        m[0] = reply;
        s.push(("latency_replies", m));
    }
    s.push(("latency_replies", 64u32.to_be_bytes().to_vec()));
    s.push((
        "latency_replies",
        probe::emit_rr_refusal("too many clients"),
    ));
    let cp = capacity::Probe {
        train: 3,
        seq: 1,
        count: 10,
        send_ns: 5,
    };
    let mut b = vec![0u8; capacity::PROBE_HEADER_LEN + 16];
    cp.emit(&mut b)?;
    s.push(("capacity", b));
    s.push(("capacity", capacity::emit_ack(3).to_vec()));
    let dep = capacity::Departure {
        train: 3,
        stamped: 10,
        span_ns: 9000,
        min_gap_ns: 900,
        median_gap_ns: 1000,
        max_gap_ns: 1100,
    };
    s.push(("capacity", capacity::emit_departure(&dep).to_vec()));
    let mut sp = [0u8; sonde_stress::client::udp::probe::LEN];
    sonde_stress::client::udp::probe::Probe {
        flow: 1,
        seq: 2,
        sent_ns: 3,
    }
    .emit(&mut sp);
    s.push(("stress_probe", sp.to_vec()));
    Ok(())
}

/// The iperf 2.1.8 captures, each whole and (for the headers a payload follows) with a few
/// payload bytes after it; a UDP test's first datagram also seeds the datagram header's
/// target, since that header starts it.
fn iperf2_seeds(s: &mut Seeds) {
    use sonde_proto::iperf2::captures::{self as c, hex};
    for v in c::TCP_CLIENT_HEADERS.iter().chain(c::UDP_CLIENT_HEADERS) {
        let mut b = hex(v);
        b.extend_from_slice(b"0123456789");
        s.push(("iperf2_client_hdr", b));
    }
    let targets = [
        ("iperf2_udp", c::UDP_DATAGRAMS),
        ("iperf2_udp", c::UDP_CLIENT_HEADERS),
        ("iperf2_server_report", c::SERVER_REPORTS),
        ("iperf2_bounceback", c::BOUNCEBACKS),
        ("iperf2_ack", c::CLIENT_HDR_ACKS),
    ];
    for (target, captures) in targets {
        s.extend(captures.iter().map(|v| (target, hex(v))));
    }
}

fn iperf3_seeds(s: &mut Seeds) -> Result<(), Box<dyn std::error::Error>> {
    let params = br#"{"tcp":true,"omit":0,"time":10,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.16"}"#;
    let results = br#"{"cpu_util_total":1.5,"cpu_util_user":0.5,"cpu_util_system":1.0,"sender_has_retransmits":1,"streams":[{"id":1,"bytes":1000000,"retransmits":0,"jitter":0,"errors":0,"omitted_errors":0,"packets":0,"omitted_packets":0,"start_time":0,"end_time":10}]}"#;
    for j in [&params[..], &results[..]] {
        s.push(("iperf3_json", j.to_vec()));
        // The control stream: a state byte, a 4-byte length, then the JSON.
        let mut c = vec![9u8];
        c.extend_from_slice(&(j.len() as u32).to_be_bytes());
        c.extend_from_slice(j);
        s.push(("iperf3_control", c));
    }
    Ok(())
}

/// One coded transfer between a real sender and receiver, every fifth round's symbols lost so
/// feedback and repair show up: the symbols (records for the receiver target), the feedback
/// and reports (records for the sender target) and each datagram alone (`coded_wire`).
fn coded_transfer(cfg: SenderConfig, len: u64) -> (Vec<u8>, Vec<u8>, Vec<Vec<u8>>) {
    let mut tx = Sender::new(cfg, Box::new(PatternSource { len: Some(len) }));
    let mut rx = Receiver::new(ReceiverConfig::for_mode(FeedbackMode::Unrestricted));
    let (mut to_rx, mut to_tx, mut wire) = (Vec::new(), Vec::new(), Vec::new());
    let mut buf = [0u8; 1500];
    let mut now = Duration::ZERO;
    for round in 0..400 {
        if tx.is_done() {
            break;
        }
        while let Ok(Some(n)) = tx.poll_transmit(now, &mut buf) {
            if round % 5 != 4 {
                let _ = rx.handle(now, &buf[..n]);
            }
            to_rx.extend(record(4, &buf[..n]));
            if to_rx.len() < 1500 {
                wire.push(buf[..n].to_vec());
            }
        }
        while let Some(n) = rx.poll_transmit(now, &mut buf) {
            let _ = tx.handle(now, &buf[..n]);
            to_tx.extend(record(4, &buf[..n]));
            wire.push(buf[..n].to_vec());
        }
        now += Duration::from_millis(1);
    }
    (to_rx, to_tx, wire)
}

fn coded_seeds(s: &mut Seeds) {
    let small = SenderConfig {
        k: 4,
        symbol_size: 64,
        ..SenderConfig::default()
    };
    let (to_rx, _, wire) = coded_transfer(small.clone(), 600);
    s.extend(wire.into_iter().map(|w| ("coded_wire", w)));
    s.push(("coded_receiver", to_rx));
    // The sender target reads its settings from the first three bytes (see
    // `sonde_fuzz_checks::coded_sender`): k = 4, 64-byte symbols, interleave 4, 8 open
    // blocks, z = 0.5, adaptive; 2 blocks and 3/8 of one (608 bytes).
    let cfg = SenderConfig {
        max_open_blocks: 8,
        max_rate_bps: 1_000_000_000,
        ..small
    };
    let (_, feedback, _) = coded_transfer(cfg, 608);
    let mut to_tx = vec![0xfb, 0x7f, (2 << 3) | 3];
    to_tx.extend(feedback);
    s.push(("coded_sender", to_tx));
    // First byte 0 and a short input: the default settings, one full block of 128 symbols
    // of 1420 bytes.
    let cfg = SenderConfig {
        max_rate_bps: 1_000_000_000,
        ..SenderConfig::default()
    };
    let block = cfg.symbol_size as u64 * u64::from(cfg.k);
    let (_, feedback, _) = coded_transfer(cfg, block);
    let mut to_tx = vec![0, 0, 0];
    // Whole records only, and no more than the target takes on this path.
    let mut rest = &feedback[..];
    while let Some(&n) = rest.first() {
        let rec = &rest[..(1 + usize::from(n)).min(rest.len())];
        if to_tx.len() - 3 + rec.len() > 96 {
            break;
        }
        to_tx.extend_from_slice(rec);
        rest = &rest[rec.len()..];
    }
    s.push(("coded_sender", to_tx));
}

fn switch_seeds(s: &mut Seeds) {
    use sonde_switch::wire::{Frame, SessionId, VERSION};
    let id = SessionId([7; 16]);
    let frames = [
        Frame::Hello {
            version: VERSION,
            session: id,
        },
        Frame::HelloOk {
            version: VERSION,
            session: id,
        },
        Frame::Data {
            offset: 0,
            bytes: b"hello over v4",
        },
        Frame::Ack { offset: 13 },
        Frame::Join {
            session: id,
            next: 13,
        },
        Frame::JoinOk { next: 13 },
        Frame::Moved { offset: 13 },
        Frame::Fin { offset: 13 },
        Frame::Ping { token: 1 },
        Frame::Pong { token: 1 },
        Frame::Rewind { offset: 5 },
    ];
    let mut stream = Vec::new();
    let mut session = Vec::new();
    for f in &frames {
        let mut b = Vec::new();
        f.emit(&mut b);
        stream.extend_from_slice(&b);
        session.extend(record(0, &b));
    }
    s.push(("switch_frames", stream));
    s.push(("switch_session", session));
}

fn serial_seeds(s: &mut Seeds) {
    use sonde_serial::control::Begin;
    use sonde_serial::frame::{Frame, Kind};
    let begin = Frame {
        kind: Kind::Begin,
        transfer: 1,
        seq: 0,
        payload: Begin {
            block: 256,
            total: 300,
            name: "f.bin".into(),
        }
        .emit(),
    };
    let data = Frame {
        kind: Kind::Data,
        transfer: 1,
        seq: 1,
        payload: vec![0x7e; 40],
    };
    let mut line = begin.emit();
    line.extend(data.emit());
    s.push(("serial_frames", line.clone()));
    let mut rec = record(0, &begin.emit());
    rec.extend(record(0, &data.emit()));
    s.push(("serial_receiver", rec));
}

/// Every seed file: its path under `fuzz/seeds/` (`<target>/seed-NNN`, numbered per target
/// in the order made) and its bytes. `tests/replay.rs` checks the committed files against it.
pub fn seed_files() -> Result<SeedFiles, Box<dyn std::error::Error>> {
    let mut s = Seeds::new();
    proto_seeds(&mut s)?;
    latency_seeds(&mut s)?;
    iperf3_seeds(&mut s)?;
    iperf2_seeds(&mut s);
    coded_seeds(&mut s);
    switch_seeds(&mut s);
    serial_seeds(&mut s);
    let mut count = HashMap::<&str, usize>::new();
    Ok(s.into_iter()
        .map(|(t, bytes)| {
            let n = count.entry(t).or_default();
            *n += 1;
            (Path::new(t).join(format!("seed-{n:03}")), bytes)
        })
        .collect())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let files = seed_files()?;
    for (path, bytes) in &files {
        let path = root.join(path);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(path, bytes)?;
    }
    for (t, _) in sonde_fuzz_checks::TARGETS {
        fs::create_dir_all(root.join(t))?;
    }
    println!("wrote {} seed files under {}", files.len(), root.display());
    Ok(())
}
