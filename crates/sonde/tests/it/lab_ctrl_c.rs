//! Issue 16, Ctrl-C at every phase of a lab run (root): `sonde lab run` on a two-setting,
//! four-test scenario is interrupted as a terminal's Ctrl-C does it (SIGINT to its whole
//! process group) while the first lab is being built, while a test runs, between two tests,
//! while the second lab is being built, and after the last test while the summary and report
//! are written. Each `--resume` continues the same run. After every interrupt: exit 1, no
//! namespace, root-namespace interface or child process of the run left, the tests finished so
//! far recorded (with their raw documents), none of the cut-short ones recorded as failed; the
//! last `--resume` ends with every test recorded once, none run twice.
//!
//! The phases are found, not timed: the child processes of the run (its `ip` commands, the
//! test's `sonde client`) are watched in `/proc`, and "between tests" and "during the report"
//! hold the run exactly there by not reading its output: the test fills the (one-page) stdout
//! pipe, so the run blocks on its next progress line, gets the Ctrl-C there, and goes on when
//! the pipe is read again.
//!
//! Without root the test prints why it skips; `SONDE_REQUIRE_ALL=1` makes that a failure.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use crate::common;

use common::{lab_available, sonde_bin, TempDir};
use sonde_store::{LoadedRun, RunStatus, Store, TestStatus};
use sonde_testkit::scenario::chain;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// Two settings of one link, a TCP and a UDP test of 1 s each. The node and link names mark
/// the run's namespaces (`sonde-XXXXXX-drillc`, ...) apart from any other lab on the host.
fn scenario() -> String {
    chain()
        .name("ctrl-c-drill")
        .seed(16)
        .host("drillc")
        .link("drillwan")
        .host("drills")
        .settings("s1")
        .impair("drillwan", "rate = \"100mbit\"")
        .settings("s2")
        .impair("drillwan", "rate = \"50mbit\"")
        .sonde("tcp", &["client", "{server}", "-t", "1"])
        .sonde("udp", &["client", "{server}", "-u", "-b", "10m", "-t", "1"])
        .to_toml()
}

const ALL: [&str; 4] = ["s1/tcp/1", "s1/udp/1", "s2/tcp/1", "s2/udp/1"];

// ---------------------------------------------------------------------------------------------
// the run's processes, from /proc
// ---------------------------------------------------------------------------------------------

/// `(ppid, start time in ticks, state)` of `pid`.
fn stat(pid: i32) -> Option<(i32, u64, char)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some((
        f.get(1)?.parse().ok()?,
        f.get(19)?.parse().ok()?,
        f.first()?.chars().next()?,
    ))
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Every process that descends from `root`, as seen by scanning `/proc` every few ms:
/// `(pid, start time)` with each command line it was seen with.
#[derive(Default)]
struct Seen {
    procs: BTreeMap<(i32, u64), Vec<String>>,
    /// Command lines in the order they were first seen.
    order: Vec<String>,
}

