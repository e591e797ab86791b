//! Reading sonde's `-J` throughput document (iperf3's schema, which real iperf3 output also
//! follows) into a [`Throughput`].
//!
//! A throughput document holds the interval reports of the end that wrote it and, when the
//! other end's were passed along, those too: sonde keeps them in `sonde.peer_intervals`, iperf3
//! run with `--get-server-output` (against an iperf3 server in `-J` mode) in
//! `server_output_json.intervals`. Both are read, each series labelled with the end that
//! measured it, so a chart shows the sender's and the receiver's view side by side.

use serde_json::Value;

use crate::json::{at, num, text, tool, uint};
use crate::view::{CpuView, DirView, FeedbackView, Series, Throughput, UdpView};

fn cpu(v: &Value, prefix: &str) -> Option<CpuView> {
    let c = at(v, &["end", "cpu_utilization_percent"])?;
    Some(CpuView {
        total: num(c, &[&format!("{prefix}_total")])?,
        user: num(c, &[&format!("{prefix}_user")]).unwrap_or(0.0),
        system: num(c, &[&format!("{prefix}_system")]).unwrap_or(0.0),
    })
}

fn udp_view(v: &Value) -> Option<UdpView> {
    let packets = uint(v, &["packets"])?;
    Some(UdpView {
        packets,
        lost: uint(v, &["lost_packets"]).unwrap_or(0),
        lost_percent: num(v, &["lost_percent"]).unwrap_or(0.0),
        jitter_ms: num(v, &["jitter_ms"]).unwrap_or(0.0),
        out_of_order: uint(v, &["out_of_order"]).unwrap_or(0),
        duplicates: uint(v, &["duplicates"]).unwrap_or(0),
    })
}

fn direction_of(doc: &Value) -> String {
    if let Some(d) = text(doc, &["start", "sonde", "direction"]) {
        return d;
    }
    let ts = |k| uint(doc, &["start", "test_start", k]).unwrap_or(0);
    if ts("bidir") != 0 {
        "bidir".into()
    } else if ts("reverse") != 0 {
        "reverse".into()
    } else {
        "upload".into()
    }
}

/// Reads a throughput document (one with `start.test_start`).
pub(crate) fn throughput(doc: &Value) -> Throughput {
    let ts = |k: &str| at(doc, &["start", "test_start", k]).cloned();
    let protocol = protocol_of(doc);
    let direction = direction_of(doc);
    let role = role_of(doc);
    let end = at(doc, &["end"]).cloned().unwrap_or(Value::Null);
    let directions = directions(&end, &direction, protocol == "UDP");
    let (cpu_client, cpu_server) = cpu_by_end(doc, &end, &role);
    let (throughput, stream_loss) = both_ends_intervals(doc, &direction, &role);
    let feedback = feedback_of(&protocol);
    Throughput {
        protocol,
        direction,
        role,
        tool: tool(doc),
        version: text(doc, &["start", "version"]),
        system_info: text(doc, &["start", "system_info"]),
        timestamp_unix: timestamp_unix(doc),
        streams: ts("num_streams").and_then(|v| v.as_u64()),
        congestion: text(doc, &["end", "sender_tcp_congestion"])
            .or_else(|| text(doc, &["start", "sonde", "congestion"])),
        target_bitrate: ts("target_bitrate").and_then(|v| v.as_u64()),
        blksize: ts("blksize").and_then(|v| v.as_u64()),
        duration_secs: ts("duration").and_then(|v| v.as_f64()),
        directions,
        tcp_rtt_ms: mean_tcp_rtt_ms(&end),
        cpu_client,
        cpu_server,
        throughput,
        stream_loss,
        partial: at(&end, &["sonde", "partial"])
            .and_then(Value::as_bool)
            .unwrap_or(end.is_null()),
        error: text(doc, &["error"]),
        switches: Vec::new(),
        feedback,
    }
}

/// The test's protocol in capitals ("TCP", "UDP"), "?" when the document does not say.
fn protocol_of(doc: &Value) -> String {
    at(doc, &["start", "test_start", "protocol"])
        .and_then(|v| v.as_str().map(str::to_uppercase))
        .unwrap_or_else(|| "?".into())
}

/// Which end wrote the document: sonde says so; iperf3's server document is the one that
/// accepted a connection.
fn role_of(doc: &Value) -> String {
    text(doc, &["start", "sonde", "role"]).unwrap_or_else(|| {
        if at(doc, &["start", "accepted_connection"]).is_some() {
            "server".into()
        } else {
            "client".into()
        }
    })
}

/// When the test started, Unix seconds (milliseconds preferred when present).
fn timestamp_unix(doc: &Value) -> Option<f64> {
    num(doc, &["start", "timestamp", "timemillisecs"])
        .map(|ms| ms / 1e3)
        .or_else(|| num(doc, &["start", "timestamp", "timesecs"]))
}

/// The end's totals per direction: the main one and, in a bidirectional test, the reverse one.
fn directions(end: &Value, direction: &str, udp: bool) -> Vec<DirView> {
    ["", "_bidir_reverse"]
        .into_iter()
        .filter_map(|suffix| direction_totals(end, suffix, direction, udp))
        .collect()
}

