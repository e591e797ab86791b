//! The matrix loop: one lab per link setting, every test of that setting in it, each result
//! recorded the moment it is known.
//!
//! Order and ids come from [`Scenario::expand_matrix`] (settings first, since building a lab
//! is the expensive step). Each test is one database transaction, so a run killed at any
//! point keeps every finished test and `--resume` asks the database what is left. The lab of
//! a setting is always finished (servers stopped, namespaces deleted) before the next one is
//! built or the run returns, on Ctrl-C as on success; the userspace engine's stage counters
//! it returns are then added to that setting's test records.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{json, Value};
use sonde_emu::backend::{self, BackendPlan};
use sonde_lab::{Lab, LabOptions, LabReport};
use sonde_scenario::{Run, Scenario};
use sonde_store::{
    LinkSettingsRecord, NewRun, Remote, RunId, RunStatus, Store, SyncOutcome, TestRecord,
    TestStatus,
};

use crate::error::RunError;
use crate::host;
use crate::server::LabServer;
use crate::source::Loaded;
use crate::test::{self, unix_now, TestEnv};

/// The database's file name inside the output directory.
pub const DATABASE: &str = "results.db";

/// How to run a scenario.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Directory for the database, raw results and server logs.
    pub out_dir: PathBuf,
    /// Continue the directory's latest run instead of starting a new one.
    pub resume: bool,
    /// Only these settings (all of the matrix when empty).
    pub settings: Vec<String>,
    /// The sonde executable the tests and servers run (the caller's own binary).
    pub sonde_exe: PathBuf,
    /// `sonde --version` text, stored with the run.
    pub sonde_version: String,
    /// A `postgres://` URL the local database is copied to after each setting and at the
    /// end (`None`: the local SQLite database only).
    pub store: Option<String>,
}

/// What the progress display is told. Every method has a default that does nothing.
pub trait Observer {
    /// Before the first lab: how many tests the matrix has, how many are left to run, and
    /// their estimated total time.
    fn planned(&mut self, _total: usize, _to_run: usize, _estimate: Duration) {}
    /// A setting's lab is up (or failed to come up: `error`).
    fn setting_started(&mut self, _name: &str, _plan: Option<&BackendPlan>, _error: Option<&str>) {}
    /// The lab just up names its namespaces `PREFIX-HOST`, until it is torn down.
    fn namespaces(&mut self, _prefix: &str) {}
    /// A test is starting, with its estimated duration.
    fn test_started(&mut self, _run: &Run, _estimate: Duration) {}
    /// A test is recorded.
    fn test_finished(&mut self, _run: &Run, _record: &TestRecord) {}
    /// A setting's lab is torn down.
    fn setting_finished(&mut self, _name: &str, _report: &LabReport) {}
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// The run's id in the database.
    pub run: RunId,
    /// The database.
    pub database: PathBuf,
    /// Tests in the (filtered) matrix.
    pub total: usize,
    /// Tests skipped because an earlier attempt recorded them (`--resume`).
    pub skipped: usize,
    /// Tests run now that succeeded.
    pub ok: usize,
    /// Tests run now that failed.
    pub failed: usize,
    /// Failed tests recorded by earlier attempts of a resumed run.
    pub failed_before: usize,
    /// Stopped by the interrupt flag; `--resume` continues.
    pub interrupted: bool,
    /// What the last copy to PostgreSQL did, when one is chosen.
    pub remote: Option<String>,
}

impl RunSummary {
    /// True when every test of the matrix is recorded and none failed.
    pub fn all_ok(&self) -> bool {
        !self.interrupted && self.failed == 0 && self.failed_before == 0
    }
}

fn io_err(what: String) -> impl FnOnce(std::io::Error) -> RunError {
    move |source| RunError::Io { what, source }
}

