//! Fixed event sequences shared by the reporters' unit tests.

use sonde_stats::model::*;

pub const COOKIE: &str = "abcdefghijklmnopqrstuvwxyz234567abcd";

pub fn start(protocol: Protocol, direction: Direction, connected: Vec<ConnectedStream>) -> Event {
    Event::Start(Box::new(TestStart {
        role: Role::Client,
        version: "sonde 0.1.0".into(),
        system_info: "Linux test 6.1.0 x86_64".into(),
        timestamp_unix: 1_795_304_520.25,
        local: "10.0.0.1:40000".into(),
        remote: "10.0.0.2:5201".into(),
        server_port: 5201,
        cookie: COOKIE.into(),
        protocol,
        direction,
        num_streams: connected.len() as u32,
        blksize: 131_072,
        omit_secs: 0.0,
        duration_secs: 10.0,
        bytes: 0,
        blocks: 0,
        target_bitrate: 0,
        tos: 0,
        interval_secs: 1.0,
        congestion: None,
        tcp_mss: None,
        sock_bufsize: None,
        fq_rate: 0,
        sockets: SocketFigures {
            sndbuf_actual: Some(16_384),
            rcvbuf_actual: Some(131_072),
            tcp_mss_default: Some(1_448),
            gso: protocol == Protocol::Udp,
            gro: false,
        },
        connected,
        link: None,
    }))
}

pub fn conn(id: u32, role: StreamRole) -> ConnectedStream {
    ConnectedStream {
        id,
        role,
        local: format!("10.0.0.1:{}", 40000 + id),
        remote: "10.0.0.2:5201".into(),
    }
}

pub fn sample(id: u32, role: StreamRole, t: f64, bytes: u64) -> StreamSample {
    StreamSample {
        id,
        role,
        start: t,
        end: t + 1.0,
        bytes,
        bits_per_second: bytes as f64 * 8.0,
        omitted: false,
        tcp: None,
        udp_sent_packets: None,
        udp_received: None,
    }
}

pub fn tcp_info(retransmits: u64) -> Option<TcpInfoSample> {
    Some(TcpInfoSample {
        retransmits,
        snd_cwnd: 1_048_576,
        rtt_us: 250,
        rttvar_us: 50,
        pmtu: 1500,
        snd_wnd: Some(65_536),
        reorder: Some(3),
    })
}

pub fn sum(role: StreamRole, t: f64, bytes: u64) -> SumSample {
    SumSample {
        role,
        start: t,
        end: t + 1.0,
        bytes,
        bits_per_second: bytes as f64 * 8.0,
        omitted: false,
        retransmits: None,
        udp_sent_packets: None,
        udp_received: None,
    }
}

pub fn view(end: f64, bytes: u64) -> EndView {
    EndView {
        start: 0.0,
        end,
        bytes,
        bits_per_second: bytes as f64 * 8.0 / end,
        tcp: None,
        udp_sent_packets: None,
        udp_received: None,
    }
}

pub fn tcp_sender_view(bytes: u64, retransmits: u64) -> EndView {
    EndView {
        tcp: Some(TcpSenderSummary {
            retransmits,
            max_snd_cwnd: 2_097_152,
            max_rtt_us: 900,
            min_rtt_us: 100,
            mean_rtt_us: 300,
            max_snd_wnd: Some(131_072),
            reorder: Some(4),
        }),
        ..view(10.0, bytes)
    }
}

pub fn summary(protocol: Protocol, direction: Direction) -> TestSummary {
    TestSummary {
        role: Role::Client,
        protocol,
        direction,
        streams: Vec::new(),
        directions: Vec::new(),
        cpu_local: CpuUsage {
            total: 12.5,
            user: 1.5,
            system: 11.0,
        },
        cpu_remote: Some(CpuUsage {
            total: 30.0,
            user: 5.0,
            system: 25.0,
        }),
        sender_congestion: None,
        receiver_congestion: None,
        partial: false,
        error: None,
    }
}

pub fn tcp_upload_2() -> Vec<Event> {
    use StreamRole::Sender;
    let interval = |t: f64| {
        let mut a = sample(1, Sender, t, 125_000_000);
        a.tcp = tcp_info(2);
        let mut b = sample(3, Sender, t, 125_000_000);
        b.tcp = tcp_info(1);
        let mut s = sum(Sender, t, 250_000_000);
        s.retransmits = Some(3);
        Event::Interval(IntervalReport {
            streams: vec![a, b],
            sums: vec![s],
        })
    };
    let mut end = summary(Protocol::Tcp, Direction::Upload);
    for id in [1, 3] {
        end.streams.push(StreamSummary {
            id,
            client_sends: true,
            sender: Some(tcp_sender_view(1_250_000_000, 15)),
            receiver: Some(view(10.04, 1_249_500_000)),
        });
    }
    end.directions.push(DirectionSummary {
        client_sends: true,
        sent: Some(tcp_sender_view(2_500_000_000, 30)),
        received: Some(view(10.04, 2_499_000_000)),
    });
    end.sender_congestion = Some("cubic".into());
    end.receiver_congestion = Some("cubic".into());
    vec![
        start(
            Protocol::Tcp,
            Direction::Upload,
            vec![conn(1, Sender), conn(3, Sender)],
        ),
        Event::Note("using TCP_INFO".into()),
        interval(0.0),
        interval(1.0),
        Event::End(Box::new(end)),
    ]
}

