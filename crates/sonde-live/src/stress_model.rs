//! The stress events as `sonde_schema::stress`'s models: what every stress writer here
//! (`-J`, JSON lines, the ramp, steps, storm and overload documents) serialises, so that the
//! documents are spelled once, in the schema, and `sonde report` reads the same types.
//!
//! One function per type, field for field; none of them can fail.

use sonde_schema::stress::{overload as so, ramp as sr, run, storm as st};
use sonde_stats::latency::model::DelayStats;
use sonde_stats::stress::model::{
    CloseOutcome, ConnTotal, ConnectReport, StressInterval, StressStart, StressSummary, Transport,
};
use sonde_stats::stress::overload::OverloadReport;
use sonde_stats::stress::ramp::RampRow;
use sonde_stats::stress::storm::StormReport;
use sonde_stats::stress::udp::{EchoFigures, UdpSummary};

/// `"tcp"` or `"udp"`, as the documents spell a transport.
pub fn transport(t: Transport) -> &'static str {
    match t {
        Transport::Tcp => "tcp",
        Transport::Udp => "udp",
    }
}

pub fn start(s: &StressStart) -> run::Start {
    run::Start {
        remote: s.remote.clone(),
        port: s.port,
        mode: s.mode.name().into(),
        transport: transport(s.transport).into(),
        connections: s.connections,
        duration_secs: s.duration_secs,
        interval_secs: s.interval_secs,
        connect_timeout_secs: s.connect_timeout_secs,
    }
}

pub fn connect(c: &ConnectReport) -> run::Connect {
    run::Connect {
        asked: c.asked,
        connected: c.connected,
        refused: c.refused,
        timed_out: c.timed_out,
        other_failed: c.other_failed,
        seconds: c.seconds,
        first_error: c.first_error.clone(),
    }
}

pub fn interval(i: &StressInterval) -> run::Interval {
    run::Interval {
        start: i.start,
        end: i.end,
        connections: i.connections.clone(),
        sent_bytes: i.sum.sent_bytes,
        received_bytes: i.sum.received_bytes,
        sent_bps: i.sum.sent_bps,
        received_bps: i.sum.received_bps,
        fairness_sent: i.sum.fairness_sent,
        fairness_received: i.sum.fairness_received,
        warmup: i.warmup,
    }
}

pub fn end(s: &StressSummary) -> run::End {
    run::End {
        seconds: s.seconds,
        connect: connect(&s.connect),
        connections: s.connections.iter().map(conn_total).collect(),
        sent_bytes: s.sum.sent_bytes,
        received_bytes: s.sum.received_bytes,
        sent_bps: s.sum.sent_bps,
        received_bps: s.sum.received_bps,
        fairness_sent: s.sum.fairness_sent,
        fairness_received: s.sum.fairness_received,
        closed_clean: s.closed_clean,
        closed_reset: s.closed_reset,
        closed_timeout: s.closed_timeout,
        failed_during_run: s.failed_during_run,
        echo_mismatched_bytes: s.echo_mismatched_bytes,
        echo_unreturned_bytes: s.echo_unreturned_bytes,
        partial: s.partial,
        udp: s.udp.as_deref().map(udp),
        warmup_secs: s.warmup_secs,
        zero_share_worst: s.zero_share_worst,
    }
}

fn close(c: CloseOutcome) -> &'static str {
    match c {
        CloseOutcome::Clean => "clean",
        CloseOutcome::Reset => "reset",
        CloseOutcome::Timeout => "timeout",
        CloseOutcome::FailedDuringRun => "failed_during_run",
        CloseOutcome::Udp => "udp",
    }
}

fn conn_total(c: &ConnTotal) -> run::ConnTotal {
    run::ConnTotal {
        id: c.id,
        sent_bytes: c.sent_bytes,
        received_bytes: c.received_bytes,
        sent_bps: c.sent_bps,
        received_bps: c.received_bps,
        close: close(c.close).into(),
        error: c.error.clone(),
        drained_bytes: c.drained_bytes,
        zero_share: c.zero_share,
    }
}

fn udp(u: &UdpSummary) -> run::Udp {
    run::Udp {
        datagram_bytes: u.datagram_bytes,
        offered_bps: u.offered_bps,
        datagrams_sent: u.datagrams_sent,
        datagrams_received: u.datagrams_received,
        send_errors: u.send_errors,
        first_send_error: u.first_send_error.clone(),
        echo: u.echo.as_ref().map(echo),
        reply_cap_per_sec: u.reply_cap_per_sec,
        replies_stopped_at: u.replies_stopped_at,
        largest_reply_bytes: u.largest_reply_bytes,
        oversized_replies: u.oversized_replies,
    }
}

