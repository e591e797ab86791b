//! One abstraction over the UDP test-datagram formats sonde speaks: its own header
//! ([`crate::datagram`]), iperf3's 32- or 64-bit header ([`crate::iperf3::udp`]) and iperf 2's
//! 16-byte header ([`crate::iperf2::udp`]).
//!
//! The runtime's UDP workers are written once against [`DatagramFormat`]: a sender asks it for
//! the header length and writes each header with [`DatagramFormat::emit`]; a receiver hands
//! every datagram to [`DatagramFormat::classify`], which tells test data (sequence number and
//! send time) from the set-up datagrams that may still arrive on a data socket (sonde's
//! retransmitted hellos, iperf3's 4-byte hello answers, iperf 2's final datagrams) and from
//! bytes that are neither.

use crate::datagram::{DatagramHeader, HEADER_LEN as SONDE_HEADER_LEN};
use crate::iperf2::udp::{UdpDatagram, LEN as IPERF2_HEADER_LEN};
use crate::iperf2::Timestamp;
use crate::iperf3::udp::{header_len, is_reply, UdpHeader};
use crate::udp_hello::{Hello, HelloAck, HELLO_LEN};
use thiserror::Error;

/// The header layout of one stream's datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatagramFormat {
    /// sonde's 16-byte header: 64-bit sequence, nanosecond send time.
    Sonde,
    /// iperf3's header: seconds, microseconds, then a 32-bit (or, `wide`, 64-bit) sequence.
    Iperf3 { wide: bool },
    /// iperf 2's 16 bytes: sequence number (low 32 bits), seconds, microseconds, the
    /// sequence number's high 32 bits (`wide`, as 2.1.8 sends; otherwise 0 and a 32-bit
    /// signed sequence number). A negative sequence number is a final datagram, not data.
    Iperf2 { wide: bool },
}

/// What one received datagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Test data with its sequence number and the sender's send time (ns, sender's clock).
    Data { seq: u64, send_ns: u64 },
    /// A set-up datagram (hello or its answer) repeated on the data socket.
    SetUp,
    /// Neither: counted as bytes received, but carries no usable sequence number.
    Malformed,
}

/// A header that cannot be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum EmitError {
    #[error("a {got}-byte datagram cannot hold the {need}-byte header")]
    TooShort { got: usize, need: usize },
    #[error("sequence number {0} does not fit iperf3's 32-bit counter (use --udp-counters-64bit)")]
    SeqOverflow(u64),
    #[error("sequence number {0} does not fit iperf 2's 32-bit signed counter")]
    Iperf2SeqOverflow(u64),
}

impl DatagramFormat {
    /// Header bytes at the start of every datagram, also the smallest datagram.
    pub fn header_len(self) -> usize {
        match self {
            DatagramFormat::Sonde => SONDE_HEADER_LEN,
            DatagramFormat::Iperf3 { wide } => header_len(wide),
            DatagramFormat::Iperf2 { .. } => IPERF2_HEADER_LEN,
        }
    }

    /// Writes the header of datagram `seq` (from 1), sent at `send_ns`, at the start of `buf`.
    ///
    /// # Errors
    /// [`EmitError`] when `buf` is shorter than the header or `seq` overflows iperf3's 32 bits.
    pub fn emit(self, seq: u64, send_ns: u64, buf: &mut [u8]) -> Result<(), EmitError> {
        let short = EmitError::TooShort {
            got: buf.len(),
            need: self.header_len(),
        };
        match self {
            DatagramFormat::Sonde => DatagramHeader { seq, send_ns }.emit(buf).map_err(|_| short),
            DatagramFormat::Iperf3 { wide } => {
                if !wide && seq > u64::from(u32::MAX) {
                    return Err(EmitError::SeqOverflow(seq));
                }
                UdpHeader::at(send_ns, seq)
                    .emit(buf, wide)
                    .map_err(|_| short)
            }
            DatagramFormat::Iperf2 { wide } => emit_iperf2(wide, seq, send_ns, buf, short),
        }
    }

    /// Classifies one received datagram.
    pub fn classify(self, d: &[u8]) -> Received {
        match self {
            DatagramFormat::Sonde => {
                if d.len() == HELLO_LEN && (Hello::parse(d).is_ok() || HelloAck::parse(d).is_ok()) {
                    return Received::SetUp;
                }
                match DatagramHeader::parse(d) {
                    Ok(h) => Received::Data {
                        seq: h.seq,
                        send_ns: h.send_ns,
                    },
                    Err(_) => Received::Malformed,
                }
            }
            DatagramFormat::Iperf3 { wide } => {
                if is_reply(d) {
                    return Received::SetUp;
                }
                match UdpHeader::parse(d, wide) {
                    Ok(h) => Received::Data {
                        seq: h.seq,
                        send_ns: h.send_ns(),
                    },
                    Err(_) => Received::Malformed,
                }
            }
            DatagramFormat::Iperf2 { wide } => classify_iperf2(wide, d),
        }
    }
}

/// iperf 2's header of datagram `seq` sent at `send_ns`, at the start of `buf`.
fn emit_iperf2(
    wide: bool,
    seq: u64,
    send_ns: u64,
    buf: &mut [u8],
    short: EmitError,
) -> Result<(), EmitError> {
    let limit = if wide {
        i64::MAX as u64
    } else {
        i32::MAX as u64
    };
    if seq > limit {
        return Err(if wide {
            EmitError::SeqOverflow(seq)
        } else {
            EmitError::Iperf2SeqOverflow(seq)
        });
    }
    let mut h = UdpDatagram::new(seq as i64, Timestamp::from_ns(send_ns));
    if !wide {
        h.id2 = 0;
    }
    let mut out = Vec::with_capacity(IPERF2_HEADER_LEN);
    h.emit(&mut out);
    buf.get_mut(..IPERF2_HEADER_LEN)
        .ok_or(short)?
        .copy_from_slice(&out);
    Ok(())
}

