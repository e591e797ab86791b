//! The report model: everything a report shows, computed once, in display order.
//!
//! The Markdown, HTML and JSON renderers only lay this out; they compute nothing, so the three
//! formats cannot disagree. `--format json` is this model serialised.

use serde::Serialize;

use crate::link::{BackendLine, LinkView};
use crate::result::ResultDoc;
use crate::stages::StagesView;
use crate::view::CpuView;

/// Everything in a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub title: String,
    pub meta: Meta,
    /// Link settings, in scenario order (empty for result documents).
    pub settings: Vec<LinkView>,
    /// One summary table per test kind, in order of first appearance.
    pub groups: Vec<Group>,
    /// Every test, in run order.
    pub tests: Vec<TestView>,
    pub totals: Totals,
}

/// The header: what ran, where, when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Meta {
    /// "lab run" or "result documents".
    pub source: String,
    /// The database or the documents, as given.
    pub inputs: Vec<String>,
    pub scenario: Option<String>,
    pub description: Option<String>,
    pub run_id: Option<i64>,
    /// The other runs of the database (a report is of one run).
    pub other_runs: Vec<i64>,
    pub status: Option<String>,
    /// The sonde that ran the lab (lab runs only).
    pub lab_version: Option<String>,
    /// The tools that wrote the results, with their versions: `sonde 0.1.0`, `iperf3 3.12`.
    pub tools: Vec<String>,
    pub hosts: Vec<String>,
    /// The links the results recorded (a sonde client's throughput documents):
    /// `"client eth0: speed 1.00 Gbit/s, MTU 1500, driver e1000e"`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
    pub kernels: Vec<String>,
    pub seed: Option<u64>,
    pub started_unix: Option<f64>,
    pub ended_unix: Option<f64>,
    pub backends: Vec<BackendLine>,
}

/// Interface counters of one end over a test, with the rates they give.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrafficView {
    /// "client" or "server".
    pub endpoint: String,
    pub interface: String,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    /// Over the test's duration; None when the duration is unknown or zero.
    pub tx_bps: Option<f64>,
    pub tx_pps: Option<f64>,
    pub rx_bps: Option<f64>,
    pub rx_pps: Option<f64>,
}

/// A rate in bit/s and packet/s.
pub type RatePair = (f64, f64);

/// One test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestView {
    /// Matrix id (`SETTINGS/TEST/REP`) or document name.
    pub id: String,
    /// Settings name (the document name for result documents).
    pub settings: String,
    /// The group it belongs to.
    pub group: String,
    pub repetition: Option<u32>,
    pub ok: bool,
    pub failure_reason: Option<String>,
    pub started_unix: Option<f64>,
    pub ended_unix: Option<f64>,
    /// Parameters, flattened to `key = value`, sorted by key.
    pub parameters: Vec<(String, String)>,
    pub result_path: Option<String>,
    /// The tool that wrote the result, with its version.
    pub tool: Option<String>,
    pub link: Option<LinkView>,
    pub backends: Vec<BackendLine>,
    pub result: Option<ResultDoc>,
    /// Why the result document could not be read, when it could not.
    pub result_problem: Option<String>,
    pub cpu_client: Option<CpuView>,
    pub cpu_server: Option<CpuView>,
    pub traffic: Vec<TrafficView>,
    /// The lab's impairment-engine counters over the settings' lab.
    pub stage_stats: Option<StagesView>,
}

impl TestView {
    /// Seconds between start and end, when both are known.
    pub fn duration(&self) -> Option<f64> {
        match (self.started_unix, self.ended_unix) {
            (Some(s), Some(e)) if e >= s => Some(e - s),
            _ => None,
        }
    }

    /// The sending end's interface transmit rate and the receiving end's receive rate
    /// (bit/s, packet/s), for the test's main direction.
    pub fn link_rates(&self) -> (Option<RatePair>, Option<RatePair>) {
        let client_sends = match &self.result {
            Some(ResultDoc::Throughput(t)) => t.direction != "reverse",
            _ => true,
        };
        let (tx_end, rx_end) = if client_sends {
            ("client", "server")
        } else {
            ("server", "client")
        };
        let find = |e: &str| self.traffic.iter().find(|t| t.endpoint == e);
        let tx = find(tx_end).and_then(|t| Some((t.tx_bps?, t.tx_pps?)));
        let rx = find(rx_end).and_then(|t| Some((t.rx_bps?, t.rx_pps?)));
        (tx, rx)
    }
}

/// What a group's table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GroupKind {
    Throughput,
    Latency,
    /// No readable result in any test (external commands, failures only).
    Other,
}

/// One summary table: a test kind across link settings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// The test's name (lab runs) or a label built from the result.
    pub name: String,
    /// "TCP, cubic" / "UDP, 97.20 Mbit/s per stream" / "latency, udp".
    pub title: String,
    pub kind: GroupKind,
    pub rows: Vec<Row>,
}

/// One row: a settings entry, figures averaged over its successful repetitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub settings: String,
    pub link: Option<LinkView>,
    pub params: String,
    pub tests: usize,
    pub ok: usize,
    pub goodput_bps: Option<f64>,
    pub link_send_bps: Option<f64>,
    pub link_send_pps: Option<f64>,
    pub link_recv_bps: Option<f64>,
    pub link_recv_pps: Option<f64>,
    /// TCP mean RTT, or a latency test's median RTT, ms.
    pub latency_ms: Option<f64>,
    /// UDP jitter, ms.
    pub jitter_ms: Option<f64>,
    pub delivered_percent: Option<f64>,
    pub retransmits: Option<f64>,
    /// The return path's feedback: its mode, and for coded transfers the mean messages and
    /// repair rounds per test.
    pub feedback: Option<String>,
    pub cpu_client: Option<f64>,
    pub cpu_server: Option<f64>,
    /// Latency tests: RTT p99, ms.
    pub rtt_p99_ms: Option<f64>,
}

/// The appendix's counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    pub total: usize,
    pub succeeded: usize,
    pub failed: usize,
}
