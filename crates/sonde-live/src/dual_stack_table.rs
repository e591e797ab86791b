//! The text form of `sonde compare-ip`'s scenario modes: latency per probe size, BTC and path
//! capacity per family side by side, and the verdict with its per-measure evidence.

use sonde_stats::dual_stack::{BtcFamily, CapacityFamily, SizeRow};
use sonde_stats::units::format_bitrate;
use sonde_stats::verdict::Verdict;
use std::io::{self, Write};

fn opt_bps(v: Option<f64>) -> String {
    v.map(format_bitrate).unwrap_or_else(|| "-".into())
}

/// The per-size table: one row per family and size (layer stated in the header).
///
/// # Errors
/// When `out` fails.
pub fn write_sizes(out: &mut impl Write, rows: &[SizeRow], every: Option<f64>) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "latency per probe size (a UDP probe every {:.3} s per family, cycling over the sizes; size = UDP payload, IP = the IP packet: +28 B IPv4, +48 B IPv6; RTT in ms, variance in ms2; a packet above the path MTU is fragmented by the sender in either family)",
        every.unwrap_or(0.0)
    )?;
    writeln!(
        out,
        "{:<6} {:>6} {:>6} {:>5} {:>5} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "family",
        "size",
        "IP",
        "sent",
        "lost",
        "loss%",
        "min",
        "max",
        "avg",
        "median",
        "stddev",
        "variance"
    )?;
    for r in rows {
        let cols = r.rtt.map_or_else(
            || vec!["-".to_string(); 6],
            |d| {
                let mut c: Vec<String> = [d.min_ms, d.max_ms, d.mean_ms, d.median_ms, d.stddev_ms]
                    .iter()
                    .map(|v| format!("{v:.3}"))
                    .collect();
                c.push(format!("{:.6}", d.variance_ms2));
                c
            },
        );
        writeln!(
            out,
            "{:<6} {:>6} {:>6} {:>5} {:>5} {:>5.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>10}",
            r.family,
            r.payload_bytes,
            r.ip_bytes,
            r.sent,
            r.lost,
            r.loss_percent,
            cols[0],
            cols[1],
            cols[2],
            cols[3],
            cols[4],
            cols[5]
        )?;
        if let Some(e) = &r.error {
            writeln!(out, "  {} {} B error: {e}", r.family, r.payload_bytes)?;
        }
    }
    Ok(())
}

/// BTC per family: sessions and running min/max/mean/median goodput (TCP payload).
///
/// # Errors
/// When `out` fails.
pub fn write_btc(out: &mut impl Write, fams: &[BtcFamily; 2]) -> io::Result<()> {
    writeln!(
        out,
        "bulk transfer capacity (TCP payload goodput at the receiver)"
    )?;
    writeln!(
        out,
        "{:<6} {:>8} {:>16} {:>16} {:>16} {:>16}",
        "family", "sessions", "min", "max", "mean", "median"
    )?;
    for f in fams {
        let s = f.summary;
        writeln!(
            out,
            "{:<6} {:>8} {:>16} {:>16} {:>16} {:>16}",
            f.family,
            f.sessions.len(),
            opt_bps(s.map(|s| s.min_bps)),
            opt_bps(s.map(|s| s.max_bps)),
            opt_bps(s.map(|s| s.mean_bps)),
            opt_bps(s.map(|s| s.median_bps)),
        )?;
        if let Some(e) = &f.error {
            writeln!(out, "  {} BTC error: {e}", f.family)?;
        }
    }
    Ok(())
}

/// Path capacity per family: what limits it, the sustained rate with its range and the peak.
///
/// # Errors
/// When `out` fails.
pub fn write_capacity(out: &mut impl Write, fams: &[CapacityFamily; 2]) -> io::Result<()> {
    writeln!(
        out,
        "path capacity by dispersion (IP layer; trains of 1500-byte IP packets)"
    )?;
    for f in fams {
        let what = match f.verdict {
            None => "not measured".to_string(),
            Some(sonde_stats::capacity::Verdict::HostLimited) => {
                "host-limited: the hosts, not the path, set the rate (no path figure)".into()
            }
            Some(sonde_stats::capacity::Verdict::Unmeasured) => "too few usable trains".into(),
            Some(v) => format!(
                "{:?}: sustained {} ({} .. {}), peak mode {} .. {}",
                v,
                opt_bps(f.sustained_bps),
                opt_bps(f.sustained_min_bps),
                opt_bps(f.sustained_max_bps),
                opt_bps(f.peak_low_bps),
                opt_bps(f.peak_high_bps)
            )
            .to_lowercase(),
        };
        writeln!(
            out,
            "{:<6} {:<28} {what} [{} long trains, {:.1} s]",
            f.family,
            f.address.as_deref().unwrap_or("-"),
            f.long_trains_used,
            f.seconds
        )?;
        if let Some(e) = &f.error {
            writeln!(out, "  {} capacity error: {e}", f.family)?;
        }
    }
    Ok(())
}

/// The verdict: one line per measure, then the decision with its confidence.
///
/// # Errors
/// When `out` fails.
pub fn write_verdict(out: &mut impl Write, v: &Verdict) -> io::Result<()> {
    for m in &v.per_measure {
        let fig = |x: Option<f64>| {
            x.map_or_else(
                || "-".into(),
                |x| {
                    if m.measure.lower_is_better() {
                        format!("{x:.3} ms")
                    } else {
                        format_bitrate(x)
                    }
                },
            )
        };
        let p = m
            .p_value
            .map_or_else(String::new, |p| format!(", p = {p:.2e}"));
        // A measure that judged nothing has no margin and no samples to count (its note
        // says why: "IPv6 not resolved").
        let margin = match (m.ipv4, m.ipv6) {
            (Some(_), Some(_)) => format!("{:.1} %, ", m.margin_pct),
            _ => String::new(),
        };
        let n = if m.samples_ipv4 + m.samples_ipv6 > 0 {
            format!(", n = {}/{}", m.samples_ipv4, m.samples_ipv6)
        } else {
            String::new()
        };
        writeln!(
            out,
            "  {:<15} IPv4 {:>14}  IPv6 {:>14}  -> {} ({margin}{}{p}{n}){}",
            m.measure.label(),
            fig(m.ipv4),
            fig(m.ipv6),
            m.better.label(),
            m.test,
            m.note
                .as_ref()
                .map_or_else(String::new, |n| format!(" - {n}"))
        )?;
    }
    let conf = v
        .confidence
        .map_or_else(String::new, |c| format!(", confidence {:.4}", c));
    writeln!(out, "verdict: {}{conf}", v.summary)
}