/// One direction's totals from `sum_sent{suffix}` and `sum_received{suffix}`; `None` when the
/// end holds neither.
fn direction_totals(end: &Value, suffix: &str, direction: &str, udp: bool) -> Option<DirView> {
    let sent = end.get(format!("sum_sent{suffix}"));
    let recv = end.get(format!("sum_received{suffix}"));
    if sent.is_none() && recv.is_none() {
        return None;
    }
    let client_sends = if suffix.is_empty() {
        direction != "reverse"
    } else {
        false
    };
    let udp_src = end.get(format!("sum{suffix}")).or(recv);
    Some(DirView {
        client_sends,
        sent_bytes: sent.and_then(|v| uint(v, &["bytes"])),
        sent_bps: sent.and_then(|v| num(v, &["bits_per_second"])),
        received_bytes: recv.and_then(|v| uint(v, &["bytes"])),
        received_bps: recv.and_then(|v| num(v, &["bits_per_second"])),
        seconds: recv.and_then(|v| num(v, &["seconds"])),
        retransmits: if udp {
            None
        } else {
            sent.and_then(|v| uint(v, &["retransmits"]))
        },
        udp: if udp {
            udp_src.and_then(udp_view)
        } else {
            None
        },
    })
}

/// The senders' mean TCP round trip over the streams, milliseconds (`None`: none reported).
fn mean_tcp_rtt_ms(end: &Value) -> Option<f64> {
    let rtts: Vec<f64> = end
        .get("streams")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| num(s, &["sender", "mean_rtt"]))
                .collect()
        })
        .unwrap_or_default();
    (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64 / 1e3)
}

/// The CPU use of (client, server): the document's host is the end that wrote it; the remote
/// figure is dropped when sonde marks it unknown.
fn cpu_by_end(doc: &Value, end: &Value, role: &str) -> (Option<CpuView>, Option<CpuView>) {
    let remote_known = at(end, &["sonde", "remote_cpu_known"])
        .and_then(Value::as_bool)
        .unwrap_or(true);
    let (host, remote) = (
        cpu(doc, "host"),
        cpu(doc, "remote").filter(|_| remote_known),
    );
    if role == "server" {
        (remote, host)
    } else {
        (host, remote)
    }
}

/// The interval series of the writing end followed by the other end's, when passed along.
fn both_ends_intervals(doc: &Value, direction: &str, role: &str) -> (Vec<Series>, Vec<Series>) {
    let (mut throughput, mut stream_loss) = intervals(doc.get("intervals"), direction, role);
    // The other end's intervals: sonde's peer_intervals, or iperf3's server output (a client
    // document only; the server's own document has no such field).
    let peer_role = if role == "server" { "client" } else { "server" };
    let peer = at(doc, &["sonde", "peer_intervals"])
        .or_else(|| at(doc, &["server_output_json", "intervals"]).filter(|_| role == "client"));
    let (peer_sums, peer_loss) = intervals(peer, direction, peer_role);
    throughput.extend(peer_sums);
    stream_loss.extend(peer_loss);
    (throughput, stream_loss)
}

/// What carries the receiver's feedback for the protocol: TCP's ACKs; plain UDP has none.
fn feedback_of(protocol: &str) -> Option<FeedbackView> {
    match protocol {
        "TCP" => Some(FeedbackView::mode("ACKs")),
        "UDP" => Some(FeedbackView::mode("none")),
        _ => None,
    }
}

/// Interval series of the end `role` from its list of interval reports: throughput per sum,
/// and lost percent per receiving UDP stream.
fn intervals(list: Option<&Value>, direction: &str, role: &str) -> (Vec<Series>, Vec<Series>) {
    let Some(list) = list.and_then(Value::as_array) else {
        return (Vec::new(), Vec::new());
    };
    let main_c2s = direction != "reverse";
    let mut sums: Vec<Series> = Vec::new();
    let mut losses: Vec<(u64, Series)> = Vec::new();
    for iv in list {
        for (key, c2s) in [("sum", main_c2s), ("sum_bidir_reverse", false)] {
            let Some(s) = iv.get(key) else { continue };
            let (Some(end), Some(bps)) = (num(s, &["end"]), num(s, &["bits_per_second"])) else {
                continue;
            };
            // Plotted at the interval's middle: the rate is an average over the interval.
            let start = num(s, &["start"]);
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let host_sent = at(s, &["sender"]).and_then(Value::as_bool).unwrap_or(true);
            let label = format!(
                "{} {} by {} ({})",
                if c2s {
                    "client → server"
                } else {
                    "server → client"
                },
                if host_sent { "sent" } else { "received" },
                role,
                if host_sent { "sender" } else { "receiver" },
            );
            let at = match sums.iter().position(|x| x.label == label) {
                Some(i) => i,
                None => {
                    sums.push(Series::new(label));
                    sums.len() - 1
                }
            };
            if let Some(x) = sums.get_mut(at) {
                x.push(start, end, mid, bps);
            }
        }
        for st in iv
            .get("streams")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(end), Some(lp)) = (
                uint(st, &["socket"]),
                num(st, &["end"]),
                num(st, &["lost_percent"]),
            ) else {
                continue;
            };
            let start = num(st, &["start"]);
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let at = match losses.iter().position(|(i, _)| *i == id) {
                Some(i) => i,
                None => {
                    let label = format!("stream {id}, received by {role}");
                    losses.push((id, Series::new(label)));
                    losses.len() - 1
                }
            };
            if let Some((_, x)) = losses.get_mut(at) {
                x.push(start, end, mid, lp);
            }
        }
    }
    losses.sort_by_key(|(id, _)| *id);
    (sums, losses.into_iter().map(|(_, s)| s).collect())
}
