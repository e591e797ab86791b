//! Copies the agent's local SQLite store to PostgreSQL (`store_url`), on a thread of its own.
//!
//! Why a thread: a copy may wait for PostgreSQL (up to the driver's 5 s connect time-out when
//! the server is away), and the schedule must not: latency runs every second keep their
//! rhythm whatever the database does. The local store stays the buffer: every run is written
//! there first by the schedule loop; this thread opens the same file through a second SQLite
//! connection (the store runs in WAL mode, so reading never blocks the writer) and calls
//! [`Remote::sync`], which copies whatever PostgreSQL lacks and never writes a test twice.
//!
//! When: after a run is recorded, at most every `sync_every_secs`; while PostgreSQL is away,
//! again every `sync_every_secs` until a copy succeeds; once more when the agent stops (so the
//! run's final status arrives). An outage is logged once when it begins and once when it
//! ends, not per attempt; the metrics count failed attempts and the tests PostgreSQL may
//! still lack.
//!
//! Each attempt takes the store's [`WriteMark`] before it copies; once it succeeds, every
//! test at or under that mark is in PostgreSQL. The thread publishes the mark
//! ([`Syncer::copied`]) so that the retention deletes only such tests, and counts the tests
//! above it as not yet copied.

use crate::metrics::Metrics;
use sonde_store::{Remote, Store, WriteMark};
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the schedule loop tells the sync thread.
enum Note {
    /// A run was recorded locally.
    Recorded,
    /// The agent stops: copy once more, then end.
    Stop,
}

/// The running sync thread.
pub struct Syncer {
    notes: mpsc::Sender<Note>,
    thread: std::thread::JoinHandle<()>,
    copied: Arc<CopiedMark>,
}

/// The mark the last successful copy reached, shared by the sync thread (which sets it) and
/// the schedule loop (which prunes under it).
#[derive(Debug, Default)]
struct CopiedMark(AtomicI64);

impl CopiedMark {
    fn get(&self) -> WriteMark {
        WriteMark(self.0.load(Ordering::Acquire))
    }

    fn raise(&self, mark: WriteMark) {
        self.0.fetch_max(mark.0, Ordering::AcqRel);
    }
}

/// Where to copy from and to, and how often.
pub struct SyncPlan {
    /// The local SQLite store (already created by the recorder).
    pub local: PathBuf,
    /// The PostgreSQL URL.
    pub url: String,
    /// Least time between two copies, and between retries while PostgreSQL is away.
    pub every: Duration,
}

type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// Longest the agent waits at stop for its last copy. The driver's connect time-out (5 s)
/// covers a server that is away, but nothing bounds one that accepts the connection and
/// then never answers; past this the agent stops without the copy, which its next start
/// makes (nothing is lost: the local store keeps every run).
pub const STOP_GRACE: Duration = Duration::from_secs(10);

/// Outage bookkeeping: what to log and what to export.
#[derive(Debug, Default)]
struct Health {
    /// Failed attempts since the last success (0: PostgreSQL is reachable, or not tried yet).
    failures: u64,
    /// Where the last successful copy began: every test at or under it is in PostgreSQL.
    copied: Arc<CopiedMark>,
    tried: bool,
}

impl Health {
    /// Tests recorded above the copied mark (what PostgreSQL may lack).
    fn not_copied(&self, store: &Store) -> u64 {
        store.tests_after(self.copied.get()).unwrap_or(0)
    }

