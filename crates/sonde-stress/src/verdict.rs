//! When a finished run counts as a failure, and why: a stress test is a check of the device,
//! so any breakage fails it.
//!
//! TCP: a connection that did not open, failed during the run or did not close cleanly,
//! echo bytes that came back changed or never came back, connections that moved nothing the
//! mode needs, a run cut short. UDP promises no delivery, so loss alone does not fail a run
//! (it is reported); what does: a send refused by the local host or answered with port
//! unreachable, echo replies that came back changed or were not ours, no reply at all from a
//! service that should answer, and replies larger than their request (the device amplifies:
//! a reflector for spoofed requests). Pure: a summary in, the reason out.

use sonde_stats::stress::model::{CloseOutcome, ConnTotal, StressMode, StressSummary};
use sonde_stats::stress::udp::UdpSummary;

/// A finished run's report (a run's summary, a storm's, an overload's) and whether it passed.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<T> {
    pub report: T,
    /// Why it counts as a failure (the reasons joined by ", "), if it does.
    pub problems: Option<String>,
}

/// Why a finished run counts as a failure (the reasons joined by ", "), if it does.
pub fn problems(s: &StressSummary, mode: StressMode) -> Option<String> {
    let why = match &s.udp {
        Some(u) => udp(s, u, mode),
        None => tcp(s, mode),
    };
    (!why.is_empty()).then(|| why.join(", "))
}

fn tcp(s: &StressSummary, mode: StressMode) -> Vec<String> {
    let mut why = Vec::new();
    let not_open = s.connect.asked.saturating_sub(s.connect.connected);
    if not_open > 0 {
        why.push(format!("{not_open} connections did not open"));
    }
    if s.failed_during_run > 0 {
        why.push(format!("{} failed during the run", s.failed_during_run));
    }
    let unclean = s.closed_reset + s.closed_timeout;
    if unclean > 0 {
        why.push(format!("{unclean} did not close cleanly"));
    }
    if s.echo_mismatched_bytes > 0 {
        why.push(format!("{} echoed bytes differed", s.echo_mismatched_bytes));
    }
    if s.echo_unreturned_bytes > 0 {
        why.push(format!(
            "{} bytes sent never came back",
            s.echo_unreturned_bytes
        ));
    }
    why.extend(silent(s, mode));
    if s.partial {
        why.push("interrupted".into());
    }
    why
}

/// Connections that moved nothing the mode needs: nothing came back (echo, chargen: the
/// device is not the service asked for, e.g. a discard server) or nothing could be sent. A
/// test of the device that measured no data proves nothing, so it fails.
fn silent(s: &StressSummary, mode: StressMode) -> Vec<String> {
    // A connection that failed is named as such already.
    let count = |f: fn(&ConnTotal) -> u64| {
        s.connections
            .iter()
            .filter(|c| c.close != CloseOutcome::FailedDuringRun && f(c) == 0)
            .count()
    };
    let mut why = Vec::new();
    // Bytes read after our FIN count: an echo may answer only once it saw the end.
    let got_nothing = count(ConnTotal::returned_bytes);
    if mode.receives() && got_nothing > 0 {
        why.push(format!(
            "{got_nothing} of {} connections received nothing (is {} listening there?)",
            s.connections.len(),
            mode.name()
        ));
    }
    let sent_nothing = count(|c| c.sent_bytes);
    if mode.sends() && sent_nothing > 0 {
        why.push(format!(
            "{sent_nothing} of {} connections could send nothing",
            s.connections.len()
        ));
    }
    why
}

