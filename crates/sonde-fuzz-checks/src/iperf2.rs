//! iperf 2's wire formats: each decoder takes any bytes without panicking, reports a length
//! within the input, and what it reads it writes back byte for byte.

use std::net::{IpAddr, Ipv6Addr};

use sonde_proto::iperf2::ack::ClientHdrAck;
use sonde_proto::iperf2::bounceback::BouncebackHeader;
use sonde_proto::iperf2::client_hdr::{ClientHeader, UdpClientHeader};
use sonde_proto::iperf2::server_report::ServerReport;
use sonde_proto::iperf2::udp::UdpDatagram;

/// Asserts a decoded value's `len` and `emit` agree with the bytes it was read from.
fn round_trip(data: &[u8], n: usize, len: usize, emit: impl FnOnce(&mut Vec<u8>)) {
    assert!(n <= data.len(), "consumed {n} of {} bytes", data.len());
    assert_eq!(len, n);
    let mut out = Vec::new();
    emit(&mut out);
    assert_eq!(&out[..], &data[..n]);
}

/// The client header, as the start of a TCP stream and as a UDP datagram; a connect-back
/// never names an address other than the peer's.
pub fn iperf2_client_hdr(data: &[u8]) {
    let peer = IpAddr::V6(Ipv6Addr::LOCALHOST);
    if let Ok((h, n)) = ClientHeader::parse(data) {
        round_trip(data, n, h.len(), |o| h.emit(o));
        let _ = (h.check(), h.rate(), h.version(), h.amount());
        if let Some(to) = h.connect_back(peer) {
            assert_eq!(to.ip(), peer);
            assert_ne!(to.port(), 0);
        }
    }
    if let Ok((h, n)) = UdpClientHeader::parse(data) {
        round_trip(data, n, h.len(), |o| h.emit(o));
        let _ = h.header.check();
    }
}

/// The UDP datagram header: 16 bytes, and `new` of its sequence number gives it back.
pub fn iperf2_udp(data: &[u8]) {
    if let Ok((h, n)) = UdpDatagram::parse(data) {
        round_trip(data, n, h.len(), |o| h.emit(o));
        assert_eq!(UdpDatagram::new(h.seq(true), h.sent), h);
        let _ = (h.is_final(false), h.sent.check());
    }
}

/// The UDP server report.
pub fn iperf2_server_report(data: &[u8]) {
    if let Ok((r, n)) = ServerReport::parse(data) {
        round_trip(data, n, r.len(), |o| r.emit(o));
        let _ = (
            r.check(),
            r.total_len(),
            r.lost(),
            r.stop_us(),
            r.jitter_us(),
        );
        let _ = (r.out_of_order(), r.datagrams());
    }
}

/// The bounceback header, and its reply.
pub fn iperf2_bounceback(data: &[u8]) {
    if let Ok((h, n)) = BouncebackHeader::parse(data) {
        round_trip(data, n, h.len(), |o| h.emit(o));
        let _ = h.check();
        let r = h.reply(h.client_tx, h.client_tx);
        assert_eq!((r.id, r.size, r.len()), (h.id, h.size, h.len()));
    }
}

/// The server's acknowledgement of a client header.
pub fn iperf2_ack(data: &[u8]) {
    if let Ok((a, n)) = ClientHdrAck::parse(data) {
        round_trip(data, n, a.len(), |o| a.emit(o));
        let _ = a.check();
    }
}
