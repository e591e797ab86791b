//! One scrape of an agent's `/metrics`: an HTTP/1.0 GET with a deadline on every step, the
//! answer read up to a bound, and the peers that have series in it.
//!
//! A scrape that times out is made again, up to `ATTEMPTS` (3) times in all, each on a new
//! connection: the end-of-run scrape of a node behind an impaired link (say 5 % loss each
//! way) can lose the same segment twice, and TCP's backed-off retransmission then stalls one
//! read past its deadline although the agent is well. A refused or reset connection, or a
//! wrong answer, is not tried again: those say something about the agent, not the path.
//!
//! Hand-written rather than a client crate: it is one request to the agent's own endpoint
//! (`tiny_http` on the other end), made once per node at the end of a run, and the lab has no
//! HTTP client dependency to reuse; a crate would bring TLS and connection pools for a
//! dozen lines of `TcpStream`.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde::Serialize;

/// Connect, send and receive each get this long.
const STEP_TIMEOUT: Duration = Duration::from_secs(3);
/// How many times a scrape that timed out is tried in all.
const ATTEMPTS: u32 = 3;
/// The largest answer read (a mesh of 64 nodes is well under 1 MiB of series).
const MAX_BODY: u64 = 8 << 20;

/// What one scrape found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scrape {
    /// The endpoint.
    pub url: String,
    /// The HTTP status, when an answer came.
    pub status: Option<u16>,
    /// Why there was no answer.
    pub error: Option<String>,
    /// Peers (`peer="..."` labels) with series in the answer.
    pub peers: BTreeSet<String>,
    /// The answer's body (empty without one).
    #[serde(skip)]
    pub body: String,
}

impl Scrape {
    /// True when the endpoint answered 200.
    pub fn answered(&self) -> bool {
        self.status == Some(200)
    }
}

/// GETs `http://addr/metrics`. Run it where `addr` is reachable (the mesh runs it in the hub
/// namespace, which routes to every node).
pub fn scrape(addr: SocketAddr) -> Scrape {
    let url = format!("http://{addr}/metrics");
    match get_patiently(addr) {
        Ok((status, body)) => Scrape {
            url,
            status: Some(status),
            error: None,
            peers: peers_in(&body),
            body,
        },
        Err(e) => Scrape {
            url,
            status: None,
            error: Some(e.to_string()),
            peers: BTreeSet::new(),
            body: String::new(),
        },
    }
}

/// [`get`], again on a time-out, up to [`ATTEMPTS`] in all; the last error says how many.
fn get_patiently(addr: SocketAddr) -> std::io::Result<(u16, String)> {
    let mut attempt = 1;
    loop {
        match get(addr) {
            Err(e) if timed_out(&e) && attempt < ATTEMPTS => attempt += 1,
            Err(e) if timed_out(&e) => {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!("{e} (each of {ATTEMPTS} attempts timed out)"),
                ))
            }
            other => return other,
        }
    }
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

fn get(addr: SocketAddr) -> std::io::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, STEP_TIMEOUT)?;
    s.set_read_timeout(Some(STEP_TIMEOUT))?;
    s.set_write_timeout(Some(STEP_TIMEOUT))?;
    // One write: `write!` on an unbuffered stream sends each formatted piece on its own, and a
    // server that answers on the first piece and closes then fails the rest with EPIPE.
    let request = format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes())?;
    let mut raw = Vec::new();
    s.take(MAX_BODY).read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other("not an HTTP answer"))?;
    Ok((status, body.to_owned()))
}

/// The values of every `peer="..."` label in an OpenMetrics text.
pub fn peers_in(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut rest = line;
        while let Some(i) = rest.find("peer=\"") {
            rest = &rest[i + 6..];
            let Some(end) = rest.find('"') else { break };
            out.insert(rest[..end].to_owned());
            rest = &rest[end..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_silent_endpoint_is_tried_again_and_the_error_says_how_often() {
        // Accepts (the kernel completes the handshake) but never answers.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let started = std::time::Instant::now();
        let e = get_patiently(addr).unwrap_err();
        assert!(timed_out(&e), "{e}");
        assert!(
            e.to_string().contains("each of 3 attempts timed out"),
            "{e}"
        );
        assert!(
            started.elapsed() >= STEP_TIMEOUT * ATTEMPTS,
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_refused_connection_is_not_tried_again() {
        let addr = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let e = get_patiently(addr).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused, "{e}");
    }

    #[test]
    fn finds_peer_labels() {
        let text = "# HELP x\nsonde_latency_rtt_seconds_count{peer=\"n02-v4\",family=\"ipv4\"} 3\n\
                    sonde_tests_total{peer=\"n03-v6\",family=\"ipv6\",test=\"latency\",result=\"ok\"} 1\n";
        let p: Vec<String> = peers_in(text).into_iter().collect();
        assert_eq!(p, ["n02-v4", "n03-v6"]);
    }

    #[test]
    fn scrapes_a_real_endpoint_and_reports_a_dead_one() {
        use std::net::TcpListener;
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            let (mut c, _) = l.accept().unwrap();
            // The whole request, as any HTTP server reads it, before answering.
            let mut request = Vec::new();
            let mut buf = [0u8; 512];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = c.read(&mut buf).unwrap();
                assert!(n > 0, "the request ended early: {request:?}");
                request.extend_from_slice(&buf[..n]);
            }
            assert!(request.starts_with(b"GET /metrics HTTP/1.0\r\n"));
            c.write_all(b"HTTP/1.0 200 OK\r\n\r\nm{peer=\"a\"} 1\n")
                .unwrap();
        });
        let s = scrape(addr);
        t.join().unwrap();
        assert!(s.answered(), "{s:?}");
        assert!(s.peers.contains("a"));
        // Nothing listens there any more.
        let dead = scrape(addr);
        assert!(!dead.answered() && dead.error.is_some());
    }
}
