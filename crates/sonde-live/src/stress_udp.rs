//! The UDP lines of the `sonde stress -u` summary: datagrams each way, echo loss, duplicates,
//! reordering and round trips, and what the client could tell about a reply cap.

use sonde_stats::stress::model::StressMode;
use sonde_stats::stress::udp::UdpSummary;
use sonde_stats::units::format_bitrate;

/// The summary's UDP lines, in order.
pub fn lines(mode: StressMode, u: &UdpSummary) -> Vec<String> {
    let mut out = vec![format!(
        "UDP: {} datagrams of {} bytes sent (offered {}), {} received, {} send errors{}",
        u.datagrams_sent,
        u.datagram_bytes,
        format_bitrate(u.offered_bps),
        u.datagrams_received,
        u.send_errors,
        u.first_send_error
            .as_deref()
            .map(|e| format!(" (first: {e})"))
            .unwrap_or_default()
    )];
    if let Some(e) = &u.echo {
        let pct = if e.sent > 0 {
            100.0 * e.lost as f64 / e.sent as f64
        } else {
            0.0
        };
        out.push(format!(
            "Echo: {} of {} answered, {} lost ({pct:.2} %), {} duplicates, {} reordered, {} not ours",
            e.received, e.sent, e.lost, e.duplicates, e.reordered, e.unknown
        ));
        match &e.rtt {
            Some(r) => out.push(format!(
                "Round trip: min {:.3} ms, median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                r.min_ms, r.median_ms, r.p90_ms, r.p99_ms, r.max_ms
            )),
            None => out.push("Round trip: no reply came back".into()),
        }
    }
    if u.oversized_replies > 0 {
        out.push(format!(
            "Amplification: {} of {} replies were larger than their request (largest {} bytes for {}-byte requests)",
            u.oversized_replies, u.datagrams_received, u.largest_reply_bytes, u.datagram_bytes
        ));
    }
    if mode.receives() {
        if let Some(cap) = u.reply_cap_per_sec {
            out.push(format!(
                "Replies levelled off at about {cap:.0}/s while requests went on: the server looks like it caps replies per source address (sonde services do: --udp-rate), or the path drops a steady share"
            ));
        }
        if let Some(t) = u.replies_stopped_at {
            out.push(format!(
                "Replies stopped at {t:.2} s while requests went on (a per-source cap, a crashed service or a broken path)"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::stress::udp::EchoFigures;

    #[test]
    fn echo_lines_say_loss_and_cap() {
        let u = UdpSummary {
            datagram_bytes: 512,
            offered_bps: 8e6,
            datagrams_sent: 1000,
            datagrams_received: 600,
            echo: Some(EchoFigures {
                sent: 1000,
                received: 600,
                lost: 400,
                ..EchoFigures::default()
            }),
            reply_cap_per_sec: Some(1000.0),
            ..UdpSummary::default()
        };
        let l = lines(StressMode::Echo, &u).join("\n");
        assert!(l.contains("400 lost (40.00 %)"), "{l}");
        assert!(l.contains("no reply came back"), "{l}");
        assert!(l.contains("about 1000/s"), "{l}");
        assert!(l.contains("8.00 Mbits/sec") || l.contains("8 Mbits"), "{l}");
        assert!(!l.contains("Amplification"), "{l}");
    }

    #[test]
    fn oversized_replies_are_named_amplification() {
        let u = UdpSummary {
            datagram_bytes: 512,
            datagrams_sent: 10,
            datagrams_received: 10,
            largest_reply_bytes: 1024,
            oversized_replies: 10,
            ..UdpSummary::default()
        };
        let l = lines(StressMode::Chargen, &u).join("\n");
        assert!(
            l.contains("Amplification: 10 of 10 replies were larger than their request (largest 1024 bytes for 512-byte requests)"),
            "{l}"
        );
    }
}
