//! The human table of `sonde stress`: a header, how the connections opened, one row per
//! connection per interval with the sum and Jain's fairness index, then the summary per
//! connection (with its share of intervals without traffic and how it closed) and overall.
//! Intervals within `--warmup` are marked `(warm-up)`: the summary's rates leave them out.
//!
//! Above [`StressTableReporter::each_limit`] connections, an interval shows the spread of the
//! per-connection rates (minimum, median, maximum) instead of a row per connection, so a run with
//! thousands stays readable; `-J` always holds every connection.

use std::io::{self, Write};

use sonde_stats::stress::model::{
    CloseOutcome, ConnectReport, StressEvent, StressInterval, StressMode, StressStart,
    StressSummary, Sum, Transport,
};
use sonde_stats::units::{format_bitrate, format_bytes};

use crate::sink::Sink;

/// Connections up to which every one gets a row per interval by default.
pub const EACH_LIMIT: usize = 64;

/// Writes stress events as text.
pub struct StressTableReporter<W: Write> {
    out: W,
    mode: StressMode,
    each_limit: usize,
}

impl<W: Write> StressTableReporter<W> {
    pub fn new(out: W) -> Self {
        Self {
            out,
            mode: StressMode::Discard,
            each_limit: EACH_LIMIT,
        }
    }

    /// Rows per connection up to `n` connections (`usize::MAX`: always).
    pub fn each_limit(mut self, n: usize) -> Self {
        self.each_limit = n;
        self
    }

    fn start(&mut self, s: &StressStart) -> io::Result<()> {
        self.mode = s.mode;
        let what = match s.mode {
            StressMode::Discard => "this end sends",
            StressMode::Chargen => "the device sends",
            StressMode::Echo => "this end sends, the device sends it back",
        };
        writeln!(
            self.out,
            "Stressing {} port {} ({}: {what}) with {} {} for {} s, intervals of {} s",
            s.remote,
            s.port,
            s.mode.name(),
            s.connections,
            match s.transport {
                Transport::Tcp => "TCP connections",
                Transport::Udp => "UDP flows",
            },
            s.duration_secs,
            s.interval_secs
        )
    }

    fn connected(&mut self, c: &ConnectReport) -> io::Result<()> {
        writeln!(
            self.out,
            "Connected {} of {} in {:.3} s: {} refused, {} timed out, {} failed otherwise{}",
            c.connected,
            c.asked,
            c.seconds,
            c.refused,
            c.timed_out,
            c.other_failed,
            c.first_error
                .as_deref()
                .map(|e| format!(" (first: {e})"))
                .unwrap_or_default()
        )?;
        let mut head = "[ ID] Interval           ".to_string();
        if self.mode.sends() {
            head.push_str(&format!("  {:>10}  {:>15}", "Sent", "Bitrate"));
        }
        if self.mode.receives() {
            head.push_str(&format!("  {:>10}  {:>15}", "Received", "Bitrate"));
        }
        writeln!(self.out, "{head}")
    }

    /// The transfer and rate columns of this mode's directions.
    fn cols(&self, sent: (u64, f64), received: (u64, f64)) -> String {
        let mut s = String::new();
        let mut col = |(bytes, bps): (u64, f64)| {
            s.push_str(&format!(
                "  {:>10}  {:>15}",
                format_bytes(bytes),
                format_bitrate(bps)
            ));
        };
        if self.mode.sends() {
            col(sent);
        }
        if self.mode.receives() {
            col(received);
        }
        s
    }

    fn fairness(&self, sent: Option<f64>, received: Option<f64>) -> String {
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        match self.mode {
            StressMode::Discard => format!("  fairness {}", f(sent)),
            StressMode::Chargen => format!("  fairness {}", f(received)),
            StressMode::Echo => format!("  fairness {} / {}", f(sent), f(received)),
        }
    }

    fn sum_row(&mut self, span: &str, s: &Sum, warmup: bool) -> io::Result<()> {
        let cols = self.cols(
            (s.sent_bytes, s.sent_bps),
            (s.received_bytes, s.received_bps),
        );
        let fair = self.fairness(s.fairness_sent, s.fairness_received);
        let mark = if warmup { "  (warm-up)" } else { "" };
        writeln!(self.out, "[SUM] {span}{cols}{fair}{mark}")
    }

    fn interval(&mut self, iv: &StressInterval) -> io::Result<()> {
        let span = format!("{:6.2}-{:<6.2} sec", iv.start, iv.end);
        if iv.connections.len() <= self.each_limit {
            for c in &iv.connections {
                let cols = self.cols(
                    (c.sent_bytes, c.sent_bps),
                    (c.received_bytes, c.received_bps),
                );
                let gone = if c.open { "" } else { "  (closed)" };
                writeln!(self.out, "[{:>3}] {span}{cols}{gone}", c.id)?;
            }
        } else {
            let rates = |f: fn(&sonde_stats::stress::model::ConnRate) -> f64| {
                let mut v: Vec<f64> = iv.connections.iter().map(f).collect();
                v.sort_by(f64::total_cmp);
                spread(&v)
            };
            if self.mode.sends() {
                writeln!(
                    self.out,
                    "[ALL] {span}  sent per connection {}",
                    rates(|c| c.sent_bps)
                )?;
            }
            if self.mode.receives() {
                let r = rates(|c| c.received_bps);
                writeln!(self.out, "[ALL] {span}  received per connection {r}")?;
            }
        }
        self.sum_row(&span, &iv.sum, iv.warmup)
    }

