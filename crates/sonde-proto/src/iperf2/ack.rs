//! The acknowledgement an iperf 2.1 server writes back on a TCP test connection once it has
//! read the [`client_hdr`](super::client_hdr) (2.1.8 does so on every test connection).
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | type, [`KIND`] (2) |
//! | 4 | 4 | length of the whole message: 28, or 52 with the times |
//! | 8 | 4 | flags (2.1.8: 0) |
//! | 12 | 4 | server version, major << 16 \| minor |
//! | 16 | 4 | server version, patch << 16 \| kind |
//! | 20 | 8 | reserved |
//! | 28 | 24 | with length 52: the client's send time, the server's receive time and the ack's send time (s, us each) |

use super::{Iperf2Error, Reader, Refusal, Timestamp};

/// The message type of a client header acknowledgement.
pub const KIND: i32 = 2;
/// Bytes without the times.
pub const LEN: usize = 28;
/// Bytes with the times.
pub const LEN_WITH_TIMES: usize = 52;
/// The version 2.1.8 writes (major, minor; patch, kind).
pub const VERSION_2_1_8: (u32, u32) = (0x0002_0001, 0x0008_0003);

/// The optional times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckTimes {
    pub sent: Timestamp,
    pub sent_rx: Timestamp,
    pub ack: Timestamp,
}

/// A client header acknowledgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientHdrAck {
    pub kind: i32,
    pub flags: u32,
    pub version_u: u32,
    pub version_l: u32,
    pub reserved: [u32; 2],
    pub times: Option<AckTimes>,
}

impl Default for ClientHdrAck {
    /// What a 2.1.8 server sends.
    fn default() -> Self {
        ClientHdrAck {
            kind: KIND,
            flags: 0,
            version_u: VERSION_2_1_8.0,
            version_l: VERSION_2_1_8.1,
            reserved: [0; 2],
            times: None,
        }
    }
}

impl ClientHdrAck {
    /// Reads an acknowledgement; returns it and its length (28 or 52).
    ///
    /// # Errors
    /// [`Iperf2Error::Short`] when the bytes end before the length the message declares,
    /// [`Iperf2Error::BadLength`] for a declared length other than 28 or 52.
    pub fn parse(buf: &[u8]) -> Result<(Self, usize), Iperf2Error> {
        let mut r = Reader::new(buf, "iperf2 client header ack");
        r.need(8)?;
        let kind = r.i32()?;
        let length = r.i32()?;
        let n = match usize::try_from(length) {
            Ok(n @ (LEN | LEN_WITH_TIMES)) => n,
            _ => {
                return Err(Iperf2Error::BadLength {
                    what: "iperf2 client header ack",
                    claimed: usize::try_from(length).unwrap_or(0),
                    min: LEN,
                })
            }
        };
        r.need(n - 8)?;
        let mut a = ClientHdrAck {
            kind,
            flags: r.u32()?,
            version_u: r.u32()?,
            version_l: r.u32()?,
            reserved: [r.u32()?, r.u32()?],
            times: None,
        };
        if n == LEN_WITH_TIMES {
            a.times = Some(AckTimes {
                sent: r.ts()?,
                sent_rx: r.ts()?,
                ack: r.ts()?,
            });
        }
        Ok((a, n))
    }

    /// Appends the acknowledgement to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.kind.to_be_bytes());
        out.extend_from_slice(&(self.len() as i32).to_be_bytes());
        for v in [self.flags, self.version_u, self.version_l] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        for v in self.reserved {
            out.extend_from_slice(&v.to_be_bytes());
        }
        if let Some(t) = &self.times {
            for ts in [t.sent, t.sent_rx, t.ack] {
                super::put_ts(out, ts);
            }
        }
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn len(&self) -> usize {
        if self.times.is_some() {
            LEN_WITH_TIMES
        } else {
            LEN
        }
    }

    /// Never empty; here for the `len` convention.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Refuses a message of another type.
    pub fn check(&self) -> Result<(), Refusal> {
        if self.kind != KIND {
            return Err(Refusal::Kind(self.kind));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::captures::{self, hex};
    use super::*;

    #[test]
    fn captured_ack_is_what_default_makes() {
        let b = hex(captures::CLIENT_HDR_ACK);
        let (a, n) = ClientHdrAck::parse(&b).unwrap();
        assert_eq!((n, a), (LEN, ClientHdrAck::default()));
        a.check().unwrap();
        let mut out = Vec::new();
        a.emit(&mut out);
        assert_eq!(out, b);
        for cut in 0..LEN {
            assert!(ClientHdrAck::parse(&b[..cut]).is_err());
        }
    }

    #[test]
    fn lengths_and_times() {
        let a = ClientHdrAck {
            times: Some(AckTimes {
                ack: Timestamp { sec: 1, usec: 2 },
                ..AckTimes::default()
            }),
            ..ClientHdrAck::default()
        };
        let mut out = Vec::new();
        a.emit(&mut out);
        assert_eq!(out.len(), LEN_WITH_TIMES);
        assert_eq!(ClientHdrAck::parse(&out), Ok((a, LEN_WITH_TIMES)));
        assert!(ClientHdrAck::parse(&out[..LEN_WITH_TIMES - 1]).is_err());
        let mut bad = hex(captures::CLIENT_HDR_ACK);
        bad[7] = 29;
        assert!(matches!(
            ClientHdrAck::parse(&bad),
            Err(Iperf2Error::BadLength { claimed: 29, .. })
        ));
        bad[7] = 28;
        bad[3] = 4;
        let (other, _) = ClientHdrAck::parse(&bad).unwrap();
        assert_eq!(other.check(), Err(Refusal::Kind(4)));
    }
}
