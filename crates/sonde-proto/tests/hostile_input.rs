//! Hostile-input robustness tests for every parser and state machine of sonde-proto.
//!
//! Stable-Rust companions of the cargo-fuzz targets in `fuzz/`: each test feeds a few thousand
//! deterministic pseudo-random or mutated byte strings (xorshift, fixed seeds, so a failure is
//! repeatable) and checks that nothing panics, that what parses obeys the format's rules, and
//! that valid encodings round-trip. About 50,000 cases in all; the whole file runs in well under
//! a second in release mode.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_proto::datagram::{DatagramError, DatagramHeader, HEADER_LEN};
use sonde_proto::datagram_format::{DatagramFormat, Received};
use sonde_proto::frame::{self, Frame, FrameDecoder, FrameError, MAX_FRAME_LEN};
use sonde_proto::message::{
    Abort, Accept, Hello, Message, PeerStream, Refusal, RefuseCode, Results, SentCount, Stop,
    TestParams, Welcome,
};
use sonde_proto::preamble::{
    self, classify, Preamble, PreambleError, CONTROL_MAGIC, COOKIE_LEN, DATA_MAGIC,
    DATA_PREAMBLE_LEN,
};
use sonde_proto::session::{ClientEvent, ClientSession, ServerEvent, ServerSession};
use sonde_proto::udp_hello::{self, HelloError, HELLO_LEN};
use sonde_stats::model::{
    CpuUsage, Direction, EndView, IntervalReport, Protocol, StreamRole, StreamSample, SumSample,
    TcpSenderSummary, UdpReceiveStats,
};

/// xorshift64*: small, deterministic, good enough to spread mutations.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform-ish in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }
    fn byte(&mut self) -> u8 {
        self.next() as u8
    }
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.byte()).collect()
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Tokens that tend to break hand-written or serde parsers when spliced into JSON.
const JSON_TOKENS: &[&[u8]] = &[
    b"null",
    b"-1",
    b"0",
    b"1e999",
    b"-1e999",
    b"18446744073709551616",
    b"4294967296",
    b"65536",
    b"NaN",
    b"true",
    b"\"\"",
    b"\"\\ud800\"",
    b"\"\\u0000\"",
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\",
    b"{}",
    b"[]",
    b"\xff\xfe",
    b"\xc3\xa9",
];

/// Applies 1..=4 random mutations: bit flips, byte changes, insertions, deletions, truncation,
/// duplication of a slice, or a JSON token spliced in.
fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        match rng.below(8) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.byte();
            }
            2 => {
                let i = rng.below(v.len() + 1);
                let b = rng.byte();
                v.insert(i, b);
            }
            3 if !v.is_empty() => {
                let i = rng.below(v.len());
                v.remove(i);
            }
            4 => {
                let keep = rng.below(v.len() + 1);
                v.truncate(keep);
            }
            5 if !v.is_empty() => {
                let a = rng.below(v.len());
                let b = a + rng.below(v.len() - a) + 1;
                let chunk = v[a..b].to_vec();
                let at = rng.below(v.len() + 1);
                v.splice(at..at, chunk);
            }
            6 => {
                let tok = *rng.pick(JSON_TOKENS);
                let at = rng.below(v.len() + 1);
                v.splice(at..at, tok.iter().copied());
            }
            _ => {
                // Overwrite a run with one interesting value (0x00, 0xFF, 0x7F, 0x80).
                if !v.is_empty() {
                    let a = rng.below(v.len());
                    let n = 1 + rng.below(8.min(v.len() - a));
                    let val = *rng.pick(&[0x00u8, 0xFF, 0x7F, 0x80]);
                    v[a..a + n].fill(val);
                }
            }
        }
    }
    v
}

