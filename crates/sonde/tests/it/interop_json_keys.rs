//! sonde's `-J` documents have every key iperf3 writes, with the same JSON type, and iperf3's
//! documents (Debian's and the newest) read in `sonde report`.
//!
//! For the same test (TCP, UDP, TCP reverse; one second, one stream) an iperf3 client against
//! an iperf3 server writes one document; sonde writes another, client against its own server
//! and `--iperf3` client against the same iperf3's server. Every object iperf3 writes (start,
//! test_start, the first interval's stream and sum, the end streams and sums) is compared key
//! by key: sonde may add keys, never lack one or give it another type. Missing binaries skip
//! (or fail under `SONDE_REQUIRE_ALL=1`), as in `iperf3_interop`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;
use crate::peers;

use common::{run, Server, TempDir};
use peers::Iperf3;
use serde_json::Value;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(30);

/// The tests compared: extra arguments for both tools.
const CASES: [&[&str]; 3] = [&[], &["-u", "-b", "10M"], &["-R"]];

/// The objects compared, as paths of keys and array indexes.
const OBJECTS: [&str; 14] = [
    "",
    "start",
    "start.timestamp",
    "start.connecting_to",
    "start.connected.0",
    "start.test_start",
    "intervals.0.streams.0",
    "intervals.0.sum",
    "end",
    "end.streams.0.sender",
    "end.streams.0.receiver",
    "end.streams.0.udp",
    "end.sum_sent",
    "end.sum_received",
];

fn args(base: &[&str], extra: &[&str]) -> Vec<String> {
    base.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// The value at a dotted path (`a.0.b`), None where it is not there.
fn at<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .filter(|k| !k.is_empty())
        .try_fold(doc, |v, k| match k.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(k),
        })
}

/// The JSON type of a value (integers and floats are both numbers, as for cJSON).
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key of every compared object of `theirs` that `ours` lacks or types differently.
fn shape_differences(theirs: &Value, ours: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    for path in OBJECTS {
        let Some(Value::Object(t)) = at(theirs, path) else {
            continue;
        };
        let o = at(ours, path).and_then(Value::as_object);
        for (k, tv) in t {
            match o.and_then(|o| o.get(k)) {
                None => diffs.push(format!("{path}.{k}: missing (iperf3: {tv})")),
                Some(ov) if kind(ov) != kind(tv) => diffs.push(format!(
                    "{path}.{k}: {} {ov}, iperf3 {} {tv}",
                    kind(ov),
                    kind(tv)
                )),
                Some(_) => {}
            }
        }
    }
    diffs
}

fn json_doc(out: &common::Output) -> Value {
    out.expect_code(0);
    let doc = out.json();
    assert!(doc.get("error").is_none(), "{}", out.describe());
    doc
}

/// `iperf3 -c` against `iperf3 -s` of the same binary.
fn iperf3_pair(ip: &Iperf3, extra: &[&str]) -> Value {
    let (port, server) = ip.serve_once(DEADLINE);
    let p = port.to_string();
    let doc = json_doc(&ip.run(
        &args(&["-c", "127.0.0.1", "-p", &p, "-t", "1", "-J"], extra),
        DEADLINE,
    ));
    server.join().expect("iperf3 server").expect_code(0);
    doc
}

/// `sonde client --iperf3` against `iperf3 -s`.
fn sonde_to_iperf3(ip: &Iperf3, extra: &[&str]) -> Value {
    let (port, server) = ip.serve_once(DEADLINE);
    let p = port.to_string();
    let base = ["client", "127.0.0.1", "-p", &p, "--iperf3", "-t", "1", "-J"];
    let doc = json_doc(&run(&args(&base, extra), DEADLINE));
    server.join().expect("iperf3 server").expect_code(0);
    doc
}

/// `sonde client` against `sonde server`.
fn sonde_pair(extra: &[&str]) -> Value {
    let server = Server::start(&["-1"]);
    json_doc(&server.client(&[&["-t", "1", "-J"], extra].concat(), DEADLINE))
}

