//! Why a latency run's probes all went unanswered, in words a user can act on.
//!
//! A closed port answers at once ("port unreachable" for UDP, "connection refused" for TCP):
//! that is nothing listening, not a lossy path nor a key mismatch, and `sonde latency`,
//! `rrul` and `compare-ip` say so alike. Only a silent peer gets the key hint: a server
//! started with `--psk-file` drops untagged probes without a word.

use super::LatencyConfig;
use sonde_stats::latency::model::{LatencyMode, LossStats};

/// `host:port`, with the brackets an IPv6 literal needs.
pub fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The refusal of probes none of which was answered while the peer's host refused some
/// (`loss.refused`): "port unreachable: nothing listens on UDP HOST:PORT" for UDP probes,
/// "connection refused: nothing listens on TCP HOST:PORT" over TCP.
fn refused(cfg: &LatencyConfig, loss: &LossStats) -> Option<String> {
    if loss.received > 0 || loss.refused == 0 {
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

/// What a silent peer (nothing answered, nothing refused) may be, for UDP probes to a sonde
/// server: a keyed server drops probes without its key's tag without a word, so the hint
/// depends on whether this run gave a key (`--psk-file`).
fn silent_hint(cfg: &LatencyConfig) -> &'static str {
    match (cfg.mode, cfg.psk.is_some()) {
        (LatencyMode::Udp, false) => {
            " (is `sonde server` running there, and is UDP port open? A server started \
             with --psk-file answers only probes tagged with its key: give --psk-file)"
        }
        (LatencyMode::Udp, true) => {
            " (is `sonde server` running there, and is UDP port open? A server with \
             another --psk-file key drops the probes silently)"
        }
        _ => "",
    }
}

/// Why probes of `cfg` whose counts are `loss` measured nothing: "no probe was answered",
/// then the refusal when the peer's host refused them (a closed port), else the hint for a
/// silent peer (psk- and mode-aware). None when a probe was answered. `sonde latency`,
/// `rrul` and `compare-ip` (per family, and over a family's size rows) all say it so.
pub fn unanswered(cfg: &LatencyConfig, loss: &LossStats) -> Option<String> {
    if loss.received > 0 {
        return None;
    }
    Some(match refused(cfg, loss) {
        Some(why) => format!("no probe was answered: {why}"),
        None => format!("no probe was answered{}", silent_hint(cfg)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(received: u64, refused: u64) -> LossStats {
        LossStats {
            sent: 3,
            received,
            refused,
            ..LossStats::default()
        }
    }

    #[test]
    fn a_refused_udp_run_names_the_closed_host_and_port() {
        let cfg = LatencyConfig::udp("::1", 9);
        let why = unanswered(&cfg, &summary(0, 3)).unwrap();
        assert!(
            why.starts_with(
                "no probe was answered: port unreachable: nothing listens on UDP [::1]:9"
            ),
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
        let why = unanswered(&cfg, &summary(0, 0)).unwrap();
        assert!(why.starts_with("no probe was answered ("), "{why}");
        assert!(why.contains("give --psk-file"), "{why}");
        assert_eq!(unanswered(&cfg, &summary(1, 2)), None);
        assert_eq!(refused(&cfg, &summary(1, 2)), None);
    }

    /// Regression: compare-ip and rrul said "give --psk-file with that key" to a user who
    /// had given one; the hint now follows the run's own key.
    #[test]
    fn a_silent_peer_of_a_keyed_run_is_not_told_to_give_a_key() {
        let mut cfg = LatencyConfig::udp("127.0.0.1", 5201);
        cfg.psk = Some(sonde_proto::psk::Psk::from_file_bytes(&[7; 32]).unwrap());
        let why = unanswered(&cfg, &summary(0, 0)).unwrap();
        assert!(why.contains("another --psk-file key"), "{why}");
        assert!(!why.contains("give --psk-file"), "{why}");
    }

    /// A silent peer over TCP gets no UDP hint; a refused one says so after the same lead.
    #[test]
    fn every_mode_leads_with_no_probe_was_answered() {
        let mut cfg = LatencyConfig::udp("127.0.0.1", 1);
        cfg.mode = LatencyMode::TcpRr;
        assert_eq!(
            unanswered(&cfg, &summary(0, 0)).as_deref(),
            Some("no probe was answered")
        );
        assert_eq!(
            unanswered(&cfg, &summary(0, 3)).as_deref(),
            Some("no probe was answered: connection refused: nothing listens on TCP 127.0.0.1:1")
        );
    }
}
