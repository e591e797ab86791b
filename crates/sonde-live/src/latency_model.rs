//! The latency figures of `sonde_stats::latency::model` as the `-J` documents' typed model
//! ([`sonde_schema::latency`]): one mapping per type, shared by the documents that hold
//! latency (`latency`, `rrul`, `compare-ip`).
//!
//! Each function takes its source apart field by field, so a field added or renamed on either
//! side is a compile error here rather than a key silently missing from a document.

use sonde_schema::latency as schema;
use sonde_stats::latency::model::{
    DelayStats, Histogram, IpdvStats, LatencyInterval, LatencyMode, LatencyStart, LatencySummary,
    LossStats, OneWayBasis, OneWayStats, ScheduleStats,
};

/// The probing mode.
pub fn mode(m: LatencyMode) -> schema::LatencyMode {
    match m {
        LatencyMode::Udp => schema::LatencyMode::Udp,
        LatencyMode::Icmp => schema::LatencyMode::Icmp,
        LatencyMode::TcpConnect => schema::LatencyMode::TcpConnect,
        LatencyMode::TcpRr => schema::LatencyMode::TcpRr,
    }
}

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
        mode: mode(*m),
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

/// A delay distribution.
pub fn delay(d: &DelayStats) -> schema::DelayStats {
    let DelayStats {
        samples,
        min_ms,
        mean_ms,
        median_ms,
        p90_ms,
        p99_ms,
        p999_ms,
        max_ms,
        stddev_ms,
        variance_ms2,
    } = *d;
    schema::DelayStats {
        samples,
        min_ms,
        mean_ms,
        median_ms,
        p90_ms,
        p99_ms,
        p999_ms,
        max_ms,
        stddev_ms,
        variance_ms2,
    }
}

fn ipdv(d: &IpdvStats) -> schema::IpdvStats {
    let IpdvStats {
        pairs,
        mean_abs_ms,
        max_abs_ms,
    } = *d;
    schema::IpdvStats {
        pairs,
        mean_abs_ms,
        max_abs_ms,
    }
}

fn loss(l: &LossStats) -> schema::LossStats {
    let LossStats {
        sent,
        received,
        lost,
        loss_percent,
        lost_up,
        lost_down,
        server_received,
        duplicates,
        reordered,
        late,
        late_percent,
        refused,
    } = *l;
    schema::LossStats {
        sent,
        received,
        lost,
        loss_percent,
        lost_up,
        lost_down,
        server_received,
        duplicates,
        reordered,
        late,
        late_percent,
        refused,
    }
}

fn one_way(o: &OneWayStats) -> schema::OneWayStats {
    let OneWayStats {
        basis,
        clock_offset_ms,
        method,
        up,
        down,
        ipdv_up,
        ipdv_down,
        note,
    } = o;
    schema::OneWayStats {
        basis: match basis {
            OneWayBasis::Measured => schema::OneWayBasis::Measured,
            OneWayBasis::Estimated => schema::OneWayBasis::Estimated,
            OneWayBasis::Invalid => schema::OneWayBasis::Invalid,
        },
        clock_offset_ms: *clock_offset_ms,
        method: method.clone(),
        up: up.as_ref().map(delay),
        down: down.as_ref().map(delay),
        ipdv_up: ipdv_up.as_ref().map(ipdv),
        ipdv_down: ipdv_down.as_ref().map(ipdv),
        note: note.clone(),
    }
}

fn schedule(s: &ScheduleStats) -> schema::ScheduleStats {
    let ScheduleStats {
        interval_ms,
        mean_error_us,
        p99_error_us,
        max_error_us,
        error_percent,
    } = *s;
    schema::ScheduleStats {
        interval_ms,
        mean_error_us,
        p99_error_us,
        max_error_us,
        error_percent,
    }
}

fn histogram(h: &Histogram) -> schema::Histogram {
    let Histogram { unit, bins } = h;
    schema::Histogram {
        unit: unit.clone(),
        bins: bins.clone(),
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
        rtt: rtt.as_ref().map(delay),
    }
}

/// The end of a run.
pub fn summary(s: &LatencySummary) -> schema::LatencySummary {
    let LatencySummary {
        seconds,
        loss: l,
        rtt,
        rtt_histogram,
        jitter_ms,
        ipdv: i,
        one_way: o,
        server_turnaround_us,
        schedule: sch,
        rate_per_second,
        partial,
        error,
    } = s;
    schema::LatencySummary {
        seconds: *seconds,
        loss: loss(l),
        rtt: rtt.as_ref().map(delay),
        rtt_histogram: rtt_histogram.as_ref().map(histogram),
        jitter_ms: *jitter_ms,
        ipdv: i.as_ref().map(ipdv),
        one_way: o.as_ref().map(one_way),
        server_turnaround_us: *server_turnaround_us,
        schedule: sch.as_ref().map(schedule),
        rate_per_second: *rate_per_second,
        partial: *partial,
        error: error.clone(),
    }
}
