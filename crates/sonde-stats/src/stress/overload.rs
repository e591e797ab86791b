//! `sonde stress --overload`: how many connections a device holds before it refuses or stops
//! answering, how it refused, whether every held connection then closes cleanly, and how long
//! until it serves a new connection again. The report only; the runtime measures.

use serde::{Deserialize, Serialize};

/// How the device first refused a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// A reset to the SYN (RST).
    Reset,
    /// No SYN-ACK within the connect timeout.
    Timeout,
    /// Another error (the first one is in `first_error`).
    Other,
    /// It never refused: the limit asked (`-P`) was reached first.
    None,
}

/// The overload's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverloadReport {
    /// Connections attempted and held open at the peak.
    pub attempted: u32,
    pub held: u32,
    /// Connections the device accepted and then reset or closed by itself while they were
    /// held (not counted in `held`).
    pub dropped_after_accept: u32,
    pub refusal: Refusal,
    pub first_error: Option<String>,
    /// Seconds the connections were held.
    pub held_seconds: f64,
    /// How the held connections closed.
    pub closed_clean: u32,
    pub closed_reset: u32,
    pub closed_timeout: u32,
    /// Seconds from the end of the close until a new connection was accepted again (None: not
    /// within the wait).
    pub recovery_seconds: Option<f64>,
    pub partial: bool,
}

impl OverloadReport {
    /// True when the device held up: every held connection closed cleanly and it recovered.
    pub fn healthy(&self) -> bool {
        !self.partial
            && self.closed_reset == 0
            && self.closed_timeout == 0
            && self.recovery_seconds.is_some()
    }

    /// How the device refused, in words: "with a reset (RST)", ... (the command's lines and
    /// the report's table say it alike).
    pub fn refused_how(&self) -> String {
        match self.refusal {
            Refusal::Reset => "with a reset (RST)".to_string(),
            Refusal::Timeout => "by not answering (no SYN-ACK)".to_string(),
            Refusal::Other => format!(
                "with an error: {}",
                self.first_error.as_deref().unwrap_or("unknown")
            ),
            Refusal::None => "never (the -P limit came first)".to_string(),
        }
    }

    /// The report as lines.
    pub fn lines(&self) -> Vec<String> {
        let refusal = self.refused_how();
        vec![
            format!(
                "held {} of {} connections ({} more accepted, then dropped by the device); it refused {refusal}",
                self.held, self.attempted, self.dropped_after_accept
            ),
            format!(
                "after {:.1} s held, closed: {} clean, {} reset, {} timed out",
                self.held_seconds, self.closed_clean, self.closed_reset, self.closed_timeout
            ),
            match self.recovery_seconds {
                Some(s) => format!("a new connection was accepted {s:.3} s after the close"),
                None => "no new connection was accepted after the close".to_string(),
            },
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn healthy_only_when_all_closed_cleanly_and_it_recovered() {
        let mut r = OverloadReport {
            attempted: 120,
            held: 100,
            dropped_after_accept: 0,
            refusal: Refusal::Reset,
            first_error: None,
            held_seconds: 1.0,
            closed_clean: 100,
            closed_reset: 0,
            closed_timeout: 0,
            recovery_seconds: Some(0.01),
            partial: false,
        };
        assert!(r.healthy());
        assert!(r.lines()[0].contains("held 100 of 120") && r.lines()[0].contains("reset"));
        r.closed_reset = 1;
        assert!(!r.healthy());
        r.closed_reset = 0;
        r.recovery_seconds = None;
        assert!(!r.healthy());
        assert!(r.lines()[2].starts_with("no new connection"));
    }
}
