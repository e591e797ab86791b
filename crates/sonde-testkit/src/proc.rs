//! Child processes for tests: one whose output is collected in the background and that is
//! killed when dropped (even when the test fails), waits with a deadline past which the test
//! fails with everything the child printed, and what a finished child left behind.
//!
//! A test crate names the program it tests once, as a type, and spawns it by arguments
//! alone; the path of the built binary stays in that crate's tests:
//!
//! ```
//! use sonde_testkit::proc::{Proc, Program};
//! use std::time::Duration;
//!
//! struct Echo;
//! impl Program for Echo {
//!     const PATH: &'static str = "echo";
//! }
//! type EchoProc = Proc<Echo>;
//!
//! let out = EchoProc::spawn(&["hello"]).wait(Duration::from_secs(10));
//! out.expect_code(0);
//! assert_eq!(out.stdout, "hello\n");
//! ```

use serde_json::Value;
use std::io::Read;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::tail;

/// The program a test crate tests, spawned by [`Proc::spawn`] with arguments alone.
pub trait Program {
    /// Its path (a binary's tests: `env!("CARGO_BIN_EXE_name")`).
    const PATH: &'static str;
}

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

/// The file name of `program`, to name it in messages.
fn short_name(program: &Path) -> String {
    program
        .file_name()
        .unwrap_or(program.as_os_str())
        .to_string_lossy()
        .into_owned()
}

/// `program args...`, or the arguments alone when the program is not named.
fn command_line(program: &str, args: &[String]) -> String {
    let args = args.join(" ");
    if program.is_empty() {
        args
    } else {
        format!("{program} {args}")
    }
}

/// What a finished child left behind.
#[derive(Debug)]
pub struct Output {
    /// The program's name (`sonde`), for messages; empty where `args` name the command.
    pub program: String,
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
            "`{}` -> {:?} after {:.1} s\n--- stdout ---\n{}\n--- stderr ---\n{}",
            command_line(&self.program, &self.args),
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

/// A running child whose output is collected in the background; killed when dropped. `P` is
/// the program [`Proc::spawn`] starts; any other starts with [`Proc::spawn_program`].
pub struct Proc<P = ()> {
    child: Option<Child>,
    program: String,
    args: Vec<String>,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    readers: Vec<JoinHandle<()>>,
    started: Instant,
    tested: PhantomData<fn() -> P>,
}

impl<P: Program> Proc<P> {
    /// Starts the tested program with `args`.
    pub fn spawn<S: AsRef<str>>(args: &[S]) -> Self {
        Self::spawn_program(P::PATH, args)
    }

    /// [`Proc::spawn`] with extra environment variables.
    pub fn spawn_env<S: AsRef<str>>(args: &[S], env: &[(&str, &str)]) -> Self {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        let mut cmd = Command::new(P::PATH);
        cmd.args(&args).envs(env.iter().copied());
        Self::start(cmd, short_name(Path::new(P::PATH)), args)
    }
}

impl<P> Proc<P> {
    /// Like [`Proc::spawn`] for another program (`ip netns exec NS sonde ...`).
    pub fn spawn_program<S: AsRef<str>>(program: &str, args: &[S]) -> Self {
        let args: Vec<String> = args.iter().map(|a| a.as_ref().to_string()).collect();
        let mut cmd = Command::new(program);
        cmd.args(&args);
        Self::start(cmd, short_name(Path::new(program)), args)
    }

    /// Starts `cmd` (e.g. `sonde` inside a lab node, `ip netns exec ...`); `args` name it in
    /// failure messages.
    pub fn spawn_command(cmd: Command, args: Vec<String>) -> Self {
        Self::start(cmd, String::new(), args)
    }

    /// Starts `cmd`, named `program` and `args` in messages.
    fn start(mut cmd: Command, program: String, args: Vec<String>) -> Self {
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
            program,
            args,
            out,
            err,
            readers,
            started: Instant::now(),
            tested: PhantomData,
        }
    }

    /// The command line, for messages: `sonde server -p 20001`.
    pub fn command_line(&self) -> String {
        command_line(&self.program, &self.args)
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
                self.command_line(),
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
            program: self.program.clone(),
            args: self.args.clone(),
            status,
            stdout: self.stdout_so_far(),
            stderr: self.stderr_so_far(),
            elapsed,
        }
    }
}

impl<P> Drop for Proc<P> {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs `program ARGS` to completion within `timeout`.
#[track_caller]
pub fn run_program<S: AsRef<str>>(program: &str, args: &[S], timeout: Duration) -> Output {
    Proc::<()>::spawn_program(program, args).wait(timeout)
}

/// A child killed when dropped (a failed assertion must not leave a server in a lab).
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_waited_for_with_its_output() {
        let out = run_program(
            "sh",
            &["-c", "echo out; echo err >&2; exit 3"],
            Duration::from_secs(10),
        );
        out.expect_code(3);
        assert_eq!(
            (out.stdout.as_str(), out.stderr.as_str()),
            ("out\n", "err\n")
        );
        assert!(out
            .describe()
            .starts_with("`sh -c echo out; echo err >&2; exit 3` -> "));
    }

    #[test]
    #[should_panic(expected = "timed out after 0 s; killed")]
    fn a_child_past_its_deadline_fails_the_test() {
        run_program("sleep", &["5"], Duration::from_millis(100));
    }

    #[test]
    fn a_child_is_waited_for_until_it_says_it_is_ready() {
        let mut p = Proc::<()>::spawn_program("sh", &["-c", "sleep 0.1; echo ready; sleep 5"]);
        p.wait_says("ready", Duration::from_secs(10));
        assert!(!p.has_exited());
    }
}