fn echo(e: &EchoFigures) -> run::Echo {
    run::Echo {
        sent: e.sent,
        received: e.received,
        lost: e.lost,
        duplicates: e.duplicates,
        reordered: e.reordered,
        unknown: e.unknown,
        rtt: e.rtt.as_ref().map(rtt),
    }
}

fn rtt(d: &DelayStats) -> run::Rtt {
    run::Rtt {
        samples: d.samples,
        min_ms: d.min_ms,
        mean_ms: d.mean_ms,
        median_ms: d.median_ms,
        p90_ms: d.p90_ms,
        p99_ms: d.p99_ms,
        p999_ms: d.p999_ms,
        max_ms: d.max_ms,
        stddev_ms: d.stddev_ms,
        variance_ms2: d.variance_ms2,
    }
}

/// One count's row: its mean, its maximum and every run.
pub fn ramp_row(r: &RampRow) -> sr::RampRow {
    sr::RampRow {
        mean: r.mean,
        max: Some(r.max),
        runs: r.runs.clone(),
    }
}

pub fn storm(r: &StormReport) -> st::Storm {
    st::Storm {
        seconds: r.seconds,
        concurrency: r.concurrency,
        attempts: r.attempts,
        accepted: r.accepted,
        refused: r.refused,
        timed_out: r.timed_out,
        failed: r.failed,
        accepted_per_second: r.accepted_per_second,
        connect_ms_median: r.connect_ms_median,
        connect_ms_p99: r.connect_ms_p99,
        connect_ms_max: r.connect_ms_max,
        partial: r.partial,
    }
}

pub fn overload(r: &OverloadReport) -> so::Overload {
    so::Overload {
        attempted: r.attempted,
        held: r.held,
        dropped_after_accept: r.dropped_after_accept,
        refusal: r.refusal,
        first_error: r.first_error.clone(),
        held_seconds: r.held_seconds,
        closed_clean: r.closed_clean,
        closed_reset: r.closed_reset,
        closed_timeout: r.closed_timeout,
        recovery_seconds: r.recovery_seconds,
        partial: r.partial,
    }
}

