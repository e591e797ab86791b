//! Builds the final [`TestSummary`] from this end's stream views and the peer's results.

use sonde_proto::message::{PeerStream, Results, TestParams};
use sonde_stats::model::{
    CpuUsage, Direction, DirectionSummary, EndView, Role, StreamRole, StreamSummary, TestSummary,
};
use sonde_stats::sum::sum_end_views;

/// Everything that goes into a summary.
pub struct SummaryInput<'a> {
    pub role: Role,
    pub params: &'a TestParams,
    pub local: &'a [PeerStream],
    pub peer: Option<&'a Results>,
    pub cpu_local: CpuUsage,
    pub local_congestion: Option<String>,
    pub error: Option<String>,
}

/// Merges both ends' views per stream and sums them per direction.
pub fn build(input: SummaryInput<'_>) -> TestSummary {
    let p = input.params;
    let peer_streams: &[PeerStream] = input.peer.map(|r| r.streams.as_slice()).unwrap_or(&[]);
    let find = |set: &[PeerStream], id: u32, role: StreamRole| -> Option<EndView> {
        set.iter()
            .find(|s| s.id == id && s.role == role)
            .map(|s| s.view.clone())
    };
    let streams: Vec<StreamSummary> = (1..=p.stream_count())
        .map(|id| {
            let client_sends = p.client_sends(id);
            let local_sends = (input.role == Role::Client) == client_sends;
            let (sender, receiver) = if local_sends {
                (
                    find(input.local, id, StreamRole::Sender),
                    find(peer_streams, id, StreamRole::Receiver),
                )
            } else {
                (
                    find(peer_streams, id, StreamRole::Sender),
                    find(input.local, id, StreamRole::Receiver),
                )
            };
            StreamSummary {
                id,
                client_sends,
                sender,
                receiver,
            }
        })
        .collect();
    let directions = [true, false]
        .into_iter()
        .filter(|cs| streams.iter().any(|s| s.client_sends == *cs))
        .map(|cs| {
            let pick = |f: fn(&StreamSummary) -> Option<&EndView>| {
                let views: Vec<&EndView> = streams
                    .iter()
                    .filter(|s| s.client_sends == cs)
                    .filter_map(f)
                    .collect();
                sum_end_views(&views)
            };
            DirectionSummary {
                client_sends: cs,
                sent: pick(|s| s.sender.as_ref()),
                received: pick(|s| s.receiver.as_ref()),
            }
        })
        .collect();
    let peer_cong = input.peer.and_then(|r| r.congestion.clone());
    let local_sends_any = streams
        .iter()
        .any(|s| (input.role == Role::Client) == s.client_sends);
    let (sender_congestion, receiver_congestion) = match (p.direction, local_sends_any) {
        (Direction::Bidir, _) | (_, true) => (input.local_congestion.clone(), peer_cong),
        _ => (peer_cong, input.local_congestion.clone()),
    };
    TestSummary {
        role: input.role,
        protocol: p.protocol,
        direction: p.direction,
        streams,
        directions,
        cpu_local: input.cpu_local,
        cpu_remote: input.peer.map(|r| r.cpu),
        sender_congestion: if p.protocol == sonde_stats::model::Protocol::Tcp {
            sender_congestion
        } else {
            None
        },
        receiver_congestion: if p.protocol == sonde_stats::model::Protocol::Tcp {
            receiver_congestion
        } else {
            None
        },
        partial: input.error.is_some() || input.peer.is_none(),
        error: input.error,
    }
}
