//! The agent's status page and `/api/status` over loopback: an agent measuring its own server
//! shows the peer, its last latency result and a sparkline; other paths are a 404 naming the
//! endpoints, another method a 405; and headless Chromium renders the page with no console
//! error (its content-security policy forbids anything from elsewhere, and a violation would be
//! logged). Without Chromium that last part says why and passes, unless `SONDE_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::agent::self_measuring;
use crate::common;

use common::agent::{http_get, stop, wait_for};
use common::TempDir;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// `/api/status` parsed; none until the endpoint answers with JSON.
fn status(port: u16) -> Option<Value> {
    let (line, body) = http_get(port, "/api/status")?;
    line.contains("200").then_some(())?;
    serde_json::from_str(&body).ok()
}

/// The peer labelled `label` in a status document.
fn peer<'a>(doc: &'a Value, label: &str) -> Option<&'a Value> {
    doc["peers"]
        .as_array()?
        .iter()
        .find(|p| p["label"] == label)
}

/// The whole response (head and body) to a request of `method` on `path`.
fn raw(port: u16, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    resp
}

#[test]
fn an_agent_shows_its_peers_on_its_status_page() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("agent-status");
    let (agent, pm) = self_measuring(&dir);
    let mut doc = Value::Null;
    wait_for(
        "a latency run in /api/status",
        20,
        || {
            doc = status(pm).unwrap_or(Value::Null);
            peer(&doc, "self").is_some_and(|p| !p["kinds"]["latency"].is_null())
        },
        &[&agent],
    );
    check_document(&doc);

    let (line, page) = http_get(pm, "/").unwrap();
    assert!(line.contains("200"), "{line}");
    assert!(page.contains("<td class=\"peer\">self</td>"), "{page}");
    assert!(page.contains("<svg"), "{page}");
    assert!(!page.contains("<script"), "{page}");
    let head = raw(pm, "GET", "/");
    assert!(
        head.contains("Content-Security-Policy: default-src 'none'"),
        "{head}"
    );
    let api = raw(pm, "GET", "/api/status");
    assert!(api.contains("Content-Type: application/json"), "{api}");
    let missing = raw(pm, "GET", "/nope");
    assert!(missing.starts_with("HTTP/1.0 404") || missing.starts_with("HTTP/1.1 404"));
    for path in ["/api/status", "/metrics", "/ "] {
        assert!(missing.contains(path), "{missing}");
    }
    let post = raw(pm, "POST", "/api/status");
    assert!(post.contains(" 405 "), "{post}");

    in_chromium(&dir, pm);
    stop(agent);
}

/// The agent's figures and the peer's last latency run: ok, a loopback RTT, a history.
fn check_document(doc: &Value) {
    let a = &doc["agent"];
    assert!(
        a["version"].as_str().is_some_and(|v| v.contains("sonde")),
        "{doc}"
    );
    assert_eq!(a["peers_configured"], 1, "{doc}");
    assert!(a["uptime_secs"].as_f64().is_some_and(|u| u >= 0.0), "{doc}");
    assert!(a["runs"]["ok"].as_u64() >= Some(1), "{doc}");
    assert_eq!(a["reloads"]["last_ok"], true, "{doc}");
    let p = peer(doc, "self").unwrap();
    assert_eq!(p["host"], "127.0.0.1", "{doc}");
    assert_eq!(p["family"], "ipv4", "{doc}");
    let l = &p["kinds"]["latency"];
    assert_eq!(l["last"]["outcome"], "ok", "{doc}");
    assert!(l["last"]["error"].is_null(), "{doc}");
    let f = &l["last"]["figures"];
    for q in ["rtt_p50_ms", "rtt_p90_ms", "rtt_p99_ms"] {
        let ms = f[q].as_f64().unwrap_or(-1.0);
        assert!(ms > 0.0 && ms < 1000.0, "{q} = {ms}: {doc}");
    }
    assert!(f["loss_ratio"].as_f64().is_some(), "{doc}");
    let h = l["history"].as_array().unwrap();
    assert!(!h.is_empty() && h.len() <= 30, "{doc}");
    assert!(h.iter().all(|pt| pt["t"].as_f64().is_some()), "{doc}");
}

/// The page in headless Chromium: the peer and an svg in its DOM, nothing in its console.
fn in_chromium(dir: &TempDir, port: u16) {
    let Some(browser) = sonde_testkit::browser::chromium() else {
        sonde_testkit::skip("the status page in a browser: chromium is not installed");
        return;
    };
    let work = dir.file("chromium");
    std::fs::create_dir_all(&work).unwrap();
    // The harness must see a page's errors, or a clean log proves nothing.
    let bad = "data:text/html,<script>throw new Error('x')</script>";
    let load = sonde_testkit::browser::dump_dom(&browser, &work, bad);
    assert!(
        !load.page_errors().is_empty(),
        "no error seen:\n{}",
        load.log
    );
    let load =
        sonde_testkit::browser::dump_dom(&browser, &work, &format!("http://127.0.0.1:{port}/"));
    assert!(
        load.dom.contains(">self</td>"),
        "{}\n{}",
        load.dom,
        load.log
    );
    assert!(load.dom.contains("<svg"), "{}", load.dom);
    let errors = load.page_errors();
    assert!(errors.is_empty(), "the page logged:\n{}", errors.join("\n"));
}
