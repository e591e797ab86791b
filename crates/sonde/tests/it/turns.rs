//! Which tests may run side by side: modules that measure have the machine to themselves;
//! modules that only check behaviour share it.
//!
//! This binary holds every integration test of the `sonde` binary, one module per concern. Many
//! modules measure: a paced sender through a short device ring, TCP within 1 % of a shaped link,
//! a sweep's steps. Another module's load on a 2-core machine would show in their figures as if
//! the path had caused it, so such a module runs alone: its tests wait until no test of another
//! module runs, and at most as many of them run at once as the machine has cores (the harness's
//! default width, which they were written for).
//!
//! The modules of [`SHARING`] check what sonde does (exit codes, documents, refusals, what a
//! lab run records), with time limits far above what the work takes. Where one checks
//! loopback's own figures it is with bounds a quiet host is far from, not ones shown to hold
//! under any load: no datagram or probe lost of a few hundred (profile, psk_probes,
//! source_limits, latency_output), round trips under 50 ms and one-way delays under 100 ms
//! (latency_output, profile). `cli` asserts a rate and a loss: paced TCP at `-b 50m` within
//! 5 %, UDP loopback loss under 5 %. They spend most of their time waiting on processes and
//! sockets, so they run side by side with each other, as many tests at once as the harness
//! has threads (`RUST_TEST_THREADS`, set for this workspace in `.cargo/config.toml`), and
//! never beside a measuring module. A module not listed there runs alone: a new module
//! measures until it is shown not to. A measuring module whose own tests must not overlap
//! either is listed in [`ONE_AT_A_TIME`]: its tests run one after another.

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

/// The modules that may run beside each other (see the module's docs for what they assert).
pub const SHARING: &[&str] = &[
    "agent_postgres",
    "agent_reload",
    "auth",
    "cli",
    "closed_port",
    "coded_corrupt",
    "deploy_files",
    "envelope",
    "ignored",
    "interop_json_keys",
    "iperf2_csv",
    "iperf2_server",
    "iperf3_interop",
    "lab",
    "lab_ctrl_c",
    "latency_output",
    "link_facts",
    "lossy_setup",
    "postgres_store",
    "postgres_tls",
    "profile",
    "psk_commands",
    "psk_probes",
    "report_kinds",
    "report_runs",
    "serial",
    "server_documents",
    "server_options",
    "signals",
    "source_limits",
    "stress_load_probe",
    "stress_silent",
    "switch_test",
    "turns",
];

/// The measuring modules whose tests run one at a time, not as many as there are cores: each
/// test builds a lab whose userspace forwarder, sender and receiver take the 2 cores between
/// them, and measures through it (stalls in milliseconds, goodput against a bound, a ring's
/// overflow, a sweep's ceiling), so a second lab beside it would show in its figures.
pub const ONE_AT_A_TIME: &[&str] = &[
    "coded_lab",
    "device_lab",
    "family_lab",
    "lab_bare",
    "pacing_lab",
    "profile_lab",
    "stress_lab",
    "sweep_lab",
    "switch_lab",
];

#[derive(Default)]
struct Current {
    /// The measuring module whose tests run now, if any.
    alone: Option<String>,
    /// Tests of measuring modules waiting for their turn: sharing tests let them go first.
    alone_waiting: usize,
    /// Each running module's running tests and when its turn began.
    running: HashMap<String, (usize, Instant)>,
}

impl Current {
    fn running_tests(&self) -> usize {
        self.running.values().map(|(n, _)| n).sum()
    }

    fn running_of(&self, module: &str) -> usize {
        self.running.get(module).map_or(0, |(n, _)| *n)
    }
}

static CURRENT: OnceLock<Mutex<Current>> = OnceLock::new();

/// With `SONDE_TURNS_LOG=FILE`, each turn's module and length in seconds is appended to FILE
/// as it ends, and before it each test's own time within the turn (`  test NAME`): where the
/// suite's time goes (the harness's time for a test also counts its wait for the turn, and so
/// says little about it).
fn log_turn(module: &str, since: Instant) {
    log_line(&format!("{:8.2} {module}", since.elapsed().as_secs_f64()));
}

fn log_line(line: &str) {
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    let file = FILE.get_or_init(|| {
        let path = std::env::var_os("SONDE_TURNS_LOG")?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()?;
        Some(Mutex::new(f))
    });
    if let Some(f) = file {
        use std::io::Write;
        let mut f = f.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(f, "{line}");
    }
}
static ENDED: Condvar = Condvar::new();

