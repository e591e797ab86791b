//! The agents' databases brought together after a run: each agent's run of this mesh read
//! back, copied as one combined run into the mesh's own SQLite database (what `sonde report`
//! reads), and each agent's database copied to PostgreSQL with [`sonde_store::Results::sync`]
//! when `--store` names one.
//!
//! In the combined run each node is a "settings" entry and each of its agent's runs a test
//! named after what it measured and whom (`latency n02-v4`), with the node in front of its id
//! (`n01/n02-v4/latency/3`), so the report lists the mesh node by node.

use std::path::Path;

use serde_json::json;
use sonde_store::{
    LinkSettingsRecord, LoadedRun, NewRun, Results, RunId, RunStatus, Store, SyncOutcome,
    TestRecord,
};

use crate::error::MeshError;
use crate::plan::MeshPlan;

/// The runs of the agent database `db` that began at or after `since_unix` (its run of this
/// mesh: one, unless the agent was restarted). Missing database: none.
///
/// # Errors
/// [`MeshError::Store`] when the database exists but cannot be read.
pub fn agent_runs(db: &Path, since_unix: f64) -> Result<Vec<LoadedRun>, MeshError> {
    if !db.exists() {
        return Ok(Vec::new());
    }
    let store = Store::open_read_only(db)?;
    let mut out = Vec::new();
    for r in store.runs()? {
        if r.started_unix >= since_unix {
            out.push(store.load_run(r.id)?);
        }
    }
    Ok(out)
}

fn proc_text(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

/// What the combined run records about the mesh as a whole.
#[derive(Debug, Clone)]
pub struct CombinedRun<'a> {
    pub plan: &'a MeshPlan,
    /// The mesh description, verbatim (the run's "scenario").
    pub spec_text: &'a str,
    pub sonde_version: &'a str,
    pub prefix: &'a str,
    pub started_unix: f64,
    pub ended_unix: f64,
    pub interrupted: bool,
}

/// Writes the combined run of `runs` (per node, that node's agent runs) into the database
/// `db`; its id.
///
/// # Errors
/// [`MeshError::Store`] when the database cannot be opened or written.
pub fn combine(
    db: &Path,
    c: &CombinedRun<'_>,
    runs: &[Vec<LoadedRun>],
) -> Result<RunId, MeshError> {
    let mut store = Store::open(db)?;
    let settings = c
        .plan
        .nodes
        .iter()
        .zip(0u32..)
        .map(|(n, ordinal)| LinkSettingsRecord {
            name: n.name.clone(),
            ordinal,
            settings: json!({
                "node": n.name, "ipv4": n.ipv4.to_string(), "ipv6": n.ipv6.to_string(),
                "peers": c.plan.peers_of(ordinal as usize).len(),
            }),
            backend_plan: None,
        })
        .collect();
    let id = store.begin_run(&NewRun {
        scenario_name: c.plan.spec.name.clone(),
        scenario_toml: c.spec_text.to_owned(),
        sonde_version: c.sonde_version.to_owned(),
        hostname: proc_text("/proc/sys/kernel/hostname"),
        kernel: proc_text("/proc/sys/kernel/osrelease"),
        host_info: json!({ "role": "mesh", "nodes": c.plan.nodes.len(), "prefix": c.prefix }),
        seed: c.plan.scenario.seed,
        started_unix: c.started_unix,
        settings,
    })?;
    let mut ordinal = 0u32;
    let mut tests = Vec::new();
    for (node, node_runs) in c.plan.nodes.iter().zip(runs) {
        for t in node_runs.iter().flat_map(|r| &r.tests) {
            tests.push(TestRecord {
                matrix_id: format!("{}/{}", node.name, t.matrix_id),
                ordinal,
                settings: node.name.clone(),
                test_name: format!("{} {}", t.test_name, t.settings),
                ..t.clone()
            });
            ordinal = ordinal.saturating_add(1);
        }
    }
    store.record_tests(id, &tests)?;
    let status = if c.interrupted {
        RunStatus::Interrupted
    } else {
        RunStatus::Completed
    };
    store.finish_run(id, status, c.ended_unix)?;
    Ok(id)
}

/// Copies each agent database in `dbs` to PostgreSQL at `url`; what was written in all, and
/// the databases that could not be copied (each stays complete on disk).
pub fn sync_all(url: &str, dbs: &[&Path]) -> (SyncOutcome, Vec<String>) {
    let mut total = SyncOutcome::default();
    let mut errors = Vec::new();
    for db in dbs.iter().filter(|d| d.exists()) {
        match Results::open(db, Some(url)).and_then(|mut r| r.sync()) {
            Ok(done) => {
                total.runs_created += done.runs_created;
                total.tests_written += done.tests_written;
            }
            Err(e) => errors.push(format!("{}: {e}", db.display())),
        }
    }
    (total, errors)
}
