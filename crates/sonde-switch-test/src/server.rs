//! The switch test's server: accepts one transfer after another, hashes what arrives, and
//! answers each client with the [`crate::wire`] reply (its SHA-256, byte count and switch
//! records) when the client's stream ends.

use crate::document::server_side;
use crate::samples::Samples;
use crate::{wire, Error, Event};
use sha2::{Digest, Sha256};
use sonde_stats::sink::{deliver, Sink};
use sonde_switch::{AnyConn, AnyListener, Backend, Options};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a wait for the next client looks at the interrupt flag.
const ACCEPT_TICK: Duration = Duration::from_millis(200);

/// What the server listens on and how it samples.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub backend: Backend,
    /// One address per family (the same port); for MPTCP the addresses it announces.
    pub addrs: [SocketAddr; 2],
    /// The receiver's sampling interval (its bytes per interval go back to the client).
    pub interval: Duration,
    /// Serve one test, then return.
    pub one_off: bool,
}

/// A bound switch-test server.
pub struct Server {
    listener: AnyListener,
    cfg: ServerConfig,
}

impl Server {
    /// Listens on both families.
    ///
    /// # Errors
    /// The library's bind failed (the port taken, MPTCP missing).
    pub fn bind(cfg: ServerConfig) -> Result<Server, Error> {
        let listener = AnyListener::bind(cfg.backend, &cfg.addrs, Options::default())?;
        Ok(Server { listener, cfg })
    }

    /// The addresses listened on (the port the system chose for port 0).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listener.local_addrs()
    }

    /// Serves tests until `interrupt` is raised (or after one, one-off). Each test's end
    /// goes to `events`: served, or failed (and the server goes on).
    ///
    /// # Errors
    /// Accepting failed otherwise than by timing out.
    pub fn run(&self, interrupt: &AtomicBool, events: &mut dyn Sink<Event>) -> Result<(), Error> {
        while !interrupt.load(Ordering::SeqCst) {
            let c = match self.listener.accept(Some(ACCEPT_TICK)) {
                Ok(c) => c,
                Err(sonde_switch::Error::TimedOut(_)) => continue,
                Err(e) => return Err(e.into()),
            };
            match serve_one(&c, self.cfg.interval) {
                Ok(bytes) => deliver(events, &Event::Served { bytes }),
                Err(e) => deliver(events, &Event::TestFailed(e)),
            }
            if self.cfg.one_off {
                break;
            }
        }
        Ok(())
    }
}

/// Receives one client's stream to its end and sends the reply; the bytes received.
///
/// # Errors
/// The connection failed, or the reply could not be made.
pub fn serve_one(c: &AnyConn, interval: Duration) -> Result<u64, Error> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    let start = Instant::now();
    let mut samples = Samples::new(interval);
    loop {
        let k = c.recv(&mut buf)?;
        if k == 0 {
            break;
        }
        samples.delivered(start.elapsed(), k as u64);
        h.update(buf.get(..k).unwrap_or(&[]));
        n += k as u64;
    }
    let mut records = server_side(&c.stats());
    records.received_over_time = Some(samples.model());
    let reply = wire::emit_reply(h.finalize().into(), n, &records)?;
    c.send_all(&reply)?;
    c.close()?;
    Ok(n)
}
