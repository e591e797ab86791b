//! The rows of the database, as typed values.
//!
//! The lab writes these; the report reads them back with [`crate::Store::load_run`]. Values
//! whose shape belongs to another crate (a scenario's link settings, a `BackendPlan`, stage
//! counters, a test's parameters) are kept as JSON so that this crate does not depend on the
//! lab's types and an old database stays readable when those types grow.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The id of a lab run in one database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RunId(pub i64);

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The state of a lab run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Started and not finished (or the process died: see `--resume`).
    Running,
    /// Every test of the matrix was recorded.
    Completed,
    /// Stopped early (Ctrl-C); `--resume` continues it.
    Interrupted,
    /// The lab itself failed (topology could not be built, ...).
    Failed,
}

impl RunStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<RunStatus> {
        Some(match s {
            "running" => RunStatus::Running,
            "completed" => RunStatus::Completed,
            "interrupted" => RunStatus::Interrupted,
            "failed" => RunStatus::Failed,
            _ => return None,
        })
    }
}

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// It ran to its end and produced a result.
    Ok,
    /// It failed; `failure_reason` says why.
    Failed,
}

impl TestStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TestStatus::Ok => "ok",
            TestStatus::Failed => "failed",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<TestStatus> {
        match s {
            "ok" => Some(TestStatus::Ok),
            "failed" => Some(TestStatus::Failed),
            _ => None,
        }
    }
}

/// The settings of one matrix column, as the run used them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSettingsRecord {
    /// The settings' name.
    pub name: String,
    /// Position in the scenario (report order).
    pub ordinal: u32,
    /// The settings, serialised (`sonde_scenario::Settings`).
    pub settings: Value,
    /// Which backend applied each impairment (`sonde_emu::backend::BackendPlan`).
    pub backend_plan: Option<Value>,
}

/// What a run is, at its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    /// The scenario's name.
    pub scenario_name: String,
    /// The scenario file, verbatim.
    pub scenario_toml: String,
    /// `sonde --version` of the lab.
    pub sonde_version: String,
    /// Host name of the machine.
    pub hostname: String,
    /// Kernel release and version (`uname -rv`).
    pub kernel: String,
    /// Anything else about the host (CPU model, cores, kernel capabilities, ...).
    pub host_info: Value,
    /// The scenario seed.
    pub seed: u64,
    /// Unix time of the start, seconds.
    pub started_unix: f64,
    /// Every link settings entry of the matrix.
    pub settings: Vec<LinkSettingsRecord>,
}

/// A run as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id.
    pub id: RunId,
    /// What it was at its start.
    pub scenario_name: String,
    /// The scenario file, verbatim.
    pub scenario_toml: String,
    /// `sonde --version` of the lab.
    pub sonde_version: String,
    /// Host name.
    pub hostname: String,
    /// Kernel release and version.
    pub kernel: String,
    /// Other host facts.
    pub host_info: Value,
    /// The scenario seed.
    pub seed: u64,
    /// Unix time of the start.
    pub started_unix: f64,
    /// Unix time of the end, once finished.
    pub ended_unix: Option<f64>,
    /// The run's state.
    pub status: RunStatus,
}

/// CPU utilisation of one end during a test, percent of one core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub total: f64,
    pub user: f64,
    pub system: f64,
}

/// Interface counters at one instant (from `/sys/class/net/IF/statistics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IfCounters {
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
}

impl IfCounters {
    /// `self - before`, per counter (0 where a counter went backwards, e.g. after a reset).
    pub fn delta_since(&self, before: &IfCounters) -> IfCounters {
        IfCounters {
            rx_packets: self.rx_packets.saturating_sub(before.rx_packets),
            rx_bytes: self.rx_bytes.saturating_sub(before.rx_bytes),
            tx_packets: self.tx_packets.saturating_sub(before.tx_packets),
            tx_bytes: self.tx_bytes.saturating_sub(before.tx_bytes),
        }
    }
}

/// One end's interface counters around a test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceTraffic {
    /// The interface (in the end's namespace).
    pub interface: String,
    /// Before the test started.
    pub before: IfCounters,
    /// After it ended.
    pub after: IfCounters,
}

impl InterfaceTraffic {
    /// The counters' growth over the test.
    pub fn delta(&self) -> IfCounters {
        self.after.delta_since(&self.before)
    }
}

/// What one end of a test measured about itself.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EndRecord {
    /// CPU utilisation during the test.
    pub cpu: Option<Cpu>,
    /// Interface counters around the test.
    pub traffic: Option<InterfaceTraffic>,
}

/// One test of the matrix, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRecord {
    /// Stable id `SETTINGS/TEST/REPETITION` (`sonde_scenario::Run::id`).
    pub matrix_id: String,
    /// Position in the run order.
    pub ordinal: u32,
    /// The settings' name.
    pub settings: String,
    /// The test's name.
    pub test_name: String,
    /// The repetition, from 1.
    pub repetition: u32,
    /// The run's seed for this test.
    pub seed: u64,
    /// `"sonde"` or `"command"`.
    pub kind: String,
    /// `"tcp"`, `"udp"`, `"latency"`, ... when known.
    pub protocol: Option<String>,
    /// The test's full parameters (command line, resolved addresses, timeout, ...).
    pub parameters: Value,
    /// The link's state during the test (the `BackendPlan`, and anything else the lab saw).
    pub link_status: Option<Value>,
    /// Unix time of the start.
    pub started_unix: f64,
    /// Unix time of the end.
    pub ended_unix: f64,
    /// How it ended.
    pub status: TestStatus,
    /// Why it failed.
    pub failure_reason: Option<String>,
    /// The raw result file, relative to the database's directory when inside it.
    pub result_path: Option<String>,
    /// The result document itself (`-J` output), verbatim.
    pub result_json: Option<String>,
    /// The client end.
    pub client: EndRecord,
    /// The server end.
    pub server: EndRecord,
    /// Counters of the impairment stages (userspace engine), as JSON.
    pub stage_stats: Option<Value>,
}

/// A run and everything recorded in it, ordered for a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadedRun {
    /// The run.
    pub run: RunRecord,
    /// Link settings, in scenario order.
    pub settings: Vec<LinkSettingsRecord>,
    /// Tests, in run order (ordinal, then matrix id).
    pub tests: Vec<TestRecord>,
}
