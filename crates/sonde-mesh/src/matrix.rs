//! The mesh's result as a matrix: for each ordered pair of nodes and each family, the latency
//! runs the source's agent recorded against the destination, their median RTT and loss.
//!
//! Pure: it reads the test records the agents wrote (as [`sonde_store`] loads them) and the
//! plan's peer labels; rendering it is [`crate::render`]'s job. The pair's RTT is the median
//! of its runs' median RTTs (each run's median already resists a stray probe; the median of
//! those resists a stray run); its loss is lost probes over sent probes, all runs together.
//! A run cut short when the agents are stopped counts as a failed run but adds no figures:
//! the probes it had in flight were not lost, only not waited for. So does a run whose
//! probes the destination's host refused (its agent not serving yet, at the mesh's start):
//! they reached the node and found no server, which is no loss of the path.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;
use sonde_store::{TestRecord, TestStatus};

use crate::plan::MeshPlan;
use crate::spec::Family;

/// One ordered pair over one family.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PairStats {
    /// Latency runs recorded.
    pub runs: u32,
    /// Of them, successful.
    pub ok: u32,
    pub probes_sent: u64,
    pub probes_lost: u64,
    /// Median RTT over the runs, ms (None without a run that measured one).
    pub median_rtt_ms: Option<f64>,
    /// Why the last failed run failed.
    pub last_error: Option<String>,
    #[serde(skip)]
    medians: Vec<f64>,
}

impl PairStats {
    /// Lost probes over sent probes (None before any probe was sent).
    pub fn loss_ratio(&self) -> Option<f64> {
        (self.probes_sent > 0).then(|| self.probes_lost as f64 / self.probes_sent as f64)
    }
}

/// Throughput runs of the whole mesh.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RunCounts {
    pub ok: u32,
    pub failed: u32,
}

/// Every pair of the mesh.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MeshMatrix {
    /// Node names, in order (rows are sources, columns destinations).
    pub nodes: Vec<String>,
    pub families: Vec<Family>,
    /// `cells[family][src][dst]`; the diagonal stays empty.
    pub cells: BTreeMap<Family, Vec<Vec<PairStats>>>,
    pub throughput: RunCounts,
}

