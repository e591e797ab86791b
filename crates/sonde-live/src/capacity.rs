//! `sonde capacity` output: the estimate as a table (one figure a line, each with its layer)
//! or one JSON document. Rates are printed in Mbit/s with two decimals, finer than iperf3's
//! three significant digits: a ±3 % check needs them. The document is the typed model
//! [`sonde_schema::capacity`] (mapped by [`crate::capacity_model`]).

use crate::capacity_model;
use serde_json::Value;
use sonde_schema::capacity::CapacityDocument;
use sonde_stats::capacity::converge::EarlyStop;
use sonde_stats::capacity::departure::DepartureCheck;
use sonde_stats::capacity::histogram::BIN_SHARE_OF_RANGE;
use sonde_stats::capacity::histogram::MIN_BIN_SHARE_OF_MEDIAN;
use sonde_stats::capacity::longest::LongestOutcome;
use sonde_stats::capacity::sizes::{SizeRow, TrainSize};
use sonde_stats::capacity::{Estimate, Layers, Verdict, ETHERNET_HEADER};
use sonde_stats::units::format_mbit;

/// What the run was, besides the estimate.
#[derive(Debug, Clone)]
pub struct RunInfo<'a> {
    pub host: &'a str,
    pub server: &'a str,
    /// "IPv4" or "IPv6".
    pub family: &'a str,
    pub layers: Layers,
    pub short_len: u32,
    pub long_len: u32,
    pub kernel_stamps: bool,
    pub seconds: f64,
    pub ignored: u64,
    /// `--quick`: stop at the first two long trains that agree.
    pub quick: bool,
    /// Trains in the plan, and those the server sent as the client counted them (None when
    /// nothing arrived).
    pub trains_planned: u32,
    pub trains_sent: Option<u32>,
    /// With `--sizes`: each train's size as it arrived, and the estimate per size.
    pub train_sizes: &'a [TrainSize],
    pub by_size: &'a [SizeRow],
    /// With `--longest-train`: the search for the longest train that arrived whole.
    pub longest: Option<&'a LongestOutcome>,
    /// Whether the run stopped once its long trains agreed.
    pub early_stop: Option<&'a EarlyStop>,
    pub error: Option<&'a str>,
}

fn opt_mbit(bps: Option<f64>) -> String {
    bps.map_or_else(|| "-".into(), format_mbit)
}

/// The overhead model in words.
pub fn overhead_model(l: &Layers) -> String {
    format!(
        "IP = UDP payload {} B + 8 B UDP header + {} B IP header = {} B; Linux tbf/htb charge IP + {} B (Ethernet header, no FCS, preamble or gap unless configured)",
        l.payload,
        l.ip - l.payload - 8,
        l.ip,
        ETHERNET_HEADER
    )
}

/// A rate at the IP layer with its payload and shaper-counted equivalents.
fn layered(l: &Layers, ip_bps: f64) -> String {
    format!(
        "{} IP ({} UDP payload, {} as a Linux shaper counts)",
        format_mbit(ip_bps),
        format_mbit(l.payload_bps(ip_bps)),
        format_mbit(l.frame_bps(ip_bps))
    )
}

/// The table: a line per figure.
pub fn lines(info: &RunInfo<'_>, e: &Estimate) -> Vec<String> {
    let l = &info.layers;
    let mut out = vec![
        run_line(info, e),
        receive_times_line(info.kernel_stamps),
        short_trains_line(e),
    ];
    out.extend(histogram_lines(e));
    out.extend(size_lines(l, info.by_size));
    out.push(long_trains_line(e));
    out.extend(verdict_lines(l, e));
    if let Some(es) = info.early_stop {
        out.push(early_stop_line(es));
    }
    if let Some(o) = info.longest {
        out.push(format!("Longest train without loss: {}", o.describe()));
    }
    out.push(format!("Overhead model: {}", overhead_model(l)));
    out
}

/// What was sent where: the trains, their datagrams and how long it took.
fn run_line(info: &RunInfo<'_>, e: &Estimate) -> String {
    let l = &info.layers;
    let sent = info
        .trains_sent
        .map_or_else(|| "-".into(), |n| n.to_string());
    format!(
        "Capacity to {} ({}, {}): {} short trains of {}, {} long trains of {} datagrams of {} B ({} B IP), {:.1} s; {sent} of {} planned trains sent{}",
        info.host, info.server, info.family, e.short.trains, info.short_len, e.long.trains,
        info.long_len, l.payload, l.ip, info.seconds, info.trains_planned,
        if info.quick { " (--quick)" } else { "" }
    )
}

