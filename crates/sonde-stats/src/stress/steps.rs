//! `sonde stress --steps`: CPU load against offered rate, one row per step.
//!
//! Each step is a whole paced test against a sonde server at one offered rate. A row holds
//! what was offered, what arrived, the loss (UDP; TCP retransmits instead of losing), and the
//! CPU both ends spent: the client's own process, and the server process's as the server
//! measured and sent it (`cpu-load`). A server that does not report it leaves the column
//! empty, never zero: an absent figure must not read as an idle server.
//!
//! A device too small for a sonde server (one that runs only echo, discard and chargen) can
//! still tell its own load: `--load-probe` runs a command at each step's end and takes the
//! last number it printed as the device's load ([`DeviceLoad`], read by [`last_number`]). A
//! command that fails, times out or prints no number leaves the value empty with a note.

use crate::model::{Protocol, TestSummary};
use serde::{Deserialize, Serialize};

/// One step's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadStep {
    /// Offered rate over all streams, bits/s.
    pub offered_bps: f64,
    /// What the receiving end counted, bits/s (sum over streams of the client's direction).
    pub achieved_bps: Option<f64>,
    /// UDP: datagrams lost in percent; TCP: `None`.
    pub loss_percent: Option<f64>,
    /// TCP: the sender's retransmitted segments.
    pub retransmits: Option<u64>,
    /// The server process's user + system CPU time over the step, percent of one core; `None`
    /// when the server did not report it.
    pub server_cpu_percent: Option<f64>,
    /// This client process's user + system CPU over the step, percent of one core.
    pub client_cpu_percent: Option<f64>,
    /// Seconds the step ran.
    #[serde(default)]
    pub seconds: f64,
    /// Why the step did not complete.
    pub error: Option<String>,
    /// What the `--load-probe` command read at the step's end; `None` without one.
    pub device_load: Option<DeviceLoad>,
}

/// One reading of the device's load by the `--load-probe` command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceLoad {
    /// The last number the command printed on stdout; `None` when it failed, timed out or
    /// printed none (then `error` says which).
    pub value: Option<f64>,
    /// The command's exit status; `None` when it did not exit by itself (it could not start,
    /// was killed by a signal or at the timeout).
    pub exit_status: Option<i32>,
    /// Why there is no value.
    pub error: Option<String>,
}

/// The last decimal number in `text` (`42`, `-3`, `17.25`, `1e6`), read as the device's load:
/// a probe may print words around it (`load: 37 %`, `idle=1200 busy=8800`). `None` when it
/// holds none.
///
/// ```
/// use sonde_stats::stress::steps::last_number;
/// assert_eq!(last_number("idle=1200 busy=8800\n"), Some(8800.0));
/// assert_eq!(last_number("cpu: 37.5%"), Some(37.5));
/// assert_eq!(last_number("no figure"), None);
/// ```
pub fn last_number(text: &str) -> Option<f64> {
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | '+' | '-' | 'e' | 'E');
    text.split(|c: char| !numeric(c))
        .rev()
        .filter(|t| t.bytes().any(|b| b.is_ascii_digit()))
        .find_map(|t| t.parse::<f64>().ok().filter(|v| v.is_finite()))
}

impl LoadStep {
    /// The row of a step offered `offered_bps`, from the test's summary and the server's
    /// process load (percent), if it sent one.
    pub fn of(
        offered_bps: f64,
        s: Option<&TestSummary>,
        server_cpu_percent: Option<f64>,
        error: Option<String>,
    ) -> Self {
        let dir = s.and_then(|s| s.directions.first());
        let received = dir.and_then(|d| d.received.as_ref());
        let sent = dir.and_then(|d| d.sent.as_ref());
        let udp = s.is_some_and(|s| s.protocol == Protocol::Udp);
        Self {
            offered_bps,
            achieved_bps: received.map(|r| r.bits_per_second),
            loss_percent: if udp {
                received
                    .and_then(|r| r.udp_received.as_ref())
                    .map(|u| u.lost_percent)
            } else {
                None
            },
            retransmits: if udp {
                None
            } else {
                sent.and_then(|v| v.tcp.as_ref()).map(|t| t.retransmits)
            },
            server_cpu_percent,
            client_cpu_percent: s.filter(|s| !s.partial).map(|s| s.cpu_local.total),
            seconds: received.map_or(0.0, |r| r.end - r.start),
            error,
            device_load: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::last_number;

    #[test]
    fn the_last_number_printed_is_the_reading() {
        assert_eq!(last_number("42"), Some(42.0));
        assert_eq!(last_number("step 3: load 17.25 %\n"), Some(17.25));
        assert_eq!(last_number("1\n2\n3\n"), Some(3.0));
        assert_eq!(last_number("counter=-5"), Some(-5.0));
        assert_eq!(last_number("1e6 loops"), Some(1e6));
        // Words with an e, a lone sign or a dotted version are not numbers; what comes
        // before them still is.
        assert_eq!(last_number("7 idle - device"), Some(7.0));
        assert_eq!(last_number("12 v1.2.3"), Some(12.0));
    }

    #[test]
    fn text_without_a_number_reads_as_none() {
        assert_eq!(last_number(""), None);
        assert_eq!(last_number("   \n"), None);
        assert_eq!(last_number("error: device busy"), None);
        assert_eq!(last_number("inf nan - e"), None);
    }
}