fn udp(s: &StressSummary, u: &UdpSummary, mode: StressMode) -> Vec<String> {
    let mut why = Vec::new();
    let not_open = s.connect.asked.saturating_sub(s.connect.connected);
    if not_open > 0 {
        why.push(format!("{not_open} sockets did not open"));
    }
    if u.send_errors > 0 {
        why.push(format!("{} sends failed", u.send_errors));
    }
    let errors = s.connections.iter().filter(|c| c.error.is_some()).count();
    if errors > 0 {
        why.push(format!("{errors} flows saw a receive error"));
    }
    if s.echo_mismatched_bytes > 0 {
        why.push(format!(
            "{} echoed bytes differed or were not ours",
            s.echo_mismatched_bytes
        ));
    }
    if u.oversized_replies > 0 {
        why.push(format!(
            "{} replies were larger than their request (up to {} bytes for {}: amplification)",
            u.oversized_replies, u.largest_reply_bytes, u.datagram_bytes
        ));
    }
    if mode.receives() && u.datagrams_sent > 0 && u.datagrams_received == 0 {
        why.push("no reply came back".into());
    }
    if s.partial {
        why.push("interrupted".into());
    }
    why
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::model::{ConnectReport, Sum};

    fn conn(id: u32, sent: u64, received: u64, close: CloseOutcome) -> ConnTotal {
        ConnTotal {
            id,
            sent_bytes: sent,
            received_bytes: received,
            sent_bps: 0.0,
            received_bps: 0.0,
            close,
            error: None,
            drained_bytes: 0,
            zero_share: None,
        }
    }

    fn summary(connections: Vec<ConnTotal>) -> StressSummary {
        let n = connections.len() as u32;
        StressSummary {
            seconds: 1.0,
            connect: ConnectReport {
                asked: n,
                connected: n,
                ..ConnectReport::default()
            },
            closed_clean: n,
            connections,
            sum: Sum::default(),
            closed_reset: 0,
            closed_timeout: 0,
            failed_during_run: 0,
            echo_mismatched_bytes: 0,
            echo_unreturned_bytes: 0,
            partial: false,
            udp: None,
            warmup_secs: 0.0,
            zero_share_worst: None,
        }
    }

    #[test]
    fn a_clean_echo_run_passes_and_each_breakage_is_named() {
        let good = summary(vec![
            conn(1, 10, 10, CloseOutcome::Clean),
            conn(2, 10, 10, CloseOutcome::Clean),
        ]);
        assert_eq!(problems(&good, StressMode::Echo), None);
        let broken = StressSummary {
            connect: ConnectReport {
                asked: 3,
                connected: 2,
                ..ConnectReport::default()
            },
            closed_reset: 1,
            echo_mismatched_bytes: 4,
            partial: true,
            ..good.clone()
        };
        assert_eq!(
            problems(&broken, StressMode::Echo).as_deref(),
            Some("1 connections did not open, 1 did not close cleanly, 4 echoed bytes differed, interrupted")
        );
    }

    #[test]
    fn a_connection_that_got_nothing_back_fails_an_echo_but_not_a_discard() {
        let s = summary(vec![
            conn(1, 10, 0, CloseOutcome::Clean),
            conn(2, 10, 0, CloseOutcome::FailedDuringRun),
        ]);
        let why = problems(&s, StressMode::Echo).unwrap_or_default();
        assert!(
            why.contains("1 of 2 connections received nothing (is echo listening there?)"),
            "{why}"
        );
        assert_eq!(problems(&s, StressMode::Discard), None);
        let drained = summary(vec![ConnTotal {
            drained_bytes: 10,
            ..conn(1, 10, 0, CloseOutcome::Clean)
        }]);
        assert_eq!(problems(&drained, StressMode::Echo), None);
    }

    #[test]
    fn udp_loss_alone_passes_but_amplification_and_silence_fail() {
        let mut s = summary(vec![conn(1, 5120, 2560, CloseOutcome::Udp)]);
        s.udp = Some(Box::new(UdpSummary {
            datagram_bytes: 512,
            datagrams_sent: 10,
            datagrams_received: 5,
            ..UdpSummary::default()
        }));
        assert_eq!(problems(&s, StressMode::Chargen), None);
        let amplified = UdpSummary {
            oversized_replies: 5,
            largest_reply_bytes: 1024,
            ..s.udp.as_deref().cloned().unwrap_or_default()
        };
        s.udp = Some(Box::new(amplified));
        assert_eq!(
            problems(&s, StressMode::Chargen).as_deref(),
            Some("5 replies were larger than their request (up to 1024 bytes for 512: amplification)")
        );
        s.udp = Some(Box::new(UdpSummary {
            datagrams_sent: 10,
            ..UdpSummary::default()
        }));
        assert_eq!(
            problems(&s, StressMode::Echo).as_deref(),
            Some("no reply came back")
        );
        assert_eq!(problems(&s, StressMode::Discard), None);
    }
}
