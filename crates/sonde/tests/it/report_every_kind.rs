//! Every kind of `-J` document sonde writes, read back by `sonde report`: each command runs
//! once on loopback (against `sonde server`, `sonde services` or a `switch-test` peer), all
//! the documents go to one `sonde report --format json`, and for each the report must have
//! read the kind the command wrote, as a passed test, with a figure equal to the document's
//! own. A document the report's typed model refuses, or reads as another kind, fails here
//! by name. The runs are kept short: the whole test is a few seconds of traffic.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::services::Services;
use common::{
    ipv6_loopback_available, num, require_all, run, switch_test_loopback_with, uint, Output,
    Server, TempDir,
};
use serde_json::Value;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// One document: its file name, the report's kind for it, the document.
struct Written {
    file: &'static str,
    kind: &'static str,
    doc: Value,
}

fn written(file: &'static str, kind: &'static str, out: &Output) -> Written {
    out.expect_code(0);
    Written {
        file,
        kind,
        doc: out.json(),
    }
}

/// The kinds `sonde server` answers: client, server, coded, latency, profile, sweep,
/// capacity, rrul, btc. (`serial`'s run needs no server: [`serial_echo_run`].)
fn server_kinds() -> Vec<Written> {
    let mut one_off = Server::start(&["-J", "-1"]);
    let client = one_off.client(&["-t", "0.5", "-J"], DEADLINE);
    let server_doc = one_off.take().wait(DEADLINE);
    let server = Server::start(&[]);
    let cmd = |sub: &str, args: &[&str]| server.command(sub, args, DEADLINE);
    let port = server.port.to_string();
    vec![
        written("client.json", "throughput", &client),
        written("server.json", "throughput", &server_doc),
        written(
            "coded.json",
            "throughput",
            &server.client(&["--coded", "-n", "1M", "-J"], DEADLINE),
        ),
        written(
            "latency.json",
            "latency",
            &cmd("latency", &["-c", "5", "-i", "10ms", "-J"]),
        ),
        written(
            "profile.json",
            "profile",
            &run(
                &[
                    "profile",
                    "run",
                    "127.0.0.1",
                    "-p",
                    &port,
                    "monitoring",
                    "-t",
                    "1",
                    "-J",
                ],
                DEADLINE,
            ),
        ),
        written(
            "sweep.json",
            "sweep",
            &cmd(
                "sweep",
                &[
                    "-u",
                    "-q",
                    "-b",
                    "4m",
                    "-l",
                    "1448",
                    "--step-time",
                    "0.3",
                    "-J",
                ],
            ),
        ),
        written(
            "capacity.json",
            "capacity",
            &cmd(
                "capacity",
                &["--short-trains", "20", "--long-trains", "3", "-J"],
            ),
        ),
        written(
            "rrul.json",
            "rrul",
            &cmd("rrul", &["--phase", "0.5", "--step", "0.1", "-J"]),
        ),
        written(
            "btc.json",
            "btc",
            &cmd("btc", &["--sizes", "1000000", "--every", "100ms", "-J"]),
        ),
    ]
}

/// The kinds that need both loopback families: compare-ip and switch-test.
fn dual_stack_kinds() -> Vec<Written> {
    let server = Server::start(&[]);
    let compare = run(
        &server.compare_ip_args(&["-c", "3", "--throughput-time", "0.5", "-J"]),
        DEADLINE,
    );
    // 0: neither family is better; 3 or 4: IPv4 or IPv6 is (loopback can go either way).
    assert!(
        matches!(compare.code(), Some(0 | 3 | 4)),
        "{}",
        compare.describe()
    );
    let switch = switch_test_loopback_with(&[], &["-t", "1", "--every", "0.25", "-J"], DEADLINE);
    vec![
        Written {
            file: "compare-ip.json",
            kind: "compare-ip",
            doc: compare.json(),
        },
        written("switch-test.json", "throughput", &switch),
    ]
}