pub fn udp_reverse() -> Vec<Event> {
    use StreamRole::Receiver;
    let rx = UdpReceiveStats {
        packets: 100,
        lost: 3,
        lost_percent: 3.0,
        jitter_ms: 0.25,
        out_of_order: 0,
        duplicates: 1,
    };
    let mut a = sample(1, Receiver, 0.0, 131_072);
    a.omitted = true;
    a.udp_received = Some(rx);
    let mut s = sum(Receiver, 0.0, 131_072);
    s.omitted = true;
    s.udp_received = Some(rx);
    let mut b = sample(1, Receiver, 1.0, 131_072);
    b.udp_received = Some(rx);
    let mut s2 = sum(Receiver, 1.0, 131_072);
    s2.udp_received = Some(rx);
    let sender = EndView {
        udp_sent_packets: Some(1000),
        ..view(10.0, 1_310_720)
    };
    let receiver = EndView {
        udp_received: Some(UdpReceiveStats {
            packets: 998,
            lost: 10,
            lost_percent: 1.002,
            jitter_ms: 0.3,
            out_of_order: 2,
            duplicates: 1,
        }),
        ..view(10.01, 1_297_612)
    };
    let mut end = summary(Protocol::Udp, Direction::Reverse);
    end.streams.push(StreamSummary {
        id: 1,
        client_sends: false,
        sender: Some(sender.clone()),
        receiver: Some(receiver.clone()),
    });
    end.directions.push(DirectionSummary {
        client_sends: false,
        sent: Some(sender),
        received: Some(receiver),
    });
    vec![
        start(Protocol::Udp, Direction::Reverse, vec![conn(1, Receiver)]),
        Event::Interval(IntervalReport {
            streams: vec![a],
            sums: vec![s],
        }),
        Event::Interval(IntervalReport {
            streams: vec![b],
            sums: vec![s2],
        }),
        Event::End(Box::new(end)),
    ]
}

pub fn tcp_bidir() -> Vec<Event> {
    use StreamRole::{Receiver, Sender};
    let mut a = sample(1, Sender, 0.0, 100);
    a.tcp = tcp_info(0);
    let b = sample(3, Receiver, 0.0, 200);
    let mut s = sum(Sender, 0.0, 100);
    s.retransmits = Some(0);
    let mut end = summary(Protocol::Tcp, Direction::Bidir);
    end.streams = vec![
        StreamSummary {
            id: 1,
            client_sends: true,
            sender: Some(tcp_sender_view(1000, 0)),
            receiver: Some(view(10.0, 990)),
        },
        StreamSummary {
            id: 3,
            client_sends: false,
            sender: Some(tcp_sender_view(2000, 4)),
            receiver: Some(view(10.0, 1990)),
        },
    ];
    end.directions = vec![
        DirectionSummary {
            client_sends: true,
            sent: Some(tcp_sender_view(1000, 0)),
            received: Some(view(10.0, 990)),
        },
        DirectionSummary {
            client_sends: false,
            sent: Some(tcp_sender_view(2000, 4)),
            received: Some(view(10.0, 1990)),
        },
    ];
    vec![
        start(
            Protocol::Tcp,
            Direction::Bidir,
            vec![conn(1, Sender), conn(3, Receiver)],
        ),
        Event::Interval(IntervalReport {
            streams: vec![a, b],
            sums: vec![s, sum(Receiver, 0.0, 200)],
        }),
        Event::End(Box::new(end)),
    ]
}

fn one_tcp_interval() -> Event {
    let mut a = sample(1, StreamRole::Sender, 0.0, 1000);
    a.tcp = tcp_info(0);
    let mut s = sum(StreamRole::Sender, 0.0, 1000);
    s.retransmits = Some(0);
    Event::Interval(IntervalReport {
        streams: vec![a],
        sums: vec![s],
    })
}

pub fn partial_no_end() -> Vec<Event> {
    vec![
        start(
            Protocol::Tcp,
            Direction::Upload,
            vec![conn(1, StreamRole::Sender)],
        ),
        one_tcp_interval(),
        Event::Error("control socket has closed unexpectedly".into()),
    ]
}

pub fn partial_with_end() -> Vec<Event> {
    let mut end = summary(Protocol::Tcp, Direction::Upload);
    end.partial = true;
    end.error = Some("interrupted".into());
    end.cpu_remote = None;
    end.streams.push(StreamSummary {
        id: 1,
        client_sends: true,
        sender: Some(tcp_sender_view(1000, 0)),
        receiver: None,
    });
    vec![
        start(
            Protocol::Tcp,
            Direction::Upload,
            vec![conn(1, StreamRole::Sender)],
        ),
        one_tcp_interval(),
        Event::Error("interrupted".into()),
        Event::End(Box::new(end)),
    ]
}
