//! One test of the matrix, run inside a built lab and turned into a database record.
//!
//! The record is complete whatever happens: a test that exits non-zero, prints no result, or
//! hangs and is killed at its deadline is still recorded, as failed, with the reason (exit
//! status and the tail of stderr, or the timeout), its interface counters and whatever result
//! document it did print, so the report can list it with its parameters. Only a test stopped
//! by Ctrl-C is not recorded: it did not fail, it was not allowed to finish, and `--resume`
//! runs it again.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use sonde_lab::Lab;
use sonde_scenario::{Run, Scenario, Test, TestKind};
use sonde_store::{Cpu, EndRecord, IfCounters, InterfaceTraffic, Store, TestRecord, TestStatus};

use crate::args::{self, Endpoints};
use crate::exec;

/// What a test runs in: the lab, the scenario, where results go.
pub(crate) struct TestEnv<'a> {
    pub lab: &'a Lab,
    pub scenario: &'a Scenario,
    pub sonde_exe: &'a Path,
    pub out_dir: &'a Path,
    /// The settings' backend plan, recorded as each test's link status.
    pub link_status: Option<Value>,
}

/// Seconds since the Unix epoch, now.
pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The client and server node of a test: its own, or the scenario's first and last host.
pub(crate) fn nodes<'a>(scenario: &'a Scenario, test: &'a Test) -> (&'a str, &'a str) {
    let first = scenario.hosts.first().map_or("client", String::as_str);
    let last = scenario.hosts.last().map_or("server", String::as_str);
    (
        test.client.as_deref().unwrap_or(first),
        test.server.as_deref().unwrap_or(last),
    )
}

/// The program and arguments a test runs, placeholders filled.
pub(crate) fn command_line(test: &Test, sonde_exe: &Path, ep: &Endpoints) -> (String, Vec<String>) {
    let fill =
        |a: &[String]| -> Vec<String> { a.iter().map(|s| args::substitute(s, ep)).collect() };
    match test.kind() {
        Some(TestKind::Sonde(a)) => (sonde_exe.display().to_string(), args::with_json(&fill(a))),
        Some(TestKind::Command(c)) => {
            let all = fill(c);
            let program = all.first().cloned().unwrap_or_default();
            (program, all.into_iter().skip(1).collect())
        }
        None => (String::new(), Vec::new()),
    }
}

/// The estimated wall time of a test, for the progress bar's ETA.
pub(crate) fn estimate(test: &Test) -> Duration {
    let a = test
        .sonde
        .as_deref()
        .or(test.command.as_deref())
        .unwrap_or_default();
    Duration::from_secs_f64(args::duration_secs(a).unwrap_or(10.0) + 1.0)
}

fn endpoints(lab: &Lab, client: &str, server: &str) -> Result<(Endpoints, String, String), String> {
    let c = lab.node(client).map_err(|e| e.to_string())?;
    let s = lab.node(server).map_err(|e| e.to_string())?;
    let (Some(ci), Some(si)) = (c.ifaces.first(), s.ifaces.first()) else {
        return Err(format!("{client} or {server} has no interface"));
    };
    let ep = Endpoints {
        server4: si.ipv4,
        server6: si.ipv6,
        client4: ci.ipv4,
        client6: ci.ipv6,
    };
    Ok((ep, ci.name.clone(), si.name.clone()))
}

fn read_counters(lab: &Lab, node: &str, iface: &str) -> Option<IfCounters> {
    let all = lab.counters(node).ok()?;
    let c = all.into_iter().find(|c| c.name == iface)?;
    Some(IfCounters {
        rx_packets: c.rx_packets,
        rx_bytes: c.rx_bytes,
        tx_packets: c.tx_packets,
        tx_bytes: c.tx_bytes,
    })
}

/// Both ends' CPU from an iperf3-schema document (`end.cpu_utilization_percent`); the
/// server's only when the document says it was reported. A coded transfer's document has
/// them as `cpu_local` and `cpu_remote` (null when unknown).
fn cpu(doc: &Value) -> (Option<Cpu>, Option<Cpu>) {
    if doc["protocol"] == "coded" {
        let get = |key: &str| -> Option<Cpu> {
            let c = &doc[key];
            Some(Cpu {
                total: c["total"].as_f64()?,
                user: c["user"].as_f64()?,
                system: c["system"].as_f64()?,
            })
        };
        return (get("cpu_local"), get("cpu_remote"));
    }
    let c = &doc["end"]["cpu_utilization_percent"];
    let get = |side: &str| -> Option<Cpu> {
        Some(Cpu {
            total: c[format!("{side}_total")].as_f64()?,
            user: c[format!("{side}_user")].as_f64()?,
            system: c[format!("{side}_system")].as_f64()?,
        })
    };
    let remote_known = doc["end"]["sonde"]["remote_cpu_known"]
        .as_bool()
        .unwrap_or(true);
    (get("host"), get("remote").filter(|_| remote_known))
}

