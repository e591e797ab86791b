//! The HTML report in a real browser: headless Chromium loads it, the test checks that the
//! charts are in the rendered DOM and that the browser logged nothing from the page (no script
//! error, no blocked fetch: the page's own content-security policy forbids fetches, and a
//! violation is logged to the console). A screenshot is kept under the target directory
//! (`$CARGO_TARGET_TMPDIR/report-html/`) for people to look at.
//!
//! Without Chromium the test says why and passes, unless `SONDE_REQUIRE_ALL=1` (CI), where a
//! missing browser is a failure. Debian: `apt-get install chromium`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sonde_report::{render, Format};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SONDE_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn require_all() -> bool {
    std::env::var_os("SONDE_REQUIRE_ALL").is_some_and(|v| v == "1")
}

/// Runs Chromium headless on `page` with `extra` arguments; returns (stdout, stderr).
fn run(browser: &Path, profile: &Path, page: &Path, extra: &[String]) -> (String, String) {
    let out_dir = page.parent().unwrap_or(Path::new("."));
    let stdout_path = out_dir.join("chromium.stdout");
    let stderr_path = out_dir.join("chromium.stderr");
    let open = |p: &Path| std::fs::File::create(p).unwrap_or_else(|e| panic!("{e}"));
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
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(open(&stdout_path))
        .stderr(open(&stderr_path))
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
                panic!("chromium did not finish within 90 s");
            }
        }
    }
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (read(&stdout_path), read(&stderr_path))
}

/// Lines where the page itself made the browser log: console output or uncaught errors.
fn page_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn html_report_renders_its_charts_in_chromium() {
    let Some(browser) = chromium() else {
        let why = "chromium not found on PATH (Debian: apt-get install chromium)";
        assert!(!require_all(), "{why}, and SONDE_REQUIRE_ALL=1");
        eprintln!("skipped: {why}");
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{e}"));
    let db_dir = sonde_testkit::TempDir::new("doc");
    let profile = sonde_testkit::TempDir::new("doc");
    let inputs = common::lab_inputs(db_dir.path());
    let html = render(&inputs, Format::Html).unwrap_or_else(|e| panic!("{e}"));
    let page = out.join("report.html");
    std::fs::write(&page, &html).unwrap_or_else(|e| panic!("{e}"));
    let expected_charts = String::from_utf8_lossy(&html).matches("<svg").count();
    assert!(
        expected_charts >= 10,
        "only {expected_charts} charts rendered"
    );

    // The harness must see page errors, or a clean stderr proves nothing.
    let bad = out.join("bad.html");
    std::fs::write(
        &bad,
        "<html><body><script>throw new Error('x')</script></body></html>",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (_, err) = run(&browser, profile.path(), &bad, &["--dump-dom".into()]);
    assert!(
        !page_errors(&err).is_empty(),
        "the harness did not see a deliberate script error; stderr:\n{err}"
    );

    let (dom, err) = run(&browser, profile.path(), &page, &["--dump-dom".into()]);
    let in_dom = dom.matches("<svg").count();
    assert_eq!(in_dom, expected_charts, "charts in the rendered DOM");
    assert!(dom.contains("Goodput against link loss"));
    assert!(dom.contains("class=\"series\""));
    let errors = page_errors(&err);
    assert!(
        errors.is_empty(),
        "the page logged errors:\n{}",
        errors.join("\n")
    );

    let shot = out.join("report.png");
    let (_, err) = run(
        &browser,
        profile.path(),
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000".into(),
            "--hide-scrollbars".into(),
        ],
    );
    let png = std::fs::read(&shot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "no screenshot; stderr:\n{err}"
    );
    eprintln!("screenshot: {}", shot.display());
}