fn current() -> MutexGuard<'static, Current> {
    CURRENT
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// How many tests of the measuring module `module` (`it::sweep_lab`) run at once: one for
/// those of [`ONE_AT_A_TIME`], else the cores, the harness's default width.
fn alone_width(module: &str) -> usize {
    if module
        .split("::")
        .nth(1)
        .is_some_and(|m| ONE_AT_A_TIME.contains(&m))
    {
        return 1;
    }
    std::thread::available_parallelism().map_or(2, usize::from)
}

/// A test's share of its module's turn, given back when dropped (also when the test fails).
pub struct Turn {
    /// The module's name (`it::cli`).
    module: String,
    /// When the test got its turn.
    since: Instant,
}

/// Waits until this test may run beside what runs now, then counts it in its module's turn.
/// `module_path` is the caller's `module_path!()`; its first two parts name the module.
pub fn take(module_path: &str) -> Turn {
    let module: String = module_path
        .split("::")
        .take(2)
        .collect::<Vec<_>>()
        .join("::");
    let shares = module
        .split("::")
        .nth(1)
        .is_some_and(|m| SHARING.contains(&m));
    let mut now = current();
    if shares {
        while now.alone.is_some() || now.alone_waiting > 0 {
            now = ENDED.wait(now).unwrap_or_else(PoisonError::into_inner);
        }
    } else {
        now.alone_waiting += 1;
        loop {
            let mine = now.alone.as_deref() == Some(module.as_str());
            let free = now.running_tests() == 0;
            if free || (mine && now.running_of(&module) < alone_width(&module)) {
                break;
            }
            now = ENDED.wait(now).unwrap_or_else(PoisonError::into_inner);
        }
        now.alone_waiting -= 1;
        now.alone = Some(module.clone());
    }
    now.running
        .entry(module.clone())
        .or_insert((0, Instant::now()))
        .0 += 1;
    Turn {
        module,
        since: Instant::now(),
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // The harness names each test's thread after the test.
        if let Some(name) = std::thread::current().name() {
            log_line(&format!(
                "{:8.2}   test {name}",
                self.since.elapsed().as_secs_f64()
            ));
        }
        let mut now = current();
        let ended = match now.running.get_mut(&self.module) {
            Some((n, since)) => {
                *n -= 1;
                (*n == 0).then_some(*since)
            }
            None => None,
        };
        if let Some(since) = ended {
            now.running.remove(&self.module);
            log_turn(&self.module, since);
            if now.alone.as_deref() == Some(self.module.as_str()) {
                now.alone = None;
            }
        }
        ENDED.notify_all();
    }
}

/// Every module named in [`SHARING`] exists: a renamed module would otherwise quietly start
/// to run alone, or a typo let nothing share.
#[test]
fn every_sharing_module_exists() {
    let _turn = crate::turns::take(module_path!());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    for m in SHARING {
        assert!(dir.join(format!("{m}.rs")).is_file(), "no module {m}");
    }
}

/// Every module named in [`ONE_AT_A_TIME`] exists and measures (is not in [`SHARING`]): a
/// renamed one would otherwise quietly run its labs side by side.
#[test]
fn every_one_at_a_time_module_exists_and_measures() {
    let _turn = crate::turns::take(module_path!());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    for m in ONE_AT_A_TIME {
        assert!(dir.join(format!("{m}.rs")).is_file(), "no module {m}");
        assert!(!SHARING.contains(m), "{m} is in SHARING and ONE_AT_A_TIME");
    }
}

/// Every test of this binary takes its turn first: one that did not would run beside other
/// modules' tests and could disturb what they measure.
#[test]
fn every_test_takes_its_turn_first() {
    let _turn = crate::turns::take(module_path!());
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.trim() != "#[test]" {
                continue;
            }
            // The test's signature ends at the first line ending in '{'; its next line is the
            // first statement.
            let open = (i..lines.len()).find(|&j| lines[j].trim_end().ends_with('{'));
            let first = open.and_then(|j| lines.get(j + 1)).map(|l| l.trim());
            if first != Some("let _turn = crate::turns::take(module_path!());") {
                missing.push(format!("{}:{}", path.display(), i + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests that do not take their turn first: {missing:?}"
    );
}
