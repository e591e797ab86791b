//! TLS to a real PostgreSQL server that takes TCP connections only over TLS (`hostnossl ...
//! reject`), with a certificate for `db.sonde.test` from a test CA made here by `openssl`:
//! libpq's `sslmode` values do what they do in every PostgreSQL client, `verify-full` through
//! `hostaddr` (how the mesh's relay keeps the name), a wrong root or name refused with the
//! reason, and `disable` refused by the server (so the others were encrypted); and one user
//! authenticated by client certificate (`sslcert`, `sslkey`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::postgres::{make_client_cert, openssl_available, pg_available, Postgres, CERT_USER};
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

    // Certificate authentication (`hostssl ... cert` for CERT_USER): sslcert and sslkey as in
    // libpq; without a certificate, with one naming another user, or one from another CA,
    // refused by the server; a key others may read, refused here before connecting.
    make_client_cert(dir.path(), "good", CERT_USER, "client");
    make_client_cert(dir.path(), "good", "someone", "stranger");
    make_client_cert(dir.path(), "other", CERT_USER, "forged");
    let as_cert = |params: &str| {
        format!(
            "postgres://{CERT_USER}@db.sonde.test:{port}/postgres?connect_timeout=3&sslmode=verify-full{good}{by_name}{params}"
        )
    };
    let shown = |name: &str| {
        format!(
            "&sslcert={}&sslkey={}",
            f(&format!("{name}.crt")),
            f(&format!("{name}.key"))
        )
    };
    connect(&as_cert(&shown("client"))).unwrap();
    for (name, want) in [
        ("", "certificate"),
        ("stranger", "certificate authentication failed"),
        (
            "forged",
            "does not trust the issuer of the client certificate",
        ),
    ] {
        let params = if name.is_empty() {
            String::new()
        } else {
            shown(name)
        };
        let e = connect(&as_cert(&params)).unwrap_err();
        eprintln!("refused ({name}): {e}");
        assert!(e.to_lowercase().contains(want), "{name}: {e}");
    }
    std::fs::copy(dir.file("client.key"), dir.file("open.key")).unwrap();
    std::fs::set_permissions(
        dir.file("open.key"),
        std::os::unix::fs::PermissionsExt::from_mode(0o644),
    )
    .unwrap();
    let open = format!("&sslcert={}&sslkey={}", f("client.crt"), f("open.key"));
    let e = connect(&as_cert(&open)).unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.contains("open.key") && e.contains("chmod 600"), "{e}");

    // The report reads the database over a verified connection.
    let verified = pg.tls_url(&dir.file("good-ca.pem"));
    let store = Store::open_read_only(&verified).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(store.runs().unwrap().len(), 0);

    // A URL the agent cannot use is refused before it starts, with what is wrong: a trust
    // file that is missing, a client key others may read.
    let cfg = dir.file("agent.toml");
    let agent_refuses = |url: &str, want: &str| {
        std::fs::write(
            &cfg,
            format!(
                "store_url = {url:?}\n[latency]\nevery_secs = 10\n[[peer]]\nhost = \"127.0.0.1\"\n"
            ),
        )
        .unwrap();
        let out = run(
            &["agent", "--config", cfg.to_str().unwrap()],
            Duration::from_secs(10),
        );
        out.expect_code(2);
        assert!(out.stderr.contains(want), "{}", out.stderr);
    };
    let missing = at(
        "db.sonde.test",
        "&sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    agent_refuses(&missing, "/nonexistent/ca.pem");
    agent_refuses(&as_cert(&open), "chmod 600");
}
