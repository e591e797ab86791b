//! The human table for latency runs, and the text forms of `rrul` and `compare-ip` results.
//!
//! One header on start (what is probed, how times are taken, what the size means), one line per
//! answered probe with `-v` (as ping), one row per interval (probes sent in it, answered, lost,
//! RTT), then the summary as two tables (counts: sent, answered, lost up and down, duplicates,
//! reordering, lateness; delays: RTT and one-way, min to max) and lines for IPDV, the one-way
//! basis spelled out, the schedule error and the rate (transactions/s for tcp-rr).

use std::io::{self, Write};

use sonde_stats::latency::compare::{Better, Comparison};
use sonde_stats::latency::model::{
    CompareIpResult, DelayStats, FamilyResult, LatencyEvent, LatencyInterval, LatencyMode,
    LatencyStart, LatencySummary, LossStats, OneWayBasis, RoundTrip, RrulResult,
};
use sonde_stats::units::format_bitrate;

use crate::sink::Sink;

/// Writes latency events as text; with [`LatencyTableReporter::verbose`] also one line per
/// answered probe, as ping prints them.
pub struct LatencyTableReporter<W: Write> {
    out: W,
    header: bool,
    verbose: bool,
    /// From the start event: what the probes are, for the per-probe lines and the rate.
    mode: Option<LatencyMode>,
    size: u32,
    remote: String,
}

