//! iperf3 results JSON to and from sonde's result model, and the server's record as the
//! text iperf3 prints (`--get-server-output`).
//!
//! sonde numbers streams 1..N; iperf3 1, 3, 4, ... ([`to_iperf3_id`]). A results message holds
//! one end's view of every stream; which end sends a stream follows from the test direction
//! (in bidir the client's sending streams come first, as in iperf3).

use sonde_proto::iperf3::results::{Results as WireResults, StreamResult};
use sonde_proto::iperf3::{from_iperf3_id, to_iperf3_id};
use sonde_proto::message::{PeerStream, Results, TestParams};
use sonde_stats::interval::bits_per_second;
use sonde_stats::model::{
    CpuUsage, EndView, Protocol, Role, StreamRole, TcpSenderSummary, TestStart, TestSummary,
    UdpReceiveStats,
};
use sonde_stats::udp_rx::lost_percent;
use sonde_stats::units::{format_bitrate, format_bytes};

/// This end's figures as an iperf3 results message.
pub fn local_results(
    local: &[PeerStream],
    protocol: Protocol,
    cpu: CpuUsage,
    congestion: Option<String>,
) -> WireResults {
    let sends = local.iter().any(|s| s.role == StreamRole::Sender);
    let sender_has_retransmits = match (sends, protocol) {
        (false, _) => -1,
        (true, Protocol::Tcp) if cfg!(target_os = "linux") => 1,
        (true, _) => 0,
    };
    let streams = local
        .iter()
        .map(|s| {
            let v = &s.view;
            let rx = v.udp_received;
            let sender = s.role == StreamRole::Sender;
            StreamResult {
                id: to_iperf3_id(s.id),
                bytes: v.bytes,
                retransmits: v.tcp.filter(|_| sender).map(|t| t.retransmits),
                jitter: rx.map_or(0.0, |r| r.jitter_ms / 1000.0),
                errors: Some(rx.map_or(0, |r| r.lost)),
                packets: Some(if sender {
                    v.udp_sent_packets.unwrap_or(0)
                } else {
                    rx.map_or(0, |r| r.packets)
                }),
                start_time: 0.0,
                end_time: (v.end - v.start).max(0.0),
            }
        })
        .collect();
    WireResults {
        cpu_util_total: cpu.total,
        cpu_util_user: cpu.user,
        cpu_util_system: cpu.system,
        sender_has_retransmits,
        congestion_used: congestion,
        streams,
        server_output_json: None,
        server_output_text: None,
    }
}

/// The peer's iperf3 results in sonde's model. `peer_role` is the role of the end that sent
/// them; `fallback_secs` is used as the span when the peer did not send stream times.
/// Streams with ids the test does not have are dropped.
pub fn peer_results(
    r: &WireResults,
    p: &TestParams,
    peer_role: Role,
    fallback_secs: f64,
) -> Results {
    let streams = r
        .streams
        .iter()
        .filter_map(|s| {
            let id = from_iperf3_id(s.id).filter(|i| *i <= p.stream_count())?;
            let peer_sends = (peer_role == Role::Client) == p.client_sends(id);
            let (start, mut end) = (s.start_time, s.end_time);
            if end <= start {
                end = start + fallback_secs;
            }
            let udp = p.protocol == Protocol::Udp;
            let view = EndView {
                start,
                end,
                bytes: s.bytes,
                bits_per_second: bits_per_second(s.bytes, end - start),
                tcp: (!udp && peer_sends).then(|| TcpSenderSummary {
                    retransmits: s.retransmits.unwrap_or(0),
                    ..Default::default()
                }),
                udp_sent_packets: (udp && peer_sends).then(|| s.packets.unwrap_or(0)),
                udp_received: (udp && !peer_sends).then(|| {
                    let packets = s.packets.unwrap_or(0);
                    let lost = s.errors.unwrap_or(0);
                    UdpReceiveStats {
                        packets,
                        lost,
                        lost_percent: lost_percent(lost, packets),
                        jitter_ms: s.jitter * 1000.0,
                        out_of_order: 0,
                        duplicates: 0,
                    }
                }),
            };
            let role = if peer_sends {
                StreamRole::Sender
            } else {
                StreamRole::Receiver
            };
            Some(PeerStream { id, role, view })
        })
        .collect();
    Results {
        process_load: None,
        cpu: CpuUsage {
            total: r.cpu_util_total,
            user: r.cpu_util_user,
            system: r.cpu_util_system,
        },
        congestion: r.congestion_used.clone(),
        streams,
        sent: Vec::new(),
        notes: Vec::new(),
        profile: Vec::new(),
    }
}

/// The server's record as text, for `--get-server-output` (iperf3 prints it after its own).
pub(super) fn text_output(start: &TestStart, s: &TestSummary) -> String {
    let mut out = format!(
        "sonde {} server: {} test from {}, cookie {}\n[ ID] Interval           Transfer     Bitrate\n",
        env!("CARGO_PKG_VERSION"),
        describe_start(start),
        start.remote,
        start.cookie
    );
    for d in &s.directions {
        for (view, what) in [(&d.sent, "sender"), (&d.received, "receiver")] {
            if let Some(v) = view {
                out.push_str(&format!(
                    "[SUM] {:.2}-{:.2} sec  {}  {}  {what}{}\n",
                    v.start,
                    v.end,
                    format_bytes(v.bytes),
                    format_bitrate(v.bits_per_second),
                    if d.client_sends {
                        ""
                    } else {
                        " (server to client)"
                    }
                ));
            }
        }
    }
    out
}

fn describe_start(s: &TestStart) -> String {
    format!(
        "{} {:?} x{}",
        s.protocol.as_upper(),
        s.direction,
        s.num_streams
    )
    .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_stats::model::Direction;

    fn params(direction: Direction, parallel: u32) -> TestParams {
        TestParams {
            protocol: Protocol::Udp,
            direction,
            parallel,
            duration_secs: 1.0,
            length: sonde_stats::units::Size::from_bytes(1448),
            rate: sonde_stats::units::Rate::from_bits_per_sec(1_000_000),
            ..TestParams::default()
        }
    }

    #[test]
    fn bidir_ids_and_roles_survive_a_round_trip() {
        let p = params(Direction::Bidir, 2);
        let view = |sender: bool| EndView {
            start: 0.0,
            end: 1.0,
            bytes: 1000,
            bits_per_second: 8000.0,
            tcp: None,
            udp_sent_packets: sender.then_some(10),
            udp_received: (!sender).then(|| UdpReceiveStats {
                packets: 10,
                lost: 1,
                lost_percent: 10.0,
                jitter_ms: 0.5,
                ..Default::default()
            }),
        };
        // The server receives streams 1, 2 and sends 3, 4.
        let local: Vec<PeerStream> = (1..=4)
            .map(|id| {
                let sender = !p.client_sends(id);
                PeerStream {
                    id,
                    role: if sender {
                        StreamRole::Sender
                    } else {
                        StreamRole::Receiver
                    },
                    view: view(sender),
                }
            })
            .collect();
        let wire = local_results(&local, Protocol::Udp, CpuUsage::default(), None);
        let ids: Vec<u32> = wire.streams.iter().map(|s| s.id).collect();
        assert_eq!(ids, vec![1, 3, 4, 5]);
        assert_eq!(wire.streams[0].errors, Some(1));
        assert!((wire.streams[0].jitter - 0.0005).abs() < 1e-12);
        let back = peer_results(&wire, &p, Role::Server, 1.0);
        assert_eq!(back.streams, local);
    }
}