/// One iperf 2 datagram: data from sequence number 1 up, a final datagram (negative) as
/// set-up traffic, sequence 0 and short ones as malformed.
fn classify_iperf2(wide: bool, d: &[u8]) -> Received {
    let Ok((h, _)) = UdpDatagram::parse(d) else {
        return Received::Malformed;
    };
    match h.seq(wide) {
        s if s < 0 => Received::SetUp,
        0 => Received::Malformed,
        s => Received::Data {
            seq: s as u64,
            send_ns: h.sent.to_ns(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sonde_round_trip_and_literal_bytes() {
        let f = DatagramFormat::Sonde;
        let mut buf = [0xEEu8; 20];
        f.emit(258, 9, &mut buf).unwrap();
        assert_eq!(
            &buf[..16],
            &[0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 9]
        );
        assert_eq!(
            f.classify(&buf),
            Received::Data {
                seq: 258,
                send_ns: 9
            }
        );
        assert_eq!(f.header_len(), 16);
    }

    #[test]
    fn iperf3_narrow_round_trip_and_literal_bytes() {
        let f = DatagramFormat::Iperf3 { wide: false };
        let mut buf = [0u8; 12];
        f.emit(5, 2_000_003_000, &mut buf).unwrap();
        assert_eq!(buf, [0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 5]);
        assert_eq!(
            f.classify(&buf),
            Received::Data {
                seq: 5,
                send_ns: 2_000_003_000
            }
        );
    }

    #[test]
    fn iperf3_narrow_refuses_sequence_overflow() {
        let f = DatagramFormat::Iperf3 { wide: false };
        let mut buf = [0u8; 12];
        assert_eq!(
            f.emit(1 << 32, 0, &mut buf),
            Err(EmitError::SeqOverflow(1 << 32))
        );
        let wide = DatagramFormat::Iperf3 { wide: true };
        let mut buf = [0u8; 16];
        wide.emit(1 << 32, 0, &mut buf).unwrap();
        assert!(matches!(wide.classify(&buf), Received::Data { seq, .. } if seq == 1 << 32));
    }

    #[test]
    fn iperf2_writes_and_reads_the_captured_first_datagram() {
        use crate::iperf2::captures::{hex, UDP_FIRST};
        let want = hex(UDP_FIRST);
        let f = DatagramFormat::Iperf2 { wide: true };
        assert_eq!(f.header_len(), 16);
        let send_ns = 0x6b12_293b * 1_000_000_000 + 798_144_000;
        let mut buf = [0xEEu8; 20];
        f.emit(1, send_ns + 999, &mut buf).unwrap();
        assert_eq!(&buf[..16], &want[..]);
        assert_eq!(&buf[16..], &[0xEE; 4]);
        assert_eq!(f.classify(&want), Received::Data { seq: 1, send_ns });
        // The high word carries the sequence number's upper half when wide.
        f.emit(0x1_0000_0002, 0, &mut buf).unwrap();
        assert_eq!(
            &buf[..16],
            &[0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        );
        assert!(matches!(f.classify(&buf), Received::Data { seq, .. } if seq == 0x1_0000_0002));
    }

    #[test]
    fn iperf2_final_datagrams_and_narrow_counters() {
        use crate::iperf2::captures::{hex, UDP_FINAL};
        let fin = hex(UDP_FINAL);
        for wide in [true, false] {
            let f = DatagramFormat::Iperf2 { wide };
            assert_eq!(f.classify(&fin), Received::SetUp);
            assert_eq!(f.classify(&[0u8; 16]), Received::Malformed);
        }
        let narrow = DatagramFormat::Iperf2 { wide: false };
        let mut buf = [0xFFu8; 16];
        narrow.emit(7, 1_500_000_000, &mut buf).unwrap();
        assert_eq!(buf, [0, 0, 0, 7, 0, 0, 0, 1, 0, 7, 0xa1, 0x20, 0, 0, 0, 0]);
        assert_eq!(
            narrow.emit(1 << 31, 0, &mut buf),
            Err(EmitError::Iperf2SeqOverflow(1 << 31))
        );
    }

    #[test]
    fn short_buffers_are_errors_not_panics() {
        for f in [
            DatagramFormat::Sonde,
            DatagramFormat::Iperf3 { wide: false },
            DatagramFormat::Iperf3 { wide: true },
            DatagramFormat::Iperf2 { wide: false },
            DatagramFormat::Iperf2 { wide: true },
        ] {
            let mut buf = [0u8; 3];
            assert!(matches!(
                f.emit(1, 1, &mut buf),
                Err(EmitError::TooShort { got: 3, .. })
            ));
            assert_eq!(f.classify(&buf[..3]), Received::Malformed);
            assert_eq!(f.classify(&[]), Received::Malformed);
        }
    }

    #[test]
    fn set_up_datagrams_are_told_apart() {
        assert_eq!(
            DatagramFormat::Iperf3 { wide: false }.classify(b"6789"),
            Received::SetUp
        );
        let ack = HelloAck {
            cookie: [7; crate::preamble::COOKIE_LEN],
            stream_id: 1,
        };
        assert_eq!(DatagramFormat::Sonde.classify(&ack.emit()), Received::SetUp);
    }
}