/// Random parameters that pass `TestParams::validate`.
fn params(rng: &mut Rng) -> TestParams {
    let protocol = if rng.chance(2) {
        Protocol::Tcp
    } else {
        Protocol::Udp
    };
    TestParams {
        protocol,
        direction: *rng.pick(&[Direction::Upload, Direction::Reverse, Direction::Bidir]),
        parallel: 1 + rng.below(8) as u32,
        duration_secs: (1 + rng.below(30)) as f64,
        bytes: sonde_stats::units::Size::from_bytes(if rng.chance(3) { 10_485_760 } else { 0 }),
        blocks: if rng.chance(4) { 100 } else { 0 },
        length: sonde_stats::units::Size::from_bytes(if protocol == Protocol::Udp {
            1448
        } else {
            131_072
        }),
        rate: sonde_stats::units::Rate::from_bits_per_sec(rng.below(1_000_000_000) as u64),
        omit_secs: if rng.chance(4) { 2.0 } else { 0.0 },
        interval_secs: *rng.pick(&[0.0, 0.5, 1.0, 2.0]),
        congestion: if rng.chance(3) {
            Some("cubic".into())
        } else {
            None
        },
        window: if rng.chance(3) {
            Some(sonde_stats::units::Size::from_bytes(262_144))
        } else {
            None
        },
        mss: if rng.chance(4) { Some(1400) } else { None },
        nodelay: rng.chance(2),
        tos: rng.byte(),
        zerocopy: rng.chance(5),
        burst: if rng.chance(4) {
            1 + rng.below(1000) as u32
        } else {
            0
        },
        steady_pacing: rng.chance(4),
        skip_rx_copy: rng.chance(4),
        fq_rate: sonde_stats::units::Rate::from_bits_per_sec(if rng.chance(4) {
            rng.next() % 10_000_000_000
        } else {
            0
        }),
        dont_fragment: rng.chance(4),
        server_affinity: rng.chance(4).then(|| (rng.next() % 1024) as u32),
        profile: rng.chance(5).then(|| sonde_proto::message::ProfileRequest {
            profile: sonde_profile::builtin::get("monitoring-stress").expect("built-in"),
            clock_synced: rng.chance(2),
            clock_offset: rng.chance(2).then(|| sonde_profile::result::ClockOffset {
                offset_ns: rng.next() as i64,
                uncertainty_ns: (rng.next() % 1_000_000_000) as i64,
                probes: (rng.next() % 100) as u32,
            }),
        }),
        coded: rng.chance(4),
        coded_options: rng.chance(4).then(|| sonde_proto::coded::CodedOptions {
            data: *rng.pick(&[
                sonde_proto::coded::CodedData::Pattern,
                sonde_proto::coded::CodedData::File,
            ]),
            feedback: *rng.pick(&[
                sonde_proto::coded::CodedFeedback::Unrestricted,
                sonde_proto::coded::CodedFeedback::Restricted,
            ]),
            scheme: *rng.pick(&[
                sonde_proto::coded::CodedScheme::Coded,
                sonde_proto::coded::CodedScheme::Arq,
            ]),
        }),
        capacity: rng.chance(4).then(|| sonde_proto::capacity::CapacityPlan {
            short_trains: (rng.next() % 1001) as u32,
            short_len: 2 + (rng.next() % 63) as u32,
            long_trains: 1 + (rng.next() % 50) as u32,
            long_len: 16 + (rng.next() % 3985) as u32,
            spacing_ms: 1 + (rng.next() % 2000) as u32,
            tx_timestamps: rng.chance(2),
            sizes: Default::default(),
        }),
        psk_answer: rng.chance(4).then(|| "ab".repeat(32)),
    }
}

fn end_view(rng: &mut Rng, udp: bool) -> EndView {
    EndView {
        start: 0.0,
        end: 10.0,
        bytes: rng.next() >> 20,
        bits_per_second: (rng.next() >> 30) as f64,
        tcp: if udp {
            None
        } else {
            // The optional figures derive from drawn ones: more draws would change every
            // later generated message.
            let retransmits = rng.below(100) as u64;
            let max_snd_cwnd = rng.below(10_000_000) as u64;
            Some(TcpSenderSummary {
                retransmits,
                max_snd_cwnd,
                max_rtt_us: rng.below(100_000) as u32,
                min_rtt_us: rng.below(100) as u32,
                mean_rtt_us: rng.below(1000) as u32,
                max_snd_wnd: Some(max_snd_cwnd * 3).filter(|w| w % 2 == 0),
                reorder: Some(retransmits / 2).filter(|r| r % 3 != 0),
            })
        },
        udp_sent_packets: if udp {
            Some(rng.below(1_000_000) as u64)
        } else {
            None
        },
        udp_received: if udp {
            Some(UdpReceiveStats {
                packets: 1000,
                lost: rng.below(1000) as u64,
                lost_percent: 0.5,
                jitter_ms: 0.25,
                out_of_order: rng.below(10) as u64,
                duplicates: rng.below(3) as u64,
            })
        } else {
            None
        },
    }
}

fn results(rng: &mut Rng) -> Results {
    let udp = rng.chance(2);
    Results {
        process_load: None,
        cpu: CpuUsage {
            total: 12.5,
            user: 2.5,
            system: 10.0,
        },
        congestion: if udp { None } else { Some("cubic".into()) },
        streams: (0..1 + rng.below(3) as u32)
            .map(|id| PeerStream {
                id: id + 1,
                role: if rng.chance(2) {
                    StreamRole::Sender
                } else {
                    StreamRole::Receiver
                },
                view: end_view(rng, udp),
            })
            .collect(),
        sent: vec![SentCount {
            id: 1,
            bytes: rng.next() >> 24,
            packets: rng.below(100_000) as u64,
        }],
        notes: if rng.chance(4) {
            vec!["stream 1: the server sender fell behind".into()]
        } else {
            vec![]
        },
        profile: Vec::new(),
    }
}

fn interval_report(rng: &mut Rng) -> IntervalReport {
    let bytes = rng.next() >> 32;
    IntervalReport {
        streams: vec![StreamSample {
            id: 1,
            role: StreamRole::Receiver,
            start: 1.0,
            end: 2.0,
            bytes,
            bits_per_second: bytes as f64 * 8.0,
            omitted: rng.chance(5),
            tcp: None,
            udp_sent_packets: None,
            udp_received: Some(UdpReceiveStats::default()),
        }],
        sums: vec![SumSample {
            role: StreamRole::Receiver,
            start: 1.0,
            end: 2.0,
            bytes,
            bits_per_second: bytes as f64 * 8.0,
            omitted: false,
            retransmits: None,
            udp_sent_packets: None,
            udp_received: None,
        }],
    }
}