/// `sonde serial PTY --file F --loopback --block BLOCKS -J` against a pty whose other side
/// echoes every byte back (a device wired in loopback): a real run, a second or so.
pub fn serial_echo_run(tag: &str, blocks: &str) -> Output {
    let echo = sonde_testkit::pty::echo();
    let device = echo.path.display().to_string();
    let dir = TempDir::new(tag);
    let file = dir.file("f.bin");
    std::fs::write(
        &file,
        (0..600u32).map(|i| (i % 251) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    let f = file.display().to_string();
    let out = run(
        &[
            "serial",
            &device,
            "--file",
            &f,
            "--loopback",
            "--block",
            blocks,
            "-J",
        ],
        DEADLINE,
    );
    drop(echo);
    out
}

/// The report's JSON for `docs`, each written to its file first.
fn report(dir: &TempDir, docs: &[Written]) -> Value {
    let mut args = vec!["report".to_owned()];
    for w in docs {
        let path = dir.file(w.file);
        std::fs::write(&path, serde_json::to_vec(&w.doc).unwrap()).unwrap();
        args.push(path.display().to_string());
    }
    let out = dir.file("report");
    args.extend(["-o".into(), out.display().to_string()]);
    args.extend(["--format".into(), "json".into()]);
    run(&args, DEADLINE).expect_code(0);
    serde_json::from_slice(&std::fs::read(out.join("report.json")).unwrap()).unwrap()
}

/// The received bytes of the report's first direction.
fn received_bytes(result: &Value) -> u64 {
    uint(result, "directions.0.received_bytes")
}

/// For each kind, a figure the report shows against the document's own.
fn check_figure(w: &Written, result: &Value) {
    let d = &w.doc;
    let is = |path: &str, want: &Value| assert_eq!(&result[path], want, "{}: {path}", w.file);
    match w.file {
        "client.json" | "server.json" => {
            assert_eq!(received_bytes(result), uint(d, "end.sum_received.bytes"));
            let role = if w.file == "client.json" {
                "client"
            } else {
                "server"
            };
            is("role", &Value::from(role));
        }
        "coded.json" => {
            is("protocol", &Value::from("CODED"));
            assert_eq!(received_bytes(result), uint(d, "delivered_bytes"));
        }
        "switch-test.json" => {
            is("protocol", &Value::from("SWITCH"));
            assert_eq!(received_bytes(result), uint(d, "end.server_bytes"));
        }
        "latency.json" => {
            assert_eq!(uint(result, "sent"), uint(d, "end.loss.sent"));
            assert_eq!(uint(result, "received"), uint(d, "end.loss.received"));
        }
        "profile.json" => {
            let names = |v: &Value, key: &str| -> Vec<(String, u64)> {
                let s = v["streams"].as_array().unwrap();
                s.iter()
                    .map(|x| (x["name"].as_str().unwrap().to_owned(), uint(x, key)))
                    .collect()
            };
            assert_eq!(names(result, "received"), names(d, "received"));
        }
        "sweep.json" => assert_eq!(
            result["steps"].as_array().unwrap().len(),
            d["steps"].as_array().unwrap().len()
        ),
        "capacity.json" => {
            is("verdict", &d["verdict"]);
            assert_eq!(num(result, "adr_bps"), num(d, "estimate.adr_bps"));
        }
        "rrul.json" => {
            let names = |v: &Value| -> Vec<Value> {
                let p = v["phases"].as_array().unwrap();
                p.iter().map(|x| x["name"].clone()).collect()
            };
            assert_eq!(names(result), names(d));
        }
        "btc.json" => assert_eq!(
            uint(result, "sessions.0.bytes"),
            uint(d, "sessions.0.bytes")
        ),
        "compare-ip.json" => is("better", &d["verdict"]["better"]),
        "serial.json" => {
            let blocks = |v: &Value| -> Vec<Value> {
                let t = v["transfers"].as_array().unwrap();
                t.iter().map(|x| x["block"].clone()).collect()
            };
            assert_eq!(blocks(result), blocks(d));
            assert_eq!(
                num(result, "transfers.1.bytes_per_second"),
                num(d, "transfers.1.bytes_per_second")
            );
        }
        "stress.json" => {
            is("shape", &Value::from("run"));
            assert_eq!(uint(result, "end.sent_bytes"), uint(d, "end.sent_bytes"));
        }
        other => panic!("no figure checked for {other}"),
    }
}

#[test]
fn every_document_kind_is_read_back_by_the_report_as_written() {
    let _turn = crate::turns::take(module_path!());
    let mut docs = server_kinds();
    let services = Services::start(&[]);
    docs.push(written(
        "stress.json",
        "stress",
        &services.stress("echo", &["-P", "3", "-t", "1", "-J"]),
    ));
    docs.push(written(
        "serial.json",
        "serial",
        &serial_echo_run("report-every-kind-serial", "8,64"),
    ));
    if ipv6_loopback_available() {
        docs.extend(dual_stack_kinds());
    } else {
        assert!(
            !require_all(),
            "::1 is needed for compare-ip and switch-test"
        );
        eprintln!("compare-ip and switch-test left out: no IPv6 loopback");
    }
    let dir = TempDir::new("report-every-kind");
    let report = report(&dir, &docs);
    let tests = report["tests"].as_array().unwrap();
    assert_eq!(tests.len(), docs.len(), "{report}");
    for (w, t) in docs.iter().zip(tests) {
        assert!(
            t["id"].as_str().unwrap().ends_with(w.file),
            "{} in the order given: {}",
            w.file,
            t["id"]
        );
        assert_eq!(t["ok"], true, "{}: {}", w.file, t["failure_reason"]);
        assert_eq!(t["result"]["kind"], w.kind, "{}", w.file);
        check_figure(w, &t["result"]);
    }
}
