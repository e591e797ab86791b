//! The test request `sonde client --iperf2` sends: iperf 2's client header built from
//! sonde's test parameters, byte for byte as iperf 2.1.8 writes it for the same options (the
//! captures of real 2.1.8 traffic in `sonde_proto::iperf2::captures` are the tests' vectors).
//!
//! iperf 2 has no control connection, so this header is all the server learns of the test:
//! the streams, what ends them (minus the duration in 10 ms units, or bytes), the buffer
//! length when `-l` was given, the rate and TOS, and the extended flags (`-R`,
//! `--full-duplex`, which sonde's parameters carry as a bidirectional test).

use sonde_proto::iperf2::ack::VERSION_2_1_8;
use sonde_proto::iperf2::client_hdr::{
    ext_flags, flags, BaseHeader, ClientHeader, Extension, BASE_LEN, EXT_LEN,
};
use sonde_proto::iperf2::{udp, MAX_DURATION_CS};
use sonde_proto::message::TestParams;
use sonde_stats::model::{Direction, Protocol};

/// iperf 2's UDP rate when `-b` is not given: 1 Mbit/s in its binary sense.
pub const DEFAULT_UDP_RATE: u64 = 1_048_576;
/// iperf 2's UDP datagram when `-l` is not given.
pub const DEFAULT_UDP_LEN: u64 = 1470;
/// iperf 2's TCP write length when `-l` is not given (128 KiB, as sonde's own).
pub const DEFAULT_TCP_LEN: u64 = 128 * 1024;

/// What the header says beyond the test parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// `-l` was given: its value goes in the header (2.1.8 writes 0 otherwise).
    pub length_given: bool,
    /// The server's port, which 2.1.8 writes in the port field even without `-d` / `-r`.
    pub server_port: u16,
}

/// The header 2.1.8 writes for a test with `p`.
pub fn header(p: &TestParams, req: Request) -> ClientHeader {
    let udp = p.protocol == Protocol::Udp;
    let declared = BASE_LEN + EXT_LEN + if udp { udp::LEN } else { 0 };
    let mut f = flags::EXTEND | flags::LEN_BIT | ((declared as u32) << 1);
    if udp {
        f |= flags::SEQNO64B;
    }
    let mut upper = 0;
    match p.direction {
        Direction::Reverse => upper |= ext_flags::REVERSE,
        // --full-duplex: both ways on each connection (iperf 2 has no --bidir).
        Direction::Bidir => upper |= ext_flags::FULLDUPLEX,
        Direction::Upload => {}
    }
    if upper != 0 {
        f |= flags::VERSION2;
    }
    let rate = if p.rate.is_unlimited() {
        0
    } else {
        p.rate.bits_per_sec()
    };
    ClientHeader {
        base: BaseHeader {
            flags: f,
            threads: p.parallel.min(i32::MAX as u32) as i32,
            port: i32::from(req.server_port),
            buf_len: if req.length_given {
                p.length.bytes().min(i32::MAX as u64) as i32
            } else {
                0
            },
            win_band: 0,
            amount: amount(p),
        },
        ext: Some(Extension {
            upper_flags: upper,
            version_u: VERSION_2_1_8.0,
            version_l: VERSION_2_1_8.1,
            tos: u16::from(p.tos),
            rate_l: rate as u32,
            rate_u: ((rate >> 32) as u32) << 8,
            ..Extension::default()
        }),
        start: None,
        rest: Vec::new(),
    }
}

/// The amount field: bytes (`-n`, or `-k` blocks of `-l`) when positive, else minus the
/// duration (with `-O`'s omitted seconds, which sonde sends too) in 10 ms units.
fn amount(p: &TestParams) -> i32 {
    let bytes = if p.bytes.is_zero() {
        p.blocks.saturating_mul(p.length.bytes())
    } else {
        p.bytes.bytes()
    };
    if bytes > 0 {
        return bytes.min(i32::MAX as u64) as i32;
    }
    let centis = ((p.duration_secs + p.omit_secs) * 100.0).round();
    -(centis.clamp(1.0, MAX_DURATION_CS as f64) as i32)
}