impl<W: Write> LatencyTableReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            header: false,
            verbose: false,
            mode: None,
            size: 0,
            remote: String::new(),
        }
    }

    /// One line per answered probe (`-v`).
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// Gives back the writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    fn tcp_rr(&self) -> bool {
        self.mode == Some(LatencyMode::TcpRr)
    }

    fn start(&mut self, s: &LatencyStart) -> io::Result<()> {
        self.mode = Some(s.mode);
        self.size = s.size;
        self.remote = s.remote.clone();
        let mode = s.mode.label();
        let sched = if s.flood && s.mode == LatencyMode::TcpRr {
            "back to back (the next request leaves when the response arrives)".to_string()
        } else if s.flood {
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

    /// A ping-like line for one answered probe.
    fn round_trip(&mut self, r: &RoundTrip) -> io::Result<()> {
        let from = if self.size > 0 {
            format!("{} bytes from {}", self.size, self.remote)
        } else {
            format!("answer from {}", self.remote)
        };
        let mut line = format!("{from}: seq={} rtt={} ms", r.seq, ms(r.rtt_ms));
        if let (Some(u), Some(d)) = (r.up_ms, r.down_ms) {
            line.push_str(&format!(" up={} ms down={} ms", ms(u), ms(d)));
        }
        writeln!(self.out, "{line}")
    }

    fn interval(&mut self, iv: &LatencyInterval) -> io::Result<()> {
        let rate_head = if self.tcp_rr() { "trans/s" } else { "" };
        if !self.header {
            let head = format!(
                "{:<16} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {rate_head:>9}",
                "Interval", "sent", "recv", "lost", "min ms", "med ms", "p99 ms", "max ms"
            );
            writeln!(self.out, "{}", head.trim_end())?;
            self.header = true;
        }
        let (mn, md, p99, mx) = iv
            .rtt
            .map(|r| (ms(r.min_ms), ms(r.median_ms), ms(r.p99_ms), ms(r.max_ms)))
            .unwrap_or_else(|| ("-".into(), "-".into(), "-".into(), "-".into()));
        let len = iv.end - iv.start;
        let rate = if self.tcp_rr() && len > 0.0 {
            format!("{:.0}", iv.received as f64 / len)
        } else {
            String::new()
        };
        let line = format!(
            "{:<16} {:>6} {:>6} {:>6} {mn:>9} {md:>9} {p99:>9} {mx:>9} {rate:>9}",
            format!("{:.2}-{:.2} s", iv.start, iv.end),
            iv.sent,
            iv.received,
            iv.lost,
        );
        writeln!(self.out, "{}", line.trim_end())
    }

    fn end(&mut self, s: &LatencySummary) -> io::Result<()> {
        let rate_unit = if self.tcp_rr() {
            "transactions/s"
        } else {
            "answered probes/s"
        };
        let o = &mut self.out;
        writeln!(o, "- - - - - - - - - - - - - - - - - - - - - - - - -")?;
        let tag = if s.partial {
            " (partial: the run ended early)"
        } else {
            ""
        };
        let l = &s.loss;
        writeln!(
            o,
            "Summary over {:.2} s{tag}: {} sent, {} answered, {} lost ({:.2} %)",
            s.seconds, l.sent, l.received, l.lost, l.loss_percent
        )?;
        loss_table(o, l)?;
        delay_table(o, s)?;
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
        writeln!(o, "rate: {:.1} {rate_unit}", s.rate_per_second)?;
        if let Some(e) = &s.error {
            writeln!(o, "ended early: {e}")?;
        }
        Ok(())
    }
}

/// Counts as a one-row table: sent, answered, lost and where, duplicates, reordering,
/// lateness ("-" where the server's count is unknown).
fn loss_table(o: &mut impl Write, l: &LossStats) -> io::Result<()> {
    let opt = |v: Option<u64>| v.map_or_else(|| "-".to_string(), |n| n.to_string());
    writeln!(
        o,
        "{:<14} {:>9} {:>9} {:>9} {:>8} {:>10} {:>10} {:>11} {:>10} {:>9}",
        "probes",
        "sent",
        "answered",
        "lost",
        "loss %",
        "lost up",
        "lost down",
        "duplicates",
        "reordered",
        "late"
    )?;
    writeln!(
        o,
        "{:<14} {:>9} {:>9} {:>9} {:>8.2} {:>10} {:>10} {:>11} {:>10} {:>9}",
        "",
        l.sent,
        l.received,
        l.lost,
        l.loss_percent,
        opt(l.lost_up),
        opt(l.lost_down),
        l.duplicates,
        l.reordered,
        l.late
    )?;
    if l.refused > 0 {
        writeln!(
            o,
            "refused: the peer's host answered \"port unreachable\" (UDP) or \"connection refused\" (TCP) {} times: nothing listened for some of the run's probes, so this loss is not the path's",
            l.refused
        )?;
    }
    Ok(())
}

/// The delay distributions as a table: the RTT, then the one-way delays where there are any.
fn delay_table(o: &mut impl Write, s: &LatencySummary) -> io::Result<()> {
    writeln!(
        o,
        "{:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "delay ms", "samples", "min", "avg", "median", "p90", "p99", "p99.9", "max", "stddev"
    )?;
    let Some(r) = &s.rtt else {
        return writeln!(o, "{:<14} {:>9}  (no replies)", "RTT", 0);
    };
    delay_row(o, "RTT", r)?;
    if let Some(w) = &s.one_way {
        let est = if w.basis == OneWayBasis::Estimated {
            " (est.)"
        } else {
            ""
        };
        if let Some(u) = &w.up {
            delay_row(o, &format!("up{est}"), u)?;
        }
        if let Some(d) = &w.down {
            delay_row(o, &format!("down{est}"), d)?;
        }
    }
    Ok(())
}

fn delay_row(o: &mut impl Write, name: &str, r: &DelayStats) -> io::Result<()> {
    writeln!(
        o,
        "{name:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        r.samples,
        ms(r.min_ms),
        ms(r.mean_ms),
        ms(r.median_ms),
        ms(r.p90_ms),
        ms(r.p99_ms),
        ms(r.p999_ms),
        ms(r.max_ms),
        ms(r.stddev_ms),
    )
}

fn fmt_num(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Milliseconds with microsecond resolution (loopback RTTs are a few µs).
fn ms(v: f64) -> String {
    format!("{v:.3}")
}

impl<W: Write> Sink<LatencyEvent> for LatencyTableReporter<W> {
    fn event(&mut self, ev: &LatencyEvent) -> io::Result<()> {
        match ev {
            LatencyEvent::Start(s) => self.start(s),
            LatencyEvent::Interval(iv) => self.interval(iv),
            LatencyEvent::End(s) => self.end(s),
            LatencyEvent::Note(n) => writeln!(self.out, "note: {n}"),
            LatencyEvent::Error(e) => writeln!(self.out, "error: {e}"),
            LatencyEvent::RoundTrip(r) if self.verbose => self.round_trip(r),
            LatencyEvent::RoundTrip(_) | LatencyEvent::Sent(_) => return Ok(()),
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
        comparison_line(out, "throughput (interleaved rounds, paired t)", c)?;
    }
    use crate::dual_stack_table as ds;
    ds::write_sizes(out, &r.sizes, r.every_secs)?;
    if let Some(b) = &r.btc {
        ds::write_btc(out, b)?;
    }
    if let Some(c) = &r.capacity {
        ds::write_capacity(out, c)?;
    }
    ds::write_verdict(out, &r.verdict)?;
    if r.partial {
        writeln!(out, "interrupted: the figures are of what ran")?;
    }
    out.flush()
}
