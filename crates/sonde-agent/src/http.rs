//! The metrics endpoint: a small HTTP server (`tiny_http`) answering from the shared
//! [`Metrics`]: `GET /metrics` in OpenMetrics text, `GET /api/status` the status model
//! (crate::status) as JSON and `GET /` the same as an HTML page (crate::status_page). Another
//! path is a 404 listing these, another method a 405: everything here is read-only. Like
//! `/metrics`, the status asks for no authentication (there is no setting for one): bind
//! `--metrics` to an address only those who may see the peers and their errors reach. The
//! server thread polls its stop flag between requests, so the agent stops within a fraction
//! of a second.

use crate::metrics::Metrics;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the server thread looks at its stop flag.
const POLL: Duration = Duration::from_millis(200);
const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const JSON: &str = "application/json";
const HTML: &str = "text/html; charset=utf-8";

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
        let resp = if get {
            answer(path, metrics)
        } else {
            Answer::text(405, "only GET (and HEAD) here\n".into()).with("Allow", "GET, HEAD")
        };
        // A client that went away cannot be answered; nothing to do about it.
        let _ = req.respond(resp.response());
    }
}

/// The answer to a GET of `path`.
fn answer(path: &str, metrics: &Metrics) -> Answer {
    match path {
        "/metrics" => Answer::text(200, metrics.encode()).with("Content-Type", OPENMETRICS),
        "/api/status" => {
            let doc = metrics.status().snapshot(sonde_platform::host::unix_now());
            match serde_json::to_string(&doc) {
                Ok(body) => Answer::text(200, body + "\n").with("Content-Type", JSON),
                Err(e) => Answer::text(500, format!("cannot encode the status: {e}\n")),
            }
        }
        "/" => {
            let doc = metrics.status().snapshot(sonde_platform::host::unix_now());
            Answer::text(200, crate::status_page::render(&doc))
                .with("Content-Type", HTML)
                .with("Content-Security-Policy", crate::status_page::CSP)
        }
        _ => Answer::text(
            404,
            "not found; this endpoint serves:\n  /             the status page (HTML)\n  /api/status   the same as JSON\n  /metrics      OpenMetrics for Prometheus\n".into(),
        ),
    }
}

/// A response before tiny_http's type: status, body and headers.
struct Answer {
    status: u16,
    body: String,
    headers: Vec<(&'static str, &'static str)>,
}

impl Answer {
    fn text(status: u16, body: String) -> Answer {
        Answer {
            status,
            body,
            headers: vec![("Content-Type", "text/plain; charset=utf-8")],
        }
    }

    /// With header `name` set to `value` (replacing one of that name).
    fn with(mut self, name: &'static str, value: &'static str) -> Answer {
        self.headers.retain(|(n, _)| *n != name);
        self.headers.push((name, value));
        self
    }

    fn response(self) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
        let mut resp = tiny_http::Response::from_string(self.body).with_status_code(self.status);
        for (name, value) in self.headers {
            if let Ok(h) = tiny_http::Header::from_bytes(name, value) {
                resp.add_header(h);
            }
        }
        if let Ok(h) = tiny_http::Header::from_bytes("Cache-Control", "no-store") {
            resp.add_header(h);
        }
        resp
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_their_answers() {
        let m = Metrics::new();
        let header = |a: &Answer, n: &str| {
            a.headers
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        };
        let page = answer("/", &m);
        assert_eq!(page.status, 200);
        assert_eq!(header(&page, "Content-Type").as_deref(), Some(HTML));
        assert!(header(&page, "Content-Security-Policy")
            .is_some_and(|c| c.contains("default-src 'none'")));
        let api = answer("/api/status", &m);
        assert_eq!(header(&api, "Content-Type").as_deref(), Some(JSON));
        let v: serde_json::Value = serde_json::from_str(&api.body).unwrap();
        assert!(v["peers"].as_array().is_some_and(Vec::is_empty), "{v}");
        assert!(answer("/metrics", &m).body.ends_with("# EOF\n"));
        let other = answer("/nope", &m);
        assert_eq!(other.status, 404);
        for p in ["/ ", "/api/status", "/metrics"] {
            assert!(other.body.contains(p), "{}", other.body);
        }
    }
}
