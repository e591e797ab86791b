//! Tests of one module run side by side; tests of two modules never do.
//!
//! This binary holds every integration test of the `sonde` binary, one module per concern. The
//! harness runs tests on two threads (one per core here), taking them in name order, so a
//! module's tests come one after another. Many modules measure: a paced sender through a short
//! device ring, TCP within 1 % of a shaped link, a sweep's steps of 0.2 s. Another module's load
//! on a 2-core machine would show in their figures as if the path had caused it, so a test
//! first takes its module's turn, which waits until no test of another module runs. A module
//! whose own tests must not overlap says so with a lock of its own (`ONE_LAB_AT_A_TIME`).

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

struct Current {
    /// The module whose tests run now, if any.
    module: Option<String>,
    /// How many of its tests run now.
    running: usize,
    /// When its turn began.
    since: Option<Instant>,
}

static CURRENT: Mutex<Current> = Mutex::new(Current {
    module: None,
    running: 0,
    since: None,
});

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
    CURRENT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A test's share of its module's turn, given back when dropped (also when the test fails).
pub struct Turn {
    /// When the test got its turn.
    since: Instant,
}

/// Waits until no test of another module runs, then counts this test in its module's turn.
/// `module_path` is the caller's `module_path!()`; its first two parts name the module.
pub fn take(module_path: &str) -> Turn {
    let module: String = module_path
        .split("::")
        .take(2)
        .collect::<Vec<_>>()
        .join("::");
    let mut now = current();
    while now.module.as_ref().is_some_and(|m| *m != module) {
        now = ENDED.wait(now).unwrap_or_else(PoisonError::into_inner);
    }
    if now.module.is_none() {
        now.since = Some(Instant::now());
    }
    now.module = Some(module);
    now.running += 1;
    Turn {
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
        now.running -= 1;
        if now.running == 0 {
            if let (Some(module), Some(since)) = (now.module.take(), now.since.take()) {
                log_turn(&module, since);
            }
            ENDED.notify_all();
        }
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
