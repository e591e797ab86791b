//! The lab's impairment-stage and forwarder counters, read into rows for tables.
//!
//! The lab stores, per test, what its userspace impairment engine counted over the settings'
//! lab: for each link direction (`"wan a-to-b"`) the counters of each stage of its chain, in
//! chain order, and the forwarder's own I/O counters with two latency histograms (how late
//! frames left against the instant the chain announced, and how long they waited in the
//! socket). The store keeps that as JSON so it does not depend on the lab's types; this module
//! is where its shape is known. A report shows it as tables rather than as the JSON itself:
//! what a reader wants is where packets were dropped and how far behind the forwarder ran.
//! Keys this version does not know are kept and shown as JSON under the tables, so nothing the
//! lab recorded is hidden. The tables themselves are [`crate::stage_tables`]'s: this module is
//! part of the report model, below every renderer.

use serde::Serialize;
use serde_json::Value;

use crate::json::{text, uint};

/// The counters of one stage of a link direction's chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageRow {
    pub stage: String,
    pub packets_in: Option<u64>,
    pub packets_out: Option<u64>,
    pub dropped: Option<u64>,
    pub duplicated: Option<u64>,
    pub reordered: Option<u64>,
    pub corrupted: Option<u64>,
    pub max_queued: Option<u64>,
}

/// The forwarder's I/O counters of one link direction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForwarderIo {
    pub frames_rx: Option<u64>,
    pub frames_tx: Option<u64>,
    pub truncated: Option<u64>,
    pub tx_refused: Option<u64>,
    pub no_timestamp: Option<u64>,
    /// Frames per lateness bucket: bucket 0 is under 1 µs, bucket `i` from `2^(i-1)` to
    /// `2^i` µs, the last one everything from there on.
    pub lateness_log2_us: Vec<u64>,
    /// Frames per socket-wait bucket, same buckets.
    pub read_wait_log2_us: Vec<u64>,
}

/// One link direction: its stages and its forwarder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectionStages {
    /// `"LINK DIRECTION"`, as the lab names it.
    pub name: String,
    pub stages: Vec<StageRow>,
    pub io: Option<ForwarderIo>,
    /// Whether the forwarder ran at real-time priority.
    pub realtime: Option<bool>,
}

/// Everything the lab recorded about its impairment engine during a test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StagesView {
    /// What the counters cover (`"all 4 test(s) run in this settings' lab"`).
    pub scope: Option<String>,
    pub directions: Vec<DirectionStages>,
    /// Entries of a shape this version does not know, as JSON text.
    pub unknown: Option<String>,
}

fn stage_row(name: &str, c: &Value) -> StageRow {
    let n = |k: &str| uint(c, &[k]);
    StageRow {
        stage: name.to_owned(),
        packets_in: n("packets_in"),
        packets_out: n("packets_out"),
        dropped: n("dropped"),
        duplicated: n("duplicated"),
        reordered: n("reordered"),
        corrupted: n("corrupted"),
        max_queued: n("max_queued"),
    }
}

/// `[["rate", {counters}], ...]`, in chain order.
fn stage_rows(list: &Value) -> Option<Vec<StageRow>> {
    list.as_array()?
        .iter()
        .map(|pair| {
            let pair = pair.as_array()?;
            let name = pair.first()?.as_str()?;
            let counters = pair.get(1).filter(|c| c.is_object())?;
            Some(stage_row(name, counters))
        })
        .collect()
}

fn buckets(v: &Value, key: &str) -> Vec<u64> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| x.as_u64().unwrap_or(0)).collect())
        .unwrap_or_default()
}

fn forwarder_io(v: &Value) -> Option<ForwarderIo> {
    v.is_object().then(|| ForwarderIo {
        frames_rx: uint(v, &["frames_rx"]),
        frames_tx: uint(v, &["frames_tx"]),
        truncated: uint(v, &["truncated"]),
        tx_refused: uint(v, &["tx_refused"]),
        no_timestamp: uint(v, &["no_timestamp"]),
        lateness_log2_us: buckets(v, "lateness_log2_us"),
        read_wait_log2_us: buckets(v, "read_wait_log2_us"),
    })
}

/// One direction's entry: `{"stages": [...], "io": {...}, "realtime": bool}`, or (older
/// labs) the stage list alone.
fn direction(name: &str, v: &Value) -> Option<DirectionStages> {
    if v.is_array() {
        return Some(DirectionStages {
            name: name.to_owned(),
            stages: stage_rows(v)?,
            io: None,
            realtime: None,
        });
    }
    let stages = match v.get("stages") {
        Some(list) => stage_rows(list)?,
        None => Vec::new(),
    };
    let io = v.get("io").and_then(forwarder_io);
    if stages.is_empty() && io.is_none() {
        return None;
    }
    Some(DirectionStages {
        name: name.to_owned(),
        stages,
        io,
        realtime: v.get("realtime").and_then(Value::as_bool),
    })
}

impl StagesView {
    /// Reads the stored counters. Never fails: what cannot be read is kept in `unknown`.
    pub fn read(v: &Value) -> StagesView {
        let Some(obj) = v.as_object() else {
            return StagesView {
                scope: None,
                directions: Vec::new(),
                unknown: Some(v.to_string()),
            };
        };
        let mut directions = Vec::new();
        let mut unknown = serde_json::Map::new();
        for (k, x) in obj {
            if k == "scope" && x.is_string() {
                continue;
            }
            match direction(k, x) {
                Some(d) => directions.push(d),
                None => {
                    unknown.insert(k.clone(), x.clone());
                }
            }
        }
        StagesView {
            scope: text(v, &["scope"]),
            directions,
            unknown: (!unknown.is_empty()).then(|| Value::Object(unknown).to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_shapes_are_kept() {
        let v = serde_json::json!({"scope": "s", "wan a-to-b": 3});
        let s = StagesView::read(&v);
        assert!(s.directions.is_empty());
        assert_eq!(s.unknown.as_deref(), Some("{\"wan a-to-b\":3}"));
    }
}