    fn end(&mut self, s: &StressSummary) -> io::Result<()> {
        writeln!(
            self.out,
            "- - - - - - - - - - - - - - - - - - - - - - - - -"
        )?;
        let span = format!("{:6.2}-{:<6.2} sec", 0.0, s.seconds);
        for c in &s.connections {
            let cols = self.cols(
                (c.sent_bytes, c.sent_bps),
                (c.received_bytes, c.received_bps),
            );
            let close = close_word(c.close);
            let why = c
                .error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            let zero = c
                .zero_share
                .map(|z| format!("  zero {:.1} %", z * 100.0))
                .unwrap_or_default();
            writeln!(self.out, "[{:>3}] {span}{cols}{zero}  {close}{why}", c.id)?;
        }
        self.sum_row(&span, &s.sum, false)?;
        for line in steady_lines(s) {
            writeln!(self.out, "{line}")?;
        }
        if let Some(u) = &s.udp {
            for line in crate::stress_udp::lines(self.mode, u) {
                writeln!(self.out, "{line}")?;
            }
        } else {
            self.close_line(s)?;
        }
        if s.partial {
            writeln!(
                self.out,
                "(interrupted: the figures cover {:.2} s)",
                s.seconds
            )?;
        }
        Ok(())
    }

    fn close_line(&mut self, s: &StressSummary) -> io::Result<()> {
        writeln!(
            self.out,
            "Connections: {} asked, {} connected; closed: {} clean, {} reset, {} timed out, {} failed during the run",
            s.connect.asked,
            s.connect.connected,
            s.closed_clean,
            s.closed_reset,
            s.closed_timeout,
            s.failed_during_run
        )?;
        // What came back after our FIN counts: an echo may answer only then.
        if self.mode == StressMode::Echo && s.returned_bytes() == 0 {
            writeln!(
                self.out,
                "Echo: nothing came back of the {} bytes sent",
                s.sum.sent_bytes
            )?;
        } else if self.mode == StressMode::Echo {
            writeln!(
                self.out,
                "Echo: {} bytes came back different from what was sent{}",
                s.echo_mismatched_bytes,
                match s.echo_unreturned_bytes {
                    0 => String::new(),
                    n => format!(", {n} never came back"),
                }
            )?;
        }
        Ok(())
    }
}

/// The warm-up left out and the worst share of intervals without traffic, as lines.
pub fn steady_lines(s: &StressSummary) -> Vec<String> {
    let mut out = Vec::new();
    if s.warmup_secs > 0.0 {
        out.push(format!(
            "Warm-up: intervals ending by {:.2} s are not in the rates, fairness and zero samples",
            s.warmup_secs
        ));
    }
    if let Some(z) = s.zero_share_worst {
        out.push(format!(
            "Zero samples: at worst a connection moved nothing in {:.1} % of the intervals",
            z * 100.0
        ));
    }
    out
}

fn close_word(c: CloseOutcome) -> &'static str {
    match c {
        CloseOutcome::Clean => "closed cleanly",
        CloseOutcome::Reset => "reset on close",
        CloseOutcome::Timeout => "close timed out",
        CloseOutcome::FailedDuringRun => "failed during the run",
        CloseOutcome::Udp => "UDP flow",
    }
}

/// "min X  median Y  max Z" of sorted rates.
fn spread(sorted: &[f64]) -> String {
    let at = |i: usize| sorted.get(i).copied().unwrap_or(0.0);
    format!(
        "min {}  median {}  max {}",
        format_bitrate(at(0)),
        format_bitrate(at(sorted.len() / 2)),
        format_bitrate(at(sorted.len().saturating_sub(1)))
    )
}