/// Which clock stamped the arrivals (it bounds how fine the rates can be).
fn receive_times_line(kernel_stamps: bool) -> String {
    format!(
        "Receive times: {}",
        if kernel_stamps {
            "the kernel's (SO_TIMESTAMPING, software)"
        } else {
            "the wall clock after each read (no kernel stamps here: coarser)"
        }
    )
}

fn short_trains_line(e: &Estimate) -> String {
    format!(
        "Short trains: {} clean, {} coalesced, {} used; CoV of their rates {}",
        e.short.clean,
        e.short.coalesced,
        e.short.used,
        e.cov.map_or_else(|| "-".into(), |c| format!("{c:.3}"))
    )
}

/// The short trains' histogram: its bin width, then each mode, the chosen peak marked.
fn histogram_lines(e: &Estimate) -> Vec<String> {
    let Some(h) = &e.histogram else {
        return Vec::new();
    };
    let mut out = vec![format!(
        "  histogram bin {} ({:.1} % of the 10th-90th percentile range, at least {:.0} % of the median)",
        format_mbit(h.bin_bps),
        BIN_SHARE_OF_RANGE * 100.0,
        MIN_BIN_SHARE_OF_MEDIAN * 100.0
    )];
    for (i, m) in h.modes.iter().enumerate() {
        let chosen = e.peak.as_ref() == Some(m);
        out.push(format!(
            "  mode {}: {:.2}-{} ({} trains){}",
            i + 1,
            m.low_bps / 1e6,
            format_mbit(m.high_bps),
            m.count,
            if chosen { "  <- peak" } else { "" }
        ));
    }
    out
}

fn long_trains_line(e: &Estimate) -> String {
    format!(
        "Long trains: {} clean, {} coalesced, {} used, {} with a knee; ADR {}; sender's departure rate {}",
        e.long.clean,
        e.long.coalesced,
        e.long.used,
        e.knees,
        opt_mbit(e.adr_bps),
        opt_mbit(e.departure_bps)
    )
}

/// The verdict, and for a shaped or plain link the figures that back it.
fn verdict_lines(l: &Layers, e: &Estimate) -> Vec<String> {
    match e.verdict {
        Verdict::HostLimited => vec![format!(
            "Verdict: host-limited. Long trains arrived at {} while the sender handed them over at {} ({:.0} % of that pace, train by train): nothing on the path slowed them, so these figures are the hosts' speed, not the path's capacity",
            opt_mbit(e.adr_bps),
            opt_mbit(e.departure_bps),
            e.arrival_share.unwrap_or(0.0) * 100.0
        )],
        Verdict::Unmeasured => vec!["Verdict: unmeasured (too few usable trains)".into()],
        Verdict::Shaped | Verdict::Link => path_rate_lines(l, e, e.verdict == Verdict::Shaped),
    }
}

/// A measured path: the verdict, the peak (or only) capacity, the sustained rate and the bucket.
fn path_rate_lines(l: &Layers, e: &Estimate, shaped: bool) -> Vec<String> {
    let mut out = vec![format!(
        "Verdict: {}",
        if shaped {
            "shaped (a token bucket: a peak rate, then a lower sustained one)"
        } else {
            "one rate throughout"
        }
    )];
    if let Some(m) = e.peak {
        out.push(format!(
            "  {} {:.2}-{} IP",
            if shaped {
                "peak capacity: "
            } else {
                "capacity:      "
            },
            m.low_bps / 1e6,
            format_mbit(m.high_bps)
        ));
    }
    if let Some(s) = e.sustained_bps {
        out.push(format!("  sustained rate: {}", layered(l, s)));
        out.push(format!(
            "                  range {:.2}-{} over {} long trains",
            e.sustained_min_bps.unwrap_or(s) / 1e6,
            format_mbit(e.sustained_max_bps.unwrap_or(s)),
            e.long.used
        ));
    }
    if let Some(b) = e.bucket_bytes {
        out.push(format!(
            "  bucket:         {:.1} KB of IP bytes",
            b / 1000.0
        ));
    }
    out
}

/// The estimate per probe size (`--sizes`): a line per size, its mode's range beside it.
fn size_lines(l: &Layers, rows: &[SizeRow]) -> Vec<String> {
    if rows.is_empty() {
        return Vec::new();
    }
    let headers = l.ip - l.payload;
    let mut out = vec![format!(
        "Per probe size (short trains; UDP payload, +{headers} B IP and UDP headers):"
    )];
    for r in rows {
        let range = match (r.low_bps, r.high_bps) {
            (Some(lo), Some(hi)) => format!(" ({}-{})", format_mbit(lo), format_mbit(hi)),
            _ => String::new(),
        };
        out.push(format!(
            "  {:>5} B: {} trains, {} used, {}{range} IP, CoV {}",
            r.payload_bytes,
            r.trains,
            r.used,
            opt_mbit(r.estimate_bps),
            r.cov.map_or_else(|| "-".into(), |c| format!("{c:.3}"))
        ));
    }
    out
}