fn latency_figures(doc: &Value) -> (u64, u64, Option<f64>) {
    let end = &doc["end"];
    (
        end["loss"]["sent"].as_u64().unwrap_or(0),
        end["loss"]["lost"].as_u64().unwrap_or(0),
        end["rtt"]["median_ms"].as_f64(),
    )
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

impl MeshMatrix {
    /// An empty matrix of `plan`'s nodes and families.
    pub fn new(plan: &MeshPlan) -> MeshMatrix {
        let n = plan.nodes.len();
        MeshMatrix {
            nodes: plan.nodes.iter().map(|x| x.name.clone()).collect(),
            families: plan.spec.families.clone(),
            cells: plan
                .spec
                .families
                .iter()
                .map(|f| (*f, vec![vec![PairStats::default(); n]; n]))
                .collect(),
            throughput: RunCounts::default(),
        }
    }

    /// Adds the runs node `src`'s agent recorded. Records of peers the plan does not know
    /// are ignored (a database reused with another mesh).
    pub fn add(&mut self, plan: &MeshPlan, src: usize, tests: &[TestRecord]) {
        let peers = plan.peers_of(src);
        for t in tests {
            let Some(p) = peers.iter().find(|p| p.label == t.settings) else {
                continue;
            };
            if t.test_name == "throughput" {
                match t.status {
                    TestStatus::Ok => self.throughput.ok += 1,
                    TestStatus::Failed => self.throughput.failed += 1,
                }
                continue;
            }
            if t.test_name != "latency" {
                continue;
            }
            let Some(cell) = self
                .cells
                .get_mut(&p.family)
                .and_then(|rows| rows.get_mut(src))
                .and_then(|row| row.get_mut(p.node))
            else {
                continue;
            };
            cell.runs += 1;
            if t.status == TestStatus::Ok {
                cell.ok += 1;
            } else {
                cell.last_error.clone_from(&t.failure_reason);
            }
            let doc = t
                .result_json
                .as_deref()
                .and_then(|j| serde_json::from_str::<Value>(j).ok())
                .unwrap_or(Value::Null);
            if doc["end"]["partial"].as_bool() == Some(true) {
                // Cut short (the agent was stopped): its last probes had no time to be
                // answered, so its figures would count them as lost.
                continue;
            }
            if doc["end"]["loss"]["refused"].as_u64().unwrap_or(0) > 0 {
                // Refused by the destination's host: no server there yet, not path loss.
                continue;
            }
            let (sent, lost, med) = latency_figures(&doc);
            cell.probes_sent += sent;
            cell.probes_lost += lost;
            if let Some(m) = med.filter(|m| m.is_finite()) {
                cell.medians.push(m);
                cell.median_rtt_ms = median(&mut cell.medians);
            }
        }
    }

    /// The cell of `src` to `dst` over `family`.
    pub fn cell(&self, family: Family, src: usize, dst: usize) -> Option<&PairStats> {
        self.cells.get(&family)?.get(src)?.get(dst)
    }

    /// Ordered pairs (source, destination, family) without one successful latency run.
    pub fn failed_pairs(&self) -> Vec<(usize, usize, Family)> {
        let n = self.nodes.len();
        let mut v = Vec::new();
        for &f in &self.families {
            for s in 0..n {
                for d in (0..n).filter(|&d| d != s) {
                    if self.cell(f, s, d).is_none_or(|c| c.ok == 0) {
                        v.push((s, d, f));
                    }
                }
            }
        }
        v
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spec::MeshSpec;
    use serde_json::json;

    /// A test record of `kind` against `peer` (`n02-v4`), failed ("refused") unless `ok`.
    pub(crate) fn rec(peer: &str, kind: &str, ok: bool, doc: Value) -> TestRecord {
        TestRecord {
            matrix_id: format!("{peer}/{kind}/0"),
            ordinal: 0,
            settings: peer.into(),
            test_name: kind.into(),
            repetition: 1,
            seed: 0,
            kind: "sonde".into(),
            protocol: None,
            parameters: json!({}),
            link_status: None,
            started_unix: 0.0,
            ended_unix: 0.0,
            status: if ok {
                TestStatus::Ok
            } else {
                TestStatus::Failed
            },
            failure_reason: (!ok).then(|| "refused".into()),
            result_path: None,
            result_json: Some(doc.to_string()),
            client: Default::default(),
            server: Default::default(),
            stage_stats: None,
        }
    }

    fn lat(sent: u64, lost: u64, med: f64) -> Value {
        json!({"start": {}, "end": {"loss": {"sent": sent, "lost": lost}, "rtt": {"median_ms": med}}})
    }

    #[test]
    fn medians_loss_and_failed_pairs() {
        let spec = MeshSpec::builtin().unwrap().with(Some(3), None).unwrap();
        let plan = MeshPlan::new(spec, "sonde-meshtest").unwrap();
        let mut m = MeshMatrix::new(&plan);
        m.add(
            &plan,
            0,
            &[
                rec("n02-v4", "latency", true, lat(5, 0, 0.1)),
                rec("n02-v4", "latency", true, lat(5, 1, 0.3)),
                rec("n02-v4", "latency", true, lat(5, 0, 0.2)),
                rec("n02-v6", "latency", false, lat(5, 5, f64::NAN)),
                rec("n03-v4", "throughput", true, json!({})),
                rec("n09-v4", "latency", true, lat(5, 0, 9.0)),
                rec(
                    "n03-v4",
                    "latency",
                    false,
                    json!({"end": {"partial": true, "loss": {"sent": 5, "lost": 3}}}),
                ),
                rec(
                    "n03-v6",
                    "latency",
                    false,
                    json!({"end": {"loss": {"sent": 5, "lost": 2, "refused": 2}, "rtt": {"median_ms": 0.5}}}),
                ),
            ],
        );
        let c = m.cell(Family::Ipv4, 0, 1).unwrap();
        assert_eq!((c.runs, c.ok, c.probes_sent, c.probes_lost), (3, 3, 15, 1));
        assert_eq!(c.median_rtt_ms, Some(0.2));
        assert!((c.loss_ratio().unwrap() - 1.0 / 15.0).abs() < 1e-12);
        let v6 = m.cell(Family::Ipv6, 0, 1).unwrap();
        assert_eq!((v6.ok, v6.loss_ratio()), (0, Some(1.0)));
        assert_eq!(v6.last_error.as_deref(), Some("refused"));
        assert_eq!(m.throughput, RunCounts { ok: 1, failed: 0 });
        let cut = m.cell(Family::Ipv4, 0, 2).unwrap();
        assert_eq!((cut.runs, cut.ok, cut.probes_sent), (1, 0, 0));
        let refused = m.cell(Family::Ipv6, 0, 2).unwrap();
        assert_eq!(
            (refused.runs, refused.probes_sent, refused.median_rtt_ms),
            (1, 0, None)
        );
        let failed = m.failed_pairs();
        // 3 nodes x 2 others x 2 families = 12 ordered pairs; only n01 -> n02 over IPv4 has
        // a successful run.
        assert_eq!(failed.len(), 11);
        assert!(!failed.contains(&(0, 1, Family::Ipv4)));
        assert!(failed.contains(&(0, 1, Family::Ipv6)));
    }
}
