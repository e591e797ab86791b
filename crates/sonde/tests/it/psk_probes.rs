//! The pre-shared key on the latency services (issue 16): a server started with `--psk-file`
//! answers UDP probes only when they carry a tag made with its key, and serves tcp-rr only to
//! a client that answers its challenge with it. Without the key or with a wrong one nothing
//! is answered (UDP: silently, the client says why that may be; tcp-rr: a refusal naming the
//! missing or wrong key). A keyed client still works against a server without a key.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{run, uint, Server, TempDir};
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

/// `sonde latency` to `server` with `extra`, 20 probes 5 ms apart, as JSON.
fn latency(server: &Server, extra: &[&str], key: Option<&Path>) -> common::Output {
    let port = server.port.to_string();
    let mut args = vec!["latency", "127.0.0.1", "-p", &port, "-c", "20", "-i", "5ms"];
    args.extend_from_slice(extra);
    if let Some(k) = key {
        args.extend(["--psk-file", k.to_str().unwrap()]);
    }
    run(&args, T)
}

fn keys() -> (TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = TempDir::new("psk-probes");
    let (key, other) = (dir.file("key"), dir.file("other"));
    common::random_key(&key);
    common::random_key(&other);
    (dir, key, other)
}

#[test]
fn udp_probes_are_answered_only_with_the_key() {
    let _turn = crate::turns::take(module_path!());
    let (_dir, key, other) = keys();
    let server = Server::start(&["--psk-file", key.to_str().unwrap()]);
    for (case, k) in [("no key", None), ("a wrong key", Some(other.as_path()))] {
        let out = latency(&server, &["-J"], k);
        out.expect_code(1);
        assert_eq!(
            uint(&out.json(), "end.loss.received"),
            0,
            "{case}: {}",
            out.describe()
        );
        assert!(
            out.stderr.contains("--psk-file"),
            "{case}: the client should say a key may be missing or wrong: {}",
            out.describe()
        );
    }
    let out = latency(&server, &["-J"], Some(&key));
    out.expect_code(0);
    let doc = out.json();
    assert_eq!(uint(&doc, "end.loss.received"), 20, "{}", out.describe());
    // The probes grew to hold the tag (56-byte header + 16).
    assert_eq!(uint(&doc, "start.size"), 72, "{}", out.describe());

    // The server counts what it dropped and says so within its 5 s log period, with no
    // further probe to wake it: the dropped ones came before the keyed run.
    let said = "dropped since the last note for a missing, wrong or replayed --psk-file tag";
    let deadline = std::time::Instant::now() + Duration::from_secs(7);
    while !server.output_so_far().contains(said) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = server.output_so_far();
    assert!(log.contains(said), "{log}");

    // A keyed client against a server without a key: the tag is padding there.
    let open = Server::start(&[]);
    let out = latency(&open, &["-J"], Some(&key));
    out.expect_code(0);
    assert_eq!(uint(&out.json(), "end.loss.received"), 20);
}

#[test]
fn tcp_rr_is_refused_without_the_key() {
    let _turn = crate::turns::take(module_path!());
    let (_dir, key, other) = keys();
    let server = Server::start(&["--psk-file", key.to_str().unwrap()]);
    for (k, why) in [
        (None, "requires a pre-shared key and the client sent none"),
        (Some(other.as_path()), "does not match"),
    ] {
        let out = latency(&server, &["--tcp-rr"], k);
        out.expect_code(1);
        assert!(
            out.stderr.contains("refused") && out.stderr.contains(why),
            "expected a refusal saying {why:?}: {}",
            out.describe()
        );
    }
    let out = latency(&server, &["--tcp-rr", "-J"], Some(&key));
    out.expect_code(0);
    assert_eq!(
        uint(&out.json(), "end.loss.received"),
        20,
        "{}",
        out.describe()
    );
    // A keyed tcp-rr client against a server without a key is served too.
    let open = Server::start(&[]);
    let out = latency(&open, &["--tcp-rr", "-J"], Some(&key));
    out.expect_code(0);
    assert_eq!(uint(&out.json(), "end.loss.received"), 20);
}
