//! The capacity figures of `sonde_stats::capacity` as the `-J` document's typed model
//! ([`sonde_schema::capacity`]): one mapping per type, for `sonde capacity`'s document
//! ([`crate::capacity::document`]) and the verdict of each family in `compare-ip`'s.
//!
//! Each function takes its source apart field by field, so a field added or renamed on either
//! side is a compile error here rather than a key silently missing from a document.

use sonde_schema::capacity as schema;
use sonde_stats::capacity::converge::{Convergence, EarlyStop, StopRule};
use sonde_stats::capacity::departure::{Departure, DepartureCheck};
use sonde_stats::capacity::histogram::{Histogram, Mode};
use sonde_stats::capacity::longest::{LongestOutcome, Tried};
use sonde_stats::capacity::shaper::ShapeFit;
use sonde_stats::capacity::sizes::{SizeRow, TrainSize};
use sonde_stats::capacity::{Estimate, TrainCounts, Verdict};

/// What limits the path.
pub fn verdict(v: Verdict) -> schema::Verdict {
    match v {
        Verdict::HostLimited => schema::Verdict::HostLimited,
        Verdict::Shaped => schema::Verdict::Shaped,
        Verdict::Link => schema::Verdict::Link,
        Verdict::Unmeasured => schema::Verdict::Unmeasured,
    }
}

fn counts(c: &TrainCounts) -> schema::TrainCounts {
    let TrainCounts {
        trains,
        clean,
        coalesced,
        used,
    } = *c;
    schema::TrainCounts {
        trains,
        clean,
        coalesced,
        used,
    }
}

fn mode(m: &Mode) -> schema::Mode {
    let Mode {
        low_bps,
        high_bps,
        count,
    } = *m;
    schema::Mode {
        low_bps,
        high_bps,
        count,
    }
}

fn histogram(h: &Histogram) -> schema::Histogram {
    let Histogram {
        bin_bps,
        start_bps,
        counts,
        modes,
    } = h;
    schema::Histogram {
        bin_bps: *bin_bps,
        start_bps: *start_bps,
        counts: counts.clone(),
        modes: modes.iter().map(mode).collect(),
    }
}

fn fit(f: &ShapeFit) -> schema::ShapeFit {
    let ShapeFit {
        whole_bps,
        tail_bps,
        head_bps,
        knee_bytes,
        bucket_bytes,
    } = *f;
    schema::ShapeFit {
        whole_bps,
        tail_bps,
        head_bps,
        knee_bytes,
        bucket_bytes,
    }
}

/// The estimate.
pub fn estimate(e: &Estimate) -> schema::Estimate {
    let Estimate {
        verdict: v,
        short,
        long,
        short_rates,
        histogram: h,
        cov,
        peak,
        adr_bps,
        sustained_bps,
        sustained_min_bps,
        sustained_max_bps,
        bucket_bytes,
        knees,
        departure_bps,
        arrival_share,
        fits,
    } = e;
    schema::Estimate {
        verdict: verdict(*v),
        short: counts(short),
        long: counts(long),
        short_rates: short_rates.clone(),
        histogram: h.as_ref().map(histogram),
        cov: *cov,
        peak: peak.as_ref().map(mode),
        adr_bps: *adr_bps,
        sustained_bps: *sustained_bps,
        sustained_min_bps: *sustained_min_bps,
        sustained_max_bps: *sustained_max_bps,
        bucket_bytes: *bucket_bytes,
        knees: *knees,
        departure_bps: *departure_bps,
        arrival_share: *arrival_share,
        fits: fits.iter().map(fit).collect(),
    }
}

fn rule(r: &StopRule) -> schema::StopRule {
    let StopRule {
        min_trains,
        window,
        max_spread,
        max_ci,
        host_paced_stops,
    } = *r;
    schema::StopRule {
        min_trains,
        window,
        max_spread,
        max_ci,
        host_paced_stops,
    }
}

fn convergence(c: &Convergence) -> schema::Convergence {
    let Convergence {
        long_trains,
        mean_bps,
        spread,
        ci_half,
        same_shape,
        converged,
    } = *c;
    schema::Convergence {
        long_trains,
        mean_bps,
        spread,
        ci_half,
        same_shape,
        converged,
    }
}

/// Whether and when the run stopped early.
pub fn early_stop(es: &EarlyStop) -> schema::EarlyStop {
    let EarlyStop {
        enabled,
        rule: r,
        planned_long_trains,
        stopped,
        after_long_trains,
        last,
    } = es;
    schema::EarlyStop {
        enabled: *enabled,
        rule: rule(r),
        planned_long_trains: *planned_long_trains,
        stopped: *stopped,
        after_long_trains: *after_long_trains,
        last: last.as_ref().map(convergence),
    }
}

fn departure(d: &Departure) -> schema::Departure {
    let Departure {
        train,
        stamped,
        span_ns,
        min_gap_ns,
        median_gap_ns,
        max_gap_ns,
    } = *d;
    schema::Departure {
        train,
        stamped,
        span_ns,
        min_gap_ns,
        median_gap_ns,
        max_gap_ns,
    }
}

/// The departure check (`--tx-timestamps`).
pub fn departures(d: &DepartureCheck) -> schema::DepartureCheck {
    let DepartureCheck {
        reported,
        median_gap_ns,
        max_gap_ns,
        not_back_to_back,
        trains,
    } = d;
    schema::DepartureCheck {
        reported: *reported,
        median_gap_ns: *median_gap_ns,
        max_gap_ns: *max_gap_ns,
        not_back_to_back: not_back_to_back.clone(),
        trains: trains.iter().map(departure).collect(),
    }
}

/// One received train's size (`--sizes`).
pub fn train_size(t: &TrainSize) -> schema::TrainSize {
    let TrainSize {
        train,
        payload_bytes,
        received,
    } = *t;
    schema::TrainSize {
        train,
        payload_bytes,
        received,
    }
}

/// One probe size's row (`--sizes`).
pub fn size_row(r: &SizeRow) -> schema::SizeRow {
    let SizeRow {
        payload_bytes,
        ip_bytes,
        trains,
        used,
        estimate_bps,
        low_bps,
        high_bps,
        cov,
    } = *r;
    schema::SizeRow {
        payload_bytes,
        ip_bytes,
        trains,
        used,
        estimate_bps,
        low_bps,
        high_bps,
        cov,
    }
}

/// The longest-train search (`--longest-train`).
pub fn longest(o: &LongestOutcome) -> schema::LongestTrain {
    let LongestOutcome {
        search,
        seconds,
        time_limited,
        limit_secs,
    } = o;
    let tried = |t: &Tried| {
        let Tried {
            len,
            received,
            lost,
        } = *t;
        schema::TriedTrain {
            len,
            received,
            lost,
        }
    };
    schema::LongestTrain {
        length: search.loss_free,
        at_least: search.at_least(),
        shortest_lossy: search.lossy,
        max_len: search.max,
        limit_secs: *limit_secs,
        time_limited: *time_limited,
        seconds: *seconds,
        tried: search.tried.iter().map(tried).collect(),
    }
}