impl<W: Write> Sink<StressEvent> for StressTableReporter<W> {
    fn event(&mut self, ev: &StressEvent) -> io::Result<()> {
        match ev {
            StressEvent::Start(s) => self.start(s),
            StressEvent::Connected(c) => self.connected(c),
            StressEvent::Interval(i) => self.interval(i),
            StressEvent::End(s) => self.end(s),
            StressEvent::Note(n) => writeln!(self.out, "{n}"),
            StressEvent::Error(e) => writeln!(self.out, "sonde: error - {e}"),
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use sonde_stats::stress::model::{ConnRate, ConnTotal};

    /// A small echo run: two connections, one of which took every byte.
    pub(crate) fn sample_run() -> Vec<StressEvent> {
        let rate = |id, sent_bytes: u64, open| ConnRate {
            id,
            sent_bytes,
            received_bytes: sent_bytes,
            sent_bps: sent_bytes as f64 * 16.0,
            received_bps: sent_bytes as f64 * 16.0,
            open,
        };
        let total = |id, bytes: u64, close| ConnTotal {
            id,
            sent_bytes: bytes,
            received_bytes: bytes,
            sent_bps: bytes as f64 * 16.0,
            received_bps: bytes as f64 * 16.0,
            close,
            error: None,
            drained_bytes: 0,
            zero_share: None,
        };
        let sum = Sum {
            sent_bytes: 1_000_000,
            received_bytes: 1_000_000,
            sent_bps: 16e6,
            received_bps: 16e6,
            fairness_sent: Some(0.5),
            fairness_received: Some(0.5),
        };
        let connect = ConnectReport {
            asked: 2,
            connected: 2,
            seconds: 0.001,
            ..ConnectReport::default()
        };
        vec![
            StressEvent::Start(StressStart {
                remote: "dut".into(),
                port: 7,
                mode: StressMode::Echo,
                transport: Transport::Tcp,
                connections: 2,
                duration_secs: 0.5,
                interval_secs: 0.5,
                connect_timeout_secs: 5.0,
            }),
            StressEvent::Connected(connect.clone()),
            StressEvent::Interval(StressInterval {
                start: 0.0,
                end: 0.5,
                connections: vec![rate(1, 1_000_000, true), rate(2, 0, false)],
                sum: sum.clone(),
                warmup: false,
            }),
            StressEvent::End(StressSummary {
                seconds: 0.5,
                connect,
                connections: vec![
                    total(1, 1_000_000, CloseOutcome::Clean),
                    total(2, 0, CloseOutcome::FailedDuringRun),
                ],
                sum,
                closed_clean: 1,
                closed_reset: 0,
                closed_timeout: 0,
                failed_during_run: 1,
                echo_mismatched_bytes: 0,
                echo_unreturned_bytes: 0,
                partial: false,
                udp: None,
                warmup_secs: 0.0,
                zero_share_worst: None,
            }),
        ]
    }

    fn render(limit: usize) -> String {
        let mut out = Vec::new();
        let mut r = StressTableReporter::new(&mut out).each_limit(limit);
        for ev in sample_run() {
            r.event(&ev).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn rows_per_connection_sum_and_fairness() {
        let t = render(EACH_LIMIT);
        assert!(t.contains("with 2 TCP connections"), "{t}");
        assert!(t.contains("Connected 2 of 2"), "{t}");
        let first = t.lines().find(|l| l.starts_with("[  1]")).unwrap();
        assert!(
            first.contains("977 KBytes") && first.contains("16.0 Mbits/sec"),
            "{first}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("[  2]") && l.ends_with("(closed)")),
            "{t}"
        );
        let sum = t.lines().find(|l| l.starts_with("[SUM]")).unwrap();
        assert!(sum.ends_with("fairness 0.500 / 0.500"), "{sum}");
        assert!(t.contains("[  2]   0.00-0.50   sec"), "{t}");
        assert!(t.contains("failed during the run"), "{t}");
        assert!(t.contains("1 clean, 0 reset, 0 timed out, 1 failed"), "{t}");
        assert!(t.contains("Echo: 0 bytes came back different"), "{t}");
    }

    #[test]
    fn many_connections_show_the_spread() {
        let t = render(1);
        // only the summary row names connection 1; the interval shows the spread instead
        assert_eq!(
            t.lines().filter(|l| l.starts_with("[  1]")).count(),
            1,
            "{t}"
        );
        let all = t.lines().find(|l| l.starts_with("[ALL]")).unwrap();
        assert!(
            all.contains("min 0.00 bits/sec  median 16.0 Mbits/sec  max 16.0 Mbits/sec"),
            "{all}"
        );
    }

    #[test]
    fn warm_up_intervals_are_marked_and_zero_samples_shown() {
        let mut events = sample_run();
        for ev in &mut events {
            match ev {
                StressEvent::Interval(iv) => iv.warmup = true,
                StressEvent::End(s) => {
                    s.warmup_secs = 0.5;
                    s.connections[0].zero_share = Some(0.0);
                    s.connections[1].zero_share = Some(0.5);
                    s.zero_share_worst = Some(0.5);
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        let mut r = StressTableReporter::new(&mut out);
        for ev in &events {
            r.event(ev).unwrap();
        }
        let t = String::from_utf8(out).unwrap();
        let sums: Vec<&str> = t.lines().filter(|l| l.starts_with("[SUM]")).collect();
        assert!(sums[0].ends_with("(warm-up)"), "{t}");
        assert!(
            !sums[1].ends_with("(warm-up)"),
            "the summary is no warm-up: {t}"
        );
        assert!(
            t.lines()
                .any(|l| l.starts_with("[  2]") && l.contains("zero 50.0 %  failed")),
            "{t}"
        );
        assert!(
            t.contains("intervals ending by 0.50 s are not in the rates"),
            "{t}"
        );
        assert!(
            t.contains("moved nothing in 50.0 % of the intervals"),
            "{t}"
        );
    }
}