/// The error a result document reports, if any (iperf3's top-level `error`).
fn doc_error(doc: &Value) -> Option<String> {
    doc["error"].as_str().map(str::to_owned)
}

/// Why a finished process counts as failed, or `None` when it succeeded: it exited with one
/// of `ok_codes` (see [`Invocation::ok_codes`]) and, for sonde, printed its document.
fn failure(
    f: &exec::Finished,
    timeout: f64,
    doc: Option<&Value>,
    sonde: bool,
    ok_codes: &[i32],
) -> Option<String> {
    let stderr = exec::tail(&String::from_utf8_lossy(&f.stderr), 4, 400);
    let with_stderr = |head: String| {
        if stderr.is_empty() {
            head
        } else {
            format!("{head}: {stderr}")
        }
    };
    if f.timed_out {
        return Some(with_stderr(format!(
            "timed out after {timeout:.0} s and was killed"
        )));
    }
    let code = f.status.and_then(|s| s.code());
    if !code.is_some_and(|c| ok_codes.contains(&c)) {
        let status = match (code, f.status) {
            (Some(c), _) => format!("exit status {c}"),
            (None, Some(s)) => format!("ended by {s}"),
            (None, None) => "lost track of the process".to_owned(),
        };
        let head = match doc.and_then(doc_error) {
            Some(e) => format!("{status}: {e}"),
            None => status,
        };
        return Some(with_stderr(head));
    }
    if sonde && doc.is_none() {
        return Some(with_stderr("no JSON result on stdout".to_owned()));
    }
    None
}

/// Runs `run` in `env` and returns its record, or `None` when `interrupt` stopped it.
pub(crate) fn run_test(env: &TestEnv<'_>, run: &Run, interrupt: &AtomicBool) -> Option<TestRecord> {
    let mut rec = blank_record(env, run);
    let Some(test) = env.scenario.test(&run.test) else {
        rec.failure_reason = Some(format!("the scenario has no test {:?}", run.test));
        return Some(rec);
    };
    let (client, server) = nodes(env.scenario, test);
    let (ep, c_if, s_if) = match endpoints(env.lab, client, server) {
        Ok(v) => v,
        Err(e) => {
            rec.failure_reason = Some(e);
            return Some(rec);
        }
    };
    let inv = Invocation::of(test, env.sonde_exe, &ep);
    rec.kind = if inv.sonde { "sonde" } else { "command" }.into();
    rec.protocol = inv.protocol();
    rec.parameters = json!({
        "argv": inv.shown(),
        "client": client,
        "server": server,
        "server_address": ep.server4.to_string(),
        "client_address": ep.client4.to_string(),
        "timeout_secs": inv.timeout,
        "seed": run.seed,
    });
    let counters = || {
        (
            read_counters(env.lab, client, &c_if),
            read_counters(env.lab, server, &s_if),
        )
    };
    let before = counters();
    let arg_refs: Vec<&str> = inv.argv.iter().map(String::as_str).collect();
    let cmd = match env.lab.command(client, &inv.program, &arg_refs) {
        Ok(c) => c,
        Err(e) => {
            rec.failure_reason = Some(e.to_string());
            return Some(rec);
        }
    };
    rec.started_unix = unix_now();
    let finished = exec::run(cmd, Duration::from_secs_f64(inv.timeout), interrupt);
    rec.ended_unix = unix_now();
    let finished = match finished {
        Ok(f) if f.interrupted => return None,
        Ok(f) => f,
        Err(e) => {
            let program = &inv.program;
            rec.failure_reason = Some(format!("cannot start `ip netns exec ... {program}`: {e}"));
            return Some(rec);
        }
    };
    let after = counters();
    rec.client.traffic = traffic(&c_if, before.0, after.0);
    rec.server.traffic = traffic(&s_if, before.1, after.1);
    finish_record(&mut rec, env, run, &finished, &inv);
    Some(rec)
}

