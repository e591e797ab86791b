//! One abstraction over the UDP test-datagram formats sonde speaks: its own header
//! ([`crate::datagram`]) and iperf3's 32- or 64-bit header ([`crate::iperf3::udp`]).
//!
//! The runtime's UDP workers are written once against [`DatagramFormat`]: a sender asks it for
//! the header length and writes each header with [`DatagramFormat::emit`]; a receiver hands
//! every datagram to [`DatagramFormat::classify`], which tells test data (sequence number and
//! send time) from the set-up datagrams that may still arrive on a data socket (sonde's
//! retransmitted hellos, iperf3's 4-byte hello answers) and from bytes that are neither.

use crate::datagram::{DatagramHeader, HEADER_LEN as SONDE_HEADER_LEN};
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
}

impl DatagramFormat {
    /// Header bytes at the start of every datagram, also the smallest datagram.
    pub fn header_len(self) -> usize {
        match self {
            DatagramFormat::Sonde => SONDE_HEADER_LEN,
            DatagramFormat::Iperf3 { wide } => header_len(wide),
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
        }
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
    fn short_buffers_are_errors_not_panics() {
        for f in [
            DatagramFormat::Sonde,
            DatagramFormat::Iperf3 { wide: false },
            DatagramFormat::Iperf3 { wide: true },
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