/// A random well-formed message of any type (possibly one a session will reject in its state,
/// or with values a session must refuse, like a future protocol version).
fn message(rng: &mut Rng) -> Message {
    let mut cookie = [0u8; COOKIE_LEN];
    cookie.iter_mut().for_each(|b| *b = rng.byte());
    match rng.below(12) {
        0 => Message::Hello(Hello {
            version: *rng.pick(&[1, 1, 1, 0, 2, 99]),
            min_version: *rng.pick(&[1, 1, 0, 2]),
            software: "sonde 0.1.0".into(),
            caps: vec!["tcp".into(), "udp".into(), "warp".into()],
        }),
        1 => Message::Welcome(Welcome {
            version: *rng.pick(&[1, 1, 1, 0, 7]),
            software: "sonde-server".into(),
            caps: vec!["tcp".into(), "live-intervals".into()],
            congestion_available: vec!["cubic".into(), "reno".into()],
            auth_nonce: None,
            link: None,
        }),
        2 => Message::Refuse(Refusal {
            code: *rng.pick(&[
                RefuseCode::Busy,
                RefuseCode::MaxClients,
                RefuseCode::MaxDuration,
                RefuseCode::MaxBitrate,
                RefuseCode::BadParameter,
                RefuseCode::Version,
                RefuseCode::Congestion,
                RefuseCode::Internal,
            ]),
            message: "server is at --max-clients 1".into(),
        }),
        3 => {
            let mut p = params(rng);
            if rng.chance(6) {
                p.parallel = 0; // invalid: the server session must refuse it
            }
            Message::TestRequest(Box::new(p))
        }
        4 => {
            let mut a = Accept::new(&cookie);
            if rng.chance(6) {
                a.cookie = "not hex at all".into();
            }
            Message::Accept(a)
        }
        5 => Message::StreamsReady,
        6 => Message::Start,
        7 => Message::Stop(Stop {
            sent: vec![SentCount {
                id: 1,
                bytes: rng.next() >> 16,
                packets: rng.below(1000) as u64,
            }],
            stopped_at_ns: (rng.below(2) == 1).then(|| rng.next()),
        }),
        8 => Message::Results(Box::new(results(rng))),
        9 => Message::Abort(Abort {
            reason: "interrupted by the user".into(),
        }),
        10 => Message::Done,
        _ => Message::LiveInterval(Box::new(interval_report(rng))),
    }
}

fn decode_one(bytes: &[u8]) -> Frame {
    let mut d = FrameDecoder::new();
    d.push(bytes);
    let f = d
        .next_frame()
        .expect("valid frame")
        .expect("complete frame");
    assert_eq!(d.buffered(), 0);
    f
}

// ---------------------------------------------------------------------------------------------
// frame
// ---------------------------------------------------------------------------------------------

/// Drives a decoder over `chunks` and checks every frame it returns against the length rules.
/// Returns the frames, and whether the stream ended in an error.
fn drain_decoder(chunks: &[&[u8]]) -> (Vec<Frame>, bool) {
    let mut d = FrameDecoder::new();
    let mut frames = Vec::new();
    for c in chunks {
        d.push(c);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    assert!(f.body.len() < MAX_FRAME_LEN, "frame over the limit");
                    frames.push(f);
                }
                Ok(None) => break,
                Err(FrameError::BadLength(len)) => {
                    assert!(len == 0 || len as usize > MAX_FRAME_LEN, "bad length {len}");
                    return (frames, true);
                }
            }
        }
    }
    (frames, false)
}

#[test]
fn frame_decoder_survives_random_bytes_in_random_chunks() {
    let mut rng = Rng::new(0x5EED_F4A3);
    for _ in 0..8_000 {
        let len = rng.below(64);
        let mut data = rng.bytes(len);
        // Keep some prefixes small so that complete frames actually occur.
        if rng.chance(2) && data.len() >= 4 {
            data[0] = 0;
            data[1] = 0;
            data[2] = 0;
            data[3] = rng.below(12) as u8;
        }
        let cut = rng.below(data.len() + 1);
        let (a, b) = data.split_at(cut);
        let (frames, _) = drain_decoder(&[a, b]);
        let consumed: usize = frames.iter().map(|f| 5 + f.body.len()).sum();
        assert!(consumed <= data.len());
    }
}

#[test]
fn frame_decoder_reassembles_valid_streams_split_anywhere() {
    let mut rng = Rng::new(0xF7A3_0001);
    for _ in 0..2_000 {
        let msgs: Vec<Message> = (0..1 + rng.below(5)).map(|_| message(&mut rng)).collect();
        let wire: Vec<u8> = msgs.iter().flat_map(|m| m.encode().unwrap()).collect();
        // Split into random chunks, including empty ones and single bytes.
        let mut chunks = Vec::new();
        let mut at = 0;
        while at < wire.len() {
            let n = rng.below(40).min(wire.len() - at);
            chunks.push(&wire[at..at + n]);
            at += n;
        }
        let (frames, failed) = drain_decoder(&chunks);
        assert!(!failed);
        assert_eq!(frames.len(), msgs.len());
        for (f, m) in frames.iter().zip(&msgs) {
            let back = Message::decode(f).unwrap().expect("known type");
            assert_eq!(back.name(), m.name());
            assert_eq!(back.encode().unwrap(), m.encode().unwrap());
        }
    }
}

#[test]
fn frame_decoder_rejects_hostile_prefixes_before_the_body_arrives() {
    for len in [0u32, MAX_FRAME_LEN as u32 + 1, 0x7FFF_FFFF, u32::MAX] {
        let mut d = FrameDecoder::new();
        d.push(&len.to_be_bytes());
        // The reported length may be only the part of the prefix read so far (the decoder can
        // reject on a non-zero first byte alone), but it must be outside the limits.
        assert!(matches!(
            d.next_frame(),
            Err(FrameError::BadLength(l)) if l == 0 || l as usize > MAX_FRAME_LEN
        ));
    }
    // The largest allowed frame is accepted, one byte more is not.
    let body = vec![b'x'; MAX_FRAME_LEN - 1];
    let f = decode_one(&frame::encode(0x81, &body).unwrap());
    assert_eq!(f.body.len(), MAX_FRAME_LEN - 1);
    assert!(frame::encode(0x81, &[0; MAX_FRAME_LEN]).is_err());
}

