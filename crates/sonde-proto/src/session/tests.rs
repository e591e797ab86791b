//! A two-endpoint harness: messages are passed between a client and a server session directly.

use super::*;
use crate::message::{SentCount, TestParams};
use sonde_stats::model::CpuUsage;

fn params() -> TestParams {
    TestParams {
        duration_secs: 1.0,
        ..TestParams::default()
    }
}

fn results() -> Results {
    Results {
        process_load: None,
        cpu: CpuUsage::default(),
        congestion: None,
        streams: vec![],
        sent: vec![],
        notes: vec![],
        profile: Vec::new(),
    }
}

/// Moves every queued message from client to server and back until both are quiet.
fn pump(c: &mut ClientSession, s: &mut ServerSession) {
    loop {
        let mut moved = false;
        while let Some(m) = c.poll_transmit() {
            let _ = s.handle(m);
            moved = true;
        }
        while let Some(m) = s.poll_transmit() {
            let _ = c.handle(m);
            moved = true;
        }
        if !moved {
            break;
        }
    }
}

/// Hello, Welcome, and the client's request once it saw the welcome.
fn greet_and_request(c: &mut ClientSession, s: &mut ServerSession) {
    pump(c, s);
    c.request();
    pump(c, s);
}

#[test]
fn full_session() {
    let mut c = ClientSession::new(params(), "test");
    let mut s = ServerSession::new("srv", vec!["cubic".into()]);
    pump(&mut c, &mut s);
    assert!(matches!(s.poll_event(), Some(ServerEvent::Greeted { .. })));
    assert_eq!(
        s.poll_event(),
        None,
        "no request before the client checked the welcome"
    );
    c.request();
    pump(&mut c, &mut s);
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::TestRequested(_))
    ));
    match c.poll_event() {
        Some(ClientEvent::Welcomed {
            congestion_available,
            caps,
            ..
        }) => {
            assert_eq!(congestion_available, vec!["cubic".to_string()]);
            assert!(caps.contains(&"live-intervals".to_string()));
        }
        other => panic!("{other:?}"),
    }
    s.accept(&[3; 16]);
    pump(&mut c, &mut s);
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::Accepted { cookie: [3; 16] })
    );
    s.streams_ready();
    pump(&mut c, &mut s);
    assert_eq!(c.poll_event(), Some(ClientEvent::StreamsReady));
    assert_eq!(s.poll_event(), Some(ServerEvent::Started));
    assert!(c.is_running());
    c.stop(Stop {
        sent: vec![SentCount {
            id: 1,
            bytes: 5,
            packets: 0,
        }],
        stopped_at_ns: Some(2_000_000_000),
    });
    pump(&mut c, &mut s);
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::StopRequested(_))
    ));
    s.send_results(results());
    pump(&mut c, &mut s);
    assert!(matches!(c.poll_event(), Some(ClientEvent::PeerResults(_))));
    c.send_results(results());
    pump(&mut c, &mut s);
    assert!(matches!(s.poll_event(), Some(ServerEvent::PeerResults(_))));
    assert_eq!(s.poll_event(), Some(ServerEvent::Done));
    assert!(c.is_finished() && s.is_closed());
}

#[test]
fn refusal_reaches_client() {
    let mut c = ClientSession::new(params(), "test");
    let mut s = ServerSession::new("srv", vec![]);
    pump(&mut c, &mut s);
    s.refuse(RefuseCode::MaxDuration, "too long");
    pump(&mut c, &mut s);
    let _ = c.poll_event();
    assert!(matches!(
        c.poll_event(),
        Some(ClientEvent::Refused(Refusal {
            code: RefuseCode::MaxDuration,
            ..
        }))
    ));
}