#[test]
fn sonde_documents_have_every_key_iperf3_writes() {
    let _turn = crate::turns::take(module_path!());
    let iperf3s = peers::all();
    if iperf3s.is_empty() {
        return;
    }
    let ours: Vec<Value> = CASES.iter().map(|extra| sonde_pair(extra)).collect();
    let mut failures = Vec::new();
    std::thread::scope(|s| {
        let runs: Vec<_> = iperf3s
            .iter()
            .map(|ip| {
                let ours = &ours;
                s.spawn(move || {
                    let mut f = Vec::new();
                    for (extra, ours) in CASES.iter().zip(ours) {
                        let theirs = iperf3_pair(ip, extra);
                        for d in shape_differences(&theirs, ours) {
                            f.push(format!("{} iperf3 {extra:?}, sonde pair: {d}", ip.label));
                        }
                        // The --iperf3 client's own document, where the figures of the far
                        // end come from iperf3's results (upload: this end sends).
                        if !extra.contains(&"-R") {
                            let via = sonde_to_iperf3(ip, extra);
                            for d in shape_differences(&theirs, &via) {
                                f.push(format!("{} iperf3 {extra:?}, --iperf3: {d}", ip.label));
                            }
                        }
                    }
                    f
                })
            })
            .collect();
        for r in runs {
            failures.extend(r.join().expect("comparison thread"));
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn sonde_measures_the_new_tcp_figures() {
    let _turn = crate::turns::take(module_path!());
    // Loopback on this kernel (Linux 5.4+): every figure is there and plausible.
    let doc = sonde_pair(&[]);
    let start = &doc["start"];
    assert!(start["sndbuf_actual"].as_u64().is_some_and(|b| b > 0));
    assert!(start["rcvbuf_actual"].as_u64().is_some_and(|b| b > 0));
    let mss = start["tcp_mss_default"].as_u64().unwrap();
    assert!((1_000..65_536).contains(&mss), "{mss}");
    // The send window is the kernel's `tcpi_snd_wnd` when the interval ended: 0 whenever the
    // receiver's window was full at that moment, which a busy host makes likely in any one
    // interval. Every interval has the figure; the run's largest one is above 0.
    let intervals = doc["intervals"].as_array().unwrap();
    let windows: Vec<u64> = intervals
        .iter()
        .map(|i| i["streams"][0]["snd_wnd"].as_u64().unwrap())
        .collect();
    let s0 = &intervals[0]["streams"][0];
    assert!(s0["reorder"].as_u64().is_some(), "{s0}");
    let sender = &doc["end"]["streams"][0]["sender"];
    let max_snd_wnd = sender["max_snd_wnd"].as_u64().unwrap();
    assert!(max_snd_wnd > 0, "{sender}");
    assert!(
        windows.iter().all(|w| *w <= max_snd_wnd),
        "intervals' snd_wnd {windows:?} above max_snd_wnd {max_snd_wnd}"
    );
    // Both ends' congestion control: this host's (the sender) and the server's, from the
    // results exchange.
    let cc = doc["end"]["sender_tcp_congestion"].as_str().unwrap();
    assert_eq!(doc["end"]["receiver_tcp_congestion"].as_str(), Some(cc));
    // UDP sums are marked as iperf3 marks them, on the sending client too.
    let udp = sonde_pair(&["-u", "-b", "10M"]);
    assert_eq!(udp["end"]["sum_sent"]["sender"], true);
    assert_eq!(udp["end"]["sum_received"]["sender"], false);
    assert_eq!(
        udp["start"]["test_start"]["gro"], 0,
        "the client only sends"
    );
}

#[test]
fn iperf3_documents_read_in_sonde_live() {
    let _turn = crate::turns::take(module_path!());
    for ip in peers::all() {
        let dir = TempDir::new("iperf3-report");
        let mut inputs = Vec::new();
        for (i, extra) in CASES.iter().take(2).enumerate() {
            let file = dir.file(&format!("{}-{i}.json", ip.label));
            std::fs::write(&file, iperf3_pair(&ip, extra).to_string()).unwrap();
            inputs.push(file.to_string_lossy().into_owned());
        }
        let out = dir.file("out").to_string_lossy().into_owned();
        let mut a = vec!["report".to_string()];
        a.extend(inputs);
        a.extend(args(&["-o", &out, "--format", "json"], &[]));
        run(&a, DEADLINE).expect_code(0);
        let report: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.file("out/report.json")).unwrap())
                .unwrap();
        let tests = report["tests"].as_array().unwrap();
        assert_eq!(tests.len(), 2, "{} iperf3: {report}", ip.label);
        for t in tests {
            assert_eq!(t["ok"], true, "{} iperf3: {t}", ip.label);
        }
        let rows: Vec<&Value> = report["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["rows"].as_array().unwrap())
            .collect();
        assert_eq!(rows.len(), 2, "{} iperf3: TCP and UDP rows", ip.label);
        for r in rows {
            assert!(
                r["goodput_bps"].as_f64().is_some_and(|g| g > 1e6),
                "{} iperf3: {r}",
                ip.label
            );
        }
    }
}

#[test]
fn the_comparison_finds_missing_and_retyped_keys() {
    let _turn = crate::turns::take(module_path!());
    let theirs = serde_json::json!({
        "start": {"fq_rate": 0, "test_start": {"gso": 0, "interval": 1}},
        "end": {"streams": [{"sender": {"max_snd_wnd": 5, "sender": true}}]},
    });
    let ours = serde_json::json!({
        "start": {"fq_rate": 0.0, "extra": 1, "test_start": {"gso": false, "interval": 1.0}},
        "end": {"streams": [{"sender": {"sender": true}}]},
    });
    assert_eq!(
        shape_differences(&theirs, &ours),
        vec![
            "start.test_start.gso: bool false, iperf3 number 0".to_string(),
            "end.streams.0.sender.max_snd_wnd: missing (iperf3: 5)".to_string(),
        ]
    );
    assert!(shape_differences(&theirs, &theirs).is_empty());
}
