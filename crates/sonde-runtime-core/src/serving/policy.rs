//! What a server allows, decided once for sonde's and iperf3's clients: its limits on a test
//! (`--max-duration`, `--max-bitrate`, the congestion controls it has), how long a test may run
//! before the server gives up on its client, and the `--max-clients` slots.
//!
//! The checks are pure (parameters in, a [`Refusal`] out) so each limit is unit-tested without
//! a socket; each server only maps a refusal to its protocol's code (sonde's `RefuseCode`,
//! iperf3's error number). A client slot is an RAII guard, so a session that ends on any path,
//! early return or unwinding included, gives its slot back.

use sonde_proto::message::{RefuseCode, TestParams};
use sonde_stats::model::Direction;
use sonde_stats::units::{format_bitrate, Rate};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Extra time a test may run beyond its duration before the server gives up on the client.
pub const WATCHDOG_SLACK_SECS: f64 = 30.0;

/// The server's limits on one test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Limits {
    pub max_duration_secs: Option<f64>,
    pub max_bitrate: Option<Rate>,
}

/// Why a test is refused, with a message for the user.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// `--max-clients` slots are all taken.
    Busy { max: usize },
    /// The test would run longer than `--max-duration`, or has no time bound under it.
    Duration { message: String },
    /// The test's total rate exceeds `--max-bitrate`, or is unlimited under it.
    Bitrate { message: String },
    /// The server's senders cannot use the asked congestion control.
    Congestion { message: String },
    /// The client's address started more tests than `--max-test-rate` allows.
    SourceRate { message: String },
    /// The client's address holds `--max-sessions-per-source` control connections already.
    SourceBusy { message: String },
}

impl Refusal {
    /// The message for the user (and the server's log).
    pub fn message(&self) -> String {
        match self {
            Refusal::Busy { max } => {
                format!("server is busy: it serves at most {max} clients at once (--max-clients)")
            }
            Refusal::Duration { message }
            | Refusal::Bitrate { message }
            | Refusal::Congestion { message }
            | Refusal::SourceRate { message }
            | Refusal::SourceBusy { message } => message.clone(),
        }
    }

    /// sonde's refusal code.
    pub fn code(&self) -> RefuseCode {
        match self {
            Refusal::Busy { .. } => RefuseCode::MaxClients,
            Refusal::Duration { .. } => RefuseCode::MaxDuration,
            Refusal::Bitrate { .. } => RefuseCode::MaxBitrate,
            Refusal::Congestion { .. } => RefuseCode::Congestion,
            Refusal::SourceRate { .. } | Refusal::SourceBusy { .. } => RefuseCode::Busy,
        }
    }
}

/// Checks a requested test against the server's limits. `server_congestion` lists the
/// congestion controls this host offers (empty when unknown: then any is let through).
pub fn check_test(
    limits: &Limits,
    p: &TestParams,
    server_congestion: &[String],
) -> Option<Refusal> {
    if let Some(max) = limits.max_duration_secs {
        let total = p.duration_secs + p.omit_secs;
        if p.duration_secs == 0.0 {
            return Some(Refusal::Duration {
                message: format!("server allows tests of at most {max} s (--max-duration); byte- or block-limited tests have no time bound, add -t"),
            });
        }
        if total > max {
            return Some(Refusal::Duration {
                message: format!(
                    "requested {total} s exceeds the server's limit of {max} s (--max-duration)"
                ),
            });
        }
    }
    if let Some(max) = limits.max_bitrate.map(Rate::bits_per_sec) {
        let dirs = if p.direction == Direction::Bidir {
            2
        } else {
            1
        };
        let total = p
            .rate
            .bits_per_sec()
            .saturating_mul(u64::from(p.parallel))
            .saturating_mul(dirs);
        if p.rate.is_unlimited() || total > max {
            let asked = if p.rate.is_unlimited() {
                "an unlimited rate".to_string()
            } else {
                format_bitrate(total as f64)
            };
            return Some(Refusal::Bitrate {
                message: format!("requested {asked} exceeds the server's limit of {} (--max-bitrate); use -b with streams x rate <= the limit", format_bitrate(max as f64)),
            });
        }
    }
    if let Some(algo) = &p.congestion {
        let server_sends = p.direction != Direction::Upload;
        if server_sends
            && !server_congestion.is_empty()
            && !server_congestion.iter().any(|a| a == algo)
        {
            return Some(Refusal::Congestion {
                message: format!(
                    "congestion control \"{algo}\" is not available on the server (available: {})",
                    server_congestion.join(", ")
                ),
            });
        }
    }
    None
}

/// Seconds after its start at which the server gives up on a test whose client never ended
/// it: the duration plus omit plus [`WATCHDOG_SLACK_SECS`]; for byte- or block-limited tests,
/// `--max-duration` if set, else never.
pub fn watchdog_secs(limits: &Limits, p: &TestParams) -> f64 {
    match (p.duration_secs > 0.0, limits.max_duration_secs) {
        (true, _) => p.duration_secs + p.omit_secs + WATCHDOG_SLACK_SECS,
        (false, Some(m)) => m,
        (false, None) => f64::INFINITY,
    }
}

