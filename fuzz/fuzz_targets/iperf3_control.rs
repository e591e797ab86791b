//! The iperf3 control codec and state machines on arbitrary bytes: the server session after a
//! cookie, the client session, and the parameter and results readers. Nothing may panic, and
//! a server session that rejects input must be finished.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::iperf3::params::Iperf3Params;
use sonde_proto::iperf3::results::Results;
use sonde_proto::iperf3::session::{ClientSession, ServerEvent, ServerSession};

fuzz_target!(|data: &[u8]| {
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
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(p) = Iperf3Params::parse(&v) {
            let _ = p.to_sonde(1.0);
        }
        if let Ok(r) = Results::parse(&v) {
            // What we write must be readable again.
            assert!(Results::parse(&r.to_json()).is_ok());
        }
    }
});
