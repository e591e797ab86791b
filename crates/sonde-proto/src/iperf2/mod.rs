//! iperf 2's wire formats (2.1.8 as Debian ships it), sans-IO.
//!
//! iperf 2 has no control connection: a client says what it wants in a binary header at the
//! start of its first TCP write or inside every UDP datagram, and the server answers with
//! fixed-layout structures. Every field is a 32-bit (or 16-bit) big-endian integer. The
//! layouts below were read from iperf 2.1.8's `include/payloads.h` and confirmed byte for
//! byte against captures of the real 2.1.8 binary on loopback (the captures are the literal
//! test vectors of each module):
//!
//! - [`client_hdr`]: the test request (flags, threads, port to connect back to, buffer
//!   length, window or rate, amount or duration) and the 2.1 extension (version, extended
//!   flags, rate, write prefetch, start time);
//! - [`udp`]: the header of every UDP datagram (sequence number, 32 or 64 bits, and the
//!   send time); a negative sequence number marks the client's final datagrams;
//! - [`server_report`]: the datagram a UDP server sends back after the final datagrams, with
//!   its totals, loss, reordering and jitter;
//! - [`request`]: the test a header asks for, as sonde's `TestParams`;
//! - [`ack`]: the acknowledgement a TCP server writes back after reading the client header;
//! - [`bounceback`]: the request/response header of `--bounceback`;
//! - [`captures`]: the bytes the tests, fuzz seeds and docs take from real 2.1.8 traffic.
//!
//! Parsing never trusts a value: each decoder reads what the bytes hold and fails with an
//! [`Iperf2Error`] only when the bytes cannot hold what the flags promise. Whether a value is
//! acceptable (thread counts, lengths, durations, ports) is a separate question answered by
//! each type's `check`, which names a [`Refusal`] the server can report.

pub mod ack;
pub mod bounceback;
pub mod captures;
pub mod client_hdr;
pub mod request;
pub mod server_report;
pub mod udp;

use thiserror::Error;

/// iperf 2's default port.
pub const DEFAULT_PORT: u16 = 5001;
/// Most parallel streams a client may ask for (`-P`); more is refused.
pub const MAX_THREADS: i32 = 128;
/// Largest read/write length (`-l`) or bounceback size accepted: 16 MiB.
pub const MAX_LEN: i64 = 16 * 1024 * 1024;
/// Longest test accepted, in iperf 2's unit of 10 ms: 24 hours.
pub const MAX_DURATION_CS: i64 = 24 * 3600 * 100;

/// Bytes that cannot be what they claim to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Iperf2Error {
    /// Fewer bytes than the structure (or the part of it the flags promise) needs.
    #[error("{what}: {got} bytes, {need} needed")]
    Short {
        what: &'static str,
        got: usize,
        need: usize,
    },
    /// A length field smaller than the parts the flags say are present.
    #[error("{what}: length field says {claimed} bytes, the flags need at least {min}")]
    BadLength {
        what: &'static str,
        claimed: usize,
        min: usize,
    },
}

/// Why a well-formed header is still refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Refusal {
    #[error("{0} parallel streams asked for (1..={MAX_THREADS} served)")]
    Threads(i32),
    #[error("buffer length {0} outside 0..={MAX_LEN}")]
    Length(i64),
    #[error("duration of {0} x 10 ms outside what is served (up to {MAX_DURATION_CS})")]
    Duration(i64),
    #[error("port {0} to connect back to is not a usable port")]
    Port(i32),
    #[error("negative window or rate {0}")]
    Window(i32),
    #[error("time field of {0} microseconds is not below one second")]
    Micros(u32),
    #[error("negative {0}")]
    Negative(&'static str),
    #[error("a bounceback header without the bounceback flag")]
    NotBounceback,
    #[error("bounceback hold of {0} us is longer than a second")]
    Hold(u32),
    #[error("message type {0} where a client header acknowledgement (2) belongs")]
    Kind(i32),
}

/// A seconds and microseconds pair, as iperf 2 carries every time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Timestamp {
    pub sec: u32,
    pub usec: u32,
}

impl Timestamp {
    /// Both halves all ones: the value a bounceback client puts where the server writes.
    pub const UNSET: Timestamp = Timestamp {
        sec: u32::MAX,
        usec: u32::MAX,
    };

    /// A time in nanoseconds as iperf 2 carries it: the seconds wrap at 2^32, the rest is
    /// cut to microseconds.
    pub fn from_ns(ns: u64) -> Self {
        Timestamp {
            sec: (ns / 1_000_000_000) as u32,
            usec: ((ns % 1_000_000_000) / 1000) as u32,
        }
    }

    /// The time in nanoseconds (a microseconds half of a second or more is taken as it is).
    pub fn to_ns(self) -> u64 {
        u64::from(self.sec) * 1_000_000_000 + u64::from(self.usec) * 1000
    }

    /// Refuses a microseconds half of one second or more.
    pub fn check(&self) -> Result<(), Refusal> {
        if self.usec >= 1_000_000 {
            return Err(Refusal::Micros(self.usec));
        }
        Ok(())
    }
}

/// Reads big-endian fields from a slice whose length was checked up front; a read past the
/// end still fails softly (as [`Iperf2Error::Short`]) rather than panicking.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader { buf, at: 0, what }
    }

    /// Fails unless at least `n` bytes remain.
    pub(crate) fn need(&self, n: usize) -> Result<(), Iperf2Error> {
        let got = self.buf.len().saturating_sub(self.at);
        if got < n {
            return Err(Iperf2Error::Short {
                what: self.what,
                got: self.buf.len(),
                need: self.at + n,
            });
        }
        Ok(())
    }

    pub(crate) fn at(&self) -> usize {
        self.at
    }

    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.at)
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], Iperf2Error> {
        self.need(N)?;
        let mut out = [0u8; N];
        if let Some(s) = self.buf.get(self.at..self.at + N) {
            out.copy_from_slice(s);
        }
        self.at += N;
        Ok(out)
    }

    pub(crate) fn u32(&mut self) -> Result<u32, Iperf2Error> {
        self.take::<4>().map(u32::from_be_bytes)
    }

    pub(crate) fn i32(&mut self) -> Result<i32, Iperf2Error> {
        self.take::<4>().map(i32::from_be_bytes)
    }

    pub(crate) fn u16(&mut self) -> Result<u16, Iperf2Error> {
        self.take::<2>().map(u16::from_be_bytes)
    }

    pub(crate) fn ts(&mut self) -> Result<Timestamp, Iperf2Error> {
        Ok(Timestamp {
            sec: self.u32()?,
            usec: self.u32()?,
        })
    }

    /// The next `n` bytes (the caller checked they are there with [`Reader::need`]).
    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8], Iperf2Error> {
        self.need(n)?;
        let s = self.buf.get(self.at..self.at + n).unwrap_or_default();
        self.at += n;
        Ok(s)
    }
}

pub(crate) fn put_ts(out: &mut Vec<u8>, t: Timestamp) {
    out.extend_from_slice(&t.sec.to_be_bytes());
    out.extend_from_slice(&t.usec.to_be_bytes());
}
