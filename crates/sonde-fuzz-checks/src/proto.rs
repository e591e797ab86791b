//! sonde-proto's decoders: control frames and messages, preambles, datagram headers, latency
//! probes and their replies, capacity trains, and the iperf3 control protocol.

use sonde_proto::capacity;
use sonde_proto::datagram::{DatagramHeader, HEADER_LEN as DATAGRAM_HEADER_LEN};
use sonde_proto::datagram_format::{DatagramFormat, Received};
use sonde_proto::foreign::{recognise, ForeignPeer};
use sonde_proto::frame::{Frame, FrameDecoder, MAX_FRAME_LEN};
use sonde_proto::icmp::{self, Family};
use sonde_proto::iperf3::params::Iperf3Params;
use sonde_proto::iperf3::results::Results;
use sonde_proto::iperf3::session::{ClientSession, ServerEvent, ServerSession};
use sonde_proto::iperf3::udp::{header_len, HelloForm, UdpHeader};
use sonde_proto::message::Message;
use sonde_proto::preamble::{
    classify, data_preamble, Preamble, PreambleError, CONTROL_MAGIC, DATA_MAGIC, DATA_PREAMBLE_LEN,
    RR_MAGIC,
};
use sonde_proto::probe::{self as latency, Probe, HEADER_LEN as PROBE_HEADER_LEN};
use sonde_proto::udp_hello::{Hello, HelloAck};

/// Arbitrary bytes, pushed in chunks whose size the first byte picks, through the control
/// connection's `FrameDecoder`; every frame is also decoded as a message. No byte is lost or
/// invented: what came out plus what is buffered is what went in.
pub fn frame_decoder(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split).max(1);
    let mut d = FrameDecoder::new();
    let mut consumed = 0usize;
    for piece in rest.chunks(chunk) {
        d.push(piece);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    assert!(f.body.len() < MAX_FRAME_LEN);
                    consumed += 5 + f.body.len();
                    let _ = Message::decode(&f);
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
    assert_eq!(consumed + d.buffered(), rest.len());
}

/// `Message::decode` on an arbitrary type byte and body; a decoded message re-encodes to a
/// frame of the same type that decodes to the same kind of message.
pub fn message_decode(data: &[u8]) {
    let Some((&msg_type, body)) = data.split_first() else {
        return;
    };
    let f = Frame {
        msg_type,
        body: body.to_vec(),
    };
    if let Ok(Some(m)) = Message::decode(&f) {
        let wire = m.encode().expect("a decoded message re-encodes");
        let mut d = FrameDecoder::new();
        d.push(&wire);
        let again = d.next_frame().unwrap().unwrap();
        assert_eq!(again.msg_type, msg_type);
        let back = Message::decode(&again).unwrap().unwrap();
        assert_eq!(back.name(), m.name());
    }
}

/// `foreign::recognise` on a peer's first bytes, the first byte saying how many of the rest
/// are what this end sent: never a panic, and each kind only for bytes that can be it.
pub fn foreign_peer(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let (sent, received) = rest.split_at(usize::from(split).min(rest.len()));
    match recognise(received, sent) {
        Some(ForeignPeer::Echo) => {
            let n = received.len().min(sent.len());
            assert!(n > 0 && received[..n] == sent[..n]);
        }
        Some(ForeignPeer::Iperf3Client) => {
            assert!(received.len() >= sonde_proto::iperf3::COOKIE_LEN);
        }
        Some(ForeignPeer::Iperf3Server | ForeignPeer::Iperf2Client) => {
            assert!(!received.is_empty());
        }
        None => {}
    }
}

/// `preamble::classify` on a connection's first bytes.
pub fn preamble(data: &[u8]) {
    match classify(data) {
        Ok(Preamble::Control) => assert!(data.starts_with(CONTROL_MAGIC)),
        Ok(Preamble::Data { cookie, stream_id }) => {
            assert!(data.starts_with(DATA_MAGIC));
            assert_eq!(
                data_preamble(&cookie, stream_id)[..],
                data[..DATA_PREAMBLE_LEN]
            );
        }
        Ok(Preamble::Rr) => assert!(data.starts_with(RR_MAGIC)),
        Ok(Preamble::Foreign(v)) => assert_eq!(v, data),
        Err(PreambleError::Incomplete(n)) => {
            assert!(n > 0 && data.len() + n <= DATA_PREAMBLE_LEN)
        }
    }
}

