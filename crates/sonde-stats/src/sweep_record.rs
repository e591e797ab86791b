//! What a rate sweep measured: every step (offered, achieved, loss), each search's result and
//! each listed rate's row. The runtime fills these; the table, `-J` and the report render them.

use crate::sweep::{StepKind, Verdict};
use serde::{Deserialize, Serialize};

/// One direction of a sweep, as the CLI names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepDirection {
    /// The client sends.
    Up,
    /// The server sends (`-R`).
    Down,
    /// Both send at once, each at the offered rate.
    Bidir,
}

impl SweepDirection {
    /// The name as the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepDirection::Up => "up",
            SweepDirection::Down => "down",
            SweepDirection::Bidir => "bidir",
        }
    }

    /// The CLI's name.
    pub fn name(self) -> &'static str {
        match self {
            SweepDirection::Up => "up",
            SweepDirection::Down => "down",
            SweepDirection::Bidir => "bidir",
        }
    }
}

/// One short run of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// 1-based over the whole sweep.
    pub index: u32,
    /// Datagram (UDP) or write (TCP) length in bytes.
    pub length: u32,
    pub direction: SweepDirection,
    /// Why it ran: part of a search, a confirmation, or a listed rate.
    pub kind: StepRole,
    /// Offered rate, bit/s of payload per direction.
    pub offered_bps: u64,
    /// What the receiver counted, bit/s of payload (the lower direction's with bidir).
    pub achieved_bps: f64,
    /// UDP: datagrams lost, percent of those sent (the worse direction's with bidir).
    pub loss_percent: Option<f64>,
    /// UDP: datagrams expected and lost at the receiver (summed over directions).
    pub packets: Option<u64>,
    pub lost: Option<u64>,
    /// Bits per second the sender put out, payload (the lower direction's with bidir), when
    /// the summary has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_bps: Option<f64>,
    /// Searches: whether the loss stayed within the limit.
    pub passed: Option<bool>,
    /// Searches: the step lost too little to fail but its sender fell short of the offered
    /// rate, so the same rate runs again (`sonde_stats::sweep::SENDER_SHORT_RERUNS`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
    /// Rate lists: the step's sender still fell short of the offered rate after its reruns,
    /// with the receiver getting what was sent (`sonde_stats::sweep::listed_step_sender_short`):
    /// its achieved rate is the host's, so it does not judge the knee.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sender_short: bool,
    /// Wall-clock seconds of the step, set-up included.
    pub seconds: f64,
}

/// Why a step ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepRole {
    Search,
    Confirm,
    /// A rate of `-b LIST`.
    Listed,
}

impl StepRole {
    /// The name as the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StepRole::Search => "search",
            StepRole::Confirm => "confirm",
            StepRole::Listed => "listed",
        }
    }
}

impl From<StepKind> for StepRole {
    fn from(k: StepKind) -> Self {
        match k {
            StepKind::Search => StepRole::Search,
            StepKind::Confirm => StepRole::Confirm,
        }
    }
}

/// The result of one search (one length, one direction).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub length: u32,
    pub direction: SweepDirection,
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Loss at the rate found: the worst of the runs there.
    pub loss_percent: Option<f64>,
    /// Steps this search ran (confirmations included).
    pub steps: u32,
    /// Wall-clock seconds of the search.
    pub seconds: f64,
}

impl SearchResult {
    /// The rate to show: the confirmed one, or the best unconfirmed one at the step bound.
    pub fn rate_bps(&self) -> Option<u64> {
        match self.verdict {
            Verdict::Found { rate_bps } | Verdict::AtMaxRate { rate_bps } => Some(rate_bps),
            Verdict::StepLimit { best_bps } | Verdict::SenderLimited { best_bps, .. } => best_bps,
            Verdict::BelowFloor => None,
        }
    }
}

/// Datagrams (or writes) per second that `bps` of payload is at `length` bytes each.
pub fn per_second(bps: f64, length: u32) -> f64 {
    if length == 0 {
        return 0.0;
    }
    bps / (f64::from(length) * 8.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datagrams_per_second_at_payload() {
        assert_eq!(per_second(8_000.0 * 1448.0 * 8.0, 1448), 8_000.0);
        assert_eq!(per_second(1.0, 0), 0.0);
    }

    #[test]
    fn result_rate_follows_the_verdict() {
        let r = |verdict| SearchResult {
            length: 64,
            direction: SweepDirection::Up,
            verdict,
            loss_percent: None,
            steps: 1,
            seconds: 1.0,
        };
        assert_eq!(r(Verdict::Found { rate_bps: 5 }).rate_bps(), Some(5));
        assert_eq!(r(Verdict::AtMaxRate { rate_bps: 6 }).rate_bps(), Some(6));
        assert_eq!(r(Verdict::BelowFloor).rate_bps(), None);
        assert_eq!(
            r(Verdict::StepLimit { best_bps: Some(3) }).rate_bps(),
            Some(3)
        );
    }
}
