//! The human table for latency runs, and the text forms of `rrul` and `compare-ip` results.
//!
//! One header on start (what is probed, how times are taken, what the size means), one line per
//! interval, then the summary: RTT distribution, loss split, duplicates, reordering, lateness,
//! IPDV, one-way delays with their basis spelled out, schedule error.

use std::io::{self, Write};

use sonde_stats::latency::compare::{Better, Comparison};
use sonde_stats::latency::model::{
    CompareIpResult, DelayStats, FamilyResult, LatencyEvent, LatencyInterval, LatencyStart,
    LatencySummary, OneWayBasis, RrulResult,
};
use sonde_stats::units::format_bitrate;

use crate::latency_json::LatencySink;

/// Writes latency events as text.
pub struct LatencyTableReporter<W: Write> {
    out: W,
    header: bool,
}

impl<W: Write> LatencyTableReporter<W> {
    pub fn new(out: W) -> Self {
        Self { out, header: false }
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn start(&mut self, s: &LatencyStart) -> io::Result<()> {
        let mode = s.mode.label();
        let sched = if s.flood {
            format!("flood, {} in flight", s.window)
        } else {
            format!("every {} ms", fmt_num(s.interval_secs * 1e3))
        };
        writeln!(
            self.out,
            "{mode} to {} ({}, {}), {sched}",
            s.target, s.remote, s.family
        )?;
        if s.size > 0 {
            writeln!(self.out, "size: {} B = {}", s.size, s.size_meaning)?;
        }
        writeln!(self.out, "timestamps: {}", s.timestamping)?;
        Ok(())
    }

    fn interval(&mut self, iv: &LatencyInterval) -> io::Result<()> {
        if !self.header {
            writeln!(
                self.out,
                "{:<14} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9}",
                "Interval", "sent", "recv", "min ms", "med ms", "p99 ms", "max ms"
            )?;
            self.header = true;
        }
        let (mn, md, p99, mx) = iv
            .rtt
            .map(|r| (ms(r.min_ms), ms(r.median_ms), ms(r.p99_ms), ms(r.max_ms)))
            .unwrap_or_else(|| ("-".into(), "-".into(), "-".into(), "-".into()));
        writeln!(
            self.out,
            "{:<14} {:>6} {:>6} {mn:>9} {md:>9} {p99:>9} {mx:>9}",
            format!("{:.2}-{:.2} s", iv.start, iv.end),
            iv.sent,
            iv.received
        )
    }

    fn end(&mut self, s: &LatencySummary) -> io::Result<()> {
        let o = &mut self.out;
        writeln!(o, "- - - - - - - - - - - - - - - - - - - - - - - - -")?;
        let tag = if s.partial {
            " (partial: the run ended early)"
        } else {
            ""
        };
        writeln!(o, "Summary over {:.2} s{tag}", s.seconds)?;
        let l = &s.loss;
        writeln!(
            o,
            "probes: {} sent, {} answered, {} lost ({:.2} %)",
            l.sent, l.received, l.lost, l.loss_percent
        )?;
        if let (Some(up), Some(down)) = (l.lost_up, l.lost_down) {
            writeln!(o, "loss split: {up} upstream (never reached the server), {down} downstream (replies lost)")?;
        }
        writeln!(
            o,
            "duplicates: {}, reordered: {}, late: {} ({:.2} %)",
            l.duplicates, l.reordered, l.late, l.late_percent
        )?;
        match &s.rtt {
            Some(r) => stats_line(o, "RTT", r)?,
            None => writeln!(o, "RTT: no replies")?,
        }
        if let Some(i) = &s.ipdv {
            writeln!(
                o,
                "IPDV (RFC 3393): mean |dv| {} ms, max {} ms over {} pairs; jitter (RFC 3550) {} ms",
                ms(i.mean_abs_ms),
                ms(i.max_abs_ms),
                i.pairs,
                ms(s.jitter_ms)
            )?;
        }
        if let Some(t) = s.server_turnaround_us {
            writeln!(o, "server turnaround (excluded from RTT): mean {t:.1} us")?;
        }
        if let Some(w) = &s.one_way {
            let label = match w.basis {
                OneWayBasis::Measured => "measured",
                OneWayBasis::Estimated => "ESTIMATED",
                OneWayBasis::Invalid => "not available",
            };
            writeln!(o, "one-way delay ({label}): {}", w.method)?;
            if let Some(off) = w.clock_offset_ms {
                writeln!(
                    o,
                    "  estimated clock offset (server - client): {} ms",
                    ms(off)
                )?;
            }
            let est = if w.basis == OneWayBasis::Estimated {
                " (est.)"
            } else {
                ""
            };
            if let Some(u) = &w.up {
                stats_line(o, &format!("  up{est}"), u)?;
            }
            if let Some(d) = &w.down {
                stats_line(o, &format!("  down{est}"), d)?;
            }
            if let Some(n) = &w.note {
                writeln!(o, "  note: {n}")?;
            }
        }
        if let Some(sc) = &s.schedule {
            writeln!(
                o,
                "schedule error: mean {:.1} us ({:.2} % of {} ms), p99 {:.1} us, max {:.1} us",
                sc.mean_error_us,
                sc.error_percent,
                fmt_num(sc.interval_ms),
                sc.p99_error_us,
                sc.max_error_us
            )?;
        }
        writeln!(o, "rate: {:.1} answered probes/s", s.rate_per_second)?;
        if let Some(e) = &s.error {
            writeln!(o, "ended early: {e}")?;
        }
        Ok(())
    }
}

fn fmt_num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Milliseconds with microsecond resolution (loopback RTTs are a few µs).
fn ms(v: f64) -> String {
    format!("{v:.3}")
}

fn stats_line(o: &mut impl Write, name: &str, r: &DelayStats) -> io::Result<()> {
    writeln!(
        o,
        "{name} ms: min {} avg {} median {} p90 {} p99 {} p99.9 {} max {} stddev {} (variance {:.6} ms², {} samples)",
        ms(r.min_ms),
        ms(r.mean_ms),
        ms(r.median_ms),
        ms(r.p90_ms),
        ms(r.p99_ms),
        ms(r.p999_ms),
        ms(r.max_ms),
        ms(r.stddev_ms),
        r.variance_ms2,
        r.samples
    )
}

impl<W: Write> LatencySink for LatencyTableReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Start(s) => self.start(s),
            LatencyEvent::Interval(iv) => self.interval(iv),
            LatencyEvent::End(s) => self.end(s),
            LatencyEvent::Note(n) => writeln!(self.out, "note: {n}"),
            LatencyEvent::Error(e) => writeln!(self.out, "error: {e}"),
        }
        .and_then(|_| self.out.flush())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

