//! Reading sonde's `-J` throughput document (iperf3's schema, which real iperf3 output also
//! follows) into a [`Throughput`], through its model ([`sonde_schema::throughput`]): a
//! document that does not fit it (a sum without its rate, a stream without its socket) is an
//! error naming the field, not a dash.
//!
//! A throughput document holds the interval reports of the end that wrote it and, when the
//! other end's were passed along, those too: sonde keeps them in `sonde.peer_intervals`, iperf3
//! run with `--get-server-output` (against an iperf3 server in `-J` mode) in
//! `server_output_json.intervals`. Both are read, each series labelled with the end that
//! measured it, so a chart shows the sender's and the receiver's view side by side.

use serde_json::Value;
use sonde_schema::throughput::end::{Cpu, End, UdpTotals};
use sonde_schema::throughput::interval::Sum;
use sonde_schema::throughput::link::LinkFacts;
use sonde_schema::throughput::{Interval, ThroughputDocument, KIND};

use crate::json::tool;
use crate::view::{CpuView, DirView, FeedbackView, Series, Throughput, UdpView};

fn cpu(c: &Cpu, host: bool) -> CpuView {
    if host {
        CpuView {
            total: c.host_total,
            user: c.host_user,
            system: c.host_system,
        }
    } else {
        CpuView {
            total: c.remote_total,
            user: c.remote_user,
            system: c.remote_system,
        }
    }
}

fn udp_totals(u: &UdpTotals) -> UdpView {
    UdpView {
        packets: u.packets,
        lost: u.lost_packets,
        lost_percent: u.lost_percent,
        jitter_ms: u.jitter_ms,
        out_of_order: u.out_of_order,
        duplicates: u.duplicates,
    }
}

/// A sum's UDP figures, when it has a packet count.
fn udp_sum(s: &Sum) -> Option<UdpView> {
    let u = &s.udp;
    Some(UdpView {
        packets: u.packets?,
        lost: u.lost_packets.unwrap_or(0),
        lost_percent: u.lost_percent.unwrap_or(0.0),
        jitter_ms: u.jitter_ms.unwrap_or(0.0),
        out_of_order: u.out_of_order.unwrap_or(0),
        duplicates: u.duplicates.unwrap_or(0),
    })
}

fn direction_of(doc: &ThroughputDocument) -> String {
    let start = &doc.start;
    if let Some(d) = start.sonde.as_ref().and_then(|s| s.direction.clone()) {
        return d;
    }
    let ts = start.test_start.as_ref();
    if ts.and_then(|t| t.bidir).unwrap_or(0) != 0 {
        "bidir".into()
    } else if ts.and_then(|t| t.reverse).unwrap_or(0) != 0 {
        "reverse".into()
    } else {
        "upload".into()
    }
}

/// Reads a throughput document (one with `start.test_start`).
///
/// # Errors
/// The model's account of what did not fit, naming the kind and the field.
pub(crate) fn throughput(raw: &Value) -> Result<Throughput, String> {
    let doc: ThroughputDocument = crate::json::model(KIND, raw)?;
    let server_intervals = doc.server_intervals().map_err(|e| e.to_string())?;
    let direction = direction_of(&doc);
    let role = role_of(&doc);
    let ThroughputDocument {
        start,
        intervals: own,
        end,
        sonde,
        envelope,
        ..
    } = doc;
    let ts = start.test_start.unwrap_or_default();
    let protocol = ts
        .protocol
        .as_deref()
        .map_or_else(|| "?".into(), str::to_uppercase);
    // No end at all: the run ended before its summary.
    let partial = end
        .as_ref()
        .is_none_or(|e| e.sonde.as_ref().is_some_and(|s| s.partial));
    let end = end.unwrap_or_default();
    let (cpu_client, cpu_server) = cpu_by_end(&end, &role);
    // The other end's intervals: sonde's peer_intervals, or iperf3's server output (a client
    // document only; the server's own document has no such field).
    let peer = sonde
        .as_ref()
        .and_then(|s| s.peer_intervals.as_deref())
        .or_else(|| server_intervals.as_deref().filter(|_| role == "client"));
    let (throughput, stream_loss) = both_ends_intervals(&own, peer, &direction, &role);
    Ok(Throughput {
        directions: directions(&end, &direction, protocol == "UDP"),
        feedback: feedback_of(&protocol),
        protocol,
        direction,
        role,
        tool: tool(raw),
        version: start.version,
        system_info: start.system_info,
        timestamp_unix: start.timestamp.and_then(|t| {
            (t.timemillisecs.map(|ms| ms as f64 / 1e3)).or(t.timesecs.map(|s| s as f64))
        }),
        streams: ts.num_streams,
        congestion: end
            .sender_tcp_congestion
            .clone()
            .or_else(|| start.sonde.and_then(|s| s.congestion)),
        target_bitrate: ts.target_bitrate,
        blksize: ts.blksize,
        duration_secs: ts.duration,
        tcp_rtt_ms: mean_tcp_rtt_ms(&end),
        cpu_client,
        cpu_server,
        throughput,
        stream_loss,
        partial,
        error: envelope.error,
        switches: Vec::new(),
    })
}

