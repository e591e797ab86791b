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

use std::path::Path;

use sonde_report::{render, Format};
use sonde_testkit::browser;

/// `page` in `browser` with `extra` arguments, its output beside it.
fn run(browser: &Path, page: &Path, extra: &[String]) -> browser::Load {
    let work = page.parent().unwrap_or(Path::new("."));
    browser::run(browser, work, &format!("file://{}", page.display()), extra)
}

#[test]
fn html_report_renders_its_charts_in_chromium() {
    let Some(browser) = browser::chromium() else {
        sonde_testkit::skip("chromium not found on PATH (Debian: apt-get install chromium)");
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap_or_else(|e| panic!("{e}"));
    let db_dir = sonde_testkit::TempDir::new("doc");
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
    let load = run(&browser, &bad, &["--dump-dom".into()]);
    assert!(
        !load.page_errors().is_empty(),
        "the harness did not see a deliberate script error; stderr:\n{}",
        load.log
    );

    let load = run(&browser, &page, &["--dump-dom".into()]);
    let dom = &load.dom;
    let in_dom = dom.matches("<svg").count();
    assert_eq!(in_dom, expected_charts, "charts in the rendered DOM");
    assert!(dom.contains("Goodput against link loss"));
    assert!(dom.contains("class=\"series\""));
    let errors = load.page_errors();
    assert!(
        errors.is_empty(),
        "the page logged errors:\n{}",
        errors.join("\n")
    );

    let shot = out.join("report.png");
    let load = run(
        &browser,
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
        "no screenshot; stderr:\n{}",
        load.log
    );
    eprintln!("screenshot: {}", shot.display());
}
