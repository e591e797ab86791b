//! A real Prometheus server for the agent tests: whether its programs are here (a skip with
//! the reason otherwise, a failure under `SONDE_REQUIRE_ALL=1`), one started on loopback to
//! scrape an agent every second, and its HTTP API's instant queries.

use super::agent::http_get;
use super::{free_port, require_all, which, Proc, TempDir};
use std::path::Path;

/// True when `program` (`prometheus`, `promtool`) is on PATH; otherwise says why the test
/// skips, and fails under `SONDE_REQUIRE_ALL=1`.
pub fn available(program: &str) -> bool {
    if which(program).is_some() {
        return true;
    }
    let why = format!("the {program} binary is not on PATH (Debian package `prometheus`)");
    assert!(!require_all(), "SONDE_REQUIRE_ALL=1 but {why}");
    eprintln!("skipped: {why}");
    false
}

/// A Prometheus server on loopback, killed when dropped.
pub struct Prometheus {
    pub proc: Proc,
    /// Its HTTP port (the API under `/api/v1`).
    pub port: u16,
}

impl Prometheus {
    /// Starts Prometheus scraping `127.0.0.1:METRICS_PORT` as job `sonde` every second and
    /// evaluating `rule_files` every second, its data under `dir`.
    pub fn start(dir: &TempDir, metrics_port: u16, rule_files: &[&Path]) -> Prometheus {
        let port = free_port();
        let mut cfg = format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: sonde\n    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n"
        );
        if !rule_files.is_empty() {
            cfg.push_str("rule_files:\n");
            for f in rule_files {
                cfg.push_str(&format!("  - {:?}\n", f.display().to_string()));
            }
        }
        let path = dir.file("prometheus.yml");
        std::fs::write(&path, cfg).unwrap();
        let proc = Proc::spawn_program(
            "prometheus",
            &[
                format!("--config.file={}", path.display()),
                format!("--storage.tsdb.path={}", dir.file("data").display()),
                format!("--web.listen-address=127.0.0.1:{port}"),
            ],
        );
        Prometheus { proc, port }
    }

    /// The JSON answer to `GET path` (None until the server answers).
    pub fn get(&self, path: &str) -> Option<serde_json::Value> {
        let (_, body) = http_get(self.port, path)?;
        serde_json::from_str(&body).ok()
    }

    /// The JSON answer to the instant query `promql` (`/api/v1/query`).
    pub fn query(&self, promql: &str) -> Option<serde_json::Value> {
        self.get(&format!("/api/v1/query?query={}", url_encode(promql)))
    }
}

/// `text` as a URL's query value: every byte but letters, digits and `-_.~` as `%XX`.
pub fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
