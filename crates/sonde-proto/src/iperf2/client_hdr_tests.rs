//! Client headers captured from Debian's iperf 2.1.8 on loopback (the first bytes of each
//! TCP connection, the first datagram's headers for UDP), decoded and re-encoded.

use super::*;
use crate::iperf2::captures::{self, hex};
use std::net::Ipv4Addr;

fn tcp(s: &str) -> ClientHeader {
    let b = hex(s);
    let (h, n) = ClientHeader::parse(&b).unwrap();
    assert_eq!(n, b.len());
    assert_eq!(h.len(), b.len());
    let mut out = Vec::new();
    h.emit(&mut out);
    assert_eq!(out, b);
    // The payload after the header is not the header's business.
    let mut longer = b.clone();
    longer.extend_from_slice(b"0123456789");
    assert_eq!(ClientHeader::parse(&longer).unwrap(), (h.clone(), b.len()));
    h.check().unwrap();
    h
}

fn udp(s: &str) -> UdpClientHeader {
    let b = hex(s);
    let (h, n) = UdpClientHeader::parse(&b).unwrap();
    assert_eq!((n, h.len()), (76, 76));
    let mut out = Vec::new();
    h.emit(&mut out);
    assert_eq!(out, b);
    h.header.check().unwrap();
    h
}

#[test]
fn tcp_default_request() {
    let h = tcp(captures::TCP_DEFAULT);
    assert_eq!(h.declared_len(), Some(60));
    assert_eq!(h.base.threads, 1);
    assert_eq!(h.base.port, 16000);
    assert_eq!(h.amount(), Amount::Centis(100));
    assert_eq!(h.connect_back_mode(), None);
    assert_eq!(h.connect_back(IpAddr::V4(Ipv4Addr::LOCALHOST)), None);
    assert_eq!(h.version(), Some((2, 1, 8, 3)));
    assert_eq!(h.rate(), None);
    assert!(h.start.is_none() && h.rest.is_empty());
}

#[test]
fn dual_and_tradeoff_connect_back_to_the_peer_only() {
    let peer = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7));
    let d = tcp(captures::TCP_DUAL);
    assert_eq!(d.connect_back_mode(), Some(ConnectBack::Dual));
    assert_eq!(d.connect_back(peer), Some(SocketAddr::new(peer, 16000)));
    let r = tcp(captures::TCP_TRADEOFF);
    assert_eq!(r.connect_back_mode(), Some(ConnectBack::Tradeoff));
    assert_eq!(r.connect_back(peer), Some(SocketAddr::new(peer, 16000)));
}

#[test]
fn reverse_full_duplex_bytes_and_trip_times() {
    let r = tcp(captures::TCP_REVERSE);
    assert_ne!(r.base.flags & flags::VERSION2, 0);
    assert_eq!(r.upper_flags(), ext_flags::REVERSE);
    let f = tcp(captures::TCP_FULL_DUPLEX);
    assert_eq!(f.upper_flags(), ext_flags::FULLDUPLEX);
    let n = tcp(captures::TCP_BYTES);
    assert_eq!((n.base.threads, n.base.buf_len), (2, 1000));
    assert_eq!(n.amount(), Amount::Bytes(100_000));
    let t = tcp(captures::TCP_TRIP);
    assert_eq!(t.declared_len(), Some(80));
    assert_eq!(t.upper_flags(), ext_flags::TRIPTIME);
    let start = t.start.unwrap().start;
    assert_eq!((start.sec, start.usec), (0x6b12_29ca, 842_168));
}

#[test]
fn udp_requests() {
    let u = udp(captures::UDP_1M);
    assert_eq!(u.datagram.seq(true), 1);
    assert!(u.header.wide_seq());
    assert_eq!(u.header.declared_len(), Some(76));
    assert_eq!(u.header.rate(), Some(1_000_000));
    assert_eq!(u.header.connect_back_mode(), None);
    let d = udp(captures::UDP_DUAL);
    assert_eq!(d.header.connect_back_mode(), Some(ConnectBack::Dual));
    let p = udp(captures::UDP_PPS);
    assert_eq!(p.datagram.seq(true), 7);
    assert_eq!(p.header.rate(), Some(100));
    assert_eq!(p.header.upper_flags() & ext_flags::UNITS_PPS, 0);
}

