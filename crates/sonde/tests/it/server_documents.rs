//! A server's `-J` document is never lost: every test it started writes one, complete or
//! partial with the error. Killing a client mid-test (sonde and iperf3 clients, TCP and UDP)
//! took a path that wrote its document before too; the regression for issue 9 is the scripted
//! iperf3 client below, which ends its test and vanishes before sending its results: that
//! session failed after its start and used to write no document at all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{require_all, Server};
use serde_json::Value;
use sonde_proto::iperf3::state::State;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn check_partial(doc: &Value, what: &str) {
    let end = &doc["end"];
    assert_eq!(end["sonde"]["partial"], Value::Bool(true), "{what}: {doc}");
    let err = end["sonde"]["error"].as_str().unwrap_or("");
    assert!(
        !err.is_empty(),
        "{what}: no error in the partial document: {doc}"
    );
    assert!(doc["start"].is_object(), "{what}: {doc}");
}

#[test]
fn a_sonde_client_killed_mid_test_still_gets_its_server_document() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&["-J"]);
    let client = server.spawn_client(&["-t", "10"]);
    thread::sleep(Duration::from_millis(1500));
    client.signal(libc::SIGKILL);
    let docs = server.wait_documents(1, Duration::from_secs(20));
    assert_eq!(docs.len(), 1, "{}", server.output_so_far());
    check_partial(&docs[0], "sonde TCP client killed");
    // The server serves the next test normally.
    let ok = server.client(&["-u", "-b", "10m", "-t", "1"], Duration::from_secs(30));
    ok.expect_code(0);
    let docs = server.wait_documents(2, Duration::from_secs(10));
    assert_eq!(docs.len(), 2, "{}", server.output_so_far());
    assert_eq!(docs[1]["end"]["sonde"]["partial"], Value::Bool(false));
}

#[test]
fn an_iperf3_client_killed_mid_test_still_gets_its_server_document() {
    let _turn = crate::turns::take(module_path!());
    if Command::new("iperf3").arg("--version").output().is_err() {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but iperf3 is not installed"
        );
        eprintln!("skipped: iperf3 is not installed");
        return;
    }
    let mut server = Server::start(&["-J"]);
    let mut child = Command::new("iperf3")
        .args(["-c", "127.0.0.1", "-p", &server.port.to_string()])
        .args(["-u", "-b", "5m", "-t", "10"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start iperf3");
    thread::sleep(Duration::from_millis(1500));
    let _ = child.kill();
    let _ = child.wait();
    let docs = server.wait_documents(1, Duration::from_secs(20));
    assert_eq!(docs.len(), 1, "{}", server.output_so_far());
    check_partial(&docs[0], "iperf3 UDP client killed");
}

/// Reads state bytes until `want` arrives (within 10 s).
fn await_state(s: &mut TcpStream, want: State) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut b = [0u8; 1];
    loop {
        s.read_exact(&mut b)
            .unwrap_or_else(|e| panic!("waiting for {want:?}: {e}"));
        if b[0] == want.to_byte() {
            return;
        }
    }
}

#[test]
fn an_iperf3_session_that_fails_after_its_start_still_writes_its_document() {
    let _turn = crate::turns::take(module_path!());
    let mut server = Server::start(&["-J"]);
    let addr = format!("127.0.0.1:{}", server.port);
    // iperf3's client side by hand: cookie, parameters, one TCP stream, the test's end, then
    // gone before the results exchange.
    let mut cookie = [b'a'; 37];
    cookie[36] = 0;
    let mut ctl = TcpStream::connect(&addr).unwrap();
    ctl.write_all(&cookie).unwrap();
    await_state(&mut ctl, State::ParamExchange);
    let params = br#"{"tcp":true,"omit":0,"time":1,"num":0,"blockcount":0,"parallel":1,"len":131072,"client_version":"3.12"}"#;
    ctl.write_all(&(params.len() as u32).to_be_bytes()).unwrap();
    ctl.write_all(params).unwrap();
    await_state(&mut ctl, State::CreateStreams);
    let mut data = TcpStream::connect(&addr).unwrap();
    data.write_all(&cookie).unwrap();
    await_state(&mut ctl, State::TestStart);
    await_state(&mut ctl, State::TestRunning);
    let block = vec![7u8; 65536];
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(500) {
        data.write_all(&block).unwrap();
    }
    ctl.write_all(&[State::TestEnd.to_byte()]).unwrap();
    await_state(&mut ctl, State::ExchangeResults);
    drop(data);
    drop(ctl);
    let docs = server.wait_documents(1, Duration::from_secs(20));
    assert_eq!(docs.len(), 1, "no document:\n{}", server.output_so_far());
    check_partial(&docs[0], "iperf3 client gone before its results");
    assert!(
        docs[0]["end"]["sum_received"]["bytes"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "the partial document keeps what was received: {}",
        docs[0]
    );
}