/// Which end wrote the document: sonde says so; iperf3's server document is the one that
/// accepted a connection.
fn role_of(doc: &ThroughputDocument) -> String {
    let start = &doc.start;
    start
        .sonde
        .as_ref()
        .and_then(|s| s.role.clone())
        .unwrap_or_else(|| {
            if start.accepted_connection.is_some() {
                "server".into()
            } else {
                "client".into()
            }
        })
}

/// The end's totals per direction: the main one and, in a bidirectional test, the reverse one.
fn directions(end: &End, direction: &str, udp: bool) -> Vec<DirView> {
    let main = (&end.sum_sent, &end.sum_received, &end.sum);
    let reverse = (
        &end.sum_sent_bidir_reverse,
        &end.sum_received_bidir_reverse,
        &end.sum_bidir_reverse,
    );
    [(main, direction != "reverse"), (reverse, false)]
        .into_iter()
        .filter_map(|((sent, recv, sum), client_sends)| {
            direction_totals(
                sent.as_ref(),
                recv.as_ref(),
                sum.as_ref(),
                client_sends,
                udp,
            )
        })
        .collect()
}

/// One direction's totals from its `sum_sent` and `sum_received` (UDP's figures from its
/// `sum`, else from `sum_received`); `None` when the end holds neither.
fn direction_totals(
    sent: Option<&Sum>,
    recv: Option<&Sum>,
    sum: Option<&UdpTotals>,
    client_sends: bool,
    udp: bool,
) -> Option<DirView> {
    if sent.is_none() && recv.is_none() {
        return None;
    }
    Some(DirView {
        client_sends,
        sent_bytes: sent.map(|v| v.span.bytes),
        sent_bps: sent.map(|v| v.span.bits_per_second),
        received_bytes: recv.map(|v| v.span.bytes),
        received_bps: recv.map(|v| v.span.bits_per_second),
        seconds: recv.and_then(|v| v.span.seconds),
        retransmits: if udp {
            None
        } else {
            sent.and_then(|v| v.retransmits)
        },
        udp: if !udp {
            None
        } else if let Some(s) = sum {
            Some(udp_totals(s))
        } else {
            recv.and_then(udp_sum)
        },
    })
}

/// The senders' mean TCP round trip over the streams, milliseconds (`None`: none reported).
fn mean_tcp_rtt_ms(end: &End) -> Option<f64> {
    let rtts: Vec<f64> = end
        .streams
        .iter()
        .flatten()
        .filter_map(|s| s.sender.as_ref().and_then(|s| s.mean_rtt))
        .map(|r| r as f64)
        .collect();
    (!rtts.is_empty()).then(|| rtts.iter().sum::<f64>() / rtts.len() as f64 / 1e3)
}

/// The CPU use of (client, server): the document's host is the end that wrote it; the remote
/// figure is dropped when sonde marks it unknown.
fn cpu_by_end(end: &End, role: &str) -> (Option<CpuView>, Option<CpuView>) {
    let remote_known = end.sonde.as_ref().is_none_or(|s| s.remote_cpu_known);
    let c = end.cpu_utilization_percent.as_ref();
    let (host, remote) = (
        c.map(|c| cpu(c, true)),
        c.map(|c| cpu(c, false)).filter(|_| remote_known),
    );
    if role == "server" {
        (remote, host)
    } else {
        (host, remote)
    }
}

/// The interval series of the writing end followed by the other end's, when passed along.
fn both_ends_intervals(
    own: &[Interval],
    peer: Option<&[Interval]>,
    direction: &str,
    role: &str,
) -> (Vec<Series>, Vec<Series>) {
    let (mut throughput, mut stream_loss) = intervals(own, direction, role);
    let peer_role = if role == "server" { "client" } else { "server" };
    let (peer_sums, peer_loss) = intervals(peer.unwrap_or_default(), direction, peer_role);
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

/// The series of `key` in `list`, added (named `label`) when it is not there yet.
fn series<K: PartialEq>(
    list: &mut Vec<(K, Series)>,
    key: K,
    label: impl FnOnce() -> String,
) -> &mut Series {
    let at = match list.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            list.push((key, Series::new(label())));
            list.len() - 1
        }
    };
    &mut list[at].1
}

