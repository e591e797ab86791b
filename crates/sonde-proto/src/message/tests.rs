//! The control messages' tests: round trips, literal frames, validation, negotiation.

use super::*;
use crate::frame::Frame;
use crate::frame::FrameDecoder;
use crate::preamble::COOKIE_LEN;
use sonde_stats::model::{Direction, Protocol};

pub(crate) fn params() -> TestParams {
    TestParams {
        protocol: Protocol::Udp,
        direction: Direction::Bidir,
        parallel: 2,
        length: sonde_stats::units::Size::from_bytes(1448),
        rate: sonde_stats::units::Rate::from_bits_per_sec(1_000_000),
        ..TestParams::default()
    }
}

fn round_trip(m: Message) -> Message {
    let mut d = FrameDecoder::new();
    d.push(&m.encode().unwrap());
    Message::decode(&d.next_frame().unwrap().unwrap())
        .unwrap()
        .unwrap()
}

#[test]
fn messages_round_trip() {
    let msgs = vec![
        Message::Hello(Hello {
            version: 1,
            min_version: 1,
            software: "sonde 0.1".into(),
            caps: vec!["udp".into()],
        }),
        Message::TestRequest(Box::new(params())),
        Message::Accept(Accept::new(&[0xA5; COOKIE_LEN])),
        Message::StreamsReady,
        Message::Stop(Stop {
            sent: vec![SentCount {
                id: 1,
                bytes: 10,
                packets: 1,
            }],
            stopped_at_ns: Some(10_000_123_456),
        }),
        Message::Stop(Stop {
            sent: Vec::new(),
            stopped_at_ns: None,
        }),
        Message::Abort(Abort {
            reason: "ctrl-c".into(),
        }),
        Message::Done,
    ];
    for m in msgs {
        assert_eq!(round_trip(m.clone()), m);
    }
}

#[test]
fn literal_start_frame() {
    assert_eq!(Message::Start.encode().unwrap(), vec![0, 0, 0, 1, 0x07]);
}

#[test]
fn unknown_optional_is_skipped_mandatory_is_error() {
    let f = Frame {
        msg_type: 0x9F,
        body: vec![1, 2, 3],
    };
    assert!(Message::decode(&f).unwrap().is_none());
    let f = Frame {
        msg_type: 0x3F,
        body: vec![],
    };
    assert!(matches!(
        Message::decode(&f),
        Err(MessageError::UnknownType(0x3F))
    ));
}

#[test]
fn wrong_json_types_are_errors_not_panics() {
    let f = Frame {
        msg_type: 0x04,
        body: br#"{"protocol":5,"parallel":"x"}"#.to_vec(),
    };
    assert!(matches!(
        Message::decode(&f),
        Err(MessageError::BadBody { ty: 4, .. })
    ));
}

#[test]
fn cookie_hex_round_trip_and_rejects_garbage() {
    let a = Accept::new(&[0x0F; COOKIE_LEN]);
    assert_eq!(a.cookie().unwrap(), [0x0F; COOKIE_LEN]);
    assert!(Accept {
        cookie: "zz".repeat(16)
    }
    .cookie()
    .is_err());
    assert!(Accept {
        cookie: "é".repeat(16)
    }
    .cookie()
    .is_err());
    assert!(Accept {
        cookie: "00".into()
    }
    .cookie()
    .is_err());
}

#[test]
fn validation() {
    let mut p = params();
    assert!(p.validate().is_ok());
    p.parallel = 0;
    assert_eq!(p.validate(), Err(ParamError::Parallel(0)));
    p.parallel = 1;
    p.length = sonde_stats::units::Size::from_bytes(8);
    assert_eq!(
        p.validate(),
        Err(ParamError::UdpLength(sonde_stats::units::Size::from_bytes(
            8
        )))
    );
    assert_eq!(
        p.validate().unwrap_err().to_string(),
        "UDP datagram length must be 16..=65507, got 8"
    );
    p.length = sonde_stats::units::Size::from_bytes(100);
    p.window = Some(sonde_stats::units::Size::from_bytes(
        u64::from(u32::MAX) + 1,
    ));
    assert!(matches!(p.validate(), Err(ParamError::Window(_))));
    p.window = None;
    p.duration_secs = 0.0;
    assert_eq!(p.validate(), Err(ParamError::NoEnd));
    p.blocks = 5;
    assert!(p.validate().is_ok());
    p.duration_secs = f64::NAN;
    assert!(p.validate().is_err());
}

#[test]
fn bidir_stream_roles() {
    let p = params();
    assert_eq!(p.stream_count(), 4);
    assert!(p.client_sends(2));
    assert!(!p.client_sends(3));
}

#[test]
fn process_load_is_checked_and_optional_on_the_wire() {
    let l = ProcessLoad {
        user_secs: 0.5,
        system_secs: 0.25,
        wall_secs: 3.0,
    };
    assert_eq!(l.checked(), Some(l));
    assert!((l.percent() - 25.0).abs() < 1e-9);
    for bad in [
        ProcessLoad {
            wall_secs: 0.0,
            ..l
        },
        ProcessLoad {
            user_secs: f64::NAN,
            ..l
        },
        ProcessLoad {
            system_secs: -1.0,
            ..l
        },
        ProcessLoad {
            user_secs: 1e9,
            ..l
        },
        ProcessLoad {
            wall_secs: 1e6,
            ..l
        },
    ] {
        assert_eq!(bad.checked(), None, "{bad:?}");
    }
    // Absent from a server without `cpu-load`: the results read as before.
    let v: Results =
        serde_json::from_str(r#"{"cpu":{"total":1.0,"user":1.0,"system":0.0},"streams":[]}"#)
            .unwrap();
    assert_eq!(v.process_load, None);
    assert!(!serde_json::to_string(&v).unwrap().contains("process_load"));
    assert!(CAPABILITIES.contains(&"cpu-load"));
}

#[test]
fn negotiation_is_intersection() {
    let caps = negotiate(&["udp".into(), "warp-drive".into(), "tcp".into()]);
    assert_eq!(caps, vec!["tcp".to_string(), "udp".to_string()]);
}