#[test]
fn truncations_and_broken_lengths_fail() {
    for s in [captures::TCP_DEFAULT, captures::TCP_TRIP] {
        let b = hex(s);
        for cut in 0..b.len() {
            assert!(ClientHeader::parse(&b[..cut]).is_err(), "cut at {cut}");
        }
    }
    let b = hex(captures::UDP_1M);
    for cut in 0..b.len() {
        assert!(UdpClientHeader::parse(&b[..cut]).is_err(), "cut at {cut}");
    }
    // A declared length of 40 cannot hold the 60 bytes the extension flag promises.
    let mut b = hex(captures::TCP_DEFAULT);
    b[3] = 40 << 1;
    assert_eq!(
        ClientHeader::parse(&b),
        Err(Iperf2Error::BadLength {
            what: "iperf2 client header",
            claimed: 40,
            min: 60
        })
    );
    // Without the extension flag only the base is read.
    let mut b = hex(captures::TCP_DEFAULT);
    b[0] = 0;
    b[1] = 0;
    let (h, n) = ClientHeader::parse(&b).unwrap();
    assert_eq!((n, h.ext), (BASE_LEN, None));
}

#[test]
fn absurd_values_are_refused() {
    let good = tcp(captures::TCP_DUAL);
    let with = |f: &dyn Fn(&mut BaseHeader)| {
        let mut h = good.clone();
        f(&mut h.base);
        h.check()
    };
    assert_eq!(with(&|b| b.threads = 129), Err(Refusal::Threads(129)));
    assert_eq!(with(&|b| b.threads = 0), Err(Refusal::Threads(0)));
    assert_eq!(with(&|b| b.threads = -1), Err(Refusal::Threads(-1)));
    assert_eq!(
        with(&|b| b.buf_len = 0x0100_0001),
        Err(Refusal::Length(0x0100_0001))
    );
    assert_eq!(with(&|b| b.buf_len = -5), Err(Refusal::Length(-5)));
    assert_eq!(with(&|b| b.win_band = -1), Err(Refusal::Window(-1)));
    assert_eq!(
        with(&|b| b.amount = i32::MIN),
        Err(Refusal::Duration(2_147_483_648))
    );
    assert_eq!(with(&|b| b.amount = i32::MAX), Ok(()));
    assert_eq!(with(&|b| b.port = 0), Err(Refusal::Port(0)));
    assert_eq!(with(&|b| b.port = 70000), Err(Refusal::Port(70000)));
    let mut t = tcp(captures::TCP_TRIP);
    if let Some(s) = t.start.as_mut() {
        s.start.usec = 1_000_000;
    }
    assert_eq!(t.check(), Err(Refusal::Micros(1_000_000)));
}

#[test]
fn rate_tos_and_buffer_length() {
    let t = tcp(captures::TCP_RATE_TOS);
    let e = t.ext.unwrap();
    assert_eq!((e.tos, t.rate()), (0x10, Some(10_000_000)));
    let u = udp(captures::UDP_LEN64);
    assert_eq!(u.header.base.buf_len, 64);
}

#[test]
fn peer_detection() {
    let x = tcp(captures::TCP_PEER_DETECT);
    assert_eq!(
        x.base.flags & (flags::VERSION2 | flags::V2PEERDETECT),
        flags::VERSION2 | flags::V2PEERDETECT
    );
    assert_eq!(x.connect_back_mode(), None);
}

#[test]
fn window_not_sent_and_parallel_udp() {
    let w = tcp(captures::TCP_WINDOW_2S);
    assert_eq!((w.base.win_band, w.amount()), (0, Amount::Centis(200)));
    let p = udp(captures::UDP_P4);
    assert_eq!((p.header.base.threads, p.header.rate()), (4, Some(1 << 20)));
}