/// One control connection's place among the server's clients; given back on drop.
#[derive(Debug)]
pub struct ClientSlot<'a> {
    active: &'a AtomicUsize,
    over_limit: bool,
}

impl<'a> ClientSlot<'a> {
    /// Takes a slot in `active`; over the limit when more than `max` are then taken (the
    /// session still runs, to tell its client why it is refused).
    pub fn take(active: &'a AtomicUsize, max: Option<usize>) -> Self {
        let now = active.fetch_add(1, Ordering::SeqCst) + 1;
        Self {
            active,
            over_limit: max.is_some_and(|m| now > m),
        }
    }

    /// Whether this connection is beyond `--max-clients` and must be refused.
    pub fn over_limit(&self) -> bool {
        self.over_limit
    }
}

impl Drop for ClientSlot<'_> {
    fn drop(&mut self) {
        self.active.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::model::Protocol;

    fn udp(secs: f64, bitrate: u64, parallel: u32, direction: Direction) -> TestParams {
        TestParams {
            protocol: Protocol::Udp,
            duration_secs: secs,
            rate: sonde_stats::units::Rate::from_bits_per_sec(bitrate),
            parallel,
            direction,
            ..TestParams::default()
        }
    }

    #[test]
    fn duration_limit_counts_omit_and_refuses_unbounded_tests() {
        let l = Limits {
            max_duration_secs: Some(10.0),
            ..Limits::default()
        };
        assert_eq!(
            check_test(&l, &udp(10.0, 1, 1, Direction::Upload), &[]),
            None
        );
        let mut p = udp(9.0, 1, 1, Direction::Upload);
        p.omit_secs = 2.0;
        let r = check_test(&l, &p, &[]).unwrap();
        assert_eq!(r.code(), RefuseCode::MaxDuration);
        assert!(r.message().contains("11 s exceeds"), "{}", r.message());
        let mut bytes = udp(0.0, 1, 1, Direction::Upload);
        bytes.bytes = sonde_stats::units::Size::from_bytes(1000);
        assert!(check_test(&l, &bytes, &[])
            .unwrap()
            .message()
            .contains("add -t"));
    }

    #[test]
    fn bitrate_limit_is_the_total_over_streams_and_directions() {
        let l = Limits {
            max_bitrate: Some(Rate::from_bits_per_sec(100_000_000)),
            ..Limits::default()
        };
        assert_eq!(
            check_test(&l, &udp(1.0, 25_000_000, 4, Direction::Upload), &[]),
            None
        );
        let r = check_test(&l, &udp(1.0, 25_000_000, 4, Direction::Bidir), &[]).unwrap();
        assert_eq!(r.code(), RefuseCode::MaxBitrate);
        assert!(r.message().contains("200 Mbit"), "{}", r.message());
        let unlimited = check_test(&l, &udp(1.0, 0, 1, Direction::Upload), &[]).unwrap();
        assert!(unlimited.message().contains("unlimited"));
    }

    #[test]
    fn congestion_is_checked_only_where_the_server_sends() {
        let mut p = udp(1.0, 1, 1, Direction::Upload);
        p.congestion = Some("bbr".into());
        let have = ["cubic".to_string(), "reno".to_string()];
        assert_eq!(check_test(&Limits::default(), &p, &have), None);
        p.direction = Direction::Reverse;
        let r = check_test(&Limits::default(), &p, &have).unwrap();
        assert_eq!(r.code(), RefuseCode::Congestion);
        assert!(r.message().contains("cubic, reno"));
        assert_eq!(check_test(&Limits::default(), &p, &[]), None);
    }

    #[test]
    fn watchdog_covers_the_test_with_slack() {
        let l = Limits::default();
        let mut p = udp(10.0, 1, 1, Direction::Upload);
        p.omit_secs = 2.0;
        assert_eq!(watchdog_secs(&l, &p), 42.0);
        p.duration_secs = 0.0;
        assert!(watchdog_secs(&l, &p).is_infinite());
        let capped = Limits {
            max_duration_secs: Some(60.0),
            ..l
        };
        assert_eq!(watchdog_secs(&capped, &p), 60.0);
    }

    #[test]
    fn client_slots_are_given_back_on_every_path() {
        let active = AtomicUsize::new(0);
        let a = ClientSlot::take(&active, Some(1));
        assert!(!a.over_limit());
        {
            let b = ClientSlot::take(&active, Some(1));
            assert!(b.over_limit());
            assert_eq!(active.load(Ordering::SeqCst), 2);
        }
        assert_eq!(active.load(Ordering::SeqCst), 1);
        let r = std::panic::catch_unwind(|| {
            let _c = ClientSlot::take(&active, None);
            panic!("a session that unwinds");
        });
        assert!(r.is_err());
        drop(a);
        assert_eq!(active.load(Ordering::SeqCst), 0);
    }
}