/// The header's bytes.
pub fn bytes(h: &ClientHeader) -> Vec<u8> {
    let mut out = Vec::with_capacity(h.len());
    h.emit(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::iperf2::captures::{self, hex};
    use sonde_stats::units::{Rate, Size};

    fn tcp(secs: f64) -> TestParams {
        TestParams {
            duration_secs: secs,
            length: Size::from_bytes(DEFAULT_TCP_LEN),
            ..TestParams::default()
        }
    }

    fn udp(rate: u64, len: u64) -> TestParams {
        TestParams {
            protocol: Protocol::Udp,
            duration_secs: 1.0,
            length: Size::from_bytes(len),
            rate: Rate::from_bits_per_sec(rate),
            ..TestParams::default()
        }
    }

    const PORT: Request = Request {
        length_given: false,
        server_port: 16000,
    };

    #[test]
    fn tcp_headers_are_what_2_1_8_sends() {
        assert_eq!(bytes(&header(&tcp(1.0), PORT)), hex(captures::TCP_DEFAULT));
        assert_eq!(
            bytes(&header(&tcp(2.0), PORT)),
            hex(captures::TCP_WINDOW_2S)
        );
        let reverse = TestParams {
            direction: Direction::Reverse,
            ..tcp(1.0)
        };
        assert_eq!(bytes(&header(&reverse, PORT)), hex(captures::TCP_REVERSE));
        let duplex = TestParams {
            direction: Direction::Bidir,
            ..tcp(1.0)
        };
        assert_eq!(
            bytes(&header(&duplex, PORT)),
            hex(captures::TCP_FULL_DUPLEX)
        );
        let counted = TestParams {
            parallel: 2,
            duration_secs: 0.0,
            bytes: Size::from_bytes(100_000),
            length: Size::from_bytes(1000),
            ..TestParams::default()
        };
        let given = Request {
            length_given: true,
            ..PORT
        };
        assert_eq!(bytes(&header(&counted, given)), hex(captures::TCP_BYTES));
        let paced = TestParams {
            rate: Rate::from_bits_per_sec(10_000_000),
            tos: 0x10,
            ..tcp(1.0)
        };
        assert_eq!(bytes(&header(&paced, PORT)), hex(captures::TCP_RATE_TOS));
    }

    #[test]
    fn udp_headers_are_what_2_1_8_sends_after_the_datagram_header() {
        let after = |s: &str| hex(s)[udp::LEN..].to_vec();
        let one_m = header(&udp(1_000_000, DEFAULT_UDP_LEN), PORT);
        assert_eq!(bytes(&one_m), after(captures::UDP_1M));
        let four = TestParams {
            parallel: 4,
            ..udp(DEFAULT_UDP_RATE, DEFAULT_UDP_LEN)
        };
        assert_eq!(bytes(&header(&four, PORT)), after(captures::UDP_P4));
        let given = Request {
            length_given: true,
            ..PORT
        };
        let small = header(&udp(1_000_000, 64), given);
        assert_eq!(bytes(&small), after(captures::UDP_LEN64));
        assert_eq!(small.declared_len(), Some(76));
    }

    #[test]
    fn rates_above_32_bits_blocks_and_long_tests_read_back() {
        let fast = header(&udp(40_000_000_000, 1470), PORT);
        assert_eq!(fast.rate(), Some(40_000_000_000));
        fast.check().unwrap();
        let blocks = TestParams {
            duration_secs: 0.0,
            blocks: 3,
            length: Size::from_bytes(1000),
            ..TestParams::default()
        };
        assert_eq!(header(&blocks, PORT).base.amount, 3000);
        let omitted = TestParams {
            omit_secs: 1.5,
            ..tcp(2.0)
        };
        assert_eq!(header(&omitted, PORT).base.amount, -350);
        let day = header(&tcp(100_000.0), PORT);
        assert_eq!(day.base.amount, -(MAX_DURATION_CS as i32));
        day.check().unwrap();
    }
}
