//! What answers at the switch-test port when the switch library's HELLO got no answer: a
//! `sonde server` (port 5201 is its default and iperf3's) waits silently for more bytes, so
//! the user would only read "timed out". One sonde control HELLO tells it apart cheaply.

use sonde_proto::frame::FrameDecoder;
use sonde_proto::message::{Hello, Message};
use sonde_proto::preamble::CONTROL_MAGIC;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How long the check may take in all.
const BUDGET: Duration = Duration::from_millis(800);

/// The software name of a `sonde server` listening at `addr` ("sonde 0.1.0"), if one is.
pub fn sonde_server_at(addr: SocketAddr) -> Option<String> {
    let start = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, BUDGET).ok()?;
    let hello = Message::Hello(Hello {
        version: sonde_proto::PROTOCOL_VERSION,
        min_version: sonde_proto::MIN_PROTOCOL_VERSION,
        software: format!("sonde {}", env!("CARGO_PKG_VERSION")),
        caps: Vec::new(),
    })
    .encode()
    .ok()?;
    s.write_all(CONTROL_MAGIC).ok()?;
    s.write_all(&hello).ok()?;
    let mut d = FrameDecoder::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = BUDGET.checked_sub(start.elapsed())?;
        s.set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        let n = s.read(&mut buf).ok().filter(|n| *n > 0)?;
        d.push(buf.get(..n)?);
        if let Some(f) = d.next_frame().ok()? {
            return match Message::decode(&f).ok()?? {
                Message::Welcome(w) => Some(w.software),
                Message::Refuse(_) => Some("sonde".into()),
                _ => None,
            };
        }
    }
}

/// The error to give when the HELLO exchange with `addr` timed out.
pub fn hello_timed_out(addr: SocketAddr) -> String {
    match sonde_server_at(addr) {
        Some(sw) => format!(
            "{addr} is a `sonde server` ({sw}), not a switch-test server: start `sonde switch-test --listen` there (default port 5211) and give its port with -p"
        ),
        None => format!(
            "the HELLO exchange with {addr} timed out: whatever listens there is not a `sonde switch-test --listen` server"
        ),
    }
}
