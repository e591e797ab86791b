//! The parts of a latency run that its `-J` document spells its own way
//! ([`sonde_schema::latency`]): the `start` (whose fields an older document may lack) and
//! an interval row. The mode, the summary and its figures are the stats types as they are,
//! in the `latency`, `rrul` and `compare-ip` documents alike.
//!
//! Each function takes its source apart field by field, so a field added or renamed on either
//! side is a compile error here rather than a key silently missing from a document.

use sonde_schema::latency as schema;
use sonde_stats::latency::model::{LatencyInterval, LatencyStart};

/// What is known when probing starts.
pub fn start(s: &LatencyStart) -> schema::LatencyStart {
    let LatencyStart {
        version,
        mode: m,
        target,
        remote,
        local,
        family,
        size,
        size_meaning,
        interval_secs,
        flood,
        window,
        count,
        duration_secs,
        late_ms,
        timestamping,
        clock_synced,
        timestamp_unix,
    } = s;
    schema::LatencyStart {
        version: Some(version.clone()),
        mode: *m,
        target: Some(target.clone()),
        remote: remote.clone(),
        local: local.clone(),
        family: Some(family.clone()),
        size: Some(*size),
        size_meaning: size_meaning.clone(),
        interval_secs: *interval_secs,
        flood: *flood,
        window: *window,
        count: *count,
        duration_secs: *duration_secs,
        late_ms: *late_ms,
        timestamping: timestamping.clone(),
        clock_synced: *clock_synced,
        timestamp_unix: Some(*timestamp_unix),
    }
}

/// One interval row.
pub fn interval(iv: &LatencyInterval) -> schema::LatencyInterval {
    let LatencyInterval {
        start,
        end,
        sent,
        received,
        lost,
        rtt,
    } = *iv;
    schema::LatencyInterval {
        start: Some(start),
        end,
        sent,
        received,
        lost,
        rtt,
    }
}
