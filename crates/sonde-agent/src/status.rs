//! What the agent's status page and `/api/status` show: the agent's own figures and, per peer,
//! the last result of each kind of run and a short history of its headline figure.
//!
//! Why a model of its own: Prometheus keeps the long history, but an operator at one agent
//! (a board on a bench, a site without the fleet's Grafana) wants to see at a glance what it
//! measures and what fails, and why. Every outcome already passes through
//! [`crate::metrics::Metrics`], which feeds this model as it observes; the HTTP server reads a
//! [`StatusDoc`] snapshot of it. Memory is bounded whatever the run count: at most
//! [`MAX_PEERS`] peers, per peer and kind one last result (its error cut to
//! [`MAX_ERROR_CHARS`]) and a ring of at most [`HISTORY`] points.

use crate::config::Peer;
use crate::outcome::{RunOutcome, RunResult};
use crate::schedule::Kind;
use serde::Serialize;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Points kept per peer and kind for the sparklines.
pub const HISTORY: usize = 30;
/// Peers shown at most; outcomes of further peers are counted in the totals only.
pub const MAX_PEERS: usize = 2048;
/// An error text is cut to this many characters.
pub const MAX_ERROR_CHARS: usize = 300;

/// The agent itself, as it started.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct AgentInfo {
    pub name: String,
    pub version: String,
    pub started_unix: f64,
}

/// The headline figures of a run, by kind.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(untagged)]
pub enum Figures {
    Latency {
        rtt_p50_ms: Option<f64>,
        rtt_p90_ms: Option<f64>,
        rtt_p99_ms: Option<f64>,
        /// Share of probes lost (0..1); none when none was sent.
        loss_ratio: Option<f64>,
        sent: u64,
        lost: u64,
    },
    Throughput {
        upload_bps: Option<f64>,
        download_bps: Option<f64>,
    },
    Capacity {
        bps: f64,
    },
    Profile {
        worst_loss_ratio: f64,
    },
}

impl Figures {
    /// The figures of `r`; none for a run that measured nothing.
    fn of(r: &RunResult) -> Option<Figures> {
        Some(match r {
            RunResult::Latency(l) => {
                let mut rtt = l.rtt_ms.clone();
                rtt.sort_by(f64::total_cmp);
                let q = |q| sonde_stats::capacity::histogram::quantile(&rtt, q);
                Figures::Latency {
                    rtt_p50_ms: q(0.5),
                    rtt_p90_ms: q(0.9),
                    rtt_p99_ms: q(0.99),
                    loss_ratio: (l.sent > 0).then(|| l.lost as f64 / l.sent as f64),
                    sent: l.sent,
                    lost: l.lost,
                }
            }
            RunResult::Throughput(t) => {
                let dir = |d: &str| t.received_bps.iter().find(|(x, _)| *x == d).map(|p| p.1);
                Figures::Throughput {
                    upload_bps: dir("upload"),
                    download_bps: dir("download"),
                }
            }
            RunResult::Capacity(c) => Figures::Capacity { bps: c.bps },
            RunResult::Profile(p) => Figures::Profile {
                worst_loss_ratio: p.worst_loss_ratio,
            },
            RunResult::Failed => return None,
        })
    }

    /// The one figure a sparkline draws: RTT p50 (ms), the received rate (bits/s: upload,
    /// else download), capacity (bits/s), worst stream loss (0..1).
    pub fn headline(&self) -> Option<f64> {
        match self {
            Figures::Latency { rtt_p50_ms, .. } => *rtt_p50_ms,
            Figures::Throughput {
                upload_bps,
                download_bps,
            } => upload_bps.or(*download_bps),
            Figures::Capacity { bps } => Some(*bps),
            Figures::Profile { worst_loss_ratio } => Some(*worst_loss_ratio),
        }
    }
}

/// The last run of one kind to one peer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LastRun {
    pub ended_unix: f64,
    /// `ok` or `failed`.
    pub outcome: &'static str,
    /// Why it failed (cut to [`MAX_ERROR_CHARS`]).
    pub error: Option<String>,
    /// What it measured (also of a run cut short with partial figures).
    pub figures: Option<Figures>,
}

/// One point of a sparkline: when a run ended and its headline figure (none: it failed).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Point {
    pub t: f64,
    pub v: Option<f64>,
}

