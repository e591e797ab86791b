//! Headless Chromium for the tests of pages sonde serves or writes: load one page, keep its
//! rendered DOM and the browser's log, and pick out of the log what the page itself caused
//! (console output, uncaught errors, content-security-policy violations, which Chromium logs
//! to the console).
//!
//! Without Chromium a test says why and passes, unless `SONDE_REQUIRE_ALL=1` ([`crate::skip`]).
//! Debian: `apt-get install chromium`; `SONDE_CHROMIUM` names another binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The browser: `SONDE_CHROMIUM`, else the first of chromium, chromium-browser and
/// google-chrome on `PATH`.
pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SONDE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(crate::which)
}

/// What one headless load gave.
#[derive(Debug)]
pub struct Load {
    /// What the browser wrote out: the rendered DOM with `--dump-dom`.
    pub dom: String,
    /// The browser's log.
    pub log: String,
}

impl Load {
    /// The log lines the page caused: console output and uncaught errors.
    pub fn page_errors(&self) -> Vec<&str> {
        self.log
            .lines()
            .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
            .collect()
    }
}

/// Loads `url` in headless `browser` with a profile under `work` (where its output is kept
/// too) and returns its DOM and log; fails after 90 s.
pub fn dump_dom(browser: &Path, work: &Path, url: &str) -> Load {
    run(browser, work, url, &["--dump-dom".into()])
}

/// Runs headless `browser` on `url` with `extra` arguments (`--dump-dom`, `--screenshot=...`),
/// a profile under `work` and its output kept there; its stdout and log. Fails after 90 s.
pub fn run(browser: &Path, work: &Path, url: &str, extra: &[String]) -> Load {
    let out = work.join("chromium.stdout");
    let err = work.join("chromium.stderr");
    let open = |p: &Path| std::fs::File::create(p).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!(
            "--user-data-dir={}",
            work.join("profile").display()
        ))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(open(&out))
        .stderr(open(&err))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", browser.display()));
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within 90 s on {url}");
            }
        }
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Load {
        dom: read(&out),
        log: read(&err),
    }
}
