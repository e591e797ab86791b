//! The pre-shared-key challenge through both sessions, every message encoded and decoded as
//! on the wire (the MAC covers the request's encoding, so the bytes must agree).

use super::*;
use crate::frame::FrameDecoder;

const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";
const NONCE: Nonce = [9u8; 32];

fn key(k: &[u8]) -> Psk {
    Psk::from_file_bytes(k).unwrap()
}

fn wire(m: Message) -> Message {
    let mut d = FrameDecoder::new();
    d.push(&m.encode().unwrap());
    Message::decode(&d.next_frame().unwrap().unwrap())
        .unwrap()
        .unwrap()
}

fn pump(c: &mut ClientSession, s: &mut ServerSession) {
    loop {
        let mut moved = false;
        while let Some(m) = c.poll_transmit() {
            let _ = s.handle(wire(m));
            moved = true;
        }
        while let Some(m) = s.poll_transmit() {
            let _ = c.handle(wire(m));
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

fn params() -> TestParams {
    TestParams {
        duration_secs: 2.5,
        rate: sonde_stats::units::Rate::from_bits_per_sec(123_456_789),
        interval_secs: 0.3,
        congestion: Some("bbr".into()),
        ..TestParams::default()
    }
}

/// Runs hello, welcome and request; returns the server's events.
fn run(client_key: Option<&[u8]>, server_key: Option<&[u8]>) -> (ClientSession, Vec<ServerEvent>) {
    let mut c = ClientSession::new(params(), "test");
    if let Some(k) = client_key {
        c.set_psk(key(k));
    }
    let mut s = ServerSession::new("test", vec![]);
    if let Some(k) = server_key {
        s.require_psk(key(k), NONCE);
    }
    pump(&mut c, &mut s);
    c.request();
    pump(&mut c, &mut s);
    let mut evs = Vec::new();
    while let Some(e) = s.poll_event() {
        evs.push(e);
    }
    (c, evs)
}

fn refused_for_auth(c: &mut ClientSession) -> String {
    loop {
        match c.poll_event() {
            Some(ClientEvent::Refused(r)) => {
                assert_eq!(r.code, RefuseCode::Auth);
                return r.message;
            }
            Some(_) => {}
            None => panic!("client was not refused"),
        }
    }
}

#[test]
fn right_key_reaches_the_request_without_the_answer() {
    let (c, evs) = run(Some(KEY), Some(KEY));
    assert!(c.server_requires_psk());
    let Some(ServerEvent::TestRequested(p)) = evs.last() else {
        panic!("no request: {evs:?}");
    };
    assert_eq!(**p, params());
}

#[test]
fn wrong_key_is_refused_before_the_request() {
    let (mut c, evs) = run(Some(b"fedcba9876543210fedcba9876543210"), Some(KEY));
    assert!(!evs
        .iter()
        .any(|e| matches!(e, ServerEvent::TestRequested(_))));
    assert!(matches!(evs.last(), Some(ServerEvent::AuthRefused(_))));
    let msg = refused_for_auth(&mut c);
    assert!(msg.contains("does not match"), "{msg}");
    assert!(!msg.contains("0123456789abcdef"));
}

#[test]
fn missing_key_is_refused_saying_so() {
    let (mut c, evs) = run(None, Some(KEY));
    assert!(!evs
        .iter()
        .any(|e| matches!(e, ServerEvent::TestRequested(_))));
    assert!(refused_for_auth(&mut c).contains("--psk-file"));
}

#[test]
fn a_client_without_the_capability_is_refused_at_hello() {
    let mut s = ServerSession::new("test", vec![]);
    s.require_psk(key(KEY), NONCE);
    let old = Hello {
        version: PROTOCOL_VERSION,
        min_version: MIN_PROTOCOL_VERSION,
        software: "sonde 0.0".into(),
        caps: vec!["tcp".into()],
    };
    s.handle(wire(Message::Hello(old))).unwrap();
    let Some(Message::Refuse(r)) = s.poll_transmit() else {
        panic!("no refusal")
    };
    assert_eq!(r.code, RefuseCode::Auth);
    assert!(r.message.contains("too old"), "{}", r.message);
    assert!(s.is_closed());
    assert!(matches!(s.poll_event(), Some(ServerEvent::AuthRefused(_))));
}

#[test]
fn a_server_without_a_key_ignores_the_clients() {
    let (c, evs) = run(Some(KEY), None);
    assert!(!c.server_requires_psk());
    assert!(matches!(evs.last(), Some(ServerEvent::TestRequested(_))));
}

#[test]
fn an_answer_for_another_request_is_refused() {
    // A recorded answer replayed with changed parameters fails: the MAC binds the request.
    let mut c = ClientSession::new(params(), "test");
    c.set_psk(key(KEY));
    let mut s = ServerSession::new("test", vec![]);
    s.require_psk(key(KEY), NONCE);
    pump(&mut c, &mut s);
    c.request();
    let Some(Message::TestRequest(mut p)) = c.poll_transmit() else {
        panic!("no request")
    };
    p.rate = sonde_stats::units::Rate::from_bits_per_sec(p.rate.bits_per_sec() + 1);
    s.handle(wire(Message::TestRequest(p))).unwrap();
    assert!(matches!(s.poll_event(), Some(ServerEvent::Greeted { .. })));
    assert!(matches!(s.poll_event(), Some(ServerEvent::AuthRefused(_))));
}

#[test]
fn a_malformed_nonce_ends_the_client_session() {
    let mut c = ClientSession::new(params(), "test");
    let _ = c.poll_transmit();
    let w = Welcome {
        version: PROTOCOL_VERSION,
        software: "x".into(),
        caps: vec![],
        congestion_available: vec![],
        auth_nonce: Some("xyz".into()),
        link: None,
    };
    assert_eq!(c.handle(Message::Welcome(w)), Err(ProtocolError::BadNonce));
}