/// Whether the run stopped early, and the rule's figures.
pub fn early_stop_line(es: &EarlyStop) -> String {
    format!("Early stop: {}", es.describe())
}

fn micros(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".into(), |n| format!("{:.1} µs", n as f64 / 1e3))
}

/// The departure check (`--tx-timestamps`) as lines for the table.
pub fn departure_lines(d: &DepartureCheck, trains: u32) -> Vec<String> {
    if d.reported == 0 {
        return vec![
            "Departures: no transmit stamps from the server (its kernel gives none, or it predates them)"
                .into(),
        ];
    }
    let mut out = vec![format!(
        "Departures (server's kernel transmit stamps): {} of {trains} trains reported; median gap {}, largest gap {}",
        d.reported,
        micros(d.median_gap_ns),
        micros(d.max_gap_ns)
    )];
    if d.not_back_to_back.is_empty() {
        out.push("  every reported train left back to back (no departure gap as long as its median arrival gap)".into());
    } else {
        let ids: Vec<String> = d
            .not_back_to_back
            .iter()
            .take(20)
            .map(u32::to_string)
            .collect();
        out.push(format!(
            "  {} trains did NOT leave back to back (a departure gap as long as their median arrival gap: the sender, not the path, may have spaced them): {}{}",
            d.not_back_to_back.len(),
            ids.join(", "),
            if d.not_back_to_back.len() > 20 { ", ..." } else { "" }
        ));
    }
    out
}