// ---------------------------------------------------------------------------------------------
// message
// ---------------------------------------------------------------------------------------------

#[test]
fn message_decode_survives_random_type_and_body() {
    let mut rng = Rng::new(0xDEC0_DE01);
    for _ in 0..8_000 {
        let msg_type = rng.byte();
        let len = rng.below(48);
        let body = rng.bytes(len);
        let f = Frame { msg_type, body };
        if let Ok(Some(m)) = Message::decode(&f) {
            // Anything that decodes can be encoded again into a frame of a known type.
            let again = decode_one(&m.encode().unwrap());
            assert_eq!(again.msg_type, msg_type);
        }
    }
}

#[test]
fn message_decode_survives_mutated_valid_messages_and_reencodes_what_it_accepts() {
    let mut rng = Rng::new(0xDEC0_DE02);
    let mut accepted = 0;
    for _ in 0..12_000 {
        let m = message(&mut rng);
        let wire = m.encode().unwrap();
        let f = decode_one(&wire);
        // Unmutated: exact round trip (the generators use floats that print exactly).
        assert_eq!(Message::decode(&f).unwrap().as_ref(), Some(&m));

        let mut hostile = f.clone();
        if rng.chance(8) {
            hostile.msg_type = rng.byte();
        }
        hostile.body = mutate(&mut rng, &f.body);
        match Message::decode(&hostile) {
            Ok(Some(back)) => {
                accepted += 1;
                let re = back.encode().expect("an accepted message re-encodes");
                let again = Message::decode(&decode_one(&re)).unwrap().unwrap();
                assert_eq!(again.name(), back.name());
            }
            Ok(None) => assert!(hostile.msg_type >= frame::OPTIONAL_TYPE_BASE),
            Err(_) => {}
        }
    }
    // Mutations that leave JSON valid (or hit body-less types) must still be accepted sometimes,
    // or this test is not exercising the success path.
    assert!(accepted > 100, "only {accepted} mutated messages decoded");
}

