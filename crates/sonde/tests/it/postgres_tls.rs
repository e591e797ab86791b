//! TLS to a real PostgreSQL server that takes TCP connections only over TLS (`hostnossl ...
//! reject`), with a certificate for `db.sonde.test` from a test CA made here by `openssl`:
//! libpq's `sslmode` values do what they do in every PostgreSQL client, `verify-full` through
//! `hostaddr` (how the mesh's relay keeps the name), a wrong root or name refused with the
//! reason, and `disable` refused by the server (so the others were encrypted).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::postgres::{openssl_available, pg_available, Postgres};
use common::{run, TempDir};
use sonde_store::{Remote, Store};
use std::time::Duration;

/// Connects (and migrates) with `url`; the error's text when it fails.
fn connect(url: &str) -> Result<(), String> {
    Remote::new(url).connect().map_err(|e| e.to_string())
}

#[test]
fn postgresql_over_tls_with_libpqs_modes() {
    let _turn = crate::turns::take(module_path!());
    if !pg_available() || !openssl_available() {
        return;
    }
    let dir = TempDir::new("pgtls");
    let pg = Postgres::start_tls(dir.path());
    let f = |name: &str| dir.file(name).display().to_string();
    let port = pg.port();
    let at = |host: &str, params: &str| {
        format!("postgres://sonde@{host}:{port}/postgres?connect_timeout=3{params}")
    };
    let good = format!("&sslrootcert={}", f("good-ca.pem"));
    let other = format!("&sslrootcert={}", f("other-ca.pem"));
    let by_name = "&hostaddr=127.0.0.1";

    // Plain is refused by the server: whatever connects below was encrypted.
    let e = connect(&at("127.0.0.1", "&sslmode=disable")).unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.contains("no encryption"), "{e}");
    // prefer (the default) and require encrypt without checking the certificate.
    connect(&at("127.0.0.1", "")).unwrap();
    connect(&at("127.0.0.1", "&sslmode=require")).unwrap();
    // verify-ca: the chain, not the name.
    connect(&at("127.0.0.1", &format!("&sslmode=verify-ca{good}"))).unwrap();
    let e = connect(&at("127.0.0.1", &format!("&sslmode=verify-ca{other}"))).unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    // verify-full: and the name; reached by the name with hostaddr, as through the relay.
    connect(&at(
        "db.sonde.test",
        &format!("&sslmode=verify-full{good}{by_name}"),
    ))
    .unwrap();
    let e = connect(&at("127.0.0.1", &format!("&sslmode=verify-full{good}"))).unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.to_lowercase().contains("certificate"), "{e}");
    let e = connect(&at(
        "db.sonde.test",
        &format!("&sslmode=verify-full{other}{by_name}"),
    ))
    .unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.to_lowercase().contains("certificate"), "{e}");

    // The report reads the database over a verified connection.
    let verified = pg.tls_url(&dir.file("good-ca.pem"));
    let store = Store::open_read_only(&verified).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.runs().unwrap().len(), 0);

    // A URL the agent cannot use is refused before it starts, the file named.
    let missing = at(
        "db.sonde.test",
        "&sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    let cfg = dir.file("agent.toml");
    std::fs::write(
        &cfg,
        format!(
            "store_url = {missing:?}\n[latency]\nevery_secs = 10\n[[peer]]\nhost = \"127.0.0.1\"\n"
        ),
    )
    .unwrap();
    let out = run(
        &["agent", "--config", cfg.to_str().unwrap()],
        Duration::from_secs(10),
    );
    out.expect_code(2);
    assert!(out.stderr.contains("/nonexistent/ca.pem"), "{}", out.stderr);
}
