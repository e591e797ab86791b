//! sonde's wire formats and control-protocol state machines, with no I/O.
//!
//! Everything here takes bytes (and, where it matters, a timestamp) and returns bytes, messages or
//! events; the runtime owns sockets and clocks. That is what makes the protocol testable with byte
//! vectors and fuzzable (see `fuzz/` at the workspace root).
//!
//! - [`preamble`]: the first bytes of every TCP connection to a sonde server, telling control
//!   connections from data streams (and, later, from iperf3's 37-byte cookie).
//! - [`frame`]: length-prefixed, typed control frames with a bounded size.
//! - [`message`]: the control messages and their capability negotiation.
//! - [`session`]: the client and server control state machines with checked transitions.
//! - [`capacity`]: capacity probe trains (`sonde capacity`): the plan, probes and acks.
//! - [`datagram`]: the UDP test datagram header (64-bit sequence, nanosecond send time).
//! - [`datagram_format`]: one view over sonde's and iperf3's datagram headers, for the runtime's
//!   single set of UDP workers.
//! - [`udp_hello`]: the retransmitted, acknowledged UDP stream set-up.
//! - [`iperf2`]: iperf 2's client header, UDP datagram header, server report and bounceback
//!   header, for interoperating with iperf 2.1.
//! - [`iperf3`]: iperf3's control protocol and UDP format, for interoperating with iperf3.
//! - [`icmp`]: ICMP/ICMPv6 echo messages (RFC 792, RFC 4443) for `sonde latency --icmp`.
//! - [`probe`]: latency probe requests and replies (`sonde latency`).
//! - [`psk`]: the pre-shared-key challenge and HMAC answer (`--psk-file`); iperf3's RSA
//!   credentials are in [`iperf3::auth`].
//!
//! ```
//! use sonde_proto::datagram::DatagramHeader;
//! let mut buf = [0u8; 16];
//! DatagramHeader { seq: 7, send_ns: 42 }.emit(&mut buf).unwrap();
//! assert_eq!(DatagramHeader::parse(&buf).unwrap().seq, 7);
//! ```

pub mod capacity;
pub mod coded;
pub mod datagram;
pub mod datagram_format;
pub mod foreign;
pub mod frame;
pub mod icmp;
pub mod iperf2;
pub mod iperf3;
pub mod message;
pub mod preamble;
pub mod probe;
pub mod probe_tag;
pub mod psk;
pub mod session;
pub mod udp_hello;

/// The control-protocol version this build speaks.
pub const PROTOCOL_VERSION: u16 = 1;
/// The oldest control-protocol version this build accepts from a peer.
pub const MIN_PROTOCOL_VERSION: u16 = 1;
/// Default port, as iperf3's.
pub const DEFAULT_PORT: u16 = 5201;
