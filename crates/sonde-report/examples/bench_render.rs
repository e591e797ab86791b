//! Times a report of a 1,000-test lab run (issue 6: "renders in a few seconds").
//!
//! `cargo run --release -p sonde-report --example bench_render [TESTS]` builds a results database
//! in a temporary directory (50 loss settings × 4 tests × 5 repetitions by default, each test
//! carrying a real `sonde -J` document from the test fixtures), then times reading it and
//! rendering each format.

use std::time::Instant;

use serde_json::json;
use sonde_report::{render, Format, Inputs};
use sonde_store::*;

const DOCS: [(&str, &str); 3] = [
    ("tcp", include_str!("../tests/fixtures/docs/tcp-cubic.json")),
    ("udp", include_str!("../tests/fixtures/docs/udp-97m.json")),
    (
        "latency",
        include_str!("../tests/fixtures/docs/latency.json"),
    ),
];

/// The tests of each loss setting, and how often each runs.
const TESTS: [&str; 4] = ["tcp-cubic", "tcp-bbr", "udp-97m", "latency"];
const REPS: u32 = 5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = std::env::args().nth(1).map_or(Ok(1000), |s| s.parse())?;
    let dir = std::env::temp_dir().join(format!("sonde-bench-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("results.db");
    store_lab_run(&db, n)?;
    time_reading_and_rendering(db)?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}

/// Writes a run of `n` tests into the database at `db`, timing the writing.
fn store_lab_run(db: &std::path::Path, n: u32) -> Result<(), Box<dyn std::error::Error>> {
    let settings_n = n.div_ceil(TESTS.len() as u32 * REPS);
    let mut store = Store::open(db)?;
    let run = store.begin_run(&NewRun {
        scenario_name: "bench".into(),
        scenario_toml: String::new(),
        sonde_version: "sonde 0.1.0".into(),
        hostname: "bench".into(),
        kernel: "bench".into(),
        host_info: json!({}),
        seed: 1,
        started_unix: 1.8e9,
        settings: (0..settings_n).map(loss_setting).collect(),
    })?;
    let records: Vec<TestRecord> = (0..n).map(test_record).collect();
    let t = Instant::now();
    store.record_tests(run, &records)?;
    println!("stored {n} tests in {:.3} s", t.elapsed().as_secs_f64());
    Ok(())
}

/// The `i`th link setting: 100 Mbit/s with 0.4 % more loss than the one before.
fn loss_setting(i: u32) -> LinkSettingsRecord {
    LinkSettingsRecord {
        name: format!("loss-{i}"),
        ordinal: i,
        settings: json!({"name": format!("loss-{i}"), "link": [{"link": "wan",
            "impair": {"rate": "100mbit", "loss": format!("{}%", f64::from(i) * 0.4)}}]}),
        backend_plan: None,
    }
}

/// The `i`th test of the run: tests cycle fastest, then repetitions, then settings; every
/// 37th failed.
fn test_record(i: u32) -> TestRecord {
    let s = i / (TESTS.len() as u32 * REPS);
    let rep = i / TESTS.len() as u32 % REPS + 1;
    let test = TESTS[i as usize % TESTS.len()];
    let doc = DOCS[(i as usize % TESTS.len()).saturating_sub(1).min(2)].1;
    TestRecord {
        matrix_id: format!("loss-{s}/{test}/{rep}"),
        ordinal: i,
        settings: format!("loss-{s}"),
        test_name: test.into(),
        repetition: rep,
        seed: u64::from(i),
        kind: "sonde".into(),
        protocol: None,
        parameters: json!({"argv": ["client", "10.77.2.2", "-t", "10"]}),
        link_status: None,
        started_unix: 1.8e9 + f64::from(i) * 11.0,
        ended_unix: 1.8e9 + f64::from(i) * 11.0 + 10.0,
        status: if i.is_multiple_of(37) {
            TestStatus::Failed
        } else {
            TestStatus::Ok
        },
        failure_reason: i.is_multiple_of(37).then(|| "timed out".into()),
        result_path: None,
        result_json: Some(doc.into()),
        client: EndRecord::default(),
        server: EndRecord::default(),
        stage_stats: None,
    }
}

/// Times reading the database and rendering it in each format.
fn time_reading_and_rendering(db: std::path::PathBuf) -> Result<(), Box<dyn std::error::Error>> {
    let t = Instant::now();
    let inputs = Inputs::from_paths(&[db])?;
    println!("read the database in {:.3} s", t.elapsed().as_secs_f64());
    for f in Format::ALL {
        let t = Instant::now();
        let bytes = render(&inputs, f)?;
        println!(
            "{:>11}: {:>9} bytes in {:.3} s",
            f.file_name(),
            bytes.len(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
