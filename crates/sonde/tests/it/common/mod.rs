//! Helpers for driving the real `sonde` binary in integration tests, over the workspace's
//! test kit (`sonde-testkit`: processes, servers, ports, temporary directories, JSON paths,
//! lab availability, scenario files): what is the binary's own stays here, namely its path
//! (the [`Sonde`] program every [`Proc::spawn`] starts), its server and clients on loopback,
//! `sonde switch-test`, `sonde lab run` and a sonde server in a lab node.

#![allow(dead_code)]

pub mod agent;
pub mod prometheus;
pub mod services;

pub use sonde_testkit::json::{arr, at, notes, num, text, uint};
pub use sonde_testkit::net::{
    free_port, ipv6_loopback_available, ipv6_loopback_or_skip, ControlRelay,
};
pub use sonde_testkit::proc::{run_program, Killed, Output};
pub use sonde_testkit::{listeners, postgres};
pub use sonde_testkit::{require_all, which, TempDir};

use serde_json::Value;
use sonde_testkit::proc::Program;
use sonde_testkit::scenario::chain;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::thread;
use std::time::Duration;

/// True when the lab (network namespaces, root) can run here; otherwise prints why, and fails
/// instead under `SONDE_REQUIRE_ALL=1`.
pub fn lab_available() -> bool {
    sonde_testkit::lab::available(sonde_lab::check_privileges())
}

/// [`lab_available`], and every program of `programs` installed (else says that `what` skips
/// for want of it; fails under `SONDE_REQUIRE_ALL=1`).
#[track_caller]
pub fn lab_available_with(what: &str, programs: &[&str]) -> bool {
    sonde_testkit::lab::available_with(sonde_lab::check_privileges(), what, programs)
}

/// The binary under test, as the program a [`Proc`] starts.
pub struct Sonde;

impl Program for Sonde {
    const PATH: &'static str = env!("CARGO_BIN_EXE_sonde");
}

/// A running `sonde` child ([`Proc::spawn`]) or another program's
/// ([`Proc::spawn_program`]); killed when dropped.
pub type Proc = sonde_testkit::proc::Proc<Sonde>;

/// The binary under test.
pub fn sonde_bin() -> &'static str {
    Sonde::PATH
}

/// Runs `sonde ARGS` to completion within `timeout`.
#[track_caller]
pub fn run<S: AsRef<str>>(args: &[S], timeout: Duration) -> Output {
    Proc::spawn(args).wait(timeout)
}

/// A one-off `sonde switch-test --listen` on a free port, and a client run against it over
/// 127.0.0.1 and ::1 with `extra` flags (the server is killed when the client is done).
pub fn switch_test_loopback(extra: &[&str], timeout: Duration) -> Output {
    switch_test_loopback_with(&[], extra, timeout)
}

/// [`switch_test_loopback`] with `server_extra` flags for the server.
pub fn switch_test_loopback_with(
    server_extra: &[&str],
    extra: &[&str],
    timeout: Duration,
) -> Output {
    let port = free_port().to_string();
    let server = [
        &["switch-test", "--listen", "-1", "-p", &port][..],
        server_extra,
    ]
    .concat();
    let _server = switch_test_server(&server);
    switch_test_client(&port, extra, timeout)
}

/// What `sonde switch-test --listen` prints once it listens on both families.
pub const SWITCH_TEST_LISTENING: &str = "sonde switch-test: listening on port";

/// Starts `sonde ARGS` (a `switch-test --listen`) and returns it once it listens, rather than
/// after a fixed sleep a loaded host may outlast. A connect would not do to probe it: a
/// one-off server (`-1`) would take the probe for its client.
#[track_caller]
pub fn switch_test_server<S: AsRef<str>>(args: &[S]) -> Proc {
    let mut p = Proc::spawn(args);
    p.wait_says(SWITCH_TEST_LISTENING, Duration::from_secs(10));
    p
}

/// `sonde switch-test --v4 127.0.0.1 --v6 ::1 -p PORT EXTRA...` (a server must be there).
pub fn switch_test_client(port: &str, extra: &[&str], timeout: Duration) -> Output {
    run(&switch_test_client_args(port, extra), timeout)
}

/// The arguments of [`switch_test_client`] (to spawn it and signal it).
pub fn switch_test_client_args<'a>(port: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "switch-test",
        "--v4",
        "127.0.0.1",
        "--v6",
        "::1",
        "-p",
        port,
    ];
    a.extend_from_slice(extra);
    a
}