/// `DatagramHeader::parse` (sonde's UDP data and profile datagrams); what parses emits the
/// same header bytes.
pub fn datagram(data: &[u8]) {
    if let Ok(h) = DatagramHeader::parse(data) {
        assert_ne!(h.seq, 0);
        let mut out = [0u8; DATAGRAM_HEADER_LEN];
        h.emit(&mut out).unwrap();
        assert_eq!(&out[..], &data[..DATAGRAM_HEADER_LEN]);
    }
}

/// `DatagramFormat::classify` in every format the UDP workers read; what classifies as data
/// emits a header that classifies as the same sequence number.
pub fn datagram_format(data: &[u8]) {
    for f in [
        DatagramFormat::Sonde,
        DatagramFormat::Iperf3 { wide: false },
        DatagramFormat::Iperf3 { wide: true },
        DatagramFormat::Iperf2 { wide: false },
        DatagramFormat::Iperf2 { wide: true },
    ] {
        if let Received::Data { seq, send_ns } = f.classify(data) {
            assert!(data.len() >= f.header_len());
            let mut out = vec![0u8; f.header_len()];
            if f.emit(seq, send_ns, &mut out).is_ok() {
                assert!(matches!(f.classify(&out), Received::Data { seq: s, .. } if s == seq));
            }
        }
    }
}

/// The UDP hello and its acknowledgement: never both, and each emits what it parsed.
pub fn udp_hello(data: &[u8]) {
    let hello = Hello::parse(data);
    let ack = HelloAck::parse(data);
    assert!(!(hello.is_ok() && ack.is_ok()));
    if let Ok(h) = hello {
        assert_eq!(&h.emit()[..], data);
    }
    if let Ok(a) = ack {
        assert_eq!(&a.emit()[..], data);
    }
}

/// Latency probes as the responder reads them: what parses emits the same header bytes (the
/// kind and flag bytes aside), an answer is never answered again, and the key tag's checks
/// hold (see `probe_tag`).
pub fn probe(data: &[u8]) {
    if let Ok(p) = Probe::parse(data) {
        let mut out = [0u8; PROBE_HEADER_LEN];
        p.emit(&mut out).unwrap();
        assert_eq!(&out[..6], &data[..6]);
        assert_eq!(&out[8..], &data[8..PROBE_HEADER_LEN]);
        if let Some(a) = p.answer(1, 2, 3) {
            assert!(a.answer(1, 2, 3).is_none());
        }
    }
    probe_tag(data);
}

/// A keyed responder's checks on any bytes: the tag check and the tcp-rr challenge parser
/// never panic, a wrong tag is refused, and the same bytes sealed with the key pass.
fn probe_tag(data: &[u8]) {
    use sonde_proto::probe_tag::{parse_rr_challenge, ProbeKey, ReplayWindow, TAGGED_LEN};
    let psk = sonde_proto::psk::Psk::from_file_bytes(&[b'k'; 32]).unwrap();
    let key = ProbeKey::new(&psk);
    let _ = key.check(data);
    let _ = parse_rr_challenge(data);
    if data.len() >= TAGGED_LEN {
        let mut sealed = data.to_vec();
        key.seal(&mut sealed).unwrap();
        assert!(key.check(&sealed).is_ok());
        sealed[TAGGED_LEN - 1] ^= 1;
        assert!(key.check(&sealed).is_err());
    }
    let mut w = ReplayWindow::default();
    for seq in data
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
    {
        if w.accept(seq) {
            assert!(!w.accept(seq), "sequence {seq} accepted twice");
        }
    }
}

