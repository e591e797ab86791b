//! Helpers for driving the real `sonde` binary in integration tests: free ports, a server that
//! is killed when the test ends (even when it fails), child processes with deadlines, and
//! path lookups into JSON documents with readable failure messages.

#![allow(dead_code)]

pub mod agent;
pub mod listeners;
pub mod postgres;
pub mod services;

use serde_json::Value;
use std::io::Read;
use std::net::{Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// True when the lab (network namespaces, root) can run here; otherwise prints why, and fails
/// instead under `SONDE_REQUIRE_ALL=1`.
pub fn lab_available() -> bool {
    match sonde_lab::check_privileges() {
        Ok(()) => true,
        Err(e) => {
            assert!(!require_all(), "SONDE_REQUIRE_ALL=1 but {e}");
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// The binary under test.
pub fn sonde_bin() -> &'static str {
    env!("CARGO_BIN_EXE_sonde")
}

/// True when `SONDE_REQUIRE_ALL=1`: tests that would skip for lack of a facility must fail.
pub fn require_all() -> bool {
    std::env::var("SONDE_REQUIRE_ALL").is_ok_and(|v| v == "1")
}

/// Whether this host can bind IPv6 loopback.
pub fn ipv6_loopback_available() -> bool {
    TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).is_ok()
}

/// Whether `what` (a test that needs ::1) can run here; when not, says it skips (and fails
/// under `SONDE_REQUIRE_ALL=1`).
pub fn ipv6_loopback_or_skip(what: &str) -> bool {
    if ipv6_loopback_available() {
        return true;
    }
    assert!(!require_all(), "{what} needs IPv6 loopback (::1)");
    eprintln!("skipping {what}: no IPv6 loopback");
    false
}

// ---------------------------------------------------------------------------------------------
// ports
// ---------------------------------------------------------------------------------------------

fn next_candidate() -> u16 {
    static NEXT: OnceLock<AtomicU16> = OnceLock::new();
    let counter = NEXT.get_or_init(|| {
        // A random-ish base below Linux's ephemeral range (32768..), so a client's source port
        // never lands on a port we hand out.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mix = (std::process::id().wrapping_mul(7919) ^ nanos) % 10_000;
        AtomicU16::new(20_000 + mix as u16)
    });
    let p = counter.fetch_add(1, Ordering::Relaxed);
    if p >= 32_000 {
        counter.store(20_000, Ordering::Relaxed);
    }
    p
}

fn port_is_free(port: u16) -> bool {
    let v4: SocketAddr = ([0, 0, 0, 0], port).into();
    let tcp4 = TcpListener::bind(v4).is_ok();
    let udp4 = UdpSocket::bind(v4).is_ok();
    let v6_ok = if ipv6_loopback_available() {
        let v6: SocketAddr = (Ipv6Addr::UNSPECIFIED, port).into();
        TcpListener::bind(v6).is_ok() && UdpSocket::bind(v6).is_ok()
    } else {
        true
    };
    tcp4 && udp4 && v6_ok
}

/// A port free for both TCP and UDP (IPv4 and, where present, IPv6), unique within this run.
pub fn free_port() -> u16 {
    for _ in 0..1000 {
        let p = next_candidate();
        if port_is_free(p) {
            return p;
        }
    }
    panic!("no free TCP+UDP port found in 20000..32000");
}

// ---------------------------------------------------------------------------------------------
// temporary files
// ---------------------------------------------------------------------------------------------

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sonde-cli-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------------
// processes
// ---------------------------------------------------------------------------------------------

/// What a finished child left behind.
#[derive(Debug)]
pub struct Output {
    pub args: Vec<String>,
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    /// From spawn to exit.
    pub elapsed: Duration,
}

impl Output {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Everything about the run, for assertion messages.
    pub fn describe(&self) -> String {
        format!(
            "`sonde {}` -> {:?} after {:.1} s\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args.join(" "),
            self.status,
            self.elapsed.as_secs_f64(),
            tail(&self.stdout, 6000),
            tail(&self.stderr, 3000)
        )
    }

    /// Asserts exit code `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(
            self.code(),
            Some(code),
            "expected exit code {code}\n{}",
            self.describe()
        );
        self
    }

    /// Parses stdout as one JSON document.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!("stdout is not one JSON document ({e})\n{}", self.describe())
        })
    }

    /// Lower-cased stderr, for message checks.
    pub fn stderr_lc(&self) -> String {
        self.stderr.to_lowercase()
    }
}

