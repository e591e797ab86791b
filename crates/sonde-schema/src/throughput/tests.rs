//! The throughput model: a document reads back as written, iperf3's rules for the keys it
//! leaves out hold, and a figure the report shows is required where it appears.

use serde_json::{json, Value};

use super::end::{Cpu, EndSide, EndSonde, EndStream, UdpTotals};
use super::interval::{IntervalStream, Span, Sum, TcpFigures, UdpFigures};
use super::start::{Peer, TestStart};
use super::*;

fn tcp_doc() -> ThroughputDocument {
    let span = Span::new(0.0, 1.0, 1000, 8000.0);
    ThroughputDocument {
        title: Some("t".into()),
        start: Start {
            version: Some("sonde 0.1.0".into()),
            connecting_to: Some(Peer {
                host: "10.0.0.2".into(),
                port: 5201,
            }),
            test_start: Some(TestStart {
                protocol: Some("TCP".into()),
                num_streams: Some(1),
                duration: Some(10.0),
                ..Default::default()
            }),
            ..Default::default()
        },
        intervals: vec![Interval {
            streams: vec![IntervalStream {
                socket: 1,
                span,
                tcp: TcpFigures {
                    retransmits: Some(2),
                    rtt: Some(250),
                    ..Default::default()
                },
                udp: UdpFigures::default(),
                omitted: false,
                sender: true,
            }],
            sum: Some(Sum {
                span,
                retransmits: Some(2),
                omitted: Some(false),
                sender: Some(true),
                ..Default::default()
            }),
            sum_bidir_reverse: None,
        }],
        end: Some(End {
            streams: Some(vec![EndStream {
                sender: Some(EndSide {
                    socket: 1,
                    span,
                    mean_rtt: Some(300),
                    sender: true,
                    ..Default::default()
                }),
                ..Default::default()
            }]),
            sum_sent: Some(Sum {
                span,
                sender: Some(true),
                ..Default::default()
            }),
            cpu_utilization_percent: Some(Cpu {
                host_total: 12.5,
                remote_total: 30.0,
                ..Default::default()
            }),
            sonde: Some(EndSonde {
                partial: false,
                role: Some("client".into()),
                direction: Some("upload".into()),
                remote_cpu_known: true,
                error: None,
                notes: vec![],
            }),
            ..Default::default()
        }),
        server_output_json: Some(json!({"intervals": [], "odd": [1, 2.5]})),
        sonde: Some(DocSonde::default()),
        envelope: Iperf3Envelope::new("client", false, None),
        ..Default::default()
    }
}

#[test]
fn a_document_reads_back_as_written() {
    let v = crate::to_value(&tcp_doc());
    assert!(
        v.get("error").is_none(),
        "no error key without an error: {v}"
    );
    assert!(v.get("extra_data").is_none());
    assert_eq!(v["start"]["test_start"]["duration"], json!(10));
    assert!(v["start"].get("tcp_mss").is_none());
    assert!(v["intervals"][0]["streams"][0].get("snd_wnd").is_none());
    assert!(v["intervals"][0]["streams"][0].get("packets").is_none());
    assert_eq!(v["intervals"][0]["sum"]["seconds"], 1.0);
    assert_eq!(v["end"]["sonde"]["error"], Value::Null);
    assert_eq!(v["server_output_json"]["odd"], json!([1, 2.5]));
    let back: ThroughputDocument = crate::from_value(KIND, v).unwrap();
    assert_eq!(back, tcp_doc());
    assert_eq!(back.server_intervals().unwrap(), Some(vec![]));
    let failed = ThroughputDocument {
        envelope: Iperf3Envelope::new("server", true, Some("refused")),
        ..tcp_doc()
    };
    assert_eq!(crate::to_value(&failed)["error"], "refused");
}

#[test]
fn a_test_that_never_started_has_an_empty_start_and_an_udp_view_may_lack_its_span() {
    let doc = ThroughputDocument {
        end: Some(End {
            sum: Some(UdpTotals {
                packets: 10,
                sender: true,
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let v = crate::to_value(&doc);
    assert_eq!(v["start"], json!({}));
    assert!(v["end"]["sum"].get("bytes").is_none());
    assert_eq!(v["end"]["sum"]["packets"], 10);
    let back: ThroughputDocument = crate::from_value(KIND, v).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn iperf3s_own_document_reads_without_sondes_additions() {
    let v = json!({"start": {"version": "iperf 3.12", "test_start": {"protocol": "UDP",
        "num_streams": 1, "duration": 1}, "timestamp": {"time": "x", "timesecs": 5}},
        "intervals": [{"streams": [{"socket": 5, "start": 0, "end": 1.0, "seconds": 1.0,
            "bytes": 10, "bits_per_second": 80, "packets": 1, "omitted": false,
            "sender": true}], "sum": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 10,
            "bits_per_second": 80, "packets": 1, "omitted": false, "sender": true}}],
        "end": {"sum": {"start": 0, "end": 1, "seconds": 1, "bytes": 10,
            "bits_per_second": 80, "jitter_ms": 0.1, "lost_packets": 0, "packets": 1,
            "lost_percent": 0, "sender": true}, "cpu_utilization_percent": {"host_total": 1,
            "host_user": 0.5, "host_system": 0.5, "remote_total": 2, "remote_user": 1,
            "remote_system": 1}}});
    let d: ThroughputDocument = crate::from_value(KIND, v).unwrap();
    assert_eq!(d.envelope.kind, None);
    assert_eq!(d.start.timestamp.map(|t| t.timemillisecs), Some(None));
    let end = d.end.unwrap_or_default();
    let sum = end.sum.unwrap_or_default();
    assert_eq!((sum.packets, sum.duplicates), (1, 0));
    assert_eq!(
        sum.span.map(|s| (s.bytes, s.seconds)),
        Some((10, Some(1.0)))
    );
    assert_eq!(
        end.cpu_utilization_percent.map(|c| c.remote_total),
        Some(2.0)
    );
}

#[test]
fn a_sum_without_its_rate_is_refused_naming_the_field() {
    let mut v = crate::to_value(&tcp_doc());
    v["end"]["sum_sent"]
        .as_object_mut()
        .map(|o| o.remove("bits_per_second"));
    let e = crate::from_value::<ThroughputDocument>(KIND, v).unwrap_err();
    let e = e.to_string();
    assert!(
        e.starts_with("not a valid throughput document") && e.contains("`bits_per_second`"),
        "{e}"
    );
    let mut v = crate::to_value(&tcp_doc());
    v["intervals"][0]["streams"][0]
        .as_object_mut()
        .map(|o| o.remove("socket"));
    let e = crate::from_value::<ThroughputDocument>(KIND, v).unwrap_err();
    assert!(e.to_string().contains("`socket`"), "{e}");
    let mut v = crate::to_value(&tcp_doc());
    v["end"]["cpu_utilization_percent"]
        .as_object_mut()
        .map(|o| o.remove("host_total"));
    let e = crate::from_value::<ThroughputDocument>(KIND, v).unwrap_err();
    assert!(e.to_string().contains("`host_total`"), "{e}");
}