/// A `sonde server` child on its own port (the test kit's [`sonde_testkit::server::Server`]:
/// ready once it listens there, killed when dropped, its output shown by a failing test), and
/// the command lines of the clients that test it.
pub struct Server {
    pub port: u16,
    server: sonde_testkit::server::Server<Sonde>,
}

impl Server {
    /// `sonde server -p PORT EXTRA...`, ready to accept.
    pub fn start(extra: &[&str]) -> Server {
        Server::start_as(&["server"], extra)
    }

    /// Like [`Server::start`] with another spelling of the subcommand (e.g. `["-s"]`).
    pub fn start_as(cmd: &[&str], extra: &[&str]) -> Server {
        let server = sonde_testkit::server::Server::start(
            |port| {
                let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
                args.extend(["-p".to_string(), port.to_string()]);
                args.extend(extra.iter().map(|s| s.to_string()));
                Proc::spawn(&args)
            },
            Duration::from_secs(5),
        );
        Server {
            port: server.port,
            server,
        }
    }

    pub fn proc(&mut self) -> &mut Proc {
        self.server.proc()
    }

    /// Takes the server process (to signal it and wait for its exit).
    pub fn take(&mut self) -> Proc {
        self.server.take()
    }

    /// What the server printed so far.
    pub fn output_so_far(&self) -> String {
        self.server.output_so_far()
    }

    /// The JSON documents the server (run with `-J`) printed so far.
    pub fn documents(&mut self) -> Vec<serde_json::Value> {
        let stdout = self.proc().stdout_so_far();
        serde_json::Deserializer::from_str(&stdout)
            .into_iter::<serde_json::Value>()
            .map_while(Result::ok)
            .collect()
    }