fn tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = s.len() - max;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

fn reader<R: Read + Send + 'static>(mut r: R, buf: Arc<Mutex<Vec<u8>>>) -> JoinHandle<()> {
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        loop {
            match r.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.lock().unwrap().extend_from_slice(&chunk[..n]),
            }
        }
    })
}

/// A running `sonde` child whose output is collected in the background; killed when dropped.
pub struct Proc {
    child: Option<Child>,
    args: Vec<String>,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    started: Instant,
}

impl Proc {
    pub fn spawn<S: AsRef<str>>(args: &[S]) -> Proc {
        Proc::spawn_program(sonde_bin(), args)
    }

    /// [`Proc::spawn`] with extra environment variables.
    pub fn spawn_env<S: AsRef<str>>(args: &[S], env: &[(&str, &str)]) -> Proc {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        let mut cmd = Command::new(sonde_bin());
        cmd.args(&args).envs(env.iter().copied());
        Proc::spawn_command(cmd, args)
    }

    /// Like [`Proc::spawn`] for another program (`ip netns exec NS sonde ...`).
    pub fn spawn_program<S: AsRef<str>>(program: &str, args: &[S]) -> Proc {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        let mut cmd = Command::new(program);
        cmd.args(&args);
        Proc::spawn_command(cmd, args)
    }

