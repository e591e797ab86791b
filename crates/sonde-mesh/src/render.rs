//! The mesh's summary as text for a terminal: per family, an N x N matrix of median RTT (rows
//! send, columns answer), the pairs with loss, the pairs that never measured, and what the
//! metrics endpoints said. It only reads a [`MeshSummary`]; nothing here measures.

use std::fmt::Write as _;

use crate::agents::AgentEnd;
use crate::matrix::MeshMatrix;
use crate::run::MeshSummary;
use crate::scrape::Scrape;
use crate::spec::{Family, LinkDirection, NodeLink};

/// One impaired link as a line: `n03's link, both ways: delay 10ms, loss 5%`.
pub fn link_line(l: &NodeLink) -> String {
    let ways = match l.direction {
        LinkDirection::Both => "both ways",
        LinkDirection::ToRouter => "to the router",
        LinkDirection::FromRouter => "from the router",
    };
    let values = match serde_json::to_value(&l.impair) {
        Ok(serde_json::Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) => format!("{k} {s}"),
                other => format!("{k} {other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        _ => String::new(),
    };
    let values = if values.is_empty() {
        "nothing"
    } else {
        &values
    };
    format!("{}'s link, {ways}: {values}", l.node)
}

/// What an outage was planned as, for the start of the run.
pub fn planned_outage_line(o: &crate::spec::Outage) -> String {
    format!(
        "{}'s link down {} s after the agents answer, for {} s",
        o.node, o.at_secs, o.for_secs
    )
}

/// How an outage went: how long the link was down, or why it was not.
fn outage_line(o: &crate::outage::OutageRecord) -> String {
    match (o.down_unix, o.up_unix, &o.error) {
        (_, _, Some(e)) => format!("outage of {}: {e}\n", o.node),
        (Some(down), Some(up), None) => format!(
            "outage: {}'s link was down {:.2} s (planned: {} s from {} s on); runs begun meanwhile: {} of {} through {} failed, {} of {} others\n",
            o.node,
            up - down,
            o.for_secs,
            o.at_secs,
            o.through.failed,
            o.through.runs,
            o.node,
            o.elsewhere.failed,
            o.elsewhere.runs
        ),
        _ => format!(
            "outage of {}: not taken (the run ended before {} s)\n",
            o.node, o.at_secs
        ),
    }
}

fn rtt_cell(m: &MeshMatrix, f: Family, s: usize, d: usize) -> String {
    if s == d {
        return "-".into();
    }
    match m.cell(f, s, d) {
        Some(c) if c.ok > 0 => c
            .median_rtt_ms
            .map_or_else(|| "?".into(), |r| format!("{r:.3}")),
        Some(c) if c.runs > 0 => "FAIL".into(),
        _ => "none".into(),
    }
}

/// The RTT matrix of `family`, one line per source node.
pub fn rtt_table(m: &MeshMatrix, family: Family) -> String {
    let n = m.nodes.len();
    let cells: Vec<Vec<String>> = (0..n)
        .map(|s| (0..n).map(|d| rtt_cell(m, family, s, d)).collect())
        .collect();
    let width = cells
        .iter()
        .flatten()
        .chain(&m.nodes)
        .map(String::len)
        .max()
        .unwrap_or(4);
    let mut t = format!("{:<5}", "");
    for name in &m.nodes {
        let _ = write!(t, " {name:>width$}");
    }
    t.push('\n');
    for (name, row) in m.nodes.iter().zip(&cells) {
        let _ = write!(t, "{name:<5}");
        for c in row {
            let _ = write!(t, " {c:>width$}");
        }
        t.push('\n');
    }
    t
}

/// Pairs that lost probes, as `n01->n02 2.0 % (1/50)`, or a line saying none did.
pub fn loss_lines(m: &MeshMatrix, family: Family) -> String {
    let n = m.nodes.len();
    let mut lossy = Vec::new();
    for s in 0..n {
        for d in (0..n).filter(|&d| d != s) {
            let Some(c) = m.cell(family, s, d) else {
                continue;
            };
            if let (Some(r), true) = (c.loss_ratio(), c.probes_lost > 0) {
                lossy.push(format!(
                    "{}->{} {:.1} % ({}/{})",
                    m.nodes[s],
                    m.nodes[d],
                    r * 100.0,
                    c.probes_lost,
                    c.probes_sent
                ));
            }
        }
    }
    if lossy.is_empty() {
        let sent: u64 = (0..n)
            .flat_map(|s| (0..n).map(move |d| (s, d)))
            .filter_map(|(s, d)| m.cell(family, s, d))
            .map(|c| c.probes_sent)
            .sum();
        format!("loss: none of {sent} probes lost\n")
    } else {
        format!("loss: {}\n", lossy.join(", "))
    }
}

/// The whole summary.
pub fn summary(s: &MeshSummary) -> String {
    let m = &s.matrix;
    let mut t = String::new();
    for &f in &m.families {
        let _ = writeln!(
            t,
            "\nmedian RTT over {}, ms (row: measuring node, column: measured node; FAIL: every run failed, none: never run)",
            f.as_str()
        );
        t.push_str(&rtt_table(m, f));
        t.push_str(&loss_lines(m, f));
    }
    t.push_str(&pair_lines(m));
    let _ = writeln!(
        t,
        "throughput runs: {} ok, {} failed",
        m.throughput.ok, m.throughput.failed
    );
    for o in &s.outages {
        t.push_str(&outage_line(o));
    }
    t.push_str(&scrape_lines(&s.scrapes, s.peers_per_node));
    t.push_str(&agent_lines(&s.agents));
    for n in &s.notes {
        let _ = writeln!(t, "note: {n}");
    }
    t
}

/// Whether every ordered pair measured over every family, or which did not and why.
fn pair_lines(m: &MeshMatrix) -> String {
    let mut t = String::new();
    let failed = m.failed_pairs();
    let pairs = m.nodes.len() * m.nodes.len().saturating_sub(1) * m.families.len();
    if failed.is_empty() {
        let _ = writeln!(
            t,
            "\nall {pairs} ordered pairs x families measured at least once"
        );
        return t;
    }
    let _ = writeln!(
        t,
        "\n{} of {pairs} ordered pairs x families without a successful latency run:",
        failed.len()
    );
    for (a, b, f) in failed {
        let why = m
            .cell(f, a, b)
            .and_then(|c| c.last_error.clone())
            .unwrap_or_else(|| "never run".into());
        let _ = writeln!(t, "  {}->{} {}: {why}", m.nodes[a], m.nodes[b], f.as_str());
    }
    t
}

/// How many endpoints answered at the end, and a line for each that did not or that lacked
/// series for some of its `peers_per_node` peers.
fn scrape_lines(scrapes: &[Scrape], peers_per_node: usize) -> String {
    let mut t = String::new();
    let answered = scrapes.iter().filter(|x| x.answered()).count();
    let _ = writeln!(
        t,
        "metrics: {answered} of {} endpoints answered at the end",
        scrapes.len()
    );
    for x in scrapes {
        if !x.answered() {
            let _ = writeln!(
                t,
                "  {}: {}",
                x.url,
                x.error
                    .clone()
                    .unwrap_or_else(|| format!("HTTP {:?}", x.status))
            );
        } else if x.peers.len() < peers_per_node {
            let _ = writeln!(
                t,
                "  {}: series for {} of {} peers",
                x.url,
                x.peers.len(),
                peers_per_node
            );
        }
    }
    t
}

/// A line for each agent that did not stop cleanly when asked.
fn agent_lines(agents: &[AgentEnd]) -> String {
    let mut t = String::new();
    for a in agents
        .iter()
        .filter(|a| a.early || a.killed || a.code != Some(0))
    {
        let what = if a.early {
            "exited before the end"
        } else if a.killed {
            "did not stop after SIGTERM and was killed"
        } else {
            "stopped with an error"
        };
        let _ = writeln!(t, "agent {}: {what} (exit code {:?})", a.node, a.code);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scrape(url: &str, status: Option<u16>, error: Option<&str>, peers: &[&str]) -> Scrape {
        Scrape {
            url: url.into(),
            status,
            error: error.map(String::from),
            peers: peers.iter().map(|p| p.to_string()).collect(),
            body: String::new(),
        }
    }

    #[test]
    fn endpoints_that_did_not_answer_or_lacked_peers() {
        let scrapes = [
            scrape("http://a/metrics", Some(200), None, &["x", "y"]),
            scrape("http://b/metrics", Some(200), None, &["x"]),
            scrape("http://c/metrics", None, Some("refused"), &[]),
            scrape("http://d/metrics", Some(500), None, &[]),
        ];
        assert_eq!(
            scrape_lines(&scrapes, 2),
            "metrics: 2 of 4 endpoints answered at the end\n\
             \x20 http://b/metrics: series for 1 of 2 peers\n\
             \x20 http://c/metrics: refused\n\
             \x20 http://d/metrics: HTTP Some(500)\n"
        );
    }

    #[test]
    fn agents_that_did_not_stop_cleanly() {
        let end = |node: &str, code, early, killed| AgentEnd {
            node: node.into(),
            code,
            early,
            killed,
        };
        let agents = [
            end("n01", Some(0), false, false),
            end("n02", None, true, false),
            end("n03", None, false, true),
            end("n04", Some(3), false, false),
        ];
        assert_eq!(
            agent_lines(&agents),
            "agent n02: exited before the end (exit code None)\n\
             agent n03: did not stop after SIGTERM and was killed (exit code None)\n\
             agent n04: stopped with an error (exit code Some(3))\n"
        );
        assert_eq!(agent_lines(&agents[..1]), "");
    }
}
