//! The metrics endpoint: `GET /metrics` on a small HTTP server (`tiny_http`), answered from
//! the shared [`Metrics`] in OpenMetrics text. Anything else is a 404. The server thread
//! polls its stop flag between requests, so the agent stops within a fraction of a second.

use crate::metrics::Metrics;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the server thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);
const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// A running metrics endpoint.
#[derive(Debug)]
pub struct MetricsServer {
    addr: SocketAddr,
    thread: Option<JoinHandle<()>>,
}

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
#[error("metrics endpoint on {addr}: {reason}")]
pub struct HttpError {
    pub addr: SocketAddr,
    pub reason: String,
}

impl MetricsServer {
    /// Binds `addr` and serves until `stop` is raised.
    ///
    /// # Errors
    /// [`HttpError`] when the address cannot be bound.
    pub fn start(
        addr: SocketAddr,
        metrics: Arc<Metrics>,
        stop: Arc<AtomicBool>,
    ) -> Result<MetricsServer, HttpError> {
        let err = |reason: String| HttpError { addr, reason };
        let server = tiny_http::Server::http(addr).map_err(|e| err(e.to_string()))?;
        let bound = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| err("not an IP listener".into()))?;
        let thread = std::thread::Builder::new()
            .name("sonde-metrics".into())
            .spawn(move || serve(&server, &metrics, &stop))
            .map_err(|e| err(format!("spawning its thread: {e}")))?;
        Ok(MetricsServer {
            addr: bound,
            thread: Some(thread),
        })
    }

    /// The bound address (the real port when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Waits for the server thread to end (after its stop flag was raised).
    pub fn join(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(server: &tiny_http::Server, metrics: &Metrics, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        let req = match server.recv_timeout(POLL) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(_) => {
                std::thread::sleep(POLL);
                continue;
            }
        };
        let path = req.url().split('?').next().unwrap_or("");
        let get = matches!(
            req.method(),
            tiny_http::Method::Get | tiny_http::Method::Head
        );
        // A client that went away cannot be answered; nothing to do about it.
        let _ = if get && path == "/metrics" {
            let mut resp = tiny_http::Response::from_string(metrics.encode());
            if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", CONTENT_TYPE) {
                resp.add_header(h);
            }
            req.respond(resp)
        } else {
            req.respond(
                tiny_http::Response::from_string("not found: try /metrics\n").with_status_code(404),
            )
        };
    }
}
