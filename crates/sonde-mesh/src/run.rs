//! A mesh run from start to end: plan, lab, agents, the wait, one scrape of every metrics
//! endpoint, SIGTERM, collection, and the lab torn down on every path.
//!
//! Teardown does not depend on reaching the end: the agents are [`AgentProc`]s (killed on
//! drop) and the lab is a [`Lab`] (namespaces deleted on drop), both owned by this function,
//! so an error or a panic anywhere tears down what exists. Ctrl-C (the interrupt flag) ends
//! the wait early and the run goes on as at its normal end: the agents record the test they
//! are in, everything recorded is collected, and the run is marked interrupted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use sonde_lab::{Lab, LabOptions};
use sonde_platform::host::unix_now;
use sonde_store::{Remote, RunId};

use crate::agents::{stop_all, AgentEnd, AgentProc};
use crate::collect::{agent_runs, combine, sync_all, CombinedRun};
use crate::error::{io_err, MeshError};
use crate::matrix::MeshMatrix;
use crate::outage::{OutageRecord, Outages};
use crate::plan::{MeshPlan, HUB};
use crate::relay::Relay;
use crate::scrape::{scrape, Scrape};
use crate::spec::MeshSpec;

/// The combined database's file name in the output directory.
pub const DATABASE: &str = "results.db";
/// The machine-readable summary's file name in the output directory.
pub const SUMMARY: &str = "mesh.json";
/// How long the agents get to bring up their servers and metrics endpoints.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// Longest sleep between looks at the interrupt flag.
const SLICE: Duration = Duration::from_millis(100);

/// How to run a mesh.
#[derive(Debug, Clone)]
pub struct MeshOptions {
    /// Directory for the combined database, the agents' databases, configurations and logs,
    /// the scraped metrics and `mesh.json`.
    pub out_dir: PathBuf,
    /// The sonde executable the agents run.
    pub sonde_exe: PathBuf,
    /// `sonde --version`, kept with the combined run.
    pub sonde_version: String,
    /// The mesh description's text, kept with the combined run.
    pub spec_text: String,
    /// A `postgres://` URL every agent writes to as it measures (through a relay at the
    /// router's end of its node's link), and that every agent database is checked against at the end.
    pub store: Option<String>,
}

/// What the progress display is told. Every method has a default that does nothing.
pub trait MeshObserver {
    /// The lab is up.
    fn lab_up(&mut self, _prefix: &str, _plan: &MeshPlan) {}
    /// Every agent's metrics endpoint answered (`ready` of them did).
    fn agents_ready(&mut self, _ready: usize, _of: usize) {}
    /// Once a second while the agents run.
    fn tick(&mut self, _elapsed: Duration, _total: Duration) {}
    /// The agents are being stopped and their results collected.
    fn stopping(&mut self) {}
}

/// How a mesh run ended.
#[derive(Debug, Clone)]
pub struct MeshSummary {
    /// The lab's namespace prefix (all removed by now).
    pub prefix: String,
    pub database: PathBuf,
    pub run: RunId,
    pub matrix: MeshMatrix,
    /// The final scrape of each node's metrics, in node order.
    pub scrapes: Vec<Scrape>,
    /// Per node, how many peers its agent measures.
    pub peers_per_node: usize,
    pub agents: Vec<AgentEnd>,
    pub interrupted: bool,
    /// What the copy to PostgreSQL did, when one was asked for.
    pub remote: Option<String>,
    /// The outages, as they happened.
    pub outages: Vec<OutageRecord>,
    /// Teardown errors and other things said along the way.
    pub notes: Vec<String>,
}

impl MeshSummary {
    /// True when the run was not interrupted, every agent stopped cleanly, every endpoint
    /// answered, and every ordered pair has a successful latency run.
    pub fn all_ok(&self) -> bool {
        !self.interrupted
            && self
                .agents
                .iter()
                .all(|a| !a.early && !a.killed && a.code == Some(0))
            && self.scrapes.iter().all(Scrape::answered)
            && self.matrix.failed_pairs().is_empty()
    }
}