/// Interval series of the end `role` from its list of interval reports: throughput per sum,
/// and lost percent per receiving UDP stream.
fn intervals(list: &[Interval], direction: &str, role: &str) -> (Vec<Series>, Vec<Series>) {
    let main_c2s = direction != "reverse";
    let mut sums: Vec<(String, Series)> = Vec::new();
    let mut losses: Vec<(u64, Series)> = Vec::new();
    for iv in list {
        for (sum, c2s) in [(&iv.sum, main_c2s), (&iv.sum_bidir_reverse, false)] {
            let Some(s) = sum else { continue };
            let Some(end) = s.span.end else { continue };
            // Plotted at the interval's middle: the rate is an average over the interval.
            let start = s.span.start;
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let host_sent = s.sender.unwrap_or(true);
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
            series(&mut sums, label.clone(), || label).push(
                start,
                end,
                mid,
                s.span.bits_per_second,
            );
        }
        for st in &iv.streams {
            let (Some(end), Some(lp)) = (st.span.end, st.udp.lost_percent) else {
                continue;
            };
            let start = st.span.start;
            let mid = start.map_or(end, |start| (start + end) / 2.0);
            let label = || format!("stream {}, received by {role}", st.socket);
            series(&mut losses, st.socket, label).push(start, end, mid, lp);
        }
    }
    losses.sort_by_key(|(id, _)| *id);
    (
        sums.into_iter().map(|(_, s)| s).collect(),
        losses.into_iter().map(|(_, s)| s).collect(),
    )
}

/// The links a sonde client recorded (`start.sonde.link`), one line per end for the report's
/// header: `"client lo: speed unknown, MTU 65536, driver none (virtual)"`. Empty for a
/// document without them (iperf3's, older sonde's).
pub(crate) fn link_lines(raw: &Value) -> Vec<String> {
    let Ok(doc) = crate::json::model::<ThroughputDocument>(KIND, raw) else {
        return Vec::new();
    };
    let (here, there) = match role_of_start(&doc.start) {
        "server" => ("server", "client"),
        _ => ("client", "server"),
    };
    let Some(link) = doc.start.sonde.and_then(|s| s.link) else {
        return Vec::new();
    };
    let line = |end: &str, f: Option<LinkFacts>| match f {
        None => format!("{end}: not reported"),
        Some(f) => format!(
            "{end} {}: speed {}, MTU {}, driver {}",
            f.interface,
            f.speed_bps
                .map_or_else(|| "unknown".into(), |b| crate::fmt::rate(b as f64)),
            f.mtu.map_or_else(|| "unknown".into(), |m| m.to_string()),
            f.driver.as_deref().unwrap_or("unknown"),
        ),
    };
    vec![line(here, link.local), line(there, link.remote)]
}

fn role_of_start(start: &sonde_schema::throughput::Start) -> &str {
    start
        .sonde
        .as_ref()
        .and_then(|s| s.role.as_deref())
        .unwrap_or("client")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_without_its_rate_is_an_error_naming_the_field_not_a_dash() {
        let doc = serde_json::json!({"start": {"test_start": {"protocol": "TCP"}},
            "end": {"sum_sent": {"bytes": 1000, "bits_per_second": 8000.0},
                    "sum_received": {"bytes": 1000}}});
        let e = throughput(&doc).unwrap_err();
        assert!(
            e.contains("throughput") && e.contains("`bits_per_second`"),
            "{e}"
        );
        let ok = serde_json::json!({"start": {"test_start": {"protocol": "tcp"}},
            "end": {"sum_received": {"bytes": 1000, "bits_per_second": 8000.0}}});
        let t = throughput(&ok).unwrap();
        assert_eq!(t.protocol, "TCP");
        assert_eq!(t.directions[0].received_bps, Some(8000.0));
        assert!(
            !t.partial,
            "an end without sonde's partial flag is complete"
        );
    }

    #[test]
    fn the_header_lists_each_ends_link_or_says_it_was_not_reported() {
        let doc = serde_json::json!({"start": {"test_start": {"protocol": "TCP"},
            "sonde": {"role": "client", "link": {
                "local": {"interface": "eth0", "speed_bps": 1_000_000_000u64, "mtu": 1500,
                          "driver": "igb"},
                "remote": null}}}});
        assert_eq!(
            link_lines(&doc),
            [
                "client eth0: speed 1.00 Gbit/s, MTU 1500, driver igb",
                "server: not reported"
            ]
        );
        let iperf3 = serde_json::json!({"start": {"test_start": {"protocol": "TCP"}}});
        assert!(link_lines(&iperf3).is_empty());
    }
}