/// `run`'s record before it runs: failed, with no reason yet.
fn blank_record(env: &TestEnv<'_>, run: &Run) -> TestRecord {
    TestRecord {
        matrix_id: run.id.clone(),
        ordinal: u32::try_from(run.index).unwrap_or(u32::MAX),
        settings: run.settings.clone(),
        test_name: run.test.clone(),
        repetition: run.repetition,
        seed: run.seed,
        kind: "sonde".into(),
        protocol: None,
        parameters: json!({}),
        link_status: env.link_status.clone(),
        started_unix: unix_now(),
        ended_unix: unix_now(),
        status: TestStatus::Failed,
        failure_reason: None,
        result_path: None,
        result_json: None,
        client: EndRecord::default(),
        server: EndRecord::default(),
        stage_stats: None,
    }
}

/// What a test runs: its program and arguments, placeholders filled, and its deadline.
struct Invocation {
    program: String,
    argv: Vec<String>,
    /// A sonde test (else a command of the scenario's).
    sonde: bool,
    timeout: f64,
}

impl Invocation {
    fn of(test: &Test, sonde_exe: &Path, ep: &Endpoints) -> Invocation {
        let (program, argv) = command_line(test, sonde_exe, ep);
        let sonde = matches!(test.kind(), Some(TestKind::Sonde(_)));
        let timeout = args::timeout_secs(test.timeout.map(|d| d.0.as_secs_f64()), &argv);
        Invocation {
            program,
            argv,
            sonde,
            timeout,
        }
    }

    /// The protocol the arguments (a command's program among them) ask for.
    fn protocol(&self) -> Option<String> {
        if self.sonde {
            args::protocol(&self.argv)
        } else {
            args::protocol(&[vec![self.program.clone()], self.argv.clone()].concat())
        }
    }

    /// An iperf 2 client writing CSV (`iperf ... -y C`): its lines become a document.
    fn is_iperf2_csv(&self) -> bool {
        let csv =
            self.argv.windows(2).any(|w| {
                (w[0] == "-y" || w[0] == "--reportstyle") && w[1].eq_ignore_ascii_case("c")
            }) || self.argv.iter().any(|a| a.eq_ignore_ascii_case("-yc"));
        !self.sonde && self.program.rsplit('/').next() == Some("iperf") && csv
    }

    /// The exit codes of a test that did its job: 0, and for `sonde compare-ip` also 3 and 4,
    /// its verdict naming IPv4 or IPv6 better (a measured answer, not a failure).
    fn ok_codes(&self) -> &'static [i32] {
        if self.sonde && self.argv.first().is_some_and(|a| a == "compare-ip") {
            &[0, 3, 4]
        } else {
            &[0]
        }
    }

    /// The command line as the record shows it: `sonde` for the executable's path.
    fn shown(&self) -> Vec<String> {
        let program = if self.sonde { "sonde" } else { &self.program };
        std::iter::once(program.to_owned())
            .chain(self.argv.iter().cloned())
            .collect()
    }
}

/// An interface's traffic over the test, when its counters were read before and after.
fn traffic(
    iface: &str,
    before: Option<IfCounters>,
    after: Option<IfCounters>,
) -> Option<InterfaceTraffic> {
    Some(InterfaceTraffic {
        interface: iface.to_owned(),
        before: before?,
        after: after?,
    })
}

/// Adds what the finished process printed (its result document, both ends' CPU) to `rec`,
/// and whether it succeeded.
fn finish_record(
    rec: &mut TestRecord,
    env: &TestEnv<'_>,
    run: &Run,
    finished: &exec::Finished,
    inv: &Invocation,
) {
    let mut text = String::from_utf8_lossy(&finished.stdout).into_owned();
    let mut doc: Option<Value> = serde_json::from_str(text.trim()).ok();
    if doc.is_none() && inv.is_iperf2_csv() {
        doc = crate::iperf2_csv::document(&text, inv.argv.iter().any(|a| a == "-u"));
        if let Some(d) = &doc {
            text = d.to_string();
        }
    }
    if let Some(d) = &doc {
        (rec.client.cpu, rec.server.cpu) = cpu(d);
        rec.result_path = save_raw(env.out_dir, &run.id, &text);
        rec.result_json = Some(text);
    }
    match failure(
        finished,
        inv.timeout,
        doc.as_ref(),
        inv.sonde,
        inv.ok_codes(),
    ) {
        Some(reason) => rec.failure_reason = Some(reason),
        None => rec.status = TestStatus::Ok,
    }
}

