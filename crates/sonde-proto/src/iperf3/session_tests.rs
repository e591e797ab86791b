//! Both iperf3 state machines against byte sequences observed from iperf3 3.12, and against
//! each other.

use super::*;
use crate::iperf3::results::StreamResult;
use serde_json::json;

fn drain_server(s: &mut ServerSession) -> Vec<u8> {
    std::iter::from_fn(|| s.poll_transmit()).flatten().collect()
}

fn drain_client(c: &mut ClientSession) -> Vec<u8> {
    std::iter::from_fn(|| c.poll_transmit()).flatten().collect()
}

fn results(id: u32) -> Results {
    Results {
        sender_has_retransmits: -1,
        streams: vec![StreamResult {
            id,
            bytes: 100,
            end_time: 1.0,
            ..Default::default()
        }],
        ..Default::default()
    }
}

const PARAMS: &[u8] = br#"{"tcp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":1,"len":131072,"pacing_timer":1000,"client_version":"3.12"}"#;

fn framed(body: &[u8]) -> Vec<u8> {
    let mut v = (body.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

#[test]
fn server_follows_the_observed_312_sequence() {
    let mut s = ServerSession::new([b'a'; 37]);
    assert!(s.begin());
    assert_eq!(drain_server(&mut s), vec![0x09]);
    // The parameters arrive split across reads.
    let p = framed(PARAMS);
    s.handle_bytes(&p[..10]).unwrap();
    assert_eq!(s.poll_event(), None);
    s.handle_bytes(&p[10..]).unwrap();
    assert!(matches!(s.poll_event(), Some(ServerEvent::Params(p)) if p.tcp && p.time == 2));
    assert!(!s.start(), "start before accept is refused");
    assert!(s.accept());
    assert!(s.start());
    assert_eq!(drain_server(&mut s), vec![0x0A, 0x01, 0x02]);
    s.handle_bytes(&[0x04]).unwrap();
    assert_eq!(s.poll_event(), Some(ServerEvent::TestEnd));
    assert!(s.exchange_results());
    assert_eq!(drain_server(&mut s), vec![0x0D]);
    let r = serde_json::to_vec(&results(1).to_json()).unwrap();
    s.handle_bytes(&framed(&r)).unwrap();
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::ClientResults(_))
    ));
    assert!(s.send_results(&results(1)));
    let out = drain_server(&mut s);
    assert_eq!(out.last(), Some(&0x0E));
    s.handle_bytes(&[0x10]).unwrap();
    assert_eq!(s.poll_event(), Some(ServerEvent::Done));
    assert!(s.is_finished());
}

