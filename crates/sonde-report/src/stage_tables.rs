//! The lab's impairment-stage and forwarder counters ([`crate::stages`]) as tables: a row
//! per stage of a link direction's chain, and a row per direction for the forwarder, its
//! lateness and socket-wait histograms summed up in a few words.

use crate::fmt;
use crate::stages::{DirectionStages, StagesView};
use crate::table::{count, Table, DASH};

/// One direction's stages, in chain order.
pub fn stage_table(d: &DirectionStages) -> Table {
    let mut t = Table::new(&[
        "Stage",
        "Packets in",
        "Packets out",
        "Dropped",
        "Duplicated",
        "Reordered",
        "Corrupted",
        "Max queued",
    ]);
    for s in &d.stages {
        t.rows.push(vec![
            s.stage.clone(),
            count(s.packets_in),
            count(s.packets_out),
            count(s.dropped),
            count(s.duplicated),
            count(s.reordered),
            count(s.corrupted),
            count(s.max_queued),
        ]);
    }
    t.drop_empty_columns(1)
}

/// The upper bound of a log2 µs bucket, as text: `"< 1 µs"`, `"< 64 µs"`, `"≥ 16.384 ms"`.
fn bucket_bound(i: usize, buckets: usize) -> String {
    if i + 1 >= buckets && i > 0 {
        let from_us = 1u64 << (i - 1);
        return format!("≥ {}", fmt::ms(from_us as f64 / 1e3));
    }
    let us = 1u64 << i;
    if us >= 1000 {
        format!("< {}", fmt::ms(us as f64 / 1e3))
    } else {
        format!("< {us} µs")
    }
}

/// A log2 µs histogram in a few words: where its median, p99 and largest values lie.
pub fn histogram_summary(h: &[u64]) -> String {
    let total: u64 = h.iter().sum();
    if total == 0 {
        return DASH.into();
    }
    let at = |q: f64| {
        let rank = (q * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in h.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return i;
            }
        }
        h.len() - 1
    };
    let max = h.iter().rposition(|n| *n > 0).unwrap_or(0);
    format!(
        "median {}, p99 {}, max {} ({total} frames)",
        bucket_bound(at(0.5), h.len()),
        bucket_bound(at(0.99), h.len()),
        bucket_bound(max, h.len())
    )
}

/// The forwarder's counters, a row per link direction that has them.
pub fn forwarder_table(v: &StagesView) -> Table {
    let mut t = Table::new(&[
        "Direction",
        "Frames read",
        "Frames written",
        "Truncated",
        "Refused by the kernel",
        "Lateness",
        "Wait in the socket",
        "Real-time",
    ]);
    for d in &v.directions {
        let Some(io) = &d.io else { continue };
        t.rows.push(vec![
            d.name.clone(),
            count(io.frames_rx),
            count(io.frames_tx),
            count(io.truncated),
            count(io.tx_refused),
            histogram_summary(&io.lateness_log2_us),
            histogram_summary(&io.read_wait_log2_us),
            match d.realtime {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => DASH.into(),
            },
        ]);
    }
    t.drop_empty_columns(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_read_as_bounds() {
        assert_eq!(bucket_bound(0, 16), "< 1 µs");
        assert_eq!(bucket_bound(6, 16), "< 64 µs");
        assert_eq!(bucket_bound(11, 16), "< 2.048 ms");
        assert_eq!(bucket_bound(15, 16), "≥ 16.384 ms");
        let mut h = vec![0u64; 16];
        h[2] = 60;
        h[5] = 39;
        h[9] = 1;
        assert_eq!(
            histogram_summary(&h),
            "median < 4 µs, p99 < 32 µs, max < 512 µs (100 frames)"
        );
        assert_eq!(histogram_summary(&[0; 16]), DASH);
    }
}