/// One kind of run to one peer.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct KindStatus {
    pub runs: u64,
    pub failed: u64,
    pub last: LastRun,
    /// The last [`HISTORY`] runs, oldest first.
    pub history: VecDeque<Point>,
}

/// One peer.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PeerStatus {
    pub label: String,
    /// As configured, or as the last run went to.
    pub host: Option<String>,
    /// The family of the last run's address (`ipv4`, `ipv6`, `any` before one was chosen).
    pub family: Option<String>,
    /// By kind (`latency`, `throughput`, `capacity`, `profile`): only kinds that ran.
    pub kinds: BTreeMap<&'static str, KindStatus>,
}

/// The agent's run totals.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct Runs {
    pub ok: u64,
    pub failed: u64,
    pub skipped: u64,
}

/// Configuration reloads asked for.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Reloads {
    pub ok: u64,
    pub failed: u64,
    /// False when the last reload refused the file.
    pub last_ok: bool,
}

/// The local store and its copy to PostgreSQL (`store_url`).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct StoreFigures {
    /// Tests PostgreSQL may still lack; none without `store_url` or before the first copy.
    pub unsynced_tests: Option<u64>,
    pub sync_failures: u64,
    pub pruned_tests: u64,
}

/// The agent as `/api/status` shows it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct AgentStatus {
    #[serde(flatten)]
    pub info: AgentInfo,
    pub uptime_secs: f64,
    /// Peer entries in the configuration running.
    pub peers_configured: usize,
    pub runs: Runs,
    pub reloads: Reloads,
    pub store: StoreFigures,
    /// Peers whose outcomes were counted but not kept, over [`MAX_PEERS`].
    pub peers_not_shown: u64,
}

/// A snapshot of the model: the body of `/api/status`, and what the page renders.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StatusDoc {
    pub agent: AgentStatus,
    pub peers: Vec<PeerStatus>,
}

#[derive(Debug)]
struct Inner {
    info: AgentInfo,
    peers_configured: usize,
    runs: Runs,
    reloads: Reloads,
    store: StoreFigures,
    peers_not_shown: u64,
    peers: BTreeMap<String, PeerStatus>,
}

/// The model, shared between the agent's loop (writing) and the HTTP server (reading).
#[derive(Debug)]
pub struct Status {
    inner: Mutex<Inner>,
}

impl Default for Status {
    fn default() -> Self {
        Self::new()
    }
}

impl Status {
    /// Nothing measured yet.
    pub fn new() -> Self {
        Status {
            inner: Mutex::new(Inner {
                info: AgentInfo::default(),
                peers_configured: 0,
                runs: Runs::default(),
                reloads: Reloads {
                    ok: 0,
                    failed: 0,
                    last_ok: true,
                },
                store: StoreFigures::default(),
                peers_not_shown: 0,
                peers: BTreeMap::new(),
            }),
        }
    }

    // A writer that panicked leaves figures that are still figures: show them.
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Says who the agent is.
    pub fn started(&self, info: AgentInfo) {
        self.lock().info = info;
    }

    /// The peers of the configuration running (at the start and after each reload): each
    /// plain entry is listed before its first run; peers no entry stands for any more go.
    pub fn configure(&self, peers: &[Peer]) {
        let mut g = self.lock();
        g.peers_configured = peers.len();
        let kept = |label: &str| {
            peers.iter().any(|p| {
                p.label() == label
                    || (p.every_address
                        && label
                            .strip_prefix(p.label())
                            .is_some_and(|rest| rest.starts_with('/')))
            })
        };
        g.peers.retain(|label, _| kept(label));
        for p in peers.iter().filter(|p| !p.every_address) {
            if g.peers.len() >= MAX_PEERS {
                break;
            }
            let e = g.peers.entry(p.label().to_string()).or_default();
            e.label = p.label().to_string();
            e.host = Some(p.host.clone());
        }
    }