/// The documents stay what they were when the stress types were serialised as they are:
/// each model that is still a mapping writes the stats type's JSON, key for key, and every
/// part (mapped, or a stats type written as it is) matches its recorded bytes.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::stress_table::tests::sample_run;
    use serde_json::Value;
    use sonde_schema::to_value;
    use sonde_stats::stress::model::StressEvent;
    use sonde_stats::stress::overload::Refusal;
    use sonde_stats::stress::ramp::{RampStep, RampUdp};
    use sonde_stats::stress::steps::LoadStep;

    fn same<T: serde::Serialize, M: serde::Serialize>(name: &str, stats: &T, model: &M) {
        crate::snapshot::check(name, model);
        let (a, b) = (
            serde_json::to_value(stats).unwrap_or(Value::Null),
            to_value(model),
        );
        assert_eq!(b, a, "the model's JSON differs from the stats type's");
    }

    #[test]
    fn every_event_of_a_run_is_written_key_for_key() {
        let mut seen = 0;
        for ev in sample_run() {
            match &ev {
                StressEvent::Start(s) => same("stress_model_1", s, &start(s)),
                StressEvent::Connected(c) => same("stress_model_2", c, &connect(c)),
                StressEvent::Interval(i) => same("stress_model_3", i, &interval(i)),
                StressEvent::End(e) => same("stress_model_4", e, &end(e)),
                StressEvent::Note(_) | StressEvent::Error(_) => continue,
            }
            seen += 1;
        }
        assert_eq!(seen, 4, "start, connect, an interval and the end");
    }

    #[test]
    fn a_udp_end_with_echo_and_round_trips_is_written_key_for_key() {
        let Some(StressEvent::End(mut s)) = sample_run()
            .into_iter()
            .find(|e| matches!(e, StressEvent::End(_)))
        else {
            panic!("the sample run has an end");
        };
        s.connections[0].close = CloseOutcome::Udp;
        s.udp = Some(Box::new(UdpSummary {
            datagram_bytes: 512,
            offered_bps: 1e6,
            datagrams_sent: 244,
            datagrams_received: 240,
            send_errors: 1,
            first_send_error: Some("refused".into()),
            echo: Some(EchoFigures {
                sent: 244,
                received: 240,
                lost: 4,
                duplicates: 1,
                reordered: 2,
                unknown: 0,
                rtt: Some(DelayStats {
                    samples: 240,
                    min_ms: 0.1,
                    median_ms: 0.2,
                    max_ms: 1.5,
                    ..DelayStats::default()
                }),
            }),
            reply_cap_per_sec: Some(100.0),
            replies_stopped_at: None,
            largest_reply_bytes: 512,
            oversized_replies: 0,
        }));
        same("stress_model_5", &s, &end(&s));
        assert_eq!(to_value(&end(&s))["udp"]["echo"]["rtt"]["max_ms"], 1.5);
    }

    #[test]
    fn ramp_steps_storms_and_overloads_are_written_key_for_key() {
        let tcp = RampStep {
            connections: 8,
            opened: 7,
            sent_bps: 94e6,
            received_bps: 0.0,
            fairness_sent: Some(0.99),
            fairness_received: None,
            zero_share_worst: None,
            closed_clean: Some(7),
            udp: None,
        };
        let udp = RampStep {
            closed_clean: None,
            udp: Some(RampUdp {
                requests: 244,
                replies: 220,
                loss_percent: Some(9.8),
                send_errors: 0,
            }),
            ..tcp
        };
        crate::snapshot::check("stress_model_6", &tcp);
        crate::snapshot::check("stress_model_7", &udp);
        let row = RampRow::of(vec![
            tcp,
            RampStep {
                sent_bps: 96e6,
                ..tcp
            },
        ])
        .unwrap_or_else(|| unreachable!());
        let written = to_value(&ramp_row(&row));
        crate::snapshot::check("stress_model_12", &written);
        assert_eq!(written["sent_bps"], 95e6, "{written}");
        assert_eq!(written["max"]["sent_bps"], 96e6, "{written}");
        assert_eq!(written["runs"][0], to_value(&tcp), "{written}");
        let step = LoadStep {
            offered_bps: 1e7,
            achieved_bps: Some(9.9e6),
            loss_percent: None,
            retransmits: Some(3),
            server_cpu_percent: None,
            client_cpu_percent: Some(2.5),
            seconds: 3.0,
            error: Some("refused".into()),
            device_load: None,
        };
        crate::snapshot::check("stress_model_8", &step);
        let probed = LoadStep {
            device_load: Some(sonde_stats::stress::steps::DeviceLoad {
                value: None,
                exit_status: Some(2),
                error: Some("load probe exited with status 2".into()),
            }),
            ..step.clone()
        };
        crate::snapshot::check("stress_model_9", &probed);
        let storm_report = StormReport {
            seconds: 2.0,
            concurrency: 4,
            attempts: 10,
            accepted: 9,
            refused: 1,
            timed_out: 0,
            failed: 0,
            accepted_per_second: 4.5,
            connect_ms_median: Some(0.05),
            connect_ms_p99: None,
            connect_ms_max: Some(0.3),
            partial: true,
        };
        same("stress_model_10", &storm_report, &storm(&storm_report));
        for refusal in [
            Refusal::Reset,
            Refusal::Timeout,
            Refusal::Other,
            Refusal::None,
        ] {
            let r = OverloadReport {
                attempted: 256,
                held: 50,
                dropped_after_accept: 2,
                refusal,
                first_error: Some("no buffer space".into()),
                held_seconds: 1.0,
                closed_clean: 48,
                closed_reset: 1,
                closed_timeout: 1,
                recovery_seconds: Some(0.02),
                partial: false,
            };
            same(&format!("stress_model_11_{refusal:?}"), &r, &overload(&r));
        }
    }

    #[test]
    fn every_close_is_spelled_as_the_stats_type_spells_it() {
        for c in [
            CloseOutcome::Clean,
            CloseOutcome::Reset,
            CloseOutcome::Timeout,
            CloseOutcome::FailedDuringRun,
            CloseOutcome::Udp,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap_or(Value::Null), close(c));
        }
        for t in [Transport::Tcp, Transport::Udp] {
            assert_eq!(serde_json::to_value(t).unwrap_or(Value::Null), transport(t));
        }
    }
}