/// What the latency client reads back: probe replies, ICMP echo replies of both families,
/// the tcp-rr transaction size and the server's tcp-rr refusal (bounded, and re-emitted the
/// same).
pub fn latency_replies(data: &[u8]) {
    if let Ok(p) = Probe::parse(data) {
        let mut out = [0u8; PROBE_HEADER_LEN];
        p.emit(&mut out).unwrap();
        assert_eq!(Probe::parse(&out).ok().map(|q| q.seq), Some(p.seq));
    }
    for fam in [Family::V4, Family::V6] {
        if let Ok(r) = icmp::parse_reply(fam, data) {
            assert!(data.len() >= icmp::ICMP_HEADER_LEN + icmp::MIN_DATA_LEN);
            let _ = (r.seq, r.send_ns);
        }
    }
    if let Ok(n) = latency::parse_rr_size(data) {
        assert!(n > 0 && n <= latency::MAX_PROBE_LEN);
    }
    if let Some(msg) = latency::parse_rr_refusal(data) {
        assert!(msg.len() <= 3 * latency::MAX_RR_REFUSAL_MSG);
        if std::str::from_utf8(data).is_ok() {
            let wire = latency::emit_rr_refusal(&msg);
            assert_eq!(latency::parse_rr_refusal(&wire), Some(msg));
        }
    }
}

/// The capacity train's datagrams: probes, acknowledgements and departure reports; each
/// parsed one emits the same bytes.
pub fn capacity(data: &[u8]) {
    if let Ok(p) = capacity::Probe::parse(data) {
        assert!(p.seq < p.count);
        let mut out = vec![0u8; capacity::PROBE_HEADER_LEN];
        p.emit(&mut out).unwrap();
        assert_eq!(&out[..], &data[..capacity::PROBE_HEADER_LEN]);
    }
    if let Some(train) = capacity::parse_ack(data) {
        assert_eq!(&capacity::emit_ack(train)[..], data);
    }
    if let Some(d) = capacity::parse_departure(data) {
        assert_eq!(&capacity::emit_departure(&d)[..], data);
    }
}

/// The iperf3 control codec and state machines on arbitrary bytes: the server session after a
/// cookie, the client session, and the parameter and results readers. A server session that
/// rejects input is finished; results sonde writes are readable again.
pub fn iperf3_control(data: &[u8]) {
    let mut s = ServerSession::new([b'a'; 37]);
    s.begin();
    for chunk in data.chunks(7) {
        if s.handle_bytes(chunk).is_err() {
            assert!(s.is_finished());
            break;
        }
        while let Some(ev) = s.poll_event() {
            match ev {
                ServerEvent::Params(p) => {
                    let _ = p.to_sonde(1.0);
                    s.accept();
                    s.start();
                }
                ServerEvent::TestEnd => {
                    s.exchange_results();
                }
                ServerEvent::ClientResults(r) => {
                    s.send_results(&r);
                }
                _ => {}
            }
        }
        while s.poll_transmit().is_some() {}
    }
    if let Ok(mut c) = ClientSession::new(&[b'b'; 37], &serde_json::json!({"tcp": true})) {
        let _ = c.handle_bytes(data);
        while c.poll_event().is_some() {}
    }
    iperf3_json(data);
}

/// iperf3's JSON parameters and results on their own (JSON text, no framing): parameters
/// convert without panicking, results sonde writes read back.
pub fn iperf3_json(data: &[u8]) {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(p) = Iperf3Params::parse(&v) {
            let _ = p.to_sonde(1.0);
        }
        if let Ok(r) = Results::parse(&v) {
            assert!(Results::parse(&r.to_json()).is_ok());
        }
    }
}

/// iperf3's UDP datagram header (32- and 64-bit sequence numbers) and its UDP hello; what
/// parses emits the same bytes when the sequence number fits.
pub fn iperf3_udp(data: &[u8]) {
    for wide in [false, true] {
        if let Ok(h) = UdpHeader::parse(data, wide) {
            let n = header_len(wide);
            let mut out = vec![0u8; n];
            h.emit(&mut out, wide).unwrap();
            assert_eq!(&out[..], &data[..n]);
        }
    }
    if let Some(form) = HelloForm::parse(data) {
        assert_eq!(data.len(), 4);
        let _ = form.reply();
    }
}