    /// Records one finished run.
    pub fn observe(&self, o: &RunOutcome) {
        let mut g = self.lock();
        if o.ok() {
            g.runs.ok += 1;
        } else {
            g.runs.failed += 1;
        }
        if !g.peers.contains_key(&o.peer) && g.peers.len() >= MAX_PEERS {
            g.peers_not_shown += 1;
            return;
        }
        let p = g.peers.entry(o.peer.clone()).or_default();
        p.label.clone_from(&o.peer);
        if let Some(h) = o.parameters.get("host").and_then(|h| h.as_str()) {
            p.host = Some(h.to_string());
        }
        p.family = Some(o.family.clone());
        let figures = Figures::of(&o.result);
        let last = LastRun {
            ended_unix: o.ended_unix,
            outcome: if o.ok() { "ok" } else { "failed" },
            error: o.error.as_deref().map(cut),
            figures: figures.clone(),
        };
        let point = Point {
            t: o.ended_unix,
            v: figures
                .as_ref()
                .and_then(Figures::headline)
                .filter(|_| o.ok()),
        };
        let k = p
            .kinds
            .entry(o.kind.as_str())
            .or_insert_with(|| KindStatus {
                runs: 0,
                failed: 0,
                last: last.clone(),
                history: VecDeque::with_capacity(HISTORY),
            });
        k.runs += 1;
        k.failed += u64::from(!o.ok());
        k.last = last;
        if k.history.len() >= HISTORY {
            k.history.pop_front();
        }
        k.history.push_back(point);
    }

    /// Drops a peer that left (a member of an `every_address` entry).
    pub fn forget(&self, peer: &str) {
        self.lock().peers.remove(peer);
    }

    /// Sets the total of skipped runs.
    pub fn set_skipped(&self, total: u64) {
        self.lock().runs.skipped = total;
    }

    /// Counts a reload, applied or refused.
    pub fn reloaded(&self, ok: bool) {
        let mut g = self.lock();
        if ok {
            g.reloads.ok += 1;
        } else {
            g.reloads.failed += 1;
        }
        g.reloads.last_ok = ok;
    }

    /// Sets how many tests PostgreSQL may still lack.
    pub fn set_unsynced(&self, tests: u64) {
        self.lock().store.unsynced_tests = Some(tests);
    }

    /// Counts a failed copy to PostgreSQL.
    pub fn sync_failed(&self) {
        self.lock().store.sync_failures += 1;
    }

    /// Counts tests the retention deleted.
    pub fn pruned(&self, tests: u64) {
        self.lock().store.pruned_tests += tests;
    }

    /// A copy of everything, at `now_unix`.
    pub fn snapshot(&self, now_unix: f64) -> StatusDoc {
        let g = self.lock();
        StatusDoc {
            agent: AgentStatus {
                info: g.info.clone(),
                uptime_secs: (now_unix - g.info.started_unix).max(0.0),
                peers_configured: g.peers_configured,
                runs: g.runs,
                reloads: g.reloads,
                store: g.store,
                peers_not_shown: g.peers_not_shown,
            },
            peers: g.peers.values().cloned().collect(),
        }
    }
}

