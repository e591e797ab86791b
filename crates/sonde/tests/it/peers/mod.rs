//! The iperf3 binaries the interop tests run against, and a runner with a deadline.
//!
//! Two partners, because iperf3 changes between releases what it checks in the parameters and
//! what it writes in `-J`: the distribution's `iperf3` on `PATH` (Debian 12: 3.12) and the
//! newest one, vendored in `third_party/iperf3` and built by `.ci/run` into
//! `target/iperf3-new/iperf3` (`SONDE_IPERF3_NEW` names another binary). A missing binary
//! makes a test say why it skips that partner; under `SONDE_REQUIRE_ALL=1` (CI) it fails.

#![allow(dead_code)]

use crate::common::{self, require_all, Output, Proc};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// One iperf3 binary.
#[derive(Debug, Clone)]
pub struct Iperf3 {
    /// "debian" or "newest", for failure messages.
    pub label: &'static str,
    pub path: PathBuf,
}

impl Iperf3 {
    /// The first line of `--version` (`iperf 3.12 (cJSON 1.7.15)`), None when it does not run.
    pub fn version(&self) -> Option<String> {
        let out = Command::new(&self.path)
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines().next().map(str::to_string)
    }

    /// Runs this iperf3 with `args` to completion within `timeout` (killed past it).
    pub fn run(&self, args: &[String], timeout: Duration) -> Output {
        self.run_env(args, &[], timeout)
    }

    /// [`Iperf3::run`] with extra environment variables (`IPERF3_PASSWORD`).
    pub fn run_env(&self, args: &[String], env: &[(&str, &str)], timeout: Duration) -> Output {
        let started = Instant::now();
        let mut child = Command::new(&self.path)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", self.path.display()));
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let so = thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let se = thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        let status = loop {
            if let Some(st) = child.try_wait().expect("try_wait") {
                break st;
            }
            if started.elapsed() > timeout {
                let _ = child.kill();
                break child.wait().expect("wait");
            }
            thread::sleep(Duration::from_millis(20));
        };
        Output {
            program: format!("{} ({} iperf3)", self.path.display(), self.label),
            args: args.to_vec(),
            status,
            stdout: so.join().unwrap_or_default(),
            stderr: se.join().unwrap_or_default(),
            elapsed: started.elapsed(),
        }
    }
}

impl Iperf3 {
    /// Starts `iperf3 -s -1 -J -p PORT` on a free port in the background (killed after
    /// `timeout`) and returns once it listens: its port and the handle giving its output.
    pub fn serve_once(&self, timeout: Duration) -> (u16, thread::JoinHandle<Output>) {
        self.serve_with(&["-1", "-J"], timeout)
    }

    /// Starts `iperf3 -s -p PORT EXTRA...` on a free port in the background (killed after
    /// `timeout`) and returns once it listens: its port and the handle giving its output.
    pub fn serve_with(
        &self,
        extra: &[&str],
        timeout: Duration,
    ) -> (u16, thread::JoinHandle<Output>) {
        let port = crate::common::free_port();
        let mut args: Vec<String> = ["-s", "-p", &port.to_string()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let me = self.clone();
        let h = thread::spawn(move || me.run(&args, timeout));
        let t0 = Instant::now();
        while !listening(port) {
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "{} iperf3 -s did not listen on {port}",
                self.label
            );
            thread::sleep(Duration::from_millis(20));
        }
        (port, h)
    }
}

/// True once something listens on TCP `port` (read from /proc, so iperf3 sees no connection).
fn listening(port: u16) -> bool {
    bound(port, false)
}

/// Where the newest iperf3 is expected: `SONDE_IPERF3_NEW`, else the workspace's
/// `target/iperf3-new/iperf3`.
fn newest_path() -> PathBuf {
    match std::env::var_os("SONDE_IPERF3_NEW") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/iperf3-new/iperf3"),
    }
}

/// Keeps `bin` when it runs; otherwise fails under `SONDE_REQUIRE_ALL=1` or prints why the
/// tests skip it.
fn checked(bin: Iperf3, remedy: &str) -> Option<Iperf3> {
    if bin.version().is_some() {
        return Some(bin);
    }
    let why = format!(
        "the {} iperf3 ({}) does not run: {remedy}",
        bin.label,
        bin.path.display()
    );
    assert!(!require_all(), "SONDE_REQUIRE_ALL=1 but {why}");
    eprintln!("skipping the {} iperf3: {why}", bin.label);
    None
}

/// The distribution's iperf3 on `PATH`.
pub fn debian() -> Option<Iperf3> {
    checked(
        Iperf3 {
            label: "debian",
            path: PathBuf::from("iperf3"),
        },
        "install Debian's iperf3 (CI does and sets SONDE_REQUIRE_ALL=1)",
    )
}

/// The newest iperf3, built from `third_party/iperf3`.
pub fn newest() -> Option<Iperf3> {
    checked(
        Iperf3 {
            label: "newest",
            path: newest_path(),
        },
        "build it with `third_party/iperf3/build.sh target/iperf3-new` or set SONDE_IPERF3_NEW \
         (.ci/run does both)",
    )
}

/// Every iperf3 that runs here (each missing one said why, or failed under CI).
pub fn all() -> Vec<Iperf3> {
    debian().into_iter().chain(newest()).collect()
}

/// iperf 2 on `PATH` when it runs (`iperf -v` names version 2); else fails under
/// `SONDE_REQUIRE_ALL=1` or says why the test skips.
pub fn iperf2() -> Option<Iperf3> {
    let out = Command::new("iperf").arg("-v").output();
    let runs = out.is_ok_and(|o| {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        text.contains("iperf version 2")
    });
    if !runs {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but iperf 2 (`iperf`) does not run"
        );
        eprintln!("skipping: iperf 2 (`iperf`) does not run: install the iperf package");
        return None;
    }
    Some(Iperf3 {
        label: "iperf 2",
        path: PathBuf::from("iperf"),
    })
}

/// `iperf -s -p PORT EXTRA...` on a free port, once its socket is bound (TCP listening, or
/// with `-u` the UDP port); killed when the `Proc` drops.
pub fn serve_iperf2(iperf2: &Iperf3, extra: &[&str]) -> (u16, Proc) {
    let port = common::free_port();
    let path = iperf2.path.to_string_lossy();
    let mut args = vec!["-s".to_string(), "-p".into(), port.to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut proc = Proc::spawn_program(&path, &args);
    let udp = extra.contains(&"-u");
    let t0 = Instant::now();
    while !bound(port, udp) {
        assert!(
            !proc.has_exited() && t0.elapsed() < Duration::from_secs(5),
            "`iperf {}` did not bind port {port}: {}",
            args.join(" "),
            proc.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (port, proc)
}

/// True once a socket is bound to `port` (TCP: listening), read from `/proc` so the server
/// sees no connection.
fn bound(port: u16, udp: bool) -> bool {
    let needle = format!(":{port:04X}");
    let (tables, state) = if udp {
        (["/proc/net/udp", "/proc/net/udp6"], None)
    } else {
        (["/proc/net/tcp", "/proc/net/tcp6"], Some("0A"))
    };
    tables.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.get(1).is_some_and(|a| a.ends_with(&needle))
                    && state.is_none_or(|s| cols.get(3) == Some(&s))
            })
        })
    })
}
