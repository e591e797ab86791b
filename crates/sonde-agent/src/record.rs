//! Writes the agent's runs to the results database: one store run per agent process (its
//! configuration as the "scenario", one settings entry per peer) and one test row per
//! scheduled run, failed runs included with their reason, so `sonde report` reads an agent's
//! history like a lab run's. The run's scenario name is `agent:NAME` (the configuration's
//! `name`, else the host name), so the runs of many agents in one PostgreSQL database, or of
//! several agents on one host, are told apart.

use crate::config::{host_name, AgentConfig, Peer};
use crate::outcome::RunOutcome;
use crate::schedule::Kind;
use sonde_store::{
    EndRecord, LinkSettingsRecord, NewRun, RunId, RunStatus, Store, StoreError, TestRecord,
    TestStatus, WriteMark,
};
use std::collections::HashMap;

/// The agent's open store and its run.
#[derive(Debug)]
pub struct Recorder {
    store: Store,
    run: RunId,
    ordinal: u32,
    /// The peer labels the run lists as its settings, in order.
    labels: Vec<String>,
    /// Per (peer label, kind): the first result number not used yet in this run.
    numbers: HashMap<(String, Kind), u64>,
}

/// A peer as the run's settings list it: its label, where it is, its link rate.
fn settings_of(p: &Peer, ordinal: u32) -> LinkSettingsRecord {
    LinkSettingsRecord {
        name: p.label().to_string(),
        ordinal,
        settings: serde_json::json!({
            "host": p.host, "port": p.port, "link_rate": p.link_rate,
        }),
        backend_plan: None,
    }
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Recorder {
    /// Opens (creating or migrating) the database and begins this agent's run.
    ///
    /// # Errors
    /// [`StoreError`] when the database cannot be opened or written.
    pub fn open(
        cfg: &AgentConfig,
        config_text: &str,
        sonde_version: &str,
        seed: u64,
        started_unix: f64,
    ) -> Result<Recorder, StoreError> {
        let mut store = Store::open(&cfg.store)?;
        let settings: Vec<LinkSettingsRecord> = cfg
            .peers
            .iter()
            .zip(0u32..)
            .map(|(p, ordinal)| settings_of(p, ordinal))
            .collect();
        let labels = settings.iter().map(|s| s.name.clone()).collect();
        let name = cfg.agent_name();
        let run = store.begin_run(&NewRun {
            scenario_name: format!("agent:{name}"),
            scenario_toml: config_text.to_string(),
            sonde_version: sonde_version.to_string(),
            hostname: host_name(),
            kernel: kernel(),
            host_info: serde_json::json!({ "role": "agent", "agent": name }),
            seed,
            started_unix,
            settings,
        })?;
        Ok(Recorder {
            store,
            run,
            ordinal: 0,
            labels,
            numbers: HashMap::new(),
        })
    }

    /// Lists in the run the peers among `peers` it does not list yet (brought by a reload).
    ///
    /// # Errors
    /// [`StoreError`] when the database cannot be written.
    pub fn add_peers(&mut self, peers: &[Peer]) -> Result<(), StoreError> {
        let mut added = Vec::new();
        for p in peers {
            if self.labels.iter().any(|l| l == p.label()) {
                continue;
            }
            let ordinal = u32::try_from(self.labels.len()).unwrap_or(u32::MAX);
            added.push(settings_of(p, ordinal));
            self.labels.push(p.label().to_string());
        }
        if added.is_empty() {
            return Ok(());
        }
        self.store.add_settings(self.run, &added)
    }

    /// The store run this agent writes to.
    pub fn run_id(&self) -> RunId {
        self.run
    }

    /// Records one scheduled run.
    ///
    /// # Errors
    /// [`StoreError`] when the row cannot be written (disk full, locked, ...).
    pub fn record(&mut self, o: &RunOutcome) -> Result<(), StoreError> {
        // A result's name (`LABEL/KIND/NUMBER`) is unique in the run, as the store keeps only
        // the last result of a name: the schedule's run number, or past the last one used
        // for that label and kind (a peer a reload brought back starts its numbers over).
        let next = self.numbers.entry((o.peer.clone(), o.kind)).or_default();
        let number = o.seq.max(*next);
        *next = number.saturating_add(1);
        let test = TestRecord {
            matrix_id: format!("{}/{}/{}", o.peer, o.kind.as_str(), number),
            ordinal: self.ordinal,
            settings: o.peer.clone(),
            test_name: o.kind.as_str().into(),
            repetition: u32::try_from(number.saturating_add(1)).unwrap_or(u32::MAX),
            seed: 0,
            kind: "sonde".into(),
            protocol: Some(
                match o.kind {
                    Kind::Latency => "latency",
                    // As the run's parameters say (`tcp` or `udp`).
                    Kind::Throughput => o.parameters["protocol"].as_str().unwrap_or("tcp"),
                    Kind::Capacity => "capacity",
                    Kind::Profile => "profile",
                }
                .into(),
            ),
            parameters: o.parameters.clone(),
            link_status: Some(serde_json::json!({ "family": o.family })),
            started_unix: o.started_unix,
            ended_unix: o.ended_unix,
            status: if o.ok() {
                TestStatus::Ok
            } else {
                TestStatus::Failed
            },
            failure_reason: o.error.clone(),
            result_path: None,
            result_json: o.document.as_ref().map(|d| d.to_string()),
            client: EndRecord::default(),
            server: EndRecord::default(),
            stage_stats: None,
        };
        self.ordinal = self.ordinal.saturating_add(1);
        self.store.record_test(self.run, &test)
    }

    /// Deletes the store's tests (this run's and earlier runs') that ended before
    /// `ended_before`, only those written up to `copied` when given; how many.
    ///
    /// # Errors
    /// [`StoreError`] when the deletion fails (nothing is deleted then).
    pub fn prune(
        &mut self,
        ended_before: f64,
        copied: Option<WriteMark>,
    ) -> Result<u64, StoreError> {
        self.store.prune_tests(ended_before, copied)
    }

    /// Marks the run finished (the agent stopped cleanly).
    ///
    /// # Errors
    /// [`StoreError`] when the row cannot be written.
    pub fn finish(mut self, ended_unix: f64) -> Result<(), StoreError> {
        self.store
            .finish_run(self.run, RunStatus::Completed, ended_unix)
    }
}