    /// Waits until the server has written `n` documents, or `within` passed; what it wrote.
    pub fn wait_documents(&mut self, n: usize, within: Duration) -> Vec<serde_json::Value> {
        let t0 = std::time::Instant::now();
        loop {
            let docs = self.documents();
            if docs.len() >= n || t0.elapsed() > within {
                return docs;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs `sonde client 127.0.0.1 -p PORT ARGS...` to completion within `timeout`.
    #[track_caller]
    pub fn client(&self, args: &[&str], timeout: Duration) -> Output {
        run(&self.client_args(args), timeout)
    }

    /// Starts `sonde client 127.0.0.1 -p PORT ARGS...` in the background.
    pub fn spawn_client(&self, args: &[&str]) -> Proc {
        Proc::spawn(&self.client_args(args))
    }

    pub fn client_args(&self, args: &[&str]) -> Vec<String> {
        self.command_args("client", args)
    }

    /// Runs `sonde SUB 127.0.0.1 -p PORT ARGS...` (`sweep`, `capacity`, ... against this
    /// server) to completion within `timeout`.
    #[track_caller]
    pub fn command(&self, sub: &str, args: &[&str], timeout: Duration) -> Output {
        run(&self.command_args(sub, args), timeout)
    }

    /// `compare-ip localhost -p PORT --ipv4-addr 127.0.0.1 --ipv6-addr ::1 ARGS...`: both
    /// families to this server.
    pub fn compare_ip_args(&self, args: &[&str]) -> Vec<String> {
        let port = self.port.to_string();
        [
            "compare-ip",
            "localhost",
            "-p",
            &port,
            "--ipv4-addr",
            "127.0.0.1",
            "--ipv6-addr",
            "::1",
        ]
        .iter()
        .chain(args)
        .map(|s| s.to_string())
        .collect()
    }

    /// `SUB 127.0.0.1 -p PORT ARGS...`
    pub fn command_args(&self, sub: &str, args: &[&str]) -> Vec<String> {
        let mut v = vec![
            sub.to_string(),
            "127.0.0.1".to_string(),
            "-p".to_string(),
            self.port.to_string(),
        ];
        v.extend(args.iter().map(|s| s.to_string()));
        v
    }
}

// ---------------------------------------------------------------------------------------------
// lab runs
// ---------------------------------------------------------------------------------------------

/// A client - router - server lab (links `lan` and `wan`, settings `s`) whose router-server
/// link is impaired both ways by `impair` (a TOML inline table body; empty for none), its
/// namespaces named `PREFIX-client` etc.
pub fn chain3_lab(prefix: &str, impair: &str) -> sonde_lab::Lab {
    chain3_lab_with(
        impair,
        sonde_lab::LabOptions {
            prefix: Some(prefix.to_string()),
            ..sonde_lab::LabOptions::default()
        },
    )
}

/// [`chain3_lab`] with its build options given (e.g. `caps: Some(KernelCaps::default())`, which
/// puts every impairment in the userspace engine's box between router and server).
pub fn chain3_lab_with(impair: &str, opts: sonde_lab::LabOptions) -> sonde_lab::Lab {
    let text = sonde_testkit::scenario::chain3(impair)
        .name("chain3")
        .seed(5)
        .to_toml();
    let scenario = sonde_scenario::Scenario::from_toml(&text).expect("test scenario");
    sonde_lab::Lab::build(&scenario, Some("s"), opts).expect("lab builds")
}

/// A lab scenario of one link and one TCP test of 1 s (`sonde lab run` as root).
pub fn one_tcp_test() -> String {
    chain()
        .name("one-test")
        .seed(21)
        .host("client")
        .link("wan")
        .host("server")
        .settings("clean")
        .sonde("tcp", &["client", "{server}", "-t", "1"])
        .to_toml()
}

/// Runs `sonde lab run` on the scenario text (written into `dir`), requires exit 0, and
/// returns the run's output directory (inside `dir`).
pub fn run_lab(dir: &TempDir, scenario: &str, timeout: Duration) -> PathBuf {
    run_lab_exiting(dir, scenario, timeout, &[0])
}

/// As [`run_lab`], for a scenario whose run may end with any of `codes` (a test that exits 1
/// by design still has its result document written).
pub fn run_lab_exiting(dir: &TempDir, scenario: &str, timeout: Duration, codes: &[i32]) -> PathBuf {
    run_lab_output(dir, scenario, timeout, codes).0
}

/// As [`run_lab_exiting`], also returning what `sonde lab run` printed (its `note (...)`
/// lines say where the host held the lab back).
pub fn run_lab_output(
    dir: &TempDir,
    scenario: &str,
    timeout: Duration,
    codes: &[i32],
) -> (PathBuf, Output) {
    let file = dir.file("scenario.toml");
    std::fs::write(&file, scenario).expect("write scenario");
    let out_dir = dir.file("out");
    let out = run(
        &[
            "lab",
            "run",
            &file.to_string_lossy(),
            "--out",
            &out_dir.to_string_lossy(),
        ],
        timeout,
    );
    if out.code() != Some(0) {
        let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap_or_default();
        eprintln!("{report}");
    }
    assert!(
        out.code().is_some_and(|c| codes.contains(&c)),
        "lab run exited {:?}, expected one of {codes:?}\n{}",
        out.code(),
        out.describe()
    );
    (out_dir, out)
}

/// The raw result document of one run of a lab matrix.
pub fn lab_result(out_dir: &Path, settings: &str, test: &str, repetition: u32) -> Value {
    let path = out_dir.join(format!("raw/{settings}/{test}/{repetition}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `sonde ARGS` (a server) in `lab`'s node `server`, once it says it listens.
pub fn lab_server(lab: &sonde_lab::Lab, args: &[&str]) -> Killed {
    let mut child = lab
        .command("server", sonde_bin(), args)
        .expect("server node")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sonde server starts");
    let stderr = child.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if line.contains("listening") {
                let _ = tx.send(());
            }
        }
    });
    let listening = rx.recv_timeout(Duration::from_secs(20));
    assert!(listening.is_ok(), "sonde server never listened");
    Killed(child)
}

/// Writes a fresh random pre-shared key (48 hex digits and a newline) to `path`, as
/// `sonde server --psk-file` reads it.
pub fn random_key(path: &Path) {
    let mut bytes = [0u8; 24];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .unwrap();
    let text: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(path, format!("{text}\n")).unwrap();
}

/// Bytes one TCP connection can hold in flight on loopback: the largest receive buffer the
/// kernel may grow to plus the largest send buffer (`tcp_rmem` and `tcp_wmem`, third field),
/// as this host sets them; 16 MiB when they cannot be read. A receiver held off the CPU at the
/// end of a run leaves up to that much sent but never counted: a fixed 16 MiB was below this
/// host's 32 MiB + 4 MiB, and a loaded CI run once left 57 MB uncounted over three streams.
pub fn tcp_in_flight() -> u64 {
    let max = |name: &str| -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/sys/net/ipv4/{name}")).ok()?;
        text.split_whitespace().nth(2)?.parse().ok()
    };
    match (max("tcp_rmem"), max("tcp_wmem")) {
        (Some(r), Some(w)) => r + w,
        _ => 16 << 20,
    }
}