struct Watcher {
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Watcher {
    fn start(root: i32) -> Watcher {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        let thread = thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                scan(root, &s);
                thread::sleep(Duration::from_millis(3));
            }
        });
        Watcher {
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// How many command lines were seen so far (a mark for [`Watcher::wait_for`]).
    fn mark(&self) -> usize {
        self.seen.lock().unwrap().order.len()
    }

    /// Waits until a descendant seen after `mark` has a command line matching `pred`.
    fn wait_for(&self, mark: usize, what: &str, pred: impl Fn(&str) -> bool, run: &mut LabRun) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if self.seen.lock().unwrap().order[mark..]
                .iter()
                .any(|c| pred(c))
            {
                return;
            }
            assert!(
                Instant::now() < deadline && !run.exited(),
                "never saw {what}; seen: {:?}\n{}",
                self.seen.lock().unwrap().order,
                run.so_far()
            );
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Descendants still alive (not zombies), with what they ran.
    fn alive(&mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        let seen = self.seen.lock().unwrap();
        seen.procs
            .iter()
            .filter(|((pid, start), _)| {
                stat(*pid).is_some_and(|(_, s, state)| s == *start && state != 'Z')
            })
            .map(|((pid, _), cmds)| format!("{pid}: {cmds:?}"))
            .collect()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn scan(root: i32, seen: &Mutex<Seen>) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    let all: Vec<(i32, i32, u64)> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat(pid).map(|(ppid, start, _)| (pid, ppid, start)))
        .collect();
    let mut family: BTreeSet<i32> = BTreeSet::from([root]);
    loop {
        let before = family.len();
        for (pid, ppid, _) in &all {
            if family.contains(ppid) {
                family.insert(*pid);
            }
        }
        if family.len() == before {
            break;
        }
    }
    let mut s = seen.lock().unwrap();
    for (pid, _, start) in all
        .iter()
        .filter(|(p, _, _)| *p != root && family.contains(p))
    {
        let cmd = cmdline(*pid);
        if cmd.is_empty() {
            continue;
        }
        let cmds = s.procs.entry((*pid, *start)).or_default();
        if !cmds.contains(&cmd) {
            cmds.push(cmd.clone());
            s.order.push(cmd);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// a `sonde lab run` whose stdout the test can stop reading
// ---------------------------------------------------------------------------------------------

/// Bytes the test writes into the run's stdout pipe to fill it.
const FILLER: u8 = 0;
const PIPE_PAGE: libc::c_int = 4096;

struct LabRun {
    child: Option<Child>,
    /// The test's own copy of the write end of the child's stdout, to fill the pipe.
    stdout_w: std::fs::File,
    stdout_r: i32,
    out: Arc<Mutex<Vec<u8>>>,
    err: Arc<Mutex<Vec<u8>>>,
    hold: Arc<AtomicBool>,
    readers: Vec<JoinHandle<()>>,
    /// When the Ctrl-C was sent.
    signalled: Option<Instant>,
}

impl LabRun {
    /// `sonde lab run ARGS` as the leader of its own process group (as a shell runs it in the
    /// foreground), its stdout a one-page pipe.
    fn spawn(args: &[&str]) -> LabRun {
        let mut fds = [0; 2];
        // SAFETY: pipe2(2) fills the two descriptors it returns.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: fcntl(2) on a descriptor we own; F_SETPIPE_SZ takes an int.
        unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, PIPE_PAGE) };
        // SAFETY: both descriptors are fresh and owned by nothing else.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let stdout_w = std::fs::File::from(w.try_clone().unwrap());
        let mut child = Command::new(sonde_bin())
            .args(["lab", "run"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(w))
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("sonde lab run starts");
        let out = Arc::new(Mutex::new(Vec::new()));
        let err = Arc::new(Mutex::new(Vec::new()));
        let hold = Arc::new(AtomicBool::new(false));
        let stdout_r = r.as_raw_fd();
        let (o, h) = (out.clone(), hold.clone());
        let out_reader = thread::spawn(move || read_unless_held(r, &o, &h));
        let mut stderr = child.stderr.take().unwrap();
        let e = err.clone();
        let err_reader = thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf);
            e.lock().unwrap().extend(buf);
        });
        LabRun {
            child: Some(child),
            stdout_w,
            stdout_r,
            out,
            err,
            hold,
            readers: vec![out_reader, err_reader],
            signalled: None,
        }
    }

    fn pid(&self) -> i32 {
        self.child.as_ref().unwrap().id() as i32
    }

    fn exited(&mut self) -> bool {
        matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(Some(_))))
    }

    fn stdout(&self) -> String {
        let bytes: Vec<u8> = self
            .out
            .lock()
            .unwrap()
            .iter()
            .copied()
            .filter(|b| *b != FILLER)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn so_far(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}",
            self.stdout(),
            String::from_utf8_lossy(&self.err.lock().unwrap())
        )
    }

    fn wait_line(&mut self, needle: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.stdout().contains(needle) {
            assert!(
                Instant::now() < deadline && !self.exited(),
                "never printed {needle:?}\n{}",
                self.so_far()
            );
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Stops reading stdout and fills the pipe, so the run blocks at its next progress line;
    /// returns once it does (its main thread sleeps in `pipe_write`).
    fn hold_at_next_line(&mut self) {
        // The reader may take one more chunk (some filler, at worst) before it parks.
        self.hold.store(true, Ordering::SeqCst);
        loop {
            let mut queued: libc::c_int = 0;
            // SAFETY: FIONREAD writes one int.
            unsafe { libc::ioctl(self.stdout_r, libc::FIONREAD, &mut queued) };
            // Leave less room than any progress line needs (lines are written whole).
            if queued >= PIPE_PAGE - 8 {
                break;
            }
            self.stdout_w.write_all(&[FILLER]).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let wchan = format!("/proc/{}/wchan", self.pid());
        while !std::fs::read_to_string(&wchan)
            .unwrap_or_default()
            .contains("pipe_write")
        {
            assert!(
                Instant::now() < deadline && !self.exited(),
                "the run never blocked on its output\n{}",
                self.so_far()
            );
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads stdout again.
    fn release(&self) {
        self.hold.store(false, Ordering::SeqCst);
    }

    /// A terminal's Ctrl-C: SIGINT to the run's whole process group.
    fn ctrl_c(&mut self) {
        // SAFETY: kill(2) on the process group our child leads.
        let rc = unsafe { libc::kill(-self.pid(), libc::SIGINT) };
        assert_eq!(rc, 0, "the run had already ended\n{}", self.so_far());
        self.signalled = Some(Instant::now());
    }

    /// Waits for the exit (at most 60 s); its code, output, and the time from the Ctrl-C.
    fn wait(mut self) -> (Option<i32>, String, Duration) {
        self.release();
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(st) = child.try_wait().unwrap() {
                break st;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("lab run did not end within 60 s\n{}", self.so_far());
            }
            thread::sleep(Duration::from_millis(10));
        };
        drop(std::mem::replace(
            &mut self.stdout_w,
            std::fs::File::open("/dev/null").unwrap(),
        ));
        for r in self.readers.drain(..) {
            let _ = r.join();
        }
        let took = self.signalled.map(|t| t.elapsed()).unwrap_or_default();
        (status.code(), self.so_far(), took)
    }
}

impl Drop for LabRun {
    fn drop(&mut self) {
        self.release();
        if let Some(mut c) = self.child.take() {
            // A failed assertion: stop the run as a user would, so its lab is torn down.
            // SAFETY: kill(2) on the process group our child leads.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline && !matches!(c.try_wait(), Ok(Some(_))) {
                thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Reads `r` into `out` until EOF, but never while `hold` is set.
fn read_unless_held(r: OwnedFd, out: &Mutex<Vec<u8>>, hold: &AtomicBool) {
    let mut file = std::fs::File::from(r);
    let mut buf = [0u8; 4096];
    loop {
        if hold.load(Ordering::SeqCst) {
            thread::sleep(Duration::from_millis(2));
            continue;
        }
        let mut p = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut p, 1, 10) };
        if ready <= 0 || hold.load(Ordering::SeqCst) {
            continue;
        }
        match file.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => out.lock().unwrap().extend_from_slice(&buf[..n]),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// what a run leaves behind
// ---------------------------------------------------------------------------------------------

fn lines_of(program: &str, args: &[&str]) -> BTreeSet<String> {
    let out = Command::new(program).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Namespaces of this scenario (by its node and link names), and capability-probe
/// namespaces (`sonde-XXXXXX.probe`) not in `before` that are still there a second later (a
/// lab of another process may be probing at the moment of the check).
fn drill_namespaces(before: &BTreeSet<String>) -> Vec<String> {
    let probes = || -> Vec<String> {
        lines_of("ip", &["netns", "list"])
            .into_iter()
            .filter(|n| n.starts_with("sonde-") && n.ends_with(".probe") && !before.contains(n))
            .collect()
    };
    let mut left: Vec<String> = lines_of("ip", &["netns", "list"])
        .into_iter()
        .filter(|n| {
            n.starts_with("sonde-")
                && (n.ends_with("-drillc") || n.ends_with("-drills") || n.contains("-drillwan"))
        })
        .collect();
    if !probes().is_empty() {
        thread::sleep(Duration::from_secs(1));
        left.extend(probes());
    }
    left
}

/// Namespaces, root-namespace interfaces and processes of the run still there.
#[track_caller]
fn assert_nothing_left(phase: &str, before: &Before, watcher: &mut Watcher) {
    let links_before = &before.links;
    let ns = drill_namespaces(&before.namespaces);
    assert!(ns.is_empty(), "{phase}: namespaces left: {ns:?}");
    let now = links_now();
    let new: Vec<&String> = now.difference(links_before).collect();
    assert!(
        new.iter()
            .all(|n| !n.contains("drill") && !n.starts_with("sonde-")),
        "{phase}: interfaces left in the root namespace: {new:?}"
    );
    let alive = watcher.alive();
    assert!(alive.is_empty(), "{phase}: processes left: {alive:?}");
}

/// The host's namespaces and root-namespace interfaces before the drill.
struct Before {
    namespaces: BTreeSet<String>,
    links: BTreeSet<String>,
}

fn links_now() -> BTreeSet<String> {
    let out = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n).to_owned())
        .collect()
}

fn load(out_dir: &Path) -> LoadedRun {
    let store = Store::open_read_only(out_dir.join("results.db")).expect("results.db opens");
    let run = store.latest_run().unwrap().expect("a run is recorded");
    store.load_run(run).unwrap()
}

/// The matrix ids recorded, each with its start time; every one ok, with its raw document.
#[track_caller]
fn recorded(out_dir: &Path, phase: &str) -> BTreeMap<String, f64> {
    let run = load(out_dir);
    let mut ids = BTreeMap::new();
    for t in &run.tests {
        assert_eq!(
            t.status,
            TestStatus::Ok,
            "{phase}: {} recorded as {:?}: {:?}",
            t.matrix_id,
            t.status,
            t.failure_reason
        );
        let raw = out_dir.join(t.result_path.clone().expect("a raw document"));
        assert!(
            raw.exists(),
            "{phase}: {} has no {}",
            t.matrix_id,
            raw.display()
        );
        let again = ids.insert(t.matrix_id.clone(), t.started_unix);
        assert!(again.is_none(), "{phase}: {} recorded twice", t.matrix_id);
    }
    ids
}

/// One interrupted attempt: its exit code must be 1 and it must say how to continue; nothing
/// may be left; what is recorded is returned.
#[track_caller]
fn after_interrupt(
    phase: &str,
    run: LabRun,
    watcher: &mut Watcher,
    links: &Before,
    out_dir: &Path,
) -> BTreeMap<String, f64> {
    let (code, output, took) = run.wait();
    eprintln!(
        "DRILL ctrl-c {phase}: exit {code:?} {:.2} s after the signal (the run held by the \
         test for up to 0.2 s of it)",
        took.as_secs_f64()
    );
    assert_eq!(code, Some(1), "{phase}: exit code\n{output}");
    assert!(output.contains("--resume"), "{phase}: no hint\n{output}");
    assert_nothing_left(phase, links, watcher);
    recorded(out_dir, phase)
}

#[test]
fn issue16_drill_ctrl_c_at_every_phase_of_a_lab_run_then_resume() {
    let _turn = crate::turns::take(module_path!());
    if !lab_available() {
        return;
    }
    let dir = TempDir::new("ctrl-c-drill");
    let file = dir.file("drill.toml");
    std::fs::write(&file, scenario()).unwrap();
    let out_dir = dir.file("out");
    let (file, out) = (file.to_str().unwrap(), out_dir.to_str().unwrap());
    let fresh = ["--out", out];
    let resume = ["--out", out, "--resume"];
    let links = Before {
        namespaces: lines_of("ip", &["netns", "list"]),
        links: links_now(),
    };
    let lab_cmd = |c: &str| c.starts_with("ip ") && !c.contains(" exec ");
    let is_test = |c: &str| c.contains(" client ") && c.contains(" -J");

    // 1. While the first lab is being built (its first `ip` command is running).
    let mut run = LabRun::spawn(&[file, fresh[0], fresh[1]]);
    let mut w = Watcher::start(run.pid());
    w.wait_for(0, "a lab command", lab_cmd, &mut run);
    run.ctrl_c();
    let done = after_interrupt("building the first lab", run, &mut w, &links, &out_dir);
    assert!(done.is_empty(), "{done:?}");
    assert_eq!(load(&out_dir).run.status, RunStatus::Interrupted);

    // 2. While the first test runs.
    let mut run = LabRun::spawn(&[file, resume[0], resume[1], resume[2]]);
    let mut w = Watcher::start(run.pid());
    w.wait_for(0, "the first test", is_test, &mut run);
    thread::sleep(Duration::from_millis(300));
    run.ctrl_c();
    let done = after_interrupt("during a test", run, &mut w, &links, &out_dir);
    assert!(done.is_empty(), "a cut-short test was recorded: {done:?}");

    // 3. Between the first and the second test: the first is recorded, its progress line
    //    holds the run.
    let mut run = LabRun::spawn(&[file, resume[0], resume[1], resume[2]]);
    let mut w = Watcher::start(run.pid());
    w.wait_for(0, "the first test", is_test, &mut run);
    run.hold_at_next_line();
    run.ctrl_c();
    thread::sleep(Duration::from_millis(200));
    let first = after_interrupt("between tests", run, &mut w, &links, &out_dir);
    assert_eq!(first.keys().collect::<Vec<_>>(), ["s1/tcp/1"]);

    // 4. While the second setting's lab is being built.
    //    The mark is taken while the run is held at the first setting's last progress line,
    //    so no command of the second lab can come before it however late this thread runs;
    //    and the counters read after every test (`ip -n NS -s -j link show`) are no build.
    let mut run = LabRun::spawn(&[file, resume[0], resume[1], resume[2]]);
    let mut w = Watcher::start(run.pid());
    w.wait_for(0, "the first setting's last test", is_test, &mut run);
    run.hold_at_next_line();
    let mark = w.mark();
    run.release();
    run.wait_line("ok      s1/udp/1");
    let building = |c: &str| {
        lab_cmd(c)
            && (c.contains("-drillc") || c.contains("-drills"))
            && !c.contains(" del")
            && !c.contains(" pids")
            && !c.contains(" show")
    };
    w.wait_for(mark, "the second lab's commands", building, &mut run);
    run.ctrl_c();
    let s1 = after_interrupt("building the second lab", run, &mut w, &links, &out_dir);
    assert_eq!(s1.keys().collect::<Vec<_>>(), ["s1/tcp/1", "s1/udp/1"]);

    // 5. After the last test, while the summary and the report are written.
    let mut run = LabRun::spawn(&[file, resume[0], resume[1], resume[2]]);
    let mut w = Watcher::start(run.pid());
    run.wait_line("ok      s2/udp/1");
    run.hold_at_next_line();
    run.ctrl_c();
    thread::sleep(Duration::from_millis(200));
    let all = after_interrupt("writing the report", run, &mut w, &links, &out_dir);
    assert_eq!(all.keys().collect::<Vec<_>>(), ALL);

    // 6. The last --resume has nothing left to run and ends the run.
    let run = LabRun::spawn(&[file, resume[0], resume[1], resume[2]]);
    let mut w = Watcher::start(run.pid());
    let (code, output, _) = run.wait();
    assert_eq!(code, Some(0), "{output}");
    assert!(output.contains("0 of 4 tests to run"), "{output}");
    assert_nothing_left("the last --resume", &links, &mut w);
    let last = load(&out_dir);
    assert_eq!(last.run.status, RunStatus::Completed);
    let fin = recorded(&out_dir, "the end");
    assert_eq!(fin.keys().collect::<Vec<_>>(), ALL);
    for (id, started) in first.iter().chain(&s1).chain(&all) {
        assert_eq!(fin[id], *started, "{id} was run again");
    }
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    for id in ALL {
        assert!(md.contains(id), "report.md lacks {id}");
    }
}