/// Writes the raw document beside the database; its path relative to `out_dir`, or `None`
/// when it could not be written (the database still has the document).
fn save_raw(out_dir: &Path, matrix_id: &str, text: &str) -> Option<String> {
    let path: PathBuf = Store::raw_path(out_dir, matrix_id);
    std::fs::create_dir_all(path.parent()?).ok()?;
    std::fs::write(&path, text).ok()?;
    path.strip_prefix(out_dir)
        .ok()
        .map(|p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invocation_shows_sonde_and_tells_a_commands_protocol() {
        let sonde = Invocation {
            program: "/usr/bin/sonde".into(),
            argv: vec!["latency".into(), "10.0.0.2".into()],
            sonde: true,
            timeout: 15.0,
        };
        assert_eq!(sonde.shown(), ["sonde", "latency", "10.0.0.2"]);
        assert_eq!(sonde.protocol().as_deref(), Some("latency"));
        // A command's protocol is told by its program too.
        let command = Invocation {
            program: "iperf3".into(),
            argv: vec!["-c".into(), "10.0.0.2".into()],
            sonde: false,
            timeout: 15.0,
        };
        assert_eq!(command.shown(), ["iperf3", "-c", "10.0.0.2"]);
        assert_eq!(command.protocol().as_deref(), Some("tcp"));
    }

    /// compare-ip's verdict exits (3: IPv4 better, 4: IPv6) with its document are a
    /// result; the same codes from another test, or without a document, are a failure.
    #[test]
    fn a_compare_ip_verdict_exit_is_a_result() {
        use std::os::unix::process::ExitStatusExt;
        let finished = |code: i32| exec::Finished {
            status: Some(std::process::ExitStatus::from_raw(code << 8)),
            stdout: Vec::new(),
            stderr: Vec::new(),
            timed_out: false,
            interrupted: false,
        };
        let inv = |first: &str| Invocation {
            program: "/usr/bin/sonde".into(),
            argv: vec![first.into(), "10.0.0.2".into()],
            sonde: true,
            timeout: 15.0,
        };
        let doc = serde_json::json!({"verdict": {"better": "ipv4"}});
        let compare = inv("compare-ip");
        let codes = compare.ok_codes();
        assert_eq!(failure(&finished(3), 15.0, Some(&doc), true, codes), None);
        assert_eq!(failure(&finished(4), 15.0, Some(&doc), true, codes), None);
        let no_doc = failure(&finished(3), 15.0, None, true, codes);
        assert!(no_doc.is_some_and(|r| r.contains("no JSON")));
        let error = failure(&finished(1), 15.0, Some(&doc), true, codes);
        assert!(error.is_some_and(|r| r.contains("exit status 1")));
        let latency = inv("latency");
        let other = failure(&finished(3), 15.0, Some(&doc), true, latency.ok_codes());
        assert!(other.is_some_and(|r| r.contains("exit status 3")));
    }

    #[test]
    fn traffic_needs_both_readings() {
        let c = |rx: u64| IfCounters {
            rx_packets: rx,
            rx_bytes: rx * 100,
            tx_packets: 0,
            tx_bytes: 0,
        };
        let t = traffic("veth0", Some(c(1)), Some(c(5))).unwrap();
        assert_eq!((t.interface.as_str(), t.after.rx_bytes), ("veth0", 500));
        assert!(traffic("veth0", None, Some(c(5))).is_none());
        assert!(traffic("veth0", Some(c(1)), None).is_none());
    }

    #[test]
    fn cpu_from_documents() {
        let d = json!({"end": {"cpu_utilization_percent": {"host_total": 5.0, "host_user": 1.0,
            "host_system": 4.0, "remote_total": 2.0, "remote_user": 0.5, "remote_system": 1.5},
            "sonde": {"remote_cpu_known": true}}});
        let (c, s) = cpu(&d);
        assert_eq!(c.map(|c| c.total), Some(5.0));
        assert_eq!(s.map(|s| s.system), Some(1.5));
        let mut unknown = d.clone();
        unknown["end"]["sonde"]["remote_cpu_known"] = json!(false);
        assert!(cpu(&unknown).1.is_none());
        assert_eq!(cpu(&json!({})), (None, None));
        let coded = json!({"protocol": "coded",
            "cpu_local": {"total": 3.0, "user": 1.0, "system": 2.0}, "cpu_remote": null});
        let (c, s) = cpu(&coded);
        assert_eq!(c.map(|c| c.user), Some(1.0));
        assert!(s.is_none());
    }
}