/// The matrix, restricted to `only` settings when given.
fn matrix(scenario: &Scenario, only: &[String]) -> Result<Vec<Run>, RunError> {
    let runs = scenario.expand_matrix();
    let known: Vec<&str> = {
        let mut seen = Vec::new();
        for r in &runs {
            if !seen.contains(&r.settings.as_str()) {
                seen.push(r.settings.as_str());
            }
        }
        seen
    };
    if let Some(bad) = only.iter().find(|s| !known.contains(&s.as_str())) {
        return Err(RunError::UnknownSettings {
            name: bad.clone(),
            known: known.join(", "),
        });
    }
    Ok(runs
        .into_iter()
        .filter(|r| only.is_empty() || only.contains(&r.settings))
        .collect())
}

/// Where the run stands in the database: its id once begun, and what is recorded.
struct Progress {
    run: Option<RunId>,
    done: BTreeSet<String>,
    failed_before: usize,
}

fn open_progress(store: &mut Store, loaded: &Loaded, resume: bool) -> Result<Progress, RunError> {
    if !resume {
        return Ok(Progress {
            run: None,
            done: BTreeSet::new(),
            failed_before: 0,
        });
    }
    let id = store
        .latest_run()?
        .ok_or_else(|| RunError::Resume("the output directory holds no run to resume".into()))?;
    let loaded_run = store.load_run(id)?;
    if loaded_run.run.scenario_name != loaded.scenario.name {
        return Err(RunError::Resume(format!(
            "the latest run in the output directory is of scenario {:?}, not {:?}",
            loaded_run.run.scenario_name, loaded.scenario.name
        )));
    }
    store.resume_run(id)?;
    let failed_before = loaded_run
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::Failed)
        .count();
    Ok(Progress {
        run: Some(id),
        done: store.completed_ids(id)?,
        failed_before,
    })
}

/// Records the start of the run, with every setting's backend plan for these kernel caps.
fn begin(
    store: &mut Store,
    loaded: &Loaded,
    opts: &RunOptions,
    caps: Option<backend::KernelCaps>,
) -> Result<RunId, RunError> {
    let s = &loaded.scenario;
    let settings = s
        .settings
        .iter()
        .enumerate()
        .map(|(i, set)| LinkSettingsRecord {
            name: set.name.clone(),
            ordinal: u32::try_from(i).unwrap_or(u32::MAX),
            settings: serde_json::to_value(set).unwrap_or(Value::Null),
            backend_plan: caps
                .and_then(|c| backend::plan(s, &set.name, c).ok())
                .and_then(|p| serde_json::to_value(p).ok()),
        })
        .collect();
    let (hostname, kernel, host_info) = host::facts(caps);
    Ok(store.begin_run(&NewRun {
        scenario_name: s.name.clone(),
        scenario_toml: loaded.toml.clone(),
        sonde_version: opts.sonde_version.clone(),
        hostname,
        kernel,
        host_info,
        seed: s.seed,
        started_unix: unix_now(),
        settings,
    })?)
}

/// The userspace engine's counters in the shape the report shows: per link direction, each
/// stage's counters, plus what they cover.
fn stage_stats(report: &LabReport, tests: usize) -> Option<Value> {
    if report.userspace.is_empty() {
        return None;
    }
    let mut m = serde_json::Map::new();
    m.insert(
        "scope".into(),
        json!(format!("all {tests} test(s) run in this settings' lab")),
    );
    for d in &report.userspace {
        m.insert(
            format!("{} {}", d.link, d.direction),
            json!({"stages": d.stages, "io": d.io, "realtime": d.realtime}),
        );
    }
    Some(Value::Object(m))
}

