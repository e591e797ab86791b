//! A connection whose first bytes are not sonde's, on the sonde server's port: its first 37
//! bytes are an iperf3 cookie, read with a deadline. A known cookie is a data connection of a
//! session collecting its streams (routed through the [`Hub`]); an iperf 2 client is told
//! apart and turned away; any other cookie opens a new iperf3 control connection
//! ([`super::server`]).

use super::server::{serve_control, ServerCtx};
use super::Route;
use sonde_proto::foreign::{recognise, ForeignPeer};
use sonde_proto::iperf3::state::State;
use sonde_proto::iperf3::{Cookie, COOKIE_LEN};
use sonde_runtime_core::error::is_timeout;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

#[cfg(doc)]
use super::Hub;

/// A connection must complete its cookie within this time.
const COOKIE_TIMEOUT: Duration = Duration::from_secs(5);

fn read_cookie(stream: &mut TcpStream, mut buf: Vec<u8>) -> Result<Cookie, String> {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let deadline = Instant::now() + COOKIE_TIMEOUT;
    while buf.len() < COOKIE_LEN {
        if Instant::now() >= deadline {
            return Err(format!(
                "sent only {} of the 37 bytes of an iperf3 cookie in {} s",
                buf.len(),
                COOKIE_TIMEOUT.as_secs()
            ));
        }
        let mut chunk = [0u8; COOKIE_LEN];
        match stream.read(&mut chunk[..COOKIE_LEN - buf.len()]) {
            Ok(0) => return Err(format!("closed after {} bytes", buf.len())),
            Ok(k) => buf.extend_from_slice(&chunk[..k]),
            Err(e) if is_timeout(&e) => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let mut c = [0u8; COOKIE_LEN];
    c.copy_from_slice(&buf[..COOKIE_LEN]);
    Ok(c)
}

/// Serves a connection whose first bytes (`first`) are not sonde's.
/// `seq` is the connection's accept order, which orders an iperf3 test's data streams.
pub fn handle_foreign(
    mut stream: TcpStream,
    peer: SocketAddr,
    first: Vec<u8>,
    seq: u64,
    ctx: &ServerCtx,
) {
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    let cookie = match read_cookie(&mut stream, first) {
        Ok(c) => c,
        Err(why) => {
            (ctx.log)(&format!(
                "connection from {peer} is neither sonde nor iperf3: it {why}; closed"
            ));
            return;
        }
    };
    if recognise(&cookie, &[]) == Some(ForeignPeer::Iperf2Client) {
        (ctx.log)(&format!(
            "an iperf 2 client connected from {peer} (`iperf -c`) to the port of sonde's and \
             iperf3's protocols: iperf 2 clients are served on a port of their own with \
             `sonde server --iperf2` (5001, iperf 2's, unless given), or by `iperf -s`; closed"
        ));
        return;
    }
    match ctx.hub.route_tcp(&cookie, stream, seq) {
        Route::Routed => {}
        Route::Denied(mut s) => {
            let _ = s.write_all(&[State::AccessDenied.to_byte()]);
            (ctx.log)(&format!(
                "iperf3 data connection from {peer} for a test that has all its streams; denied"
            ));
        }
        Route::Unknown(s) => serve_control(s, peer, cookie, ctx),
    }
}
