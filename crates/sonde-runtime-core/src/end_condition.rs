//! When a client's test is over: the duration, the `-n`/`-k` budget both ways, or a receive
//! target that lost datagrams will never complete. Pure (time and counters are arguments), so
//! the sonde and iperf3 clients share one rule and it is tested with fixed numbers.

use sonde_proto::message::TestParams;
use sonde_stats::model::Direction;

/// Why the test ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ending {
    /// `-t` (plus the omit period) elapsed.
    Time,
    /// Everything `-n` / `-k` asked for was sent and received.
    Target,
    /// Nothing arrived for `quiet_secs` before the receive target: the rest was lost.
    Quiet { quiet_secs: f64 },
}

impl Ending {
    /// A note for the user when the ending needs explaining.
    pub fn note(&self) -> Option<String> {
        match self {
            Ending::Quiet { quiet_secs } => Some(format!(
                "no data for {quiet_secs:.1} s before the -n/-k target was reached (datagrams lost); ending the test"
            )),
            _ => None,
        }
    }
}

/// The end rule of one test, fed the elapsed time and counters as the test runs.
#[derive(Debug, Clone)]
pub struct EndCondition {
    time_limit: Option<f64>,
    /// Bytes this end must receive (server senders hold the same budget).
    recv_target: Option<u64>,
    /// This end's senders hold a `-n`/`-k` budget.
    local_budget: bool,
    /// Quiet time after which a receive target is given up.
    quiet_limit: f64,
    last_rx: u64,
    last_change: f64,
}

impl EndCondition {
    pub fn new(p: &TestParams) -> Self {
        let target = if !p.bytes.is_zero() {
            p.bytes.bytes()
        } else {
            p.blocks.saturating_mul(p.length.bytes())
        };
        // Several datagram periods of silence, and never less than 2 s.
        let period = if !p.rate.is_unlimited() {
            p.length.bytes() as f64 * 8.0 / p.rate.bits_per_sec() as f64
        } else {
            0.0
        };
        Self {
            time_limit: (p.duration_secs > 0.0).then_some(p.duration_secs + p.omit_secs),
            recv_target: (p.direction != Direction::Upload && target > 0).then_some(target),
            local_budget: p.direction != Direction::Reverse && target > 0,
            quiet_limit: (8.0 * period).max(2.0),
            last_rx: 0,
            last_change: 0.0,
        }
    }

    /// The test second at which time ends the test (`-t` plus the omit period), if timed.
    pub fn deadline(&self) -> Option<f64> {
        self.time_limit
    }

    /// Whether the test is over at `elapsed` seconds, with `received` bytes received so far
    /// and `budget_done` telling whether this end's senders used up their budget.
    pub fn check(&mut self, elapsed: f64, received: u64, budget_done: bool) -> Option<Ending> {
        if self.time_limit.is_some_and(|t| elapsed >= t) {
            return Some(Ending::Time);
        }
        if self.time_limit.is_some() {
            return None;
        }
        if received != self.last_rx {
            (self.last_rx, self.last_change) = (received, elapsed);
        }
        let sent_all = !self.local_budget || budget_done;
        let received_all = self.recv_target.is_none_or(|t| received >= t);
        if sent_all && received_all {
            return Some(Ending::Target);
        }
        if self.recv_target.is_some() && elapsed - self.last_change > self.quiet_limit {
            return Some(Ending::Quiet {
                quiet_secs: self.quiet_limit,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::model::Protocol;

    fn params(direction: Direction, duration: f64, bytes: u64) -> TestParams {
        TestParams {
            protocol: Protocol::Udp,
            direction,
            duration_secs: duration,
            bytes: sonde_stats::units::Size::from_bytes(bytes),
            length: sonde_stats::units::Size::from_bytes(1000),
            rate: sonde_stats::units::Rate::from_bits_per_sec(8_000), // one datagram per second: the quiet limit becomes 8 s
            omit_secs: 1.0,
            ..TestParams::default()
        }
    }

    #[test]
    fn time_limit_includes_omit() {
        let mut e = EndCondition::new(&params(Direction::Upload, 10.0, 0));
        assert_eq!(e.check(10.5, 0, true), None);
        assert_eq!(e.check(11.0, 0, false), Some(Ending::Time));
    }

    #[test]
    fn upload_budget_ends_when_sent() {
        let mut e = EndCondition::new(&params(Direction::Upload, 0.0, 5000));
        assert_eq!(e.check(1.0, 0, false), None);
        assert_eq!(e.check(2.0, 0, true), Some(Ending::Target));
    }

    #[test]
    fn bidir_needs_both_sent_and_received() {
        let mut e = EndCondition::new(&params(Direction::Bidir, 0.0, 5000));
        assert_eq!(e.check(1.0, 5000, false), None);
        assert_eq!(e.check(1.5, 4999, true), None);
        assert_eq!(e.check(2.0, 5000, true), Some(Ending::Target));
    }

    #[test]
    fn reverse_gives_up_after_the_quiet_limit() {
        let mut e = EndCondition::new(&params(Direction::Reverse, 0.0, 5000));
        assert_eq!(e.check(1.0, 1000, false), None);
        assert_eq!(e.check(8.9, 1000, false), None);
        let end = e.check(9.1, 1000, false);
        assert_eq!(end, Some(Ending::Quiet { quiet_secs: 8.0 }));
        assert!(end
            .and_then(|x| x.note())
            .is_some_and(|n| n.contains("8.0 s")));
    }

    #[test]
    fn quiet_limit_is_at_least_two_seconds() {
        let mut p = params(Direction::Reverse, 0.0, 5000);
        p.rate = sonde_stats::units::Rate::UNLIMITED;
        let mut e = EndCondition::new(&p);
        assert_eq!(e.check(1.9, 0, false), None);
        assert_eq!(
            e.check(2.1, 0, false),
            Some(Ending::Quiet { quiet_secs: 2.0 })
        );
    }
}
