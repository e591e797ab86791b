//! What an iperf 2 client's header asks for, as the test sonde runs for it: the header's
//! fields mapped to [`TestParams`], so an iperf 2 client's test is limited, reported and
//! stored like every other (sonde's rules look at `TestParams`, not at iperf 2's words).
//!
//! iperf 2's defaults fill what the header leaves at 0: 128 KiB TCP writes, 1470-byte UDP
//! datagrams and, for UDP, the 1 048 576 bit/s iperf 2 sends without `-b`.

use super::client_hdr::{ext_flags, Amount, ClientHeader};
use crate::message::TestParams;
use sonde_stats::model::{Direction, Protocol};
use sonde_stats::units::{Rate, Size};

/// iperf 2's TCP write length without `-l`.
pub const TCP_DEFAULT_LEN: u64 = 128 * 1024;
/// iperf 2's UDP datagram length without `-l` (IPv4; it uses the same for IPv6).
pub const UDP_DEFAULT_LEN: u64 = 1470;
/// iperf 2's UDP rate without `-b`, bits per second.
pub const UDP_DEFAULT_RATE: u64 = 1_048_576;

/// Which way the data goes in an iperf 2 test, as the extension's flags say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// The client sends (the default).
    ClientSends,
    /// `-R`: the server sends on the client's connection.
    Reverse,
    /// `--full-duplex`: both send on the one connection.
    FullDuplex,
}

/// The direction the header asks for.
pub fn flow(h: &ClientHeader) -> Flow {
    let f = h.upper_flags();
    if f & ext_flags::FULLDUPLEX != 0 {
        Flow::FullDuplex
    } else if f & ext_flags::REVERSE != 0 {
        Flow::Reverse
    } else {
        Flow::ClientSends
    }
}

/// The test a checked header asks for (`udp` says which socket it came on). The duration is
/// the header's, in seconds; a byte amount ends the test by bytes instead. A UDP rate given in
/// packets per second (`-b 100pps`) is turned into bits with the datagram length.
pub fn test_params(h: &ClientHeader, udp: bool) -> TestParams {
    let (duration_secs, bytes) = match h.amount() {
        Amount::Bytes(b) => (0.0, Size::from_bytes(b)),
        Amount::Centis(c) => (c as f64 / 100.0, Size::ZERO),
    };
    let len = match u64::try_from(h.base.buf_len).unwrap_or(0) {
        0 if udp => UDP_DEFAULT_LEN,
        0 => TCP_DEFAULT_LEN,
        n => n,
    };
    let rate = match (h.rate(), udp) {
        (Some(r), true) if h.upper_flags() & ext_flags::UNITS_PPS != 0 => {
            r.saturating_mul(len).saturating_mul(8)
        }
        (Some(r), _) => r,
        (None, true) => UDP_DEFAULT_RATE,
        (None, false) => 0,
    };
    let direction = match flow(h) {
        Flow::ClientSends => Direction::Upload,
        Flow::Reverse => Direction::Reverse,
        Flow::FullDuplex => Direction::Bidir,
    };
    TestParams {
        protocol: if udp { Protocol::Udp } else { Protocol::Tcp },
        direction,
        parallel: u32::try_from(h.base.threads).unwrap_or(1).max(1),
        duration_secs,
        bytes,
        length: Size::from_bytes(len),
        rate: Rate::from_bits_per_sec(rate),
        tos: (h.ext.map_or(0, |e| e.tos) & 0xff) as u8,
        ..TestParams::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iperf2::captures::{self, hex};
    use crate::iperf2::client_hdr::UdpClientHeader;

    fn tcp(capture: &str) -> TestParams {
        let (h, _) = ClientHeader::parse(&hex(capture)).expect("a real header");
        test_params(&h, false)
    }

    fn udp(capture: &str) -> TestParams {
        let (h, _) = UdpClientHeader::parse(&hex(capture)).expect("a real datagram");
        test_params(&h.header, true)
    }

    #[test]
    fn a_default_tcp_header_is_one_second_upload_of_128k_writes() {
        let p = tcp(captures::TCP_DEFAULT);
        assert_eq!(p.protocol, Protocol::Tcp);
        assert_eq!(p.direction, Direction::Upload);
        assert_eq!(p.parallel, 1);
        assert_eq!(p.duration_secs, 1.0);
        assert!(p.bytes.is_zero());
        assert_eq!(p.length.bytes(), TCP_DEFAULT_LEN);
        assert!(p.rate.is_unlimited());
        assert_eq!(tcp(captures::TCP_WINDOW_2S).duration_secs, 2.0);
    }

    #[test]
    fn bytes_streams_lengths_rates_and_tos_come_from_the_header() {
        let p = tcp(captures::TCP_BYTES);
        assert_eq!((p.parallel, p.length.bytes()), (2, 1000));
        assert_eq!((p.bytes.bytes(), p.duration_secs), (100_000, 0.0));
        let p = tcp(captures::TCP_RATE_TOS);
        assert_eq!((p.rate.bits_per_sec(), p.tos), (10_000_000, 0x10));
    }

    #[test]
    fn reverse_and_full_duplex_set_the_direction() {
        assert_eq!(tcp(captures::TCP_REVERSE).direction, Direction::Reverse);
        assert_eq!(tcp(captures::TCP_FULL_DUPLEX).direction, Direction::Bidir);
    }

    #[test]
    fn udp_headers_give_rate_length_and_streams() {
        let p = udp(captures::UDP_1M);
        assert_eq!(p.protocol, Protocol::Udp);
        assert_eq!((p.rate.bits_per_sec(), p.length.bytes()), (1_000_000, 1470));
        assert_eq!(udp(captures::UDP_LEN64).length.bytes(), 64);
        let p = udp(captures::UDP_P4);
        assert_eq!((p.parallel, p.rate.bits_per_sec()), (4, UDP_DEFAULT_RATE));
    }
}