/// The JSON document; `departures` with `--tx-timestamps`.
pub fn document(
    info: &RunInfo<'_>,
    e: Option<&Estimate>,
    departures: Option<&DepartureCheck>,
) -> Value {
    let l = &info.layers;
    let sustained = e.and_then(|e| e.sustained_bps);
    // A failure (or a signal) stops the trains: the estimate is of those that arrived.
    sonde_schema::to_value(&CapacityDocument {
        host: Some(info.host.to_owned()),
        server: Some(info.server.to_owned()),
        family: Some(info.family.to_owned()),
        layer: Some("ip".into()),
        overhead_model: overhead_model(l),
        payload_bytes: l.payload,
        ip_bytes: l.ip,
        short_train_len: Some(info.short_len),
        long_train_len: Some(info.long_len),
        kernel_timestamps: Some(info.kernel_stamps),
        seconds: info.seconds,
        ignored_datagrams: info.ignored,
        verdict: e.map(|e| e.verdict),
        sustained_ip_bps: sustained,
        sustained_payload_bps: sustained.map(|s| l.payload_bps(s)),
        sustained_shaper_bps: sustained.map(|s| l.frame_bps(s)),
        estimate: e.cloned(),
        early_stop: info.early_stop.cloned(),
        quick: info.quick,
        trains_planned: Some(info.trains_planned),
        trains_sent: info.trains_sent,
        departures: departures.cloned(),
        train_sizes: info.train_sizes.to_vec(),
        by_size: info.by_size.to_vec(),
        longest_loss_free_train: info.longest.map(capacity_model::longest),
        envelope: sonde_schema::Envelope::new("capacity", info.error.is_some(), info.error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::capacity::estimate;
    use sonde_stats::capacity::train::{Arrival, Train};

    fn train(id: u32, n: u32, gap: u64) -> Train {
        Train {
            id,
            sent: n,
            arrivals: (0..n)
                .map(|i| Arrival {
                    seq: i,
                    ip_bytes: 1500,
                    rx_ns: u64::from(i) * gap,
                    tx_ns: u64::from(i / 64) * 64 * 2_000,
                })
                .collect(),
        }
    }

    #[test]
    fn the_table_states_layers_and_the_json_carries_the_verdict() {
        let short: Vec<Train> = (0..8).map(|i| train(i, 10, 120_000)).collect();
        let long: Vec<Train> = (0..3).map(|i| train(i, 200, 120_000)).collect();
        let e = estimate(&short, &long);
        let rows = sonde_stats::capacity::sizes::by_size(&short, 28);
        let sizes = sonde_stats::capacity::sizes::train_sizes(&[&short[0]], 28);
        let info = RunInfo {
            host: "h",
            server: "1.2.3.4:5201",
            family: "IPv4",
            layers: Layers::udp(1472, false),
            short_len: 10,
            long_len: 200,
            kernel_stamps: true,
            seconds: 1.5,
            ignored: 0,
            quick: false,
            trains_planned: 11,
            trains_sent: Some(11),
            train_sizes: &sizes,
            by_size: &rows,
            longest: None,
            early_stop: None,
            error: None,
        };
        let text = lines(&info, &e).join("\n");
        assert!(
            text.contains("sustained rate: 100.00 Mbit/s IP (98.13 Mbit/s UDP payload"),
            "{text}"
        );
        assert!(text.contains("IP = UDP payload 1472 B + 8 B UDP header + 20 B IP header"));
        assert!(
            text.contains("Per probe size")
                && text.contains("   1472 B: 8 trains, 8 used, ")
                && text.contains(" IP, CoV 0.000"),
            "{text}"
        );
        let doc = document(&info, Some(&e), None);
        crate::snapshot::check("capacity_1", &doc);
        assert_eq!(doc["verdict"], "link");
        assert_eq!(doc["by_size"][0]["trains"], 8);
        assert_eq!(doc["by_size"][0]["payload_bytes"], 1472);
        assert_eq!(doc["train_sizes"][0]["payload_bytes"], 1472);
        assert_eq!(doc["partial"], false);
        assert_eq!(
            (
                doc["short_train_len"].as_u64(),
                doc["long_train_len"].as_u64()
            ),
            (Some(10), Some(200))
        );
        assert!((doc["sustained_ip_bps"].as_f64().unwrap() - 100e6).abs() < 1.0);
        assert!(doc["early_stop"].is_null());
        let dep = DepartureCheck {
            reported: 1,
            median_gap_ns: Some(1000),
            max_gap_ns: Some(2000),
            not_back_to_back: vec![3],
            trains: vec![],
        };
        let doc = document(&info, Some(&e), Some(&dep));
        crate::snapshot::check("capacity_2", &doc);
    }

    #[test]
    fn the_early_stop_says_after_how_many_long_trains() {
        use sonde_stats::capacity::converge::StopRule;
        let long: Vec<Train> = (0..3).map(|i| train(i, 200, 120_000)).collect();
        let rule = StopRule::default();
        let mut es = EarlyStop {
            enabled: true,
            rule,
            planned_long_trains: 5,
            stopped: true,
            after_long_trains: Some(3),
            last: Some(rule.check(&long)),
        };
        let line = early_stop_line(&es);
        assert!(
            line.starts_with("Early stop: after 3 of 5 long trains, they agreed (rule: at least 3"),
            "{line}"
        );
        assert!(line.contains("spread 0.00 %, 95 % CI ±0.00 %"), "{line}");
        es.enabled = false;
        assert!(early_stop_line(&es).contains("off (--no-early-stop)"));
        es.enabled = true;
        es.stopped = false;
        assert!(early_stop_line(&es).contains("not taken"));
        let e = estimate(&[], &long);
        let mut search = sonde_stats::capacity::longest::LengthSearch::new(16, 16, 1000);
        search.record(16, 16);
        search.record(32, 30);
        let longest = LongestOutcome {
            search,
            seconds: 0.2,
            time_limited: true,
            limit_secs: 0.1,
        };
        let info = RunInfo {
            host: "h",
            server: "s",
            family: "IPv4",
            layers: Layers::udp(1472, false),
            short_len: 10,
            long_len: 200,
            kernel_stamps: true,
            seconds: 1.0,
            ignored: 0,
            quick: true,
            trains_planned: 45,
            trains_sent: Some(42),
            train_sizes: &[],
            by_size: &[],
            longest: Some(&longest),
            early_stop: Some(&es),
            error: None,
        };
        let doc = document(&info, Some(&e), None);
        crate::snapshot::check("capacity_3", &doc);
        assert!(doc.get("departures").is_none());
        assert_eq!(doc["early_stop"]["planned_long_trains"], 5);
        assert_eq!(doc["early_stop"]["last"]["converged"], true);
        assert_eq!(
            (&doc["quick"], &doc["trains_planned"], &doc["trains_sent"]),
            (&true.into(), &45.into(), &42.into())
        );
        assert!(lines(&info, &e)[0].ends_with("42 of 45 planned trains sent (--quick)"));
        let l = &doc["longest_loss_free_train"];
        assert_eq!(
            (&l["length"], &l["shortest_lossy"], &l["at_least"]),
            (&16.into(), &32.into(), &false.into())
        );
        assert_eq!(l["tried"][1]["lost"], 2);
        assert!(lines(&info, &e)
            .iter()
            .any(|x| x.starts_with("Longest train without loss: 16 datagrams (32 lost some)")));
    }
}
