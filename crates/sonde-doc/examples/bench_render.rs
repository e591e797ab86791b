//! Times a report of a 1,000-test lab run (issue 6: "renders in a few seconds").
//!
//! `cargo run --release -p sonde-doc --example bench_render [TESTS]` builds a results database
//! in a temporary directory (50 loss settings × 4 tests × 5 repetitions by default, each test
//! carrying a real `sonde -J` document from the test fixtures), then times reading it and
//! rendering each format.

use std::time::Instant;

use serde_json::json;
use sonde_doc::{render, Format, Inputs};
use sonde_store::*;

const DOCS: [(&str, &str); 3] = [
    ("tcp", include_str!("../tests/fixtures/docs/tcp-cubic.json")),
    ("udp", include_str!("../tests/fixtures/docs/udp-97m.json")),
    (
        "latency",
        include_str!("../tests/fixtures/docs/latency.json"),
    ),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = std::env::args().nth(1).map_or(Ok(1000), |s| s.parse())?;
    let dir = std::env::temp_dir().join(format!("sonde-bench-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let db = dir.join("results.db");
    let tests = ["tcp-cubic", "tcp-bbr", "udp-97m", "latency"];
    let reps = 5;
    let settings_n = n.div_ceil(tests.len() as u32 * reps);
    let mut store = Store::open(&db)?;
    let settings: Vec<LinkSettingsRecord> = (0..settings_n)
        .map(|i| LinkSettingsRecord {
            name: format!("loss-{i}"),
            ordinal: i,
            settings: json!({"name": format!("loss-{i}"), "link": [{"link": "wan",
                "impair": {"rate": "100mbit", "loss": format!("{}%", f64::from(i) * 0.4)}}]}),
            backend_plan: None,
        })
        .collect();
    let run = store.begin_run(&NewRun {
        scenario_name: "bench".into(),
        scenario_toml: String::new(),
        sonde_version: "sonde 0.1.0".into(),
        hostname: "bench".into(),
        kernel: "bench".into(),
        host_info: json!({}),
        seed: 1,
        started_unix: 1.8e9,
        settings,
    })?;
    let mut records = Vec::new();
    for i in 0..n {
        let s = i / (tests.len() as u32 * reps);
        let rep = i / tests.len() as u32 % reps + 1;
        let test = tests[i as usize % tests.len()];
        let doc = DOCS[(i as usize % tests.len()).saturating_sub(1).min(2)].1;
        records.push(TestRecord {
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
            status: if i % 37 == 0 {
                TestStatus::Failed
            } else {
                TestStatus::Ok
            },
            failure_reason: (i % 37 == 0).then(|| "timed out".into()),
            result_path: None,
            result_json: Some(doc.into()),
            client: EndRecord::default(),
            server: EndRecord::default(),
            stage_stats: None,
        });
    }
    let t = Instant::now();
    store.record_tests(run, &records)?;
    println!("stored {n} tests in {:.3} s", t.elapsed().as_secs_f64());
    drop(store);

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
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