/// Runs `loaded`'s matrix into `opts.out_dir`. See the module docs.
///
/// # Errors
/// Only what stops the whole run: not root, an unreadable scenario or settings name, the
/// database, or the first lab failing to build before anything was recorded. A test that
/// fails, and a later setting whose lab cannot be built, are recorded and the run goes on.
pub fn run(
    loaded: &Loaded,
    opts: &RunOptions,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
) -> Result<RunSummary, RunError> {
    sonde_lab::check_privileges()?;
    let scenario = &loaded.scenario;
    let runs = matrix(scenario, &opts.settings)?;
    std::fs::create_dir_all(&opts.out_dir)
        .map_err(io_err(format!("creating {}", opts.out_dir.display())))?;
    let database = opts.out_dir.join(DATABASE);
    let mut store = Store::open(&database)?;
    let remote = connect_remote(opts)?;
    let progress = open_progress(&mut store, loaded, opts.resume)?;
    let to_run: Vec<&Run> = runs
        .iter()
        .filter(|r| !progress.done.contains(&r.id))
        .collect();
    let estimate = to_run
        .iter()
        .filter_map(|r| scenario.test(&r.test))
        .map(test::estimate)
        .sum();
    obs.planned(runs.len(), to_run.len(), estimate);
    let summary = RunSummary {
        run: progress.run.unwrap_or(RunId(0)),
        database: database.clone(),
        total: runs.len(),
        skipped: runs.len() - to_run.len(),
        ok: 0,
        failed: 0,
        failed_before: progress.failed_before,
        interrupted: false,
        remote: None,
    };
    let mut m = MatrixRun {
        loaded,
        opts,
        obs,
        interrupt,
        store,
        remote,
        synced: SyncOutcome::default(),
        progress,
        summary,
    };
    for name in settings_order(&to_run) {
        if m.interrupt.load(Ordering::Relaxed) {
            m.summary.interrupted = true;
            break;
        }
        let todo: Vec<&Run> = to_run
            .iter()
            .copied()
            .filter(|r| r.settings == name)
            .collect();
        if !m.setting(name, &todo)? {
            break;
        }
    }
    m.finish()
}

/// The settings of `to_run`, each once, in the order of their first test.
fn settings_order<'a>(to_run: &[&'a Run]) -> Vec<&'a str> {
    let mut order: Vec<&str> = Vec::new();
    for r in to_run {
        if !order.contains(&r.settings.as_str()) {
            order.push(&r.settings);
        }
    }
    order
}

/// A run of the matrix under way: where it records, and what it has done.
struct MatrixRun<'a> {
    loaded: &'a Loaded,
    opts: &'a RunOptions,
    obs: &'a mut dyn Observer,
    interrupt: &'a AtomicBool,
    store: Store,
    remote: Option<Remote>,
    /// What this run's copies to PostgreSQL wrote.
    synced: SyncOutcome,
    progress: Progress,
    summary: RunSummary,
}