#[test]
fn server_rejects_hostile_input() {
    let fresh = || {
        let mut s = ServerSession::new([0; 37]);
        s.begin();
        s
    };
    let mut s = fresh();
    let e = s.handle_bytes(&[0xFF, 0xFF, 0xFF, 0xFF]).unwrap_err();
    assert!(matches!(e, SessionError::Codec(CodecError::TooLong { .. })));
    assert_eq!(e.iperf3_errno(), errno::RECV_PARAMS);
    assert!(s.is_finished());
    let mut s = fresh();
    let e = s
        .handle_bytes(&framed(br#"{"tcp":"yes","time":1}"#))
        .unwrap_err();
    assert!(matches!(e, SessionError::Params(_)));
    let mut s = fresh();
    s.handle_bytes(&framed(PARAMS)).unwrap();
    s.accept();
    let e = s.handle_bytes(&[0x63]).unwrap_err();
    assert!(matches!(e, SessionError::State(StateError::Unknown(0x63))));
    let mut s = fresh();
    s.handle_bytes(&framed(PARAMS)).unwrap();
    s.accept();
    let e = s.handle_bytes(&[0x04]).unwrap_err();
    assert!(
        matches!(e, SessionError::Unexpected { .. }),
        "TEST_END before start"
    );
    assert_eq!(s.handle_bytes(&[0x04]), Err(SessionError::Finished));
}

#[test]
fn refusals_carry_the_error_pair() {
    let mut s = ServerSession::new([0; 37]);
    s.refuse(errno::TOTAL_RATE);
    assert_eq!(drain_server(&mut s), vec![0xFE, 0, 0, 0, 27, 0, 0, 0, 0]);
    let mut s = ServerSession::new([0; 37]);
    s.deny();
    assert_eq!(drain_server(&mut s), vec![0xFF]);
    assert!(s.is_finished());
}

#[test]
fn client_and_server_complete_a_test_together() {
    let cookie = [b'x'; 37];
    let mut c =
        ClientSession::new(&cookie, &json!({"udp": true, "time": 1, "parallel": 1})).unwrap();
    assert_eq!(drain_client(&mut c), cookie.to_vec());
    let mut s = ServerSession::new(cookie);
    s.begin();
    let pump_s = |s: &mut ServerSession, c: &mut ClientSession| c.handle_bytes(&drain_server(s));
    let pump_c = |c: &mut ClientSession, s: &mut ServerSession| s.handle_bytes(&drain_client(c));
    pump_s(&mut s, &mut c).unwrap();
    pump_c(&mut c, &mut s).unwrap();
    assert!(matches!(s.poll_event(), Some(ServerEvent::Params(p)) if p.udp));
    s.accept();
    pump_s(&mut s, &mut c).unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::CreateStreams));
    s.start();
    pump_s(&mut s, &mut c).unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::TestStart));
    assert_eq!(c.poll_event(), Some(ClientEvent::TestRunning));
    assert!(c.test_end());
    pump_c(&mut c, &mut s).unwrap();
    assert_eq!(s.poll_event(), Some(ServerEvent::TestEnd));
    s.exchange_results();
    pump_s(&mut s, &mut c).unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::ExchangeResults));
    assert!(c.send_results(&results(1)));
    pump_c(&mut c, &mut s).unwrap();
    assert!(matches!(
        s.poll_event(),
        Some(ServerEvent::ClientResults(_))
    ));
    s.send_results(&results(1));
    pump_s(&mut s, &mut c).unwrap();
    assert!(matches!(
        c.poll_event(),
        Some(ClientEvent::ServerResults(_))
    ));
    assert_eq!(c.poll_event(), Some(ClientEvent::Done));
    pump_c(&mut c, &mut s).unwrap();
    assert_eq!(s.poll_event(), Some(ServerEvent::Done));
}

#[test]
fn client_reads_denials_and_errors() {
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    c.handle_bytes(&[0xFF]).unwrap();
    assert_eq!(c.poll_event(), Some(ClientEvent::AccessDenied));
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    c.handle_bytes(&[0x09, 0xFE, 0, 0, 0]).unwrap();
    assert_eq!(c.poll_event(), None);
    c.handle_bytes(&[37, 0, 0, 0, 0]).unwrap();
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::ServerError {
            i_errno: 37,
            errno: 0
        })
    );
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    assert!(c.handle_bytes(&[0x07]).is_err());
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    assert!(
        c.handle_bytes(&[0x0D]).is_err(),
        "EXCHANGE_RESULTS before the test"
    );
}

/// iperf3 3.12 refuses a failed authentication with SERVER_ERROR and the error number
/// alone, then closes (seen against Debian's 3.12): the close completes the error.
#[test]
fn client_reads_312s_lone_error_number_at_close() {
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    c.handle_bytes(&[0x09, 0xFE, 0, 0, 0, 142]).unwrap();
    assert_eq!(c.poll_event(), None);
    assert!(c.handle_eof());
    assert_eq!(
        c.poll_event(),
        Some(ClientEvent::ServerError {
            i_errno: 142,
            errno: 0
        })
    );
    // A close anywhere else is no error of the server's.
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    c.handle_bytes(&[0x09]).unwrap();
    assert!(!c.handle_eof());
    let mut c = ClientSession::new(&[0; 37], &json!({})).unwrap();
    c.handle_bytes(&[0x09, 0xFE, 0, 0]).unwrap();
    assert!(!c.handle_eof());
    assert_eq!(c.poll_event(), None);
}
