//! Golden-file and determinism tests of the rendered reports, and error reporting on bad input.
//!
//! `UPDATE_GOLDEN=1 cargo test -p sonde-report --test report` rewrites the goldens; review the
//! diff before committing it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;

use std::path::{Path, PathBuf};

use sonde_report::{render, write_report, DocError, Format, Inputs};

fn check_golden(name: &str, actual: &[u8]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    if expected != actual {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::write(&out, actual);
        panic!(
            "{name} differs from its golden; actual output in {} \
             (UPDATE_GOLDEN=1 regenerates after review)",
            out.display()
        );
    }
}

fn render_ok(inputs: &Inputs, f: Format) -> Vec<u8> {
    render(inputs, f).unwrap_or_else(|e| panic!("render: {e}"))
}

#[test]
fn lab_run_markdown_matches_golden() {
    let dir = sonde_testkit::TempDir::new("doc");
    let md = render_ok(&common::lab_inputs(dir.path()), Format::Markdown);
    check_golden("lab-run.md", &md);
}

#[test]
fn documents_markdown_matches_golden() {
    let md = render_ok(&common::doc_inputs(), Format::Markdown);
    check_golden("documents.md", &md);
}

#[test]
fn rendering_is_deterministic() {
    for _ in 0..2 {
        let dir = sonde_testkit::TempDir::new("doc");
        let dir2 = sonde_testkit::TempDir::new("doc");
        let (a, b) = (
            common::lab_inputs(dir.path()),
            common::lab_inputs(dir2.path()),
        );
        for f in Format::ALL {
            assert_eq!(render_ok(&a, f), render_ok(&b, f), "{f:?}");
        }
        let d = common::doc_inputs();
        for f in Format::ALL {
            assert_eq!(render_ok(&d, f), render_ok(&d, f), "{f:?}");
        }
    }
}

#[test]
fn lab_report_has_every_part() {
    let dir = sonde_testkit::TempDir::new("doc");
    let inputs = common::lab_inputs(dir.path());
    let md = String::from_utf8(render_ok(&inputs, Format::Markdown)).unwrap_or_default();
    for want in [
        "sonde version**: sonde 0.1.0",
        "**Kernel**: 6.18.44",
        "### Impairment backends",
        "the kernel has no netem",
        "### tcp-cubic (TCP, cubic)",
        "### udp-97m",
        "### latency",
        "## Tests",
        "### loss-5/tcp-bbr/1",
        "**Interface traffic**",
        "- **Total**: 12",
        "- **Failed**: 1",
        "control connection timed out",
    ] {
        assert!(md.contains(want), "missing {want:?}");
    }
    let html = String::from_utf8(render_ok(&inputs, Format::Html)).unwrap_or_default();
    assert!(html.contains("Goodput against link loss"));
    assert!(html.contains("No RTT distribution curve for loss-0/latency/1"));
    assert!(html.contains("Latency over time: loss-0/latency/1"));
    assert!(html.contains("Throughput over time: loss-5/tcp-cubic/1"));
    assert!(!html.contains("<script"), "no scripts");
    let no_ns = html.replace("http://www.w3.org/2000/svg", "");
    assert!(
        !no_ns.contains("http://") && !no_ns.contains("https://"),
        "no external references"
    );
    assert!(html.contains("@media print"));
    let json: serde_json::Value =
        serde_json::from_slice(&render_ok(&inputs, Format::Json)).unwrap_or_default();
    assert_eq!(json["totals"]["total"], 12);
}

#[test]
fn documents_report_has_stream_loss_and_latency() {
    let html =
        String::from_utf8(render_ok(&common::doc_inputs(), Format::Html)).unwrap_or_default();
    assert!(html.contains("Loss per stream over time: tests/fixtures/docs/udp-reverse.json"));
    assert!(html.contains("No RTT distribution curve for tests/fixtures/docs/latency.json"));
    assert!(
        !html.contains("Goodput against link loss"),
        "no link loss known"
    );
}

#[test]
fn write_report_writes_each_format() {
    let dir = sonde_testkit::TempDir::new("doc");
    let out = dir.path().join("out/nested");
    let paths = write_report(
        &common::doc_inputs(),
        &out,
        &[Format::Html, Format::Markdown],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(paths, vec![out.join("report.html"), out.join("report.md")]);
    assert!(paths.iter().all(|p| p.is_file()));
}

fn err_of(paths: &[PathBuf]) -> String {
    match Inputs::from_paths(paths) {
        Ok(_) => panic!("accepted {paths:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_inputs_name_the_file() {
    let dir = sonde_testkit::TempDir::new("doc");
    let write = |name: &str, body: &[u8]| {
        let p = dir.path().join(name);
        std::fs::write(&p, body).unwrap_or_else(|e| panic!("{e}"));
        p
    };
    let truncated = write("cut.json", b"{\"start\": {\"test_start\": ");
    assert!(err_of(&[truncated]).contains("cut.json: not valid JSON"));
    let other = write("other.json", b"{\"hello\": 1}");
    let e = err_of(&[other]);
    assert!(e.contains("other.json: not a sonde result"), "{e}");
    let e = err_of(&[dir.path().join("missing.json")]);
    assert!(e.contains("missing.json"), "{e}");
    assert!(matches!(Inputs::from_paths(&[]), Err(DocError::NoInputs)));

    let mut fake_db = b"SQLite format 3\0".to_vec();
    fake_db.extend([0u8; 200]);
    let e = err_of(&[write("broken.db", &fake_db)]);
    assert!(e.contains("broken.db"), "{e}");

    let db = dir.path().join("lab/results.db");
    std::fs::create_dir_all(dir.path().join("lab")).unwrap_or_else(|e| panic!("{e}"));
    common::write_store(&db, &common::lab_run());
    let e = err_of(&[db.clone(), PathBuf::from(common::DOCS[0])]);
    assert!(e.contains("results.db is a results database"), "{e}");
    // A directory holding one database is read as that database.
    assert!(matches!(
        Inputs::from_paths(&[dir.path().join("lab")]),
        Ok(Inputs::Run { .. })
    ));
    let empty = dir.path().join("empty.db");
    drop(sonde_store::Store::open(&empty));
    assert!(err_of(&[empty]).contains("holds no lab run"));
}

#[test]
fn a_bad_result_inside_a_database_is_reported_not_fatal() {
    let dir = sonde_testkit::TempDir::new("doc");
    let mut run = common::lab_run();
    run.tests[0].result_json = Some("{not json".into());
    let db = dir.path().join("r.db");
    common::write_store(&db, &run);
    let inputs = Inputs::from_paths(&[db]).unwrap_or_else(|e| panic!("{e}"));
    let md = String::from_utf8(render_ok(&inputs, Format::Markdown)).unwrap_or_default();
    assert!(md.contains("not shown: result is not valid JSON"), "{md}");
}