    /// One copy attempt: logs the start and the end of outages, updates the metrics.
    fn attempt(
        &mut self,
        remote: &mut Remote,
        store: &Store,
        plan: &SyncPlan,
        metrics: &Metrics,
        log: &dyn Fn(&str),
    ) -> bool {
        // A mark that cannot be read is taken as none: nothing is then counted as copied.
        let mark = store.write_mark().unwrap_or(WriteMark::NONE);
        let result = remote.sync(store);
        let first = !self.tried;
        self.tried = true;
        match result {
            Ok(done) => {
                self.copied.raise(mark);
                metrics.set_unsynced(self.not_copied(store));
                if self.failures > 0 {
                    log(&format!(
                        "PostgreSQL {} is back after {} failed attempts: copied {} tests",
                        remote.target(),
                        self.failures,
                        done.tests_written
                    ));
                } else if first {
                    log(&format!(
                        "copying results to PostgreSQL {} (at most every {} s; copied {} tests now)",
                        remote.target(),
                        plan.every.as_secs_f64(),
                        done.tests_written
                    ));
                }
                self.failures = 0;
                true
            }
            Err(e) => {
                metrics.sync_failed();
                metrics.set_unsynced(self.not_copied(store));
                if self.failures == 0 {
                    log(&format!(
                        "cannot copy results to PostgreSQL: {e}; the agent goes on measuring, results stay in {} and are copied when it is back (retrying every {} s)",
                        plan.local.display(),
                        plan.every.as_secs_f64()
                    ));
                }
                self.failures = self.failures.saturating_add(1);
                false
            }
        }
    }
}

impl Syncer {
    /// Starts the thread; its first copy is attempted at once (an unreachable PostgreSQL is
    /// logged, not fatal).
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub fn start(plan: SyncPlan, metrics: Arc<Metrics>, log: Log) -> std::io::Result<Syncer> {
        let (notes, rx) = mpsc::channel();
        let copied = Arc::new(CopiedMark::default());
        let health = Health {
            copied: copied.clone(),
            ..Health::default()
        };
        let thread = std::thread::Builder::new()
            .name("sonde-agent-sync".into())
            .spawn(move || run(plan, health, &rx, &metrics, &*log))?;
        Ok(Syncer {
            notes,
            thread,
            copied,
        })
    }

    /// The mark the last successful copy reached ([`WriteMark::NONE`] before the first):
    /// every test written at or under it is in PostgreSQL.
    pub fn copied(&self) -> WriteMark {
        self.copied.get()
    }

    /// Says that a run was recorded locally (copied within `every`).
    pub fn recorded(&self) {
        let _ = self.notes.send(Note::Recorded);
    }

    /// Asks for one more copy and waits for the thread to end, at most [`STOP_GRACE`];
    /// false when it has not ended by then (the thread is left to the process's exit).
    pub fn stop(self) -> bool {
        let _ = self.notes.send(Note::Stop);
        let deadline = Instant::now() + STOP_GRACE;
        while !self.thread.is_finished() {
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.thread.join();
        true
    }
}

fn run(
    plan: SyncPlan,
    mut health: Health,
    rx: &mpsc::Receiver<Note>,
    metrics: &Metrics,
    log: &dyn Fn(&str),
) {
    let store = match Store::open(&plan.local) {
        Ok(s) => s,
        Err(e) => {
            log(&format!("cannot copy results to PostgreSQL: {e}"));
            return;
        }
    };
    let mut remote = Remote::new(&plan.url);
    let mut pending = true;
    let mut last: Option<Instant> = None;
    loop {
        let since = last.map_or(plan.every, |t| t.elapsed());
        if pending && since >= plan.every {
            last = Some(Instant::now());
            pending = !health.attempt(&mut remote, &store, &plan, metrics, log);
            continue;
        }
        // Nothing due: wait for a note, or for the next retry.
        let wait = if pending {
            plan.every.saturating_sub(since)
        } else {
            Duration::from_secs(3600)
        };
        match rx.recv_timeout(wait.max(Duration::from_millis(10))) {
            Ok(Note::Recorded) => pending = true,
            Err(RecvTimeoutError::Timeout) => {}
            Ok(Note::Stop) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    if !health.attempt(&mut remote, &store, &plan, metrics, log) {
        let left = health.not_copied(&store);
        log(&format!(
            "stopping with up to {left} tests not in PostgreSQL: they stay in {} and are copied by the agent's next start",
            plan.local.display()
        ));
    }
}