    /// Starts `cmd` (e.g. `sonde` inside a lab node, `ip netns exec ...`); `args` name it in
    /// failure messages.
    pub fn spawn_command(mut cmd: Command, args: Vec<String>) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        let readers = vec![
            reader(child.stdout.take().unwrap(), out.clone()),
            reader(child.stderr.take().unwrap(), err.clone()),
        ];
        Proc {
            child: Some(child),
            args,
            out,
            err,
            readers,
            started: Instant::now(),
        }
    }

    pub fn pid(&self) -> i32 {
        self.child.as_ref().expect("child still owned").id() as i32
    }

    /// Sends a signal (`libc::SIGINT`, `libc::SIGTERM`, `libc::SIGKILL`, ...).
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on the pid of a child we have not yet reaped.
        let rc = unsafe { libc::kill(self.pid(), sig) };
        assert_eq!(rc, 0, "kill({}, {sig}) failed", self.pid());
    }

    /// True once the child has exited (without reaping the output).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(Some(_))))
    }

    /// Waits until the child has printed `said` (on stdout or stderr): how a server says it
    /// is ready. Fails with what it printed if it exits first or `timeout` passes.
    #[track_caller]
    pub fn wait_says(&mut self, said: &str, timeout: Duration) {
        let t0 = Instant::now();
        loop {
            if self.stdout_so_far().contains(said) || self.stderr_so_far().contains(said) {
                return;
            }
            let why = if self.has_exited() {
                "exited"
            } else if t0.elapsed() >= timeout {
                "timed out"
            } else {
                thread::sleep(Duration::from_millis(20));
                continue;
            };
            panic!(
                "`{}` {why} before it said {said:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                self.args.join(" "),
                tail(&self.stdout_so_far(), 4000),
                tail(&self.stderr_so_far(), 4000)
            );
        }
    }

    pub fn stdout_so_far(&self) -> String {
        String::from_utf8_lossy(&self.out.lock().unwrap()).into_owned()
    }

    pub fn stderr_so_far(&self) -> String {
        String::from_utf8_lossy(&self.err.lock().unwrap()).into_owned()
    }

    /// Waits for the exit, at most `timeout`; past it the child is killed and the test fails
    /// with everything it printed.
    #[track_caller]
    pub fn wait(mut self, timeout: Duration) -> Output {
        let deadline = Instant::now() + timeout;
        let mut child = self.child.take().expect("child still owned");
        let status = loop {
            if let Some(st) = child.try_wait().expect("try_wait") {
                break st;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let st = child.wait().expect("wait after kill");
                let out = self.collect(st);
                panic!(
                    "timed out after {:.0} s; killed\n{}",
                    timeout.as_secs_f64(),
                    out.describe()
                );
            }
            thread::sleep(Duration::from_millis(20));
        };
        self.collect(status)
    }

    fn collect(&mut self, status: ExitStatus) -> Output {
        let elapsed = self.started.elapsed();
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        Output {
            args: self.args.clone(),
            status,
            stdout: self.stdout_so_far(),
            stderr: self.stderr_so_far(),
            elapsed,
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `sonde ARGS` to completion within `timeout`.
#[track_caller]
pub fn run<S: AsRef<str>>(args: &[S], timeout: Duration) -> Output {
    Proc::spawn(args).wait(timeout)
}

/// Runs `program ARGS` to completion within `timeout`.
#[track_caller]
pub fn run_program<S: AsRef<str>>(program: &str, args: &[S], timeout: Duration) -> Output {
    Proc::spawn_program(program, args).wait(timeout)
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

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// server
/// A `sonde server` child on its own port; killed when dropped.
pub struct Server {
    pub port: u16,
    proc: Option<Proc>,
}

impl Server {
    /// `sonde server -p PORT EXTRA...`, ready to accept.
    pub fn start(extra: &[&str]) -> Server {
        Server::start_as(&["server"], extra)
    }

    /// Like [`Server::start`] with another spelling of the subcommand (e.g. `["-s"]`).
    pub fn start_as(cmd: &[&str], extra: &[&str]) -> Server {
        let mut last_err = String::new();
        // Another process may grab the port between the check and the bind: try a few ports.
        for _ in 0..3 {
            let port = free_port();
            let mut args: Vec<String> = cmd.iter().map(|s| s.to_string()).collect();
            args.extend(["-p".to_string(), port.to_string()]);
            args.extend(extra.iter().map(|s| s.to_string()));
            let mut proc = Proc::spawn(&args);
            match wait_listening(&mut proc, port, Duration::from_secs(5)) {
                Ok(()) => {
                    return Server {
                        port,
                        proc: Some(proc),
                    }
                }
                Err(e) => {
                    last_err = format!(
                        "{e}\n`sonde {}`\n--- stdout ---\n{}\n--- stderr ---\n{}",
                        args.join(" "),
                        proc.stdout_so_far(),
                        proc.stderr_so_far()
                    );
                }
            }
        }
        panic!("sonde server did not come up: {last_err}");
    }

    pub fn proc(&mut self) -> &mut Proc {
        self.proc.as_mut().expect("server still owned")
    }

    /// Takes the server process (to signal it and wait for its exit).
    pub fn take(&mut self) -> Proc {
        self.proc.take().expect("server still owned")
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

    /// What the server printed so far.
    pub fn output_so_far(&self) -> String {
        match &self.proc {
            Some(p) => format!(
                "--- server stdout ---\n{}\n--- server stderr ---\n{}",
                tail(&p.stdout_so_far(), 4000),
                tail(&p.stderr_so_far(), 4000)
            ),
            None => String::new(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if thread::panicking() {
            // Leave the server's view next to the failing assertion.
            eprintln!("{}", self.output_so_far());
        }
    }
}

fn wait_listening(proc: &mut Proc, port: u16, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    loop {
        if proc.has_exited() {
            return Err("server exited before accepting connections".into());
        }
        // Something accepts on the port: it must be this server, not another process that
        // took the port between `free_port`'s check and the server's bind (CI once saw a
        // server fail with "address already in use" while the port accepted connections).
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            && listens_on(proc.pid(), port)
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("nothing accepted on {addr} within {timeout:?}"));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` holds a TCP socket listening on `port` (Linux: the listening
/// sockets of `/proc/net/tcp{,6}` against the socket descriptors of `/proc/PID/fd`).
fn listens_on(pid: i32, port: u16) -> bool {
    let want = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address rem_address st ... inode (10th column)
            if f.len() > 9 && f[1].ends_with(&want) && f[3] == "0A" {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok)
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .any(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

/// The value at a dotted path (`"end.streams.0.udp.jitter_ms"`; numbers index arrays), with the
/// document in the panic message when it is missing.
#[track_caller]
pub fn at<'a>(doc: &'a Value, path: &str) -> &'a Value {
    let mut v = doc;
    for seg in path.split('.') {
        let next = match seg.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(seg),
        };
        v = next.unwrap_or_else(|| {
            panic!(
                "JSON has no `{path}` (stopped at `{seg}`)\n{}",
                tail(&serde_json::to_string_pretty(doc).unwrap_or_default(), 6000)
            )
        });
    }
    v
}

/// The number at `path`.
#[track_caller]
pub fn num(doc: &Value, path: &str) -> f64 {
    at(doc, path)
        .as_f64()
        .unwrap_or_else(|| panic!("`{path}` is not a number: {}", at(doc, path)))
}

/// The unsigned integer at `path`.
#[track_caller]
pub fn uint(doc: &Value, path: &str) -> u64 {
    at(doc, path)
        .as_u64()
        .unwrap_or_else(|| panic!("`{path}` is not an unsigned integer: {}", at(doc, path)))
}

/// The array at `path`.
#[track_caller]
pub fn arr<'a>(doc: &'a Value, path: &str) -> &'a Vec<Value> {
    at(doc, path)
        .as_array()
        .unwrap_or_else(|| panic!("`{path}` is not an array: {}", at(doc, path)))
}

/// The string at `path`.
#[track_caller]
pub fn text<'a>(doc: &'a Value, path: &str) -> &'a str {
    at(doc, path)
        .as_str()
        .unwrap_or_else(|| panic!("`{path}` is not a string: {}", at(doc, path)))
}

// ---------------------------------------------------------------------------------------------
// lab runs
// ---------------------------------------------------------------------------------------------

/// Where `program` is on `PATH` (an executable file).
pub fn which(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

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
    let text = format!(
        r#"
        name = "chain3"
        seed = 5
        hosts = ["client", "server"]
        routers = ["router"]
        [[link]]
        name = "lan"
        a = "client"
        b = "router"
        [[link]]
        name = "wan"
        a = "router"
        b = "server"
        [[settings]]
        name = "s"
        [[settings.link]]
        link = "wan"
        impair = {{ {impair} }}
        [[test]]
        name = "none"
        command = ["true"]
        "#
    );
    let scenario = sonde_emu::scenario::Scenario::from_toml(&text).expect("test scenario");
    sonde_lab::Lab::build(&scenario, Some("s"), opts).expect("lab builds")
}

/// A lab scenario of one link and one TCP test of 1 s (`sonde lab run` as root).
pub const ONE_TCP_TEST: &str = r#"
name = "one-test"
seed = 21
hosts = ["client", "server"]

[[link]]
name = "wan"
a = "client"
b = "server"

[[settings]]
name = "clean"

[[test]]
name = "tcp"
sonde = ["client", "{server}", "-t", "1"]
"#;

/// Runs `sonde lab run` on the scenario text (written into `dir`), requires exit 0, and
/// returns the run's output directory (inside `dir`).
pub fn run_lab(dir: &TempDir, scenario: &str, timeout: Duration) -> PathBuf {
    run_lab_exiting(dir, scenario, timeout, &[0])
}

/// As [`run_lab`], for a scenario whose run may end with any of `codes` (a test that exits 1
/// by design still has its result document written).
pub fn run_lab_exiting(dir: &TempDir, scenario: &str, timeout: Duration, codes: &[i32]) -> PathBuf {
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
    out_dir
}

/// The raw result document of one run of a lab matrix.
pub fn lab_result(out_dir: &Path, settings: &str, test: &str, repetition: u32) -> Value {
    let path = out_dir.join(format!("raw/{settings}/{test}/{repetition}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The TCP half of a test relay: a loopback port whose connections are copied as they are to
/// `server` (sonde's control connection), and a stop flag the relay's threads watch, set when
/// this is dropped. The UDP half, which a test uses to damage or drop datagrams, binds the same
/// port number.
pub struct ControlRelay {
    pub port: u16,
    pub stop: Arc<std::sync::atomic::AtomicBool>,
}

impl ControlRelay {
    pub fn start(server: u16) -> ControlRelay {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("relay tcp bind");
        let port = tcp.local_addr().expect("relay addr").port();
        tcp.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = stop.clone();
        thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok((down, _)) = tcp.accept() else {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let _ = down.set_nonblocking(false);
                let Ok(up) = TcpStream::connect(("127.0.0.1", server)) else {
                    continue;
                };
                let (d2, u2) = (
                    down.try_clone().expect("clone"),
                    up.try_clone().expect("clone"),
                );
                let copy = |mut from: TcpStream, mut to: TcpStream| {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                };
                thread::spawn(move || copy(down, up));
                thread::spawn(move || copy(u2, d2));
            }
        });
        ControlRelay { port, stop }
    }
}

impl Drop for ControlRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A child killed when dropped (a failed assertion must not leave a server in a lab).
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
