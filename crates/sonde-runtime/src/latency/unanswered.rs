//! Why a latency run's probes all went unanswered, in words a user can act on.
//!
//! A closed port answers at once ("port unreachable" for UDP, "connection refused" for TCP):
//! that is nothing listening, not a lossy path nor a key mismatch, and `sonde latency`,
//! `rrul` and `compare-ip` say so alike. Only a silent peer gets the key hint: a server
//! started with `--psk-file` drops untagged probes without a word.

use super::LatencyConfig;
use sonde_stats::latency::model::{LatencyMode, LatencySummary};

/// A family or phase whose probes all went unanswered and were not refused; a keyed server
/// drops probes without its key's tag, hence the hint.
pub const NO_ANSWER: &str = "no probe was answered (a server started with --psk-file answers \
                             only probes tagged with its key: give --psk-file with that key)";

/// `host:port`, with the brackets an IPv6 literal needs.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The refusal of a run none of whose probes was answered while the peer's host refused some
/// (`summary.loss.refused`): "port unreachable: nothing listens on UDP HOST:PORT" for UDP
/// probes and tcp-rr, "connection refused: nothing listens on TCP HOST:PORT" for
/// tcp-connect. None when a probe was answered or none was refused.
pub fn refused(cfg: &LatencyConfig, summary: &LatencySummary) -> Option<String> {
    if summary.loss.received > 0 || summary.loss.refused == 0 {
        return None;
    }
    let at = host_port(&cfg.host, cfg.port);
    Some(match cfg.mode {
        LatencyMode::TcpConnect | LatencyMode::TcpRr => {
            format!("connection refused: nothing listens on TCP {at}")
        }
        LatencyMode::Udp | LatencyMode::Icmp => format!(
            "port unreachable: nothing listens on UDP {at} (is `sonde server` running there?)"
        ),
    })
}

/// Why a run of UDP probes to a sonde server measured nothing: the refusal when the port is
/// closed, else [`NO_ANSWER`]. None when a probe was answered.
pub fn unanswered(cfg: &LatencyConfig, summary: &LatencySummary) -> Option<String> {
    if summary.rtt.is_some() || summary.loss.received > 0 {
        return None;
    }
    Some(refused(cfg, summary).unwrap_or_else(|| NO_ANSWER.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::latency::model::LossStats;

    fn summary(received: u64, refused: u64) -> LatencySummary {
        LatencySummary {
            seconds: 1.0,
            loss: LossStats {
                sent: 3,
                received,
                refused,
                ..LossStats::default()
            },
            rtt: None,
            rtt_histogram: None,
            jitter_ms: 0.0,
            ipdv: None,
            one_way: None,
            server_turnaround_us: None,
            schedule: None,
            rate_per_second: 0.0,
            partial: false,
            error: None,
        }
    }

    #[test]
    fn a_refused_udp_run_names_the_closed_host_and_port() {
        let cfg = LatencyConfig::udp("::1", 9);
        let why = unanswered(&cfg, &summary(0, 3)).unwrap();
        assert!(
            why.starts_with("port unreachable: nothing listens on UDP [::1]:9"),
            "{why}"
        );
    }

    #[test]
    fn a_refused_tcp_connect_says_connection_refused() {
        let mut cfg = LatencyConfig::udp("127.0.0.1", 1);
        cfg.mode = LatencyMode::TcpConnect;
        let why = refused(&cfg, &summary(0, 2)).unwrap();
        assert_eq!(
            why,
            "connection refused: nothing listens on TCP 127.0.0.1:1"
        );
    }

    #[test]
    fn a_silent_peer_gets_the_key_hint_and_an_answered_run_no_reason() {
        let cfg = LatencyConfig::udp("127.0.0.1", 5201);
        assert_eq!(unanswered(&cfg, &summary(0, 0)).as_deref(), Some(NO_ANSWER));
        assert_eq!(unanswered(&cfg, &summary(1, 2)), None);
        assert_eq!(refused(&cfg, &summary(1, 2)), None);
    }
}