#[test]
fn message_decode_rejects_deeply_nested_json_without_overflowing_the_stack() {
    for ty in 0u8..=0x0C {
        for open in [b'[', b'{'] {
            let mut body = vec![open; 100_000];
            if open == b'{' {
                body = b"{\"a\":".repeat(20_000);
            }
            let f = Frame { msg_type: ty, body };
            // Body-less types ignore the body; the others must fail cleanly.
            let _ = Message::decode(&f);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// preamble
// ---------------------------------------------------------------------------------------------

fn check_classify(bytes: &[u8]) {
    match classify(bytes) {
        Ok(Preamble::Control) => assert!(bytes.starts_with(CONTROL_MAGIC)),
        Ok(Preamble::Data { cookie, stream_id }) => {
            assert!(bytes.starts_with(DATA_MAGIC));
            assert!(bytes.len() >= DATA_PREAMBLE_LEN);
            assert_eq!(
                preamble::data_preamble(&cookie, stream_id)[..],
                bytes[..DATA_PREAMBLE_LEN]
            );
        }
        Ok(Preamble::Rr) => assert!(bytes.starts_with(preamble::RR_MAGIC)),
        Ok(Preamble::Foreign(v)) => {
            assert_eq!(v, bytes);
            let probe = &bytes[..bytes.len().min(8)];
            assert!(!CONTROL_MAGIC.starts_with(probe) && !DATA_MAGIC.starts_with(probe));
        }
        Err(PreambleError::Incomplete(n)) => {
            assert!(n > 0);
            assert!(bytes.len() + n <= DATA_PREAMBLE_LEN);
        }
    }
}

#[test]
fn preamble_classify_survives_random_and_mutated_input() {
    let mut rng = Rng::new(0x9EA3_B1E0);
    let mut cookie = [0u8; COOKIE_LEN];
    for _ in 0..6_000 {
        let len = rng.below(40);
        check_classify(&rng.bytes(len));

        cookie.iter_mut().for_each(|b| *b = rng.byte());
        let id = rng.next() as u32;
        let valid = preamble::data_preamble(&cookie, id);
        assert_eq!(
            classify(&valid),
            Ok(Preamble::Data {
                cookie,
                stream_id: id
            })
        );
        check_classify(&mutate(&mut rng, &valid));
        check_classify(&mutate(&mut rng, CONTROL_MAGIC));
        // Every prefix of a valid preamble is "incomplete", never a wrong verdict.
        let cut = rng.below(DATA_PREAMBLE_LEN);
        assert!(matches!(
            classify(&valid[..cut]),
            Err(PreambleError::Incomplete(n)) if n == if cut < 8 { 8 - cut } else { DATA_PREAMBLE_LEN - cut }
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// datagram
// ---------------------------------------------------------------------------------------------

#[test]
fn datagram_header_parse_survives_random_input_and_round_trips() {
    let mut rng = Rng::new(0xDA7A_6AA1);
    for _ in 0..6_000 {
        let len = rng.below(40);
        let mut buf = rng.bytes(len);
        if rng.chance(3) && buf.len() >= 8 {
            buf[..8].fill(0);
        }
        match DatagramHeader::parse(&buf) {
            Ok(h) => {
                assert!(buf.len() >= HEADER_LEN && h.seq != 0);
                let mut out = [0u8; HEADER_LEN];
                h.emit(&mut out).unwrap();
                assert_eq!(&out[..], &buf[..HEADER_LEN]);
            }
            Err(DatagramError::TooShort(n)) => assert!(n == buf.len() && n < HEADER_LEN),
            Err(DatagramError::ZeroSequence) => assert!(buf[..8].iter().all(|&b| b == 0)),
        }

        let h = DatagramHeader {
            seq: rng.next().max(1),
            send_ns: rng.next(),
        };
        let n = HEADER_LEN + rng.below(1500);
        let mut out = rng.bytes(n);
        h.emit(&mut out).unwrap();
        assert_eq!(DatagramHeader::parse(&out), Ok(h));
        let short = rng.below(HEADER_LEN);
        assert!(h.emit(&mut out[..short]).is_err());
    }
}

#[test]
fn datagram_format_classify_survives_random_input_and_round_trips() {
    let mut rng = Rng::new(0xF04A_7001);
    let formats = [
        DatagramFormat::Sonde,
        DatagramFormat::Iperf3 { wide: false },
        DatagramFormat::Iperf3 { wide: true },
        DatagramFormat::Iperf2 { wide: false },
        DatagramFormat::Iperf2 { wide: true },
    ];
    for _ in 0..4_000 {
        for f in formats {
            let len = rng.below(64);
            let buf = rng.bytes(len);
            if let Received::Data { seq, .. } = f.classify(&buf) {
                assert!(
                    buf.len() >= f.header_len(),
                    "{f:?} data from {} bytes",
                    buf.len()
                );
                assert!(seq != 0 || f != DatagramFormat::Sonde);
            }
            // Every header the senders write reads back: the same sequence, and the same send
            // time at the format's resolution (iperf3 carries microseconds).
            let seq = match f {
                DatagramFormat::Iperf3 { wide: false } => 1 + rng.next() % u64::from(u32::MAX),
                DatagramFormat::Iperf2 { wide: false } => 1 + rng.next() % (i32::MAX as u64),
                DatagramFormat::Iperf2 { wide: true } => 1 + rng.next() % (i64::MAX as u64),
                _ => rng.next().max(1),
            };
            let send_ns = rng.next() % 4_000_000_000_000_000_000;
            let extra = rng.below(100);
            let mut out = rng.bytes(f.header_len() + extra);
            f.emit(seq, send_ns, &mut out).unwrap();
            let want_ns = match f {
                DatagramFormat::Sonde => send_ns,
                DatagramFormat::Iperf3 { .. } => send_ns / 1000 * 1000,
                // Seconds wrap at 2^32 on iperf 2's wire.
                DatagramFormat::Iperf2 { .. } => {
                    (send_ns / 1_000_000_000 % (1 << 32)) * 1_000_000_000
                        + send_ns % 1_000_000_000 / 1000 * 1000
                }
            };
            assert_eq!(
                f.classify(&out),
                Received::Data {
                    seq,
                    send_ns: want_ns
                },
                "{f:?}"
            );
            let short = rng.below(f.header_len());
            assert!(f.emit(seq, send_ns, &mut out[..short]).is_err());
        }
    }
}

// ---------------------------------------------------------------------------------------------
// udp_hello
// ---------------------------------------------------------------------------------------------

#[test]
fn udp_hello_and_ack_parse_survive_random_and_mutated_input() {
    let mut rng = Rng::new(0x4E11_0ACC);
    let mut cookie = [0u8; COOKIE_LEN];
    for _ in 0..6_000 {
        let len = rng.below(2 * HELLO_LEN);
        let junk = rng.bytes(len);
        let hello = udp_hello::Hello::parse(&junk).map(|h| h.emit());
        let ack = udp_hello::HelloAck::parse(&junk).map(|a| a.emit());
        assert!(!(hello.is_ok() && ack.is_ok()), "both a hello and an ack");
        for bytes in [hello, ack].into_iter().flatten() {
            assert_eq!(&bytes[..], &junk[..]);
        }

        cookie.iter_mut().for_each(|b| *b = rng.byte());
        let hello = udp_hello::Hello {
            cookie,
            stream_id: rng.next() as u32,
        };
        let ack = udp_hello::HelloAck {
            cookie,
            stream_id: hello.stream_id,
        };
        assert_eq!(udp_hello::Hello::parse(&hello.emit()), Ok(hello));
        assert_eq!(udp_hello::HelloAck::parse(&ack.emit()), Ok(ack));
        assert_eq!(
            udp_hello::Hello::parse(&ack.emit()),
            Err(HelloError::BadMagic)
        );

        let bad = mutate(&mut rng, &hello.emit());
        match udp_hello::Hello::parse(&bad) {
            Ok(h) => assert_eq!(&h.emit()[..], &bad[..]),
            Err(HelloError::BadLength(n)) => assert!(n == bad.len() && n != HELLO_LEN),
            Err(HelloError::BadMagic) => assert_ne!(&bad[..4], b"SNDH"),
            Err(HelloError::BadVersion(v)) => assert_eq!(bad[4], v),
        }
        let _ = udp_hello::HelloAck::parse(&mutate(&mut rng, &ack.emit()));
    }
}

// ---------------------------------------------------------------------------------------------
// sessions
// ---------------------------------------------------------------------------------------------

/// Every message a session queues must survive the wire: encode, frame, decode.
fn wire_round_trip(m: Message) -> Message {
    let back = Message::decode(&decode_one(&m.encode().unwrap()))
        .unwrap()
        .expect("sessions only send known types");
    assert_eq!(back.name(), m.name());
    back
}

#[test]
fn server_session_never_panics_on_random_messages_and_calls() {
    let mut rng = Rng::new(0x5E55_0001);
    for _ in 0..1_500 {
        let mut s = ServerSession::new("sonde-test", vec!["cubic".into()]);
        for _ in 0..rng.below(12) {
            let closed_before = s.is_closed();
            match rng.below(10) {
                0..=4 => {
                    if s.handle(message(&mut rng)).is_err() {
                        assert!(s.is_closed(), "a protocol error must close the session");
                    }
                    if closed_before {
                        assert!(s.is_closed(), "a closed session never reopens");
                    }
                }
                5 => s.accept(&[7; COOKIE_LEN]),
                6 => s.streams_ready(),
                7 => s.send_results(results(&mut rng)),
                8 => s.live_interval(interval_report(&mut rng)),
                _ => {
                    if rng.chance(2) {
                        s.abort("server shutting down");
                    } else {
                        s.refuse(RefuseCode::MaxClients, "too many clients");
                    }
                    assert!(s.is_closed());
                }
            }
            while let Some(m) = s.poll_transmit() {
                wire_round_trip(m);
            }
            while s.poll_event().is_some() {}
        }
    }
}

#[test]
fn client_session_never_panics_on_random_messages_and_calls() {
    let mut rng = Rng::new(0xC11E_0001);
    for _ in 0..1_500 {
        let p = params(&mut rng);
        let mut c = ClientSession::new(p, "sonde-test");
        for _ in 0..rng.below(12) {
            match rng.below(11) {
                0..=5 => {
                    let was_finished = c.is_finished();
                    if c.handle(message(&mut rng)).is_err() {
                        assert!(!c.is_running(), "a protocol error must end the test");
                    }
                    if was_finished {
                        assert!(c.is_finished());
                    }
                }
                6 => c.stop(Stop {
                    sent: vec![],
                    stopped_at_ns: None,
                }),
                7 => c.send_results(results(&mut rng)),
                8 => c.request(),
                _ => {
                    c.abort("interrupted");
                    assert!(!c.is_running());
                }
            }
            while let Some(m) = c.poll_transmit() {
                wire_round_trip(m);
            }
            while let Some(e) = c.poll_event() {
                if let ClientEvent::Accepted { cookie } = e {
                    assert_eq!(cookie.len(), COOKIE_LEN);
                }
            }
        }
    }
}

/// A client and a server wired back to back through the real encoder and decoder, with the
/// runtime's decisions taken at random moments and random junk messages injected into either
/// direction. Neither may panic, and an undisturbed pair must finish.
#[test]
fn session_pair_with_injected_messages_never_panics_and_clean_runs_finish() {
    let mut rng = Rng::new(0x9A1E_0001);
    let mut finished_clean = 0;
    for round in 0..1_000 {
        let inject = round % 2 == 1;
        let mut c = ClientSession::new(params(&mut rng), "client");
        let mut s = ServerSession::new("server", vec![]);
        for _ in 0..40 {
            // Client -> server.
            while let Some(m) = c.poll_transmit() {
                let _ = s.handle(wire_round_trip(m));
            }
            if inject && rng.chance(4) {
                let _ = s.handle(message(&mut rng));
            }
            while let Some(e) = s.poll_event() {
                match e {
                    ServerEvent::TestRequested(_) => s.accept(&[1; COOKIE_LEN]),
                    ServerEvent::StopRequested(_) => s.send_results(results(&mut rng)),
                    _ => {}
                }
            }
            if rng.chance(3) {
                s.streams_ready();
            }
            s.live_interval(interval_report(&mut rng));
            // Server -> client.
            while let Some(m) = s.poll_transmit() {
                let _ = c.handle(wire_round_trip(m));
            }
            if inject && rng.chance(4) {
                let _ = c.handle(message(&mut rng));
            }
            while let Some(e) = c.poll_event() {
                match e {
                    ClientEvent::Welcomed { .. } => c.request(),
                    ClientEvent::PeerResults(_) => c.send_results(results(&mut rng)),
                    _ => {}
                }
            }
            if c.is_running() && rng.chance(3) {
                c.stop(Stop {
                    sent: vec![],
                    stopped_at_ns: None,
                });
            }
        }
        if !inject {
            assert!(c.is_finished(), "an undisturbed session must finish");
            assert!(s.is_closed());
            finished_clean += 1;
        }
    }
    assert_eq!(finished_clean, 500);
}

// ---------------------------------------------------------------------------------------------
// latency probes
// ---------------------------------------------------------------------------------------------

#[test]
fn probe_parse_survives_random_and_mutated_input() {
    use sonde_proto::probe::{self, Probe};
    let mut rng = Rng::new(0x9B0B_E5A1);
    for _ in 0..6_000 {
        let len = rng.below(80);
        let _ = Probe::parse(&rng.bytes(len));
        let mut valid = vec![0u8; probe::HEADER_LEN + rng.below(8)];
        let p = Probe::request(rng.next(), rng.next().max(1), rng.next());
        p.emit(&mut valid).unwrap();
        assert_eq!(Probe::parse(&valid), Ok(p));
        if let Ok(q) = Probe::parse(&mutate(&mut rng, &valid)) {
            let mut out = [0u8; probe::HEADER_LEN];
            q.emit(&mut out).unwrap();
            assert_eq!(Probe::parse(&out), Ok(q));
        }
    }
}

/// A welcome's `link` object from a hostile server: a body that does not fit the model is
/// refused as a malformed message; one that fits reaches the client bounded (no control
/// characters for its terminal, no field longer than a sane name), whatever its lengths.
#[test]
fn welcome_link_facts_from_a_hostile_server_stay_bounded() {
    let mut rng = Rng::new(0x114C_FAC7);
    let long = "\u{1b}[2J".repeat(5_000);
    let bodies = [
        format!(
            r#"{{"interface":"{long}","driver":"{long}","duplex":"{long}","operstate":"x","tcp_congestion_control":"{long}"}}"#
        ),
        r#"{"interface":"eth0","speed_bps":-5}"#.to_owned(),
        r#"{"interface":"eth0","tcp_rmem":[1,2]}"#.to_owned(),
        r#"{"interface":"eth0","mtu":1e99}"#.to_owned(),
        r#"{"interface":7}"#.to_owned(),
        r#"{"interface":"eth0","speed_bps":18446744073709551615,"autoneg":true}"#.to_owned(),
    ];
    let mut bounded_seen = 0;
    for body in &bodies {
        for round in 0..20 {
            // The body as written first, then mutations of it.
            let link = match round {
                0 => body.clone(),
                _ => String::from_utf8_lossy(&mutate(&mut rng, body.as_bytes())).into_owned(),
            };
            let welcome = format!(
                r#"{{"version":1,"software":"s","caps":["tcp","link-facts"],"link":{link}}}"#
            );
            let Ok(bytes) = frame::encode(0x02, welcome.as_bytes()) else {
                continue;
            };
            let Ok(Some(m)) = Message::decode(&decode_one(&bytes)) else {
                continue; // refused as malformed: the session never sees it
            };
            let mut c = ClientSession::new(TestParams::default(), "sonde-test");
            let _ = c.handle(m);
            while let Some(e) = c.poll_event() {
                if let ClientEvent::Welcomed { link: Some(l), .. } = e {
                    bounded_seen += 1;
                    for text in [Some(&l.interface), l.driver.as_ref(), l.duplex.as_ref()]
                        .into_iter()
                        .flatten()
                    {
                        assert!(text.chars().count() <= 64, "{} chars", text.len());
                        assert!(!text.chars().any(char::is_control));
                    }
                }
            }
        }
    }
    // The long body and the out-of-range-but-valid one at least reached the client.
    assert!(bounded_seen >= 2, "{bounded_seen} welcomes with facts");
}

// ---- iperf 2 (sonde_proto::iperf2): the 2.1.8 captures truncated, mutated and made absurd.

mod iperf2 {
    use super::{mutate, Rng};
    use sonde_proto::iperf2::ack::{self, ClientHdrAck};
    use sonde_proto::iperf2::bounceback::{self, BouncebackHeader};
    use sonde_proto::iperf2::captures::{self as c, hex};
    use sonde_proto::iperf2::client_hdr::{flags, ClientHeader, UdpClientHeader};
    use sonde_proto::iperf2::server_report::{self, ServerReport};
    use sonde_proto::iperf2::udp::{self, UdpDatagram};
    use sonde_proto::iperf2::{Iperf2Error, Refusal};
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

    fn emitted(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut out = Vec::new();
        f(&mut out);
        out
    }

    #[test]
    fn every_truncation_of_every_capture_is_an_error() {
        for s in c::TCP_CLIENT_HEADERS {
            let b = hex(s);
            for cut in 0..b.len() {
                assert!(
                    matches!(
                        ClientHeader::parse(&b[..cut]),
                        Err(Iperf2Error::Short { .. })
                    ),
                    "{s} cut at {cut}"
                );
            }
        }
        for s in c::UDP_CLIENT_HEADERS {
            let b = hex(s);
            for cut in 0..b.len() {
                assert!(UdpClientHeader::parse(&b[..cut]).is_err(), "{s} at {cut}");
            }
        }
        let b = hex(c::UDP_FIRST);
        for cut in 0..udp::LEN {
            assert!(UdpDatagram::parse(&b[..cut]).is_err());
        }
        for s in c::SERVER_REPORTS {
            let b = hex(s);
            for cut in 0..server_report::LEN {
                assert!(ServerReport::parse(&b[..cut]).is_err(), "report at {cut}");
            }
        }
        let b = hex(c::BOUNCEBACK_REQUEST);
        for cut in 0..bounceback::MIN_LEN {
            assert!(BouncebackHeader::parse(&b[..cut]).is_err());
        }
        let b = hex(c::CLIENT_HDR_ACK);
        for cut in 0..ack::LEN {
            assert!(ClientHdrAck::parse(&b[..cut]).is_err());
        }
    }

    #[test]
    fn flags_promising_an_extension_the_bytes_do_not_hold() {
        // The base fields alone, with the extension flag left on.
        let b = hex(c::TCP_DEFAULT);
        assert_eq!(
            ClientHeader::parse(&b[..24]),
            Err(Iperf2Error::Short {
                what: "iperf2 client header",
                got: 24,
                need: 60
            })
        );
        // A declared length past the bytes (the start-time block promised, not sent).
        let mut b = hex(c::TCP_DEFAULT);
        b[3] = 80 << 1;
        assert!(matches!(
            ClientHeader::parse(&b),
            Err(Iperf2Error::Short { need: 80, .. })
        ));
        // A declared length below what the flags need.
        let mut b = hex(c::TCP_DEFAULT);
        b[3] = 0;
        assert!(matches!(
            ClientHeader::parse(&b),
            Err(Iperf2Error::BadLength { claimed: 0, .. })
        ));
        // A server report whose flags promise the 64-bit counts, cut before them.
        let b = hex(c::SERVER_REPORT);
        assert!(ServerReport::parse(&b[..server_report::EXT_END]).is_err());
    }

    #[test]
    fn absurd_threads_lengths_and_durations_are_refused() {
        let (good, _) = ClientHeader::parse(&hex(c::TCP_DEFAULT)).unwrap();
        let set = |at: usize, v: i32| {
            let mut b = hex(c::TCP_DEFAULT);
            b[at..at + 4].copy_from_slice(&v.to_be_bytes());
            let (h, _) = ClientHeader::parse(&b).unwrap();
            h.check()
        };
        assert_eq!(good.check(), Ok(()));
        for t in [0, -1, 129, 1_000_000, i32::MAX, i32::MIN] {
            assert_eq!(set(4, t), Err(Refusal::Threads(t)));
        }
        assert_eq!(set(4, 128), Ok(()));
        for l in [-1, 16 * 1024 * 1024 + 1, i32::MAX] {
            assert_eq!(set(12, l), Err(Refusal::Length(i64::from(l))));
        }
        assert_eq!(set(16, -7), Err(Refusal::Window(-7)));
        // -t beyond a day, and the one amount whose negation does not fit.
        assert_eq!(
            set(20, -(24 * 3600 * 100) - 1),
            Err(Refusal::Duration(8_640_001))
        );
        assert!(matches!(set(20, i32::MIN), Err(Refusal::Duration(_))));
        let (b, _) = BouncebackHeader::parse(&hex(c::BOUNCEBACK_REQUEST)).unwrap();
        let big = BouncebackHeader {
            size: 0x7fff_ffff,
            ..b
        };
        assert!(matches!(big.check(), Err(Refusal::Length(_))));
    }

    #[test]
    fn a_dualtest_only_ever_connects_back_to_the_peer() {
        let peers = [
            IpAddr::V4(Ipv4Addr::new(198, 51, 100, 9)),
            IpAddr::V6(Ipv6Addr::LOCALHOST),
        ];
        for port in [1, 5001, 16000, 65535] {
            let mut b = hex(c::TCP_DUAL);
            b[8..12].copy_from_slice(&(port as i32).to_be_bytes());
            let (h, _) = ClientHeader::parse(&b).unwrap();
            assert_eq!(h.check(), Ok(()));
            for peer in peers {
                assert_eq!(h.connect_back(peer), Some(SocketAddr::new(peer, port)));
            }
        }
        // Ports that are no port: refused, and no target at all.
        for port in [0, -1, 65536, i32::MAX] {
            let mut b = hex(c::TCP_DUAL);
            b[8..12].copy_from_slice(&port.to_be_bytes());
            let (h, _) = ClientHeader::parse(&b).unwrap();
            assert_eq!(h.check(), Err(Refusal::Port(port)));
            assert_eq!(h.connect_back(peers[0]), None);
        }
        // Without the connect-back flag the port is not a target.
        let (h, _) = ClientHeader::parse(&hex(c::TCP_DEFAULT)).unwrap();
        assert_eq!(h.base.flags & flags::VERSION1, 0);
        assert_eq!(h.connect_back(peers[0]), None);
    }

    #[test]
    fn mutated_captures_never_panic_and_what_parses_round_trips() {
        let mut rng = Rng::new(0x1_9e4f_2002);
        let all: Vec<Vec<u8>> = [
            c::TCP_CLIENT_HEADERS,
            c::UDP_CLIENT_HEADERS,
            c::UDP_DATAGRAMS,
            c::SERVER_REPORTS,
            c::BOUNCEBACKS,
            c::CLIENT_HDR_ACKS,
        ]
        .concat()
        .iter()
        .map(|s| hex(s))
        .collect();
        let peer = IpAddr::V4(Ipv4Addr::LOCALHOST);
        for i in 0..6000 {
            let input = mutate(&mut rng, &all[i % all.len()]);
            if let Ok((h, n)) = ClientHeader::parse(&input) {
                assert_eq!(emitted(|o| h.emit(o)), input[..n]);
                let _ = h.check();
                if let Some(to) = h.connect_back(peer) {
                    assert_eq!(to.ip(), peer);
                }
            }
            if let Ok((h, n)) = UdpClientHeader::parse(&input) {
                assert_eq!(emitted(|o| h.emit(o)), input[..n]);
            }
            if let Ok((r, n)) = ServerReport::parse(&input) {
                assert_eq!(emitted(|o| r.emit(o)), input[..n]);
                let _ = r.check();
            }
            if let Ok((b, n)) = BouncebackHeader::parse(&input) {
                assert_eq!(emitted(|o| b.emit(o)), input[..n]);
                let _ = b.check();
            }
            if let Ok((a, n)) = ClientHdrAck::parse(&input) {
                assert_eq!(emitted(|o| a.emit(o)), input[..n]);
            }
        }
    }
}