/// Every node's endpoint scraped once, from the hub (which routes to all of them).
fn scrape_all(lab: &Lab, plan: &MeshPlan) -> Vec<Scrape> {
    let addrs: Vec<_> = (0..plan.nodes.len())
        .filter_map(|i| plan.metrics_addr(i))
        .collect();
    let fallback = |e: String| {
        addrs
            .iter()
            .map(|a| Scrape {
                url: format!("http://{a}/metrics"),
                status: None,
                error: Some(e.clone()),
                peers: Default::default(),
                body: String::new(),
            })
            .collect()
    };
    match lab.in_node(HUB, || addrs.iter().map(|a| scrape(*a)).collect()) {
        Ok(v) => v,
        Err(e) => fallback(e.to_string()),
    }
}

/// Waits until every endpoint answers, an agent exits, the time-out, or Ctrl-C; how many
/// answered.
fn wait_ready(lab: &Lab, plan: &MeshPlan, agents: &mut [AgentProc], stop: &AtomicBool) -> usize {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let ready = scrape_all(lab, plan)
            .iter()
            .filter(|s| s.answered())
            .count();
        let exited = agents.iter_mut().any(AgentProc::exited);
        if ready == agents.len() || exited || Instant::now() >= deadline {
            return ready;
        }
        if stop.load(Ordering::Relaxed) {
            return ready;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Sleeps out the run's duration in slices, taking links down and back as the outages say
/// (every one is back when it returns; a node's way to PostgreSQL crosses its link, see
/// [`crate::relay`]); true when Ctrl-C ended it early.
fn wait_duration(
    total: Duration,
    agents: &mut [AgentProc],
    outages: &mut Outages,
    obs: &mut dyn MeshObserver,
    stop: &AtomicBool,
) -> bool {
    let interrupted = sleep_out(total, agents, outages, obs, stop);
    outages.restore_all();
    interrupted
}

fn sleep_out(
    total: Duration,
    agents: &mut [AgentProc],
    outages: &mut Outages,
    obs: &mut dyn MeshObserver,
    stop: &AtomicBool,
) -> bool {
    let start = Instant::now();
    let mut last_tick = Duration::ZERO;
    while start.elapsed() < total {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        outages.apply(start.elapsed());
        // Reap an agent that exits early; it is reported at the end (its results count).
        for a in agents.iter_mut() {
            a.exited();
        }
        if start.elapsed() >= last_tick + Duration::from_secs(1) {
            last_tick = start.elapsed();
            obs.tick(last_tick, total);
        }
        let next = outages.next_change(start.elapsed()).unwrap_or(SLICE);
        std::thread::sleep(SLICE.min(next).min(total.saturating_sub(start.elapsed())));
    }
    false
}

/// The paths of node `i`'s files under `dir`.
fn agent_file(dir: &Path, node: &str, ext: &str) -> PathBuf {
    dir.join("agents").join(format!("{node}.{ext}"))
}

/// Starts every node's agent, its store the node's database in `out`.
fn start_agents(
    lab: &Lab,
    plan: &MeshPlan,
    opts: &MeshOptions,
) -> Result<Vec<AgentProc>, MeshError> {
    let out = &opts.out_dir;
    let mut agents = Vec::new();
    for (i, n) in plan.nodes.iter().enumerate() {
        let Some(metrics) = plan.metrics_addr(i) else {
            continue;
        };
        agents.push(AgentProc::spawn(
            lab,
            &n.name,
            &opts.sonde_exe,
            &agent_file(out, &n.name, "toml"),
            metrics,
            &agent_store(out, &n.name),
            &agent_file(out, &n.name, "log"),
        )?);
    }
    Ok(agents)
}

/// The store target of node `node`'s agent: one argument of its command line (`--store`),
/// today its SQLite file in the output directory.
pub fn agent_store(out: &Path, node: &str) -> String {
    agent_file(out, node, "db").to_string_lossy().into_owned()
}

/// Reads every agent's runs of this mesh back, into the matrix; per node, its runs.
fn collect(
    plan: &MeshPlan,
    out: &Path,
    since_unix: f64,
) -> Result<(MeshMatrix, Vec<Vec<sonde_store::LoadedRun>>), MeshError> {
    let mut matrix = MeshMatrix::new(plan);
    let mut per_node = Vec::new();
    for (i, n) in plan.nodes.iter().enumerate() {
        let runs = agent_runs(&agent_file(out, &n.name, "db"), since_unix)?;
        for r in &runs {
            matrix.add(plan, i, &r.tests);
        }
        per_node.push(runs);
    }
    Ok((matrix, per_node))
}

/// Copies to PostgreSQL at `url` what any agent database has that it lacks (nothing, when
/// every agent could write as it measured); the line the summary prints.
fn sync_remote(url: &str, plan: &MeshPlan, out: &Path) -> String {
    let dbs: Vec<PathBuf> = plan
        .nodes
        .iter()
        .map(|n| agent_file(out, &n.name, "db"))
        .collect();
    let refs: Vec<&Path> = dbs.iter().map(PathBuf::as_path).collect();
    let (done, errors) = sync_all(url, &refs);
    let target = Remote::new(url).target().to_owned();
    if errors.is_empty() {
        format!(
            "PostgreSQL {target}: every agent's database copied (the agents wrote as they measured; the check at the end added {} runs and {} tests)",
            done.runs_created, done.tests_written
        )
    } else {
        format!(
            "PostgreSQL {target}: {} of {} agent databases not copied ({}); they stay complete in {}",
            errors.len(),
            dbs.len(),
            errors.join("; "),
            out.join("agents").display()
        )
    }
}

/// Creates `out/agents` and `out/metrics`, before the lab, so an unwritable output directory
/// is told before anything is built.
fn make_dirs(out: &Path) -> Result<(), MeshError> {
    for sub in ["agents", "metrics"] {
        let d = out.join(sub);
        std::fs::create_dir_all(&d).map_err(io_err(format!("creating {}", d.display())))?;
    }
    Ok(())
}

/// Writes each node's configuration into `out/agents`; with a relay, each agent's
/// PostgreSQL URL is the store's, at its node's end of the relay.
fn write_configs(
    plan: &MeshPlan,
    out: &Path,
    store: Option<(&str, &Relay)>,
) -> Result<(), MeshError> {
    for (i, n) in plan.nodes.iter().enumerate() {
        let path = agent_file(out, &n.name, "toml");
        let via = store.and_then(|(url, relay)| {
            let addr = relay.addrs.get(i)?;
            Some(sonde_store::postgres_url_via(url, *addr))
        });
        std::fs::write(&path, plan.agent_config(i, via.as_deref()))
            .map_err(io_err(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// With a store, the relay from every node to it.
fn start_relay(
    lab: &Lab,
    plan: &MeshPlan,
    store: Option<&str>,
    interrupt: &AtomicBool,
) -> Result<Option<Relay>, MeshError> {
    let Some(url) = store else {
        return Ok(None);
    };
    let endpoint = sonde_store::postgres_endpoint(url)?;
    // The router's end of each node's link: what reaches it crosses the link.
    let mut nodes = Vec::new();
    for n in &plan.nodes {
        let link = lab.node(&n.name)?.ifaces.first().map(|f| f.peer4);
        let Some(at) = link else {
            return Err(MeshError::Spec(format!(
                "{} has no link to the router",
                n.name
            )));
        };
        nodes.push((n.name.clone(), at));
    }
    let taken = [plan.spec.agent_port, plan.spec.metrics_port];
    Relay::start(lab, HUB, &nodes, &endpoint, &taken, interrupt).map(Some)
}

/// Runs `spec`'s mesh. See the module docs.
///
/// # Errors
/// What stops the run as a whole: not root, a bad description, the lab that cannot be built,
/// PostgreSQL unreachable at the start, the output directory or a database that cannot be
/// written. Agents that fail, endpoints that do not answer and pairs that never measured are
/// in the summary instead.
pub fn run(
    spec: MeshSpec,
    opts: &MeshOptions,
    obs: &mut dyn MeshObserver,
    interrupt: &AtomicBool,
) -> Result<MeshSummary, MeshError> {
    sonde_lab::check_privileges()?;
    if let Some(url) = &opts.store {
        // A wrong URL is told now, not after the run.
        Remote::new(url).connect()?;
    }
    let out = &opts.out_dir;
    let prefix = sonde_lab::topology::fresh_prefix();
    let mut plan = MeshPlan::new(spec, &prefix)?;
    make_dirs(out)?;
    let lab = build_lab(&plan, &prefix)?;
    let early_notes = set_hosts(&lab, &mut plan);
    let mut outages = Outages::prepare(&lab, &plan)?;
    let relay = start_relay(&lab, &plan, opts.store.as_deref(), interrupt)?;
    let store = opts.store.as_deref().zip(relay.as_ref());
    write_configs(&plan, out, store)?;
    obs.lab_up(&prefix, &plan);
    let measured = measure(&lab, &plan, opts, &mut outages, obs, interrupt)?;
    // The agents have made their last copies: nothing is left to carry.
    if let Some(r) = relay {
        r.stop();
    }
    let report = lab.finish();
    let ended_unix = unix_now();
    let notes = run_notes(
        early_notes,
        outages.records(),
        report.teardown_errors,
        report.notes,
    );
    // Agents started after `started_unix`; a second of slack for clock steps.
    let (matrix, per_node) = collect(&plan, out, measured.started_unix - 1.0)?;
    let outage_records = tallied(outages.records(), &plan, &per_node);
    write_scrapes(&plan, out, &measured.scrapes)?;
    let database = out.join(DATABASE);
    let combined = CombinedRun {
        plan: &plan,
        spec_text: &opts.spec_text,
        sonde_version: &opts.sonde_version,
        prefix: &prefix,
        started_unix: measured.started_unix,
        ended_unix,
        interrupted: measured.interrupted,
    };
    let run_id = combine(&database, &combined, &per_node)?;
    let remote = opts
        .store
        .as_deref()
        .map(|url| sync_remote(url, &plan, out));
    let summary = MeshSummary {
        prefix,
        database,
        run: run_id,
        matrix,
        scrapes: measured.scrapes,
        peers_per_node: plan.peers_of(0).len(),
        agents: measured.ends,
        interrupted: measured.interrupted,
        remote,
        outages: outage_records,
        notes,
    };
    write_summary(out, &summary)?;
    Ok(summary)
}

/// Builds the mesh's lab, its links impaired when the description has any (through the
/// userspace engine where the kernel has no netem, as every lab run).
fn build_lab(plan: &MeshPlan, prefix: &str) -> Result<Lab, MeshError> {
    let settings = (!plan.spec.links.is_empty()).then_some(crate::plan::SETTINGS);
    Ok(Lab::build(
        &plan.scenario,
        settings,
        LabOptions {
            prefix: Some(prefix.to_owned()),
            ..LabOptions::default()
        },
    )?)
}

/// Writes the nodes' hosts files, so that agents are given names; without them, addresses
/// (and a note saying so, returned).
fn set_hosts(lab: &Lab, plan: &mut MeshPlan) -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = lab.set_hosts(&plan.hosts_file()) {
        plan.peers_by_name = false;
        notes.push(format!(
            "the nodes' hosts files could not be written ({e}): agents were given addresses, not names"
        ));
    }
    notes
}

/// What the agents' part of the run gave: when they started, whether Ctrl-C cut it short,
/// the last scrape of each endpoint and how each agent stopped.
struct Measured {
    started_unix: f64,
    interrupted: bool,
    scrapes: Vec<Scrape>,
    ends: Vec<AgentEnd>,
}

/// Starts the agents, waits for their endpoints and out the run's duration (the outages
/// taken meanwhile), scrapes every endpoint once, and stops the agents.
fn measure(
    lab: &Lab,
    plan: &MeshPlan,
    opts: &MeshOptions,
    outages: &mut Outages,
    obs: &mut dyn MeshObserver,
    interrupt: &AtomicBool,
) -> Result<Measured, MeshError> {
    let started_unix = unix_now();
    let mut agents = start_agents(lab, plan, opts)?;
    let ready = wait_ready(lab, plan, &mut agents, interrupt);
    obs.agents_ready(ready, agents.len());
    let total = Duration::from_secs_f64(plan.spec.duration_secs);
    let interrupted = wait_duration(total, &mut agents, outages, obs, interrupt)
        || interrupt.load(Ordering::Relaxed);
    obs.stopping();
    let scrapes = scrape_all(lab, plan);
    let ends = stop_all(
        &mut agents,
        Duration::from_secs_f64(plan.spec.stop_grace_secs()),
    );
    drop(agents);
    Ok(Measured {
        started_unix,
        interrupted,
        scrapes,
        ends,
    })
}

/// The run's notes: those said early, each outage that could not be taken, and the lab's
/// teardown errors and notes.
fn run_notes(
    early: Vec<String>,
    outages: &[OutageRecord],
    teardown_errors: Vec<String>,
    lab_notes: Vec<String>,
) -> Vec<String> {
    let mut notes = early;
    for o in outages {
        if let Some(e) = &o.error {
            notes.push(format!("outage of {}: {e}", o.node));
        }
    }
    notes.extend(teardown_errors);
    notes.extend(lab_notes);
    notes
}

/// The outages, each with the runs every node's agent began while it lasted.
fn tallied(
    outages: &[OutageRecord],
    plan: &MeshPlan,
    per_node: &[Vec<sonde_store::LoadedRun>],
) -> Vec<OutageRecord> {
    let mut records = outages.to_vec();
    for o in &mut records {
        for (n, runs) in plan.nodes.iter().zip(per_node) {
            for r in runs {
                o.tally(&n.name, &r.tests);
            }
        }
    }
    records
}

/// Each node's last scrape as `out/metrics/NODE.txt`.
fn write_scrapes(plan: &MeshPlan, out: &Path, scrapes: &[Scrape]) -> Result<(), MeshError> {
    for (n, s) in plan.nodes.iter().zip(scrapes) {
        let path = out.join("metrics").join(format!("{}.txt", n.name));
        std::fs::write(&path, &s.body).map_err(io_err(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// `mesh.json`: the matrix, the scrapes and the agents' ends, for scripts and tests.
fn write_summary(out: &Path, s: &MeshSummary) -> Result<(), MeshError> {
    let doc = json!({
        "prefix": s.prefix,
        "database": s.database,
        "run": s.run.0,
        "interrupted": s.interrupted,
        "peers_per_node": s.peers_per_node,
        "matrix": s.matrix,
        "failed_pairs": s.matrix.failed_pairs().iter().map(|(a, b, f)| json!({
            "from": s.matrix.nodes.get(*a), "to": s.matrix.nodes.get(*b), "family": f,
        })).collect::<Vec<_>>(),
        "metrics": s.scrapes,
        "agents": s.agents,
        "remote": s.remote,
        "outages": s.outages,
        "notes": s.notes,
    });
    let path = out.join(SUMMARY);
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
    std::fs::write(&path, text).map_err(io_err(format!("writing {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outage::RunTally;

    #[test]
    fn notes_in_order_with_the_outages_not_taken() {
        let outage = |node: &str, error: Option<&str>| OutageRecord {
            node: node.into(),
            at_secs: 3.0,
            for_secs: 2.0,
            down_unix: None,
            up_unix: None,
            error: error.map(String::from),
            through: RunTally::default(),
            elsewhere: RunTally::default(),
        };
        let notes = run_notes(
            vec!["hosts".into()],
            &[outage("n02", Some("no such device")), outage("n03", None)],
            vec!["teardown".into()],
            vec!["lab".into()],
        );
        assert_eq!(
            notes,
            ["hosts", "outage of n02: no such device", "teardown", "lab"]
        );
    }
}