fn bps(v: Option<f64>) -> String {
    v.map(format_bitrate).unwrap_or_else(|| "-".into())
}

fn opt_ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:+.3}")).unwrap_or_else(|| "-".into())
}

/// The text form of an RRUL result.
///
/// # Errors
/// When `out` fails.
pub fn write_rrul(out: &mut impl Write, r: &RrulResult) -> io::Result<()> {
    writeln!(
        out,
        "RRUL to {} ({}): {} TCP streams per loaded direction, {} s per phase, probe every {} ms",
        r.target,
        r.remote,
        r.streams,
        fmt_num(r.phase_secs),
        fmt_num(r.step_secs * 1e3)
    )?;
    writeln!(
        out,
        "{:<14} {:>16} {:>16} {:>10} {:>10} {:>8} {:>12} {:>12}",
        "phase", "download", "upload", "med ms", "p99 ms", "loss %", "Δmed ms", "Δp99 ms"
    )?;
    for p in &r.phases {
        let (med, p99) = p
            .latency
            .rtt
            .map(|x| (ms(x.median_ms), ms(x.p99_ms)))
            .unwrap_or_else(|| ("-".into(), "-".into()));
        writeln!(
            out,
            "{:<14} {:>16} {:>16} {med:>10} {p99:>10} {:>8.2} {:>12} {:>12}",
            p.name,
            bps(p.download_bps),
            bps(p.upload_bps),
            p.latency.loss.loss_percent,
            opt_ms(p.median_inflation_ms),
            opt_ms(p.p99_inflation_ms)
        )?;
        if let Some(e) = &p.load_error {
            writeln!(out, "  load error in {}: {e}", p.name)?;
        }
    }
    if let Some(e) = &r.error {
        writeln!(out, "ended early: {e}")?;
    }
    out.flush()
}

fn family_line(out: &mut impl Write, f: &FamilyResult) -> io::Result<()> {
    let (med, p99) = f
        .rtt
        .map(|x| (ms(x.median_ms), ms(x.p99_ms)))
        .unwrap_or_else(|| ("-".into(), "-".into()));
    writeln!(
        out,
        "{:<6} {:<28} {med:>10} {p99:>10} {:>8} {:>16}",
        f.family,
        f.address.as_deref().unwrap_or("-"),
        f.loss_percent
            .map(|l| format!("{l:.2}"))
            .unwrap_or_else(|| "-".into()),
        bps(f.throughput_bps)
    )?;
    if let Some(e) = &f.error {
        writeln!(out, "  {} error: {e}", f.family)?;
    }
    Ok(())
}

fn comparison_line(out: &mut impl Write, what: &str, c: &Comparison) -> io::Result<()> {
    let who = match c.better {
        Better::A => "IPv4 better",
        Better::B => "IPv6 better",
        Better::Neither => "no significant difference",
    };
    let p = c
        .p_value
        .map(|p| format!("p = {p:.4}"))
        .unwrap_or_else(|| "p unknown".into());
    writeln!(
        out,
        "{what}: {who} (difference {:.1} %, {p})",
        c.difference_percent
    )
}

/// The text form of a compare-ip result.
///
/// # Errors
/// When `out` fails.
pub fn write_compare(out: &mut impl Write, r: &CompareIpResult) -> io::Result<()> {
    writeln!(out, "IPv4 vs IPv6 to {}", r.target)?;
    writeln!(
        out,
        "{:<6} {:<28} {:>10} {:>10} {:>8} {:>16}",
        "family", "address", "med ms", "p99 ms", "loss %", "TCP upload"
    )?;
    family_line(out, &r.ipv4)?;
    family_line(out, &r.ipv6)?;
    if let Some(c) = &r.latency {
        comparison_line(out, "latency (median RTT, Mann-Whitney U)", c)?;
    }
    if let Some(c) = &r.throughput {
        comparison_line(out, "throughput (interval means, Welch t)", c)?;
    }
    writeln!(out, "verdict: {}", r.verdict)?;
    out.flush()
}