impl MatrixRun<'_> {
    /// Runs setting `name`'s tests `todo` in its lab (recorded as failed when the lab cannot
    /// be built); false when the run stops here (Ctrl-C).
    fn setting(&mut self, name: &str, todo: &[&Run]) -> Result<bool, RunError> {
        let (scenario, interrupt) = (&self.loaded.scenario, self.interrupt);
        let built = Lab::build(scenario, Some(name), LabOptions::default());
        if built.is_err() && interrupt.load(Ordering::Relaxed) {
            // Ctrl-C while the lab was being built: whatever stopped the build, its tests did
            // not fail, they were not run; `--resume` runs them.
            self.summary.interrupted = true;
            return Ok(false);
        }
        let run_id = match (&built, self.progress.run) {
            (_, Some(id)) => id,
            (Ok(lab), None) => begin(
                &mut self.store,
                self.loaded,
                self.opts,
                lab.plan().map(|p| p.caps),
            )?,
            (Err(_), None) => {
                // Nothing is recorded yet: a lab that cannot be built at all (missing
                // tools, a taken name) is the run's error, not 40 failed tests.
                return Err(built.err().map(RunError::from).unwrap_or_else(|| {
                    RunError::Resume("internal: lab error without error".into())
                }));
            }
        };
        self.progress.run = Some(run_id);
        self.summary.run = run_id;
        let lab = match built {
            Ok(lab) => lab,
            Err(e) => {
                let reason = format!("the lab of settings {name:?} could not be built: {e}");
                self.record_unbuilt(name, todo, run_id, &reason)?;
                return Ok(true);
            }
        };
        self.obs.setting_started(name, lab.plan(), None);
        self.obs.namespaces(lab.prefix());
        let (records, report) = run_setting(
            lab,
            scenario,
            self.opts,
            todo,
            &mut self.store,
            run_id,
            &mut *self.obs,
            interrupt,
        )?;
        for rec in &records {
            match rec.status {
                TestStatus::Ok => self.summary.ok += 1,
                TestStatus::Failed => self.summary.failed += 1,
            }
        }
        if let Some(stats) = stage_stats(&report, records.len()) {
            let with: Vec<TestRecord> = records
                .into_iter()
                .map(|mut r| {
                    r.stage_stats = Some(stats.clone());
                    r
                })
                .collect();
            self.store.record_tests(run_id, &with)?;
        }
        self.obs.setting_finished(name, &report);
        self.summary.remote = sync_remote(self.remote.as_mut(), &self.store, &mut self.synced);
        if interrupt.load(Ordering::Relaxed) {
            self.summary.interrupted = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Records each of `todo` as failed for `reason`: its setting's lab could not be built.
    fn record_unbuilt(
        &mut self,
        name: &str,
        todo: &[&Run],
        run_id: RunId,
        reason: &str,
    ) -> Result<(), RunError> {
        self.obs.setting_started(name, None, Some(reason));
        for r in todo {
            let rec = unbuilt_record(r, reason);
            self.store.record_test(run_id, &rec)?;
            self.summary.failed += 1;
            self.obs.test_finished(r, &rec);
        }
        Ok(())
    }

    /// Marks the run completed or interrupted (beginning it first when no setting did) and
    /// makes the last copy to PostgreSQL.
    fn finish(mut self) -> Result<RunSummary, RunError> {
        let run_id = match self.progress.run {
            Some(id) => id,
            None => begin(&mut self.store, self.loaded, self.opts, None)?,
        };
        self.summary.run = run_id;
        let status = if self.summary.interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        self.store.finish_run(run_id, status, unix_now())?;
        self.summary.remote = sync_remote(self.remote.as_mut(), &self.store, &mut self.synced);
        Ok(self.summary)
    }
}

/// The PostgreSQL database of `--store`, connected once now so that a wrong URL stops the
/// run before its first test.
fn connect_remote(opts: &RunOptions) -> Result<Option<Remote>, RunError> {
    let Some(url) = &opts.store else {
        return Ok(None);
    };
    let mut remote = Remote::new(url);
    remote.connect()?;
    Ok(Some(remote))
}

/// Copies what PostgreSQL lacks; a failure keeps the results in the local database (the
/// next sync writes them) and is said in the summary rather than failing the run.
/// `total` adds up what this run's syncs wrote.
fn sync_remote(
    remote: Option<&mut Remote>,
    store: &Store,
    total: &mut SyncOutcome,
) -> Option<String> {
    let remote = remote?;
    Some(match remote.sync(store) {
        Ok(done) => {
            total.runs_created += done.runs_created;
            total.tests_written += done.tests_written;
            format!(
                "PostgreSQL {}: up to date ({} runs created, {} tests written by this run)",
                remote.target(),
                total.runs_created,
                total.tests_written
            )
        }
        Err(e) => format!(
            "PostgreSQL not written ({e}); every result is kept in {} and the next run with \
             --store writes it",
            store.path()
        ),
    })
}

/// Runs one setting's tests in its lab, then tears the lab down; the records made and the
/// lab's report.
#[allow(clippy::too_many_arguments)]
fn run_setting(
    lab: Lab,
    scenario: &Scenario,
    opts: &RunOptions,
    todo: &[&Run],
    store: &mut Store,
    run_id: RunId,
    obs: &mut dyn Observer,
    interrupt: &AtomicBool,
) -> Result<(Vec<TestRecord>, LabReport), RunError> {
    let name = todo.first().map_or("", |r| r.settings.as_str());
    let server_nodes: BTreeSet<&str> = todo
        .iter()
        .filter_map(|r| scenario.test(&r.test))
        .map(|t| test::nodes(scenario, t).1)
        .collect();
    let logs = opts.out_dir.join("logs");
    let _ = std::fs::create_dir_all(&logs);
    let mut servers = Vec::new();
    let mut server_errors: Vec<(String, String)> = Vec::new();
    for node in server_nodes {
        if interrupt.load(Ordering::Relaxed) {
            break; // Ctrl-C while the lab was built: no test will run in it
        }
        let log = logs.join(format!("{}-{node}-server.log", safe(name)));
        match LabServer::start(&lab, node, &opts.sonde_exe, &log) {
            Ok(s) => servers.push(s),
            Err(e) => server_errors.push((node.to_owned(), e)),
        }
    }
    let env = TestEnv {
        lab: &lab,
        scenario,
        sonde_exe: &opts.sonde_exe,
        out_dir: &opts.out_dir,
        link_status: lab.plan().and_then(|p| serde_json::to_value(p).ok()),
    };
    let mut records = Vec::new();
    let mut result = Ok(());
    for r in todo {
        if interrupt.load(Ordering::Relaxed) {
            break;
        }
        let Some(t) = scenario.test(&r.test) else {
            continue;
        };
        obs.test_started(r, test::estimate(t));
        let server_node = test::nodes(scenario, t).1;
        let rec = match server_errors.iter().find(|(n, _)| n == server_node) {
            Some((_, e)) => {
                let mut rec = unbuilt_record(r, e);
                rec.link_status = env.link_status.clone();
                Some(rec)
            }
            None => test::run_test(&env, r, interrupt),
        };
        let Some(rec) = rec else { break };
        if let Err(e) = store.record_test(run_id, &rec) {
            result = Err(e);
            break;
        }
        obs.test_finished(r, &rec);
        records.push(rec);
    }
    for s in servers {
        s.stop();
    }
    let report = lab.finish();
    result?;
    Ok((records, report))
}

/// A file-name-safe version of a settings name.
fn safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The record of a test that could not start because its lab or server is missing.
fn unbuilt_record(r: &Run, reason: &str) -> TestRecord {
    let now = unix_now();
    TestRecord {
        matrix_id: r.id.clone(),
        ordinal: u32::try_from(r.index).unwrap_or(u32::MAX),
        settings: r.settings.clone(),
        test_name: r.test.clone(),
        repetition: r.repetition,
        seed: r.seed,
        kind: "sonde".into(),
        protocol: None,
        parameters: json!({}),
        link_status: None,
        started_unix: now,
        ended_unix: now,
        status: TestStatus::Failed,
        failure_reason: Some(reason.to_owned()),
        result_path: None,
        result_json: None,
        client: Default::default(),
        server: Default::default(),
        stage_stats: None,
    }
}

/// The database path for an output directory.
pub fn database_path(out_dir: &Path) -> PathBuf {
    out_dir.join(DATABASE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_filter() {
        let q = sonde_scenario::builtin("quick").expect("quick");
        assert_eq!(matrix(&q, &[]).map(|m| m.len()).unwrap_or(0), 8);
        let only = matrix(&q, &["loss-5".into()]).unwrap_or_default();
        assert!(only.len() == 4 && only.iter().all(|r| r.settings == "loss-5"));
        assert!(matches!(
            matrix(&q, &["nope".into()]),
            Err(RunError::UnknownSettings { .. })
        ));
        assert_eq!(safe("loss 5/x"), "loss_5_x");
    }

    #[test]
    fn settings_in_the_order_of_their_first_test() {
        let q = sonde_scenario::builtin("quick").expect("quick");
        let runs = matrix(&q, &[]).unwrap_or_default();
        let mut to_run: Vec<&Run> = runs.iter().collect();
        assert_eq!(settings_order(&to_run).len(), 2);
        to_run.reverse();
        let order = settings_order(&to_run);
        let last = runs.last().map(|r| r.settings.as_str());
        assert_eq!(order.first().copied(), last);
        assert!(order.iter().all(|s| runs.iter().any(|r| r.settings == *s)));
    }
}
