//! A server's `-J` document is never lost: every test it started writes one, complete or
//! partial with the error, even when the client dies in the middle (sonde and iperf3 clients,
//! TCP and UDP). Regression for issue 9: a session that failed after its start never wrote
//! its document.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use common::{require_all, Server};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// The JSON documents the server printed so far.
fn documents(server: &mut Server) -> Vec<Value> {
    let stdout = server.proc().stdout_so_far();
    serde_json::Deserializer::from_str(&stdout)
        .into_iter::<Value>()
        .map_while(Result::ok)
        .collect()
}

/// Waits until the server has written `n` documents.
fn wait_documents(server: &mut Server, n: usize, within: Duration) -> Vec<Value> {
    let t0 = Instant::now();
    loop {
        let docs = documents(server);
        if docs.len() >= n || t0.elapsed() > within {
            return docs;
        }
        thread::sleep(Duration::from_millis(50));
    }
}

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
    let mut server = Server::start(&["-J"]);
    let client = server.spawn_client(&["-t", "10"]);
    thread::sleep(Duration::from_millis(1500));
    client.signal(libc::SIGKILL);
    let docs = wait_documents(&mut server, 1, Duration::from_secs(20));
    assert_eq!(docs.len(), 1, "{}", server.output_so_far());
    check_partial(&docs[0], "sonde TCP client killed");
    // The server serves the next test normally.
    let ok = server.client(&["-u", "-b", "10m", "-t", "1"], Duration::from_secs(30));
    ok.expect_code(0);
    let docs = wait_documents(&mut server, 2, Duration::from_secs(10));
    assert_eq!(docs.len(), 2, "{}", server.output_so_far());
    assert_eq!(docs[1]["end"]["sonde"]["partial"], Value::Bool(false));
}

#[test]
fn an_iperf3_client_killed_mid_test_still_gets_its_server_document() {
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
    let docs = wait_documents(&mut server, 1, Duration::from_secs(20));
    assert_eq!(docs.len(), 1, "{}", server.output_so_far());
    check_partial(&docs[0], "iperf3 UDP client killed");
}