#[test]
fn invalid_params_refused_by_session() {
    let mut p = params();
    p.parallel = 500;
    let mut c = ClientSession::new(p, "test");
    let mut s = ServerSession::new("srv", vec![]);
    greet_and_request(&mut c, &mut s);
    let _ = c.poll_event();
    match c.poll_event() {
        Some(ClientEvent::Refused(r)) => assert_eq!(r.code, RefuseCode::BadParameter),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_client_that_gives_up_after_the_welcome_never_sends_its_request() {
    let mut c = ClientSession::new(params(), "test");
    let mut s = ServerSession::new("srv", vec![]);
    pump(&mut c, &mut s);
    assert!(matches!(c.poll_event(), Some(ClientEvent::Welcomed { .. })));
    c.abort("the server lacks a capability");
    pump(&mut c, &mut s);
    let mut seen = Vec::new();
    while let Some(e) = s.poll_event() {
        seen.push(e);
    }
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, ServerEvent::TestRequested(_))),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|e| matches!(e, ServerEvent::Aborted(_))),
        "{seen:?}"
    );
}

#[test]
fn out_of_order_message_is_error_and_aborts() {
    let mut s = ServerSession::new("srv", vec![]);
    let err = s.handle(Message::Start).unwrap_err();
    assert!(matches!(
        err,
        ProtocolError::Unexpected { got: "start", .. }
    ));
    assert!(matches!(s.poll_transmit(), Some(Message::Abort(_))));
    assert!(s.is_closed());
}

#[test]
fn version_mismatch_is_refused() {
    let mut s = ServerSession::new("srv", vec![]);
    let hello = Hello {
        version: 99,
        min_version: 99,
        software: "future".into(),
        caps: vec![],
    };
    assert!(matches!(
        s.handle(Message::Hello(hello)),
        Err(ProtocolError::Version { .. })
    ));
    assert!(matches!(
        s.poll_transmit(),
        Some(Message::Refuse(Refusal {
            code: RefuseCode::Version,
            ..
        }))
    ));
}

#[test]
fn abort_from_client_mid_test() {
    let mut c = ClientSession::new(params(), "test");
    let mut s = ServerSession::new("srv", vec![]);
    greet_and_request(&mut c, &mut s);
    s.accept(&[1; 16]);
    s.streams_ready();
    pump(&mut c, &mut s);
    c.abort("interrupted");
    pump(&mut c, &mut s);
    while let Some(e) = s.poll_event() {
        if let ServerEvent::Aborted(r) = e {
            assert_eq!(r, "interrupted");
            return;
        }
    }
    panic!("server never saw the abort");
}

/// The server's link facts reach a client that lists `link-facts`, bounded; a client that
/// does not (an older sonde) never sees the field, and a server that set none sends none.
#[test]
fn link_facts_ride_the_welcome_only_when_negotiated() {
    let facts = sonde_stats::link::LinkFacts {
        interface: "eth0\n".into(),
        mtu: Some(1500),
        ..Default::default()
    };
    let welcomed_link = |client_caps: Option<Vec<String>>, set: bool| {
        let mut s = ServerSession::new("srv", vec![]);
        if set {
            s.set_link(facts.clone());
        }
        let mut hello = Hello {
            version: PROTOCOL_VERSION,
            min_version: MIN_PROTOCOL_VERSION,
            software: "test".into(),
            caps: CAPABILITIES.iter().map(|c| (*c).to_string()).collect(),
        };
        if let Some(caps) = client_caps {
            hello.caps = caps;
        }
        s.handle(Message::Hello(hello)).unwrap();
        let Some(Message::Welcome(w)) = s.poll_transmit() else {
            panic!("no welcome");
        };
        let mut c = ClientSession::new(params(), "test");
        c.handle(Message::Welcome(w.clone())).unwrap();
        match c.poll_event() {
            Some(ClientEvent::Welcomed { link, .. }) => (w.link, link),
            other => panic!("{other:?}"),
        }
    };
    let (sent, got) = welcomed_link(None, true);
    assert_eq!(sent.as_ref().and_then(|l| l.mtu), Some(1500));
    assert_eq!(got.map(|l| l.interface), Some("eth0".to_owned()));
    let (sent, got) = welcomed_link(Some(vec!["tcp".into()]), true);
    assert_eq!((sent, got), (None, None));
    let (sent, got) = welcomed_link(None, false);
    assert_eq!((sent, got), (None, None));
}