/// `s` cut to [`MAX_ERROR_CHARS`] characters (an ellipsis says so).
fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_ERROR_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The kinds in the order the page lists them.
pub const KINDS: [Kind; 4] = [
    Kind::Latency,
    Kind::Throughput,
    Kind::Capacity,
    Kind::Profile,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::{CapacityFigures, LatencyFigures};

    fn latency(peer: &str, t: f64, rtt_ms: Vec<f64>, error: Option<&str>) -> RunOutcome {
        RunOutcome {
            peer: peer.into(),
            kind: Kind::Latency,
            seq: 0,
            family: "ipv4".into(),
            started_unix: t - 0.1,
            ended_unix: t,
            result: RunResult::Latency(LatencyFigures {
                sent: 4,
                lost: 4 - rtt_ms.len() as u64,
                rtt_ms,
            }),
            error: error.map(String::from),
            parameters: serde_json::json!({"host": "10.0.0.2", "port": 5201}),
            document: None,
        }
    }

    #[test]
    fn history_is_bounded_and_keeps_the_newest() {
        let s = Status::new();
        for i in 0..(HISTORY as u64 * 3) {
            s.observe(&latency("b", i as f64, vec![1.0, 2.0, 3.0], None));
        }
        let doc = s.snapshot(1000.0);
        let k = &doc.peers[0].kinds["latency"];
        assert_eq!(k.history.len(), HISTORY);
        assert_eq!(k.runs, HISTORY as u64 * 3);
        assert_eq!(
            k.history.back().map(|p| p.t),
            Some(HISTORY as f64 * 3.0 - 1.0)
        );
        assert_eq!(k.history.front().map(|p| p.t), Some(HISTORY as f64 * 2.0));
        assert_eq!(doc.agent.runs.ok, HISTORY as u64 * 3);
    }

    #[test]
    fn peers_are_bounded_and_long_errors_cut() {
        let s = Status::new();
        for i in 0..(MAX_PEERS + 5) {
            s.observe(&latency(
                &format!("p{i}"),
                1.0,
                vec![],
                Some(&"x".repeat(5000)),
            ));
        }
        let doc = s.snapshot(2.0);
        assert_eq!(doc.peers.len(), MAX_PEERS);
        assert_eq!(doc.agent.peers_not_shown, 5);
        assert_eq!(doc.agent.runs.failed, MAX_PEERS as u64 + 5);
        let err = doc.peers[0].kinds["latency"].last.error.clone().unwrap();
        assert_eq!(err.chars().count(), MAX_ERROR_CHARS + 1);
    }

    #[test]
    fn the_json_shape() {
        let s = Status::new();
        s.started(AgentInfo {
            name: "a".into(),
            version: "sonde 1.0".into(),
            started_unix: 100.0,
        });
        s.observe(&latency("b", 110.0, vec![1.0, 2.0, 3.0], None));
        s.observe(&latency("b", 111.0, vec![], Some("refused")));
        let mut c = latency("b", 112.0, vec![], None);
        c.kind = Kind::Capacity;
        c.result = RunResult::Capacity(CapacityFigures { bps: 9e8 });
        s.observe(&c);
        s.set_skipped(2);
        s.reloaded(false);
        let v = serde_json::to_value(s.snapshot(130.0)).unwrap();
        let a = &v["agent"];
        assert_eq!(a["name"], "a");
        assert_eq!(a["version"], "sonde 1.0");
        assert_eq!(a["uptime_secs"], 30.0);
        assert_eq!(
            a["runs"],
            serde_json::json!({"ok": 2, "failed": 1, "skipped": 2})
        );
        assert_eq!(a["reloads"]["last_ok"], false);
        assert_eq!(a["store"]["unsynced_tests"], serde_json::Value::Null);
        let p = &v["peers"][0];
        assert_eq!(p["label"], "b");
        assert_eq!(p["host"], "10.0.0.2");
        assert_eq!(p["family"], "ipv4");
        let l = &p["kinds"]["latency"];
        assert_eq!(l["runs"], 2);
        assert_eq!(l["last"]["outcome"], "failed");
        assert_eq!(l["last"]["error"], "refused");
        assert_eq!(l["last"]["figures"]["loss_ratio"], 1.0);
        assert_eq!(
            l["history"],
            serde_json::json!([{"t": 110.0, "v": 2.0}, {"t": 111.0, "v": null}])
        );
        assert_eq!(p["kinds"]["capacity"]["last"]["figures"]["bps"], 9e8);
        assert!(p["kinds"].get("throughput").is_none());
    }

    #[test]
    fn configure_lists_plain_entries_and_drops_the_gone() {
        let s = Status::new();
        let peer = |name: &str, every_address| Peer {
            name: Some(name.into()),
            host: format!("{name}.example"),
            port: 5201,
            family: crate::config::FamilyChoice::Any,
            link_rate: None,
            psk_file: None,
            every_address,
        };
        s.observe(&latency("old", 1.0, vec![1.0], None));
        s.observe(&latency("fleet/10.0.0.9", 1.0, vec![1.0], None));
        s.configure(&[peer("b", false), peer("fleet", true)]);
        let doc = s.snapshot(2.0);
        let labels: Vec<_> = doc.peers.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, ["b", "fleet/10.0.0.9"]);
        assert_eq!(doc.peers[0].host.as_deref(), Some("b.example"));
        assert!(doc.peers[0].kinds.is_empty());
        assert_eq!(doc.agent.peers_configured, 2);
        s.forget("fleet/10.0.0.9");
        assert_eq!(s.snapshot(2.0).peers.len(), 1);
    }
}
