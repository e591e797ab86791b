//! Authentication through the real binaries (issue 16): sonde's pre-shared key between sonde
//! peers, and iperf3's RSA credentials in both directions against real iperf3s (see `peers`).
//!
//! Each refusal is checked from both ends: the client exits 1 with a message that says what is
//! wrong, and the server's log says it refused that client and started no test for it.
//! Keys are made by the test (`openssl genrsa`, random bytes) in a temporary directory.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;
use crate::peers;

use common::{free_port, run, Output, Proc, Server, TempDir};
use sha2::{Digest, Sha256};
use sonde_proto::frame::FrameDecoder;
use sonde_proto::message::{Hello, Message, RefuseCode};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(30);

/// Waits until the server has logged `needle` `times` times; false at the deadline.
fn logged(server: &Server, needle: &str, times: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if server.output_so_far().matches(needle).count() >= times {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A temporary directory holding two different random keys, `key` and `other`.
fn two_keys(tag: &str) -> (TempDir, PathBuf, PathBuf) {
    let dir = TempDir::new(tag);
    let (key, other) = (dir.file("key"), dir.file("other"));
    common::random_key(&key);
    common::random_key(&other);
    (dir, key, other)
}

#[track_caller]
fn refused(out: &Output, why: &str) {
    out.expect_code(1);
    assert!(
        out.stderr.contains("server refused the test (auth)") && out.stderr.contains(why),
        "expected an auth refusal saying {why:?}\n{}",
        out.describe()
    );
}

#[test]
fn psk_right_key_runs_and_every_other_client_is_refused_before_any_test() {
    let _turn = crate::turns::take(module_path!());
    let (_dir, key, other) = two_keys("auth-psk");
    let server = Server::start(&["--psk-file", s(&key)]);

    let ok = server.client(&["-t", "1", "-J", "--psk-file", s(&key)], T);
    ok.expect_code(0);
    let received = common::uint(&ok.json(), "end.sum_received.bytes");
    assert!(received > 0, "{}", ok.describe());
    assert!(logged(&server, "accepted a TCP upload", 1));

    let wrong = server.client(&["-t", "1", "--psk-file", s(&other)], T);
    refused(&wrong, "does not match");
    let key_text = std::fs::read_to_string(&key).unwrap();
    assert!(!wrong.stderr.contains(key_text.trim()));
    let missing = server.client(&["-t", "1"], T);
    refused(&missing, "--psk-file");

    // A client that predates the scheme (no auth-psk capability) is refused at its hello.
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    tcp.write_all(sonde_proto::preamble::CONTROL_MAGIC).unwrap();
    let hello = Hello {
        version: sonde_proto::PROTOCOL_VERSION,
        min_version: sonde_proto::MIN_PROTOCOL_VERSION,
        software: "sonde 0.0 (before auth-psk)".into(),
        caps: vec!["tcp".into(), "udp".into()],
    };
    tcp.write_all(&Message::Hello(hello).encode().unwrap())
        .unwrap();
    let mut dec = FrameDecoder::new();
    let mut buf = [0u8; 4096];
    let reply = loop {
        if let Some(f) = dec.next_frame().unwrap() {
            break Message::decode(&f).unwrap().unwrap();
        }
        let n = tcp.read(&mut buf).unwrap();
        assert!(n > 0, "server closed without a refusal");
        dec.push(&buf[..n]);
    };
    let Message::Refuse(r) = reply else {
        panic!("expected a refusal, got {reply:?}");
    };
    assert_eq!(r.code, RefuseCode::Auth);
    assert!(r.message.contains("too old"), "{}", r.message);

    // iperf3 cannot show the key: its clients are refused too, with iperf3's error 142.
    if let Some(ip) = peers::debian() {
        let port = server.port.to_string();
        let out = ip.run(&strs(&["-c", "127.0.0.1", "-p", &port, "-t", "1"]), T);
        assert_eq!(out.code(), Some(1), "{}", out.describe());
        assert!(format!("{}{}", out.stdout, out.stderr).contains("test authorization failed"));
        assert!(logged(&server, "which iperf3 cannot send", 1));
    }

    // The server's side: three refusals, and the one test it ran was the right key's.
    assert!(
        logged(&server, "refused 127.0.0.1", 3),
        "{}",
        server.output_so_far()
    );
    let log = server.output_so_far();
    assert_eq!(log.matches("accepted a").count(), 1, "{log}");
}

#[test]
fn psk_is_ignored_by_a_server_without_one_and_a_short_key_is_refused_at_start() {
    let _turn = crate::turns::take(module_path!());
    let dir = TempDir::new("auth-psk2");
    let key = dir.file("key");
    common::random_key(&key);
    let server = Server::start(&[]);
    server
        .client(&["-t", "1", "--psk-file", s(&key)], T)
        .expect_code(0);

    let short = dir.file("short");
    std::fs::write(&short, "tooshort\n").unwrap();
    let port = free_port().to_string();
    // A key file that holds no valid key is a usage error, on every command.
    let out = run(&["server", "-p", &port, "--psk-file", s(&short)], T);
    out.expect_code(2);
    assert!(out.stderr.contains("at least 32"), "{}", out.describe());
    let out = run(
        &["client", "127.0.0.1", "-p", &port, "--psk-file", s(&short)],
        T,
    );
    out.expect_code(2);
    assert!(out.stderr.contains("8 bytes"), "{}", out.describe());
}

// ---------------------------------------------------------------------------------------------
// iperf3's RSA authentication
// ---------------------------------------------------------------------------------------------

struct RsaFiles {
    _dir: TempDir,
    private: PathBuf,
    public: PathBuf,
    users: PathBuf,
}

/// A fresh 2048-bit key pair and a users file allowing mario/rossi, as iperf3's docs make them;
/// None (the test skips, saying why; a failure under `SONDE_REQUIRE_ALL=1`) without `openssl`.
fn rsa_files() -> Option<RsaFiles> {
    if common::which("openssl").is_none() {
        assert!(
            !common::require_all(),
            "SONDE_REQUIRE_ALL=1 but openssl is not installed (it makes the test's RSA keys)"
        );
        eprintln!("skipping: openssl is not installed (it makes the test's RSA keys)");
        return None;
    }
    let dir = TempDir::new("auth-rsa");
    let (private, public, users) = (
        dir.file("private.pem"),
        dir.file("public.pem"),
        dir.file("users.csv"),
    );
    let ok = |c: &mut Command| assert!(c.status().unwrap().success(), "{c:?}");
    ok(Command::new("openssl")
        .args(["genrsa", "-out", s(&private), "2048"])
        .stderr(std::process::Stdio::null()));
    ok(Command::new("openssl")
        .args(["rsa", "-in", s(&private), "-pubout", "-out", s(&public)])
        .stderr(std::process::Stdio::null()));
    let hash: String = Sha256::digest(b"{mario}rossi")
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(&users, format!("# iperf3 users\nmario,{hash}\n")).unwrap();
    Some(RsaFiles {
        _dir: dir,
        private,
        public,
        users,
    })
}

/// The iperf3s that can authenticate (built with OpenSSL), each with whether it speaks only
/// PKCS#1 v1.5 padding (before 3.17).
fn auth_partners() -> Vec<(peers::Iperf3, bool)> {
    let mut v = Vec::new();
    for ip in peers::all() {
        let info = Command::new(&ip.path).arg("--version").output().unwrap();
        let text = String::from_utf8_lossy(&info.stdout).to_string();
        if !text.contains("authentication") {
            eprintln!(
                "skipping the {} iperf3: built without authentication ({text})",
                ip.label
            );
            continue;
        }
        let minor: u32 = text
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.split('.').nth(1))
            .map(|m| {
                m.chars()
                    .take_while(char::is_ascii_digit)
                    .collect::<String>()
            })
            .and_then(|m| m.parse().ok())
            .unwrap_or(0);
        v.push((ip, minor < 17));
    }
    v
}

fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn iperf3_clients_authenticate_to_sonde_server_or_are_refused_with_142() {
    let _turn = crate::turns::take(module_path!());
    let Some(f) = rsa_files() else {
        return;
    };
    for (ip, pkcs1) in auth_partners() {
        let mut extra = vec![
            "--rsa-private-key-path",
            s(&f.private),
            "--authorized-users-path",
            s(&f.users),
        ];
        if pkcs1 {
            extra.push("--use-pkcs1-padding");
        }
        let server = Server::start(&extra);
        let port = server.port.to_string();
        let client = |user: &str, password: Option<&str>| {
            let mut a = vec!["-c", "127.0.0.1", "-p", &port, "-t", "1"];
            if password.is_some() {
                a.extend(["--username", user, "--rsa-public-key-path", s(&f.public)]);
            }
            let env: Vec<(&str, &str)> = password
                .map(|p| ("IPERF3_PASSWORD", p))
                .into_iter()
                .collect();
            ip.run_env(&strs(&a), &env, T)
        };
        let ok = client("mario", Some("rossi"));
        assert_eq!(ok.code(), Some(0), "{} iperf3\n{}", ip.label, ok.describe());
        for (user, pw, why) in [
            ("mario", Some("bianchi"), "not in the authorized-users file"),
            ("luigi", Some("rossi"), "not in the authorized-users file"),
            ("mario", None, "no authentication token"),
        ] {
            let out = client(user, pw);
            assert_eq!(out.code(), Some(1), "{}", out.describe());
            let said = format!("{}{}", out.stdout, out.stderr);
            assert!(
                said.contains("test authorization failed"),
                "{} iperf3\n{}",
                ip.label,
                out.describe()
            );
            assert!(logged(&server, why, 1), "{why}\n{}", server.output_so_far());
        }
        assert!(logged(&server, "refused iperf3 client", 3));
        // Only iperf3 credentials admit a client: a sonde-protocol client is refused.
        let plain = server.client(&["-t", "1"], T);
        refused(&plain, "only clients with iperf3 RSA credentials");
        let log = server.output_so_far();
        assert_eq!(
            log.matches("authenticated as user \"mario\"").count(),
            1,
            "{log}"
        );
        assert_eq!(log.matches("accepted an iperf3").count(), 1, "{log}");
    }
}

/// `sonde client --iperf3` for mario with the server's public key, a 1 s test.
fn iperf3_client_args<'a>(port: &'a str, public: &'a Path) -> Vec<&'a str> {
    vec![
        "client",
        "127.0.0.1",
        "-p",
        port,
        "-t",
        "1",
        "--iperf3",
        "--username",
        "mario",
        "--rsa-public-key-path",
        s(public),
    ]
}

#[test]
fn sonde_client_authenticates_to_iperf3_server() {
    let _turn = crate::turns::take(module_path!());
    let Some(f) = rsa_files() else {
        return;
    };
    for (ip, pkcs1) in auth_partners() {
        let (port, server) = ip.serve_with(
            &[
                "-1",
                "--rsa-private-key-path",
                s(&f.private),
                "--authorized-users-path",
                s(&f.users),
            ],
            T,
        );
        let port = port.to_string();
        let mut args = iperf3_client_args(&port, &f.public);
        if pkcs1 {
            args.push("--use-pkcs1-padding");
        }
        // A wrong password first: iperf3's -1 does not count a failed authentication.
        let wrong = Proc::spawn_env(&args, &[("IPERF3_PASSWORD", "bianchi")]).wait(T);
        wrong.expect_code(1);
        assert!(
            wrong.stderr.contains("iperf3 error 142")
                && wrong.stderr.contains("test authorization failed"),
            "{} iperf3\n{}",
            ip.label,
            wrong.describe()
        );
        let ok = Proc::spawn_env(&args, &[("IPERF3_PASSWORD", "rossi")]).wait(T);
        ok.expect_code(0);
        let served = server.join().unwrap();
        assert_eq!(served.code(), Some(0), "{}", served.describe());
    }
}

#[test]
fn iperf3_flags_without_their_partners_are_usage_errors() {
    let _turn = crate::turns::take(module_path!());
    let out = run(&["client", "127.0.0.1", "--username", "mario"], T);
    out.expect_code(2);
    let out = run(&["server", "--rsa-private-key-path", "/nonexistent"], T);
    out.expect_code(2);
    // Without IPERF3_PASSWORD and no terminal to ask on, the client says how to give it.
    let out = run(
        &[
            "client",
            "127.0.0.1",
            "--iperf3",
            "--username",
            "mario",
            "--rsa-public-key-path",
            "/nonexistent",
        ],
        T,
    );
    out.expect_code(1);
    assert!(out.stderr.contains("IPERF3_PASSWORD"), "{}", out.describe());
    // With the password, a public key file that cannot be read is a usage error, as every
    // other key file, before any connection.
    let out = Proc::spawn_env(
        &[
            "client",
            "127.0.0.1",
            "-p",
            &free_port().to_string(),
            "--iperf3",
            "--username",
            "mario",
            "--rsa-public-key-path",
            "/nonexistent",
        ],
        &[("IPERF3_PASSWORD", "rossi")],
    )
    .wait(T);
    out.expect_code(2);
    assert!(out.stderr.contains("/nonexistent"), "{}", out.describe());
}

/// No iperf3 3.17+ built with OpenSSL runs here (the vendored build has no OpenSSL), so OAEP,
/// their default, is checked against OpenSSL itself, which those iperf3s call: sonde's tokens
/// open with `openssl pkeyutl -decrypt` in both paddings, to iperf3's exact text.
#[test]
fn sonde_tokens_open_with_openssl_in_both_paddings() {
    let _turn = crate::turns::take(module_path!());
    use base64::Engine as _;
    use sonde_proto::iperf3::auth::{encode_token, public_key_from_pem, Padding};
    let Some(f) = rsa_files() else {
        return;
    };
    let key = public_key_from_pem(&std::fs::read_to_string(&f.public).unwrap()).unwrap();
    for (padding, mode) in [(Padding::Oaep, "oaep"), (Padding::Pkcs1, "pkcs1")] {
        let token = encode_token(&key, padding, "mario", "rossi", 1_700_000_000).unwrap();
        let sealed = base64::engine::general_purpose::STANDARD
            .decode(token)
            .unwrap();
        let path = f.private.with_file_name(format!("token.{mode}"));
        std::fs::write(&path, sealed).unwrap();
        let out = Command::new("openssl")
            .args([
                "pkeyutl",
                "-decrypt",
                "-inkey",
                s(&f.private),
                "-in",
                s(&path),
            ])
            .args(["-pkeyopt", &format!("rsa_padding_mode:{mode}")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "user: mario\npwd:  rossi\nts:   1700000000"
        );
    }
}

/// A `sonde` child on a fresh pty that is its controlling terminal; what it writes there is
/// collected in the background.
struct PtyChild {
    child: std::process::Child,
    master: std::fs::File,
    /// Kept open to read the terminal's settings after the child exits.
    slave: std::fs::File,
    seen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
}

impl PtyChild {
    fn spawn(args: &[&str]) -> PtyChild {
        use std::os::unix::io::FromRawFd;
        use std::os::unix::process::CommandExt;
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty fills two descriptors; null name, termios and size are allowed.
        let rc = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors are fresh and owned here from now on.
        let (master, slave) = unsafe {
            (
                std::fs::File::from_raw_fd(master),
                std::fs::File::from_raw_fd(slave),
            )
        };
        let mut cmd = Command::new(common::sonde_bin());
        cmd.args(args)
            .env_remove("IPERF3_PASSWORD")
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave.try_clone().unwrap());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let sink = seen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        PtyChild {
            child,
            master,
            slave,
            seen,
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    fn wait_for(&self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.text().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?}; saw {:?}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn wait(&mut self, timeout: Duration) -> (std::process::ExitStatus, Duration) {
        let t0 = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100)); // the last output
                return (st, t0.elapsed());
            }
            if t0.elapsed() >= timeout {
                let _ = self.child.kill();
                panic!("no exit; saw {:?}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn echo_on(&self) -> bool {
        use std::os::unix::io::AsRawFd;
        // SAFETY: termios is plain data, filled by tcgetattr on an open descriptor.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        assert_eq!(
            unsafe { libc::tcgetattr(self.slave.as_raw_fd(), &mut t) },
            0
        );
        t.c_lflag & libc::ECHO != 0
    }
}

impl Drop for PtyChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Without `IPERF3_PASSWORD`, a client on a terminal asks for the password with echo off, as
/// iperf3 does: run on a real pty (its controlling terminal), against sonde's own server in
/// its iperf3 role, typed after the prompt appears; the echo is back on afterwards.
#[test]
fn the_password_prompt_reads_a_pty_without_echo() {
    let _turn = crate::turns::take(module_path!());
    let Some(f) = rsa_files() else {
        return;
    };
    let server = Server::start(&[
        "--rsa-private-key-path",
        s(&f.private),
        "--authorized-users-path",
        s(&f.users),
    ]);
    let port = server.port.to_string();
    let mut c = PtyChild::spawn(&iperf3_client_args(&port, &f.public));
    c.wait_for("Password: ");
    (&c.master).write_all(b"rossi\n").unwrap();
    let (status, _) = c.wait(T);
    let out = c.text();
    assert!(status.success(), "{status:?}\n{out}");
    assert!(!out.contains("rossi"), "the password was echoed:\n{out}");
    assert!(c.echo_on(), "echo left off");
    assert!(logged(&server, "authenticated as user \"mario\"", 1));
}

/// Ctrl-C at the prompt ends the client at once (exit 1), with the terminal's echo restored.
#[test]
fn ctrl_c_at_the_password_prompt_ends_the_client() {
    let _turn = crate::turns::take(module_path!());
    let Some(f) = rsa_files() else {
        return;
    };
    let port = free_port().to_string();
    let mut c = PtyChild::spawn(&iperf3_client_args(&port, &f.public));
    c.wait_for("Password: ");
    // SAFETY: kill(2) on our unreaped child.
    assert_eq!(unsafe { libc::kill(c.child.id() as i32, libc::SIGINT) }, 0);
    let (status, took) = c.wait(Duration::from_secs(5));
    assert_eq!(status.code(), Some(1), "{}", c.text());
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(
        c.text().contains("interrupted at the password prompt"),
        "{}",
        c.text()
    );
    assert!(c.echo_on(), "echo left off");
}

/// As iperf3's `-1`, a client refused for its key does not use up the one test.
#[test]
fn one_off_server_survives_a_refused_key() {
    let _turn = crate::turns::take(module_path!());
    let (_dir, key, other) = two_keys("auth-oneoff");
    let mut server = Server::start(&["-1", "--psk-file", s(&key)]);
    refused(
        &server.client(&["-t", "1", "--psk-file", s(&other)], T),
        "does not match",
    );
    server
        .client(&["-t", "1", "--psk-file", s(&key)], T)
        .expect_code(0);
    server.take().wait(Duration::from_secs(10)).expect_code(0);
}
