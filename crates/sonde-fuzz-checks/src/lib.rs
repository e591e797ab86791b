//! What every sonde fuzz target checks, as plain functions of the input bytes.
//!
//! The libFuzzer targets in `fuzz/` are one line each: they call the function of the same
//! name here. Keeping the bodies in a normal workspace crate means the same properties run on
//! stable Rust too: `tests/replay.rs` feeds every committed seed and every reproducer of a
//! past crash (`fuzz/seeds/<target>/`) through them, so CI replays the corpora without a
//! nightly toolchain, and a fixed crash cannot come back unnoticed.
//!
//! Each function is the property that must hold for *any* input: it never panics on its own,
//! it asserts where the decoder has an encoder that decoding the encoding gives the value
//! back, and the state machines it drives are bounded by their own limits (the campaign runs
//! with libFuzzer's `-rss_limit_mb` and `-malloc_limit_mb` to catch unbounded allocation).
//! A panic here is a finding: the decoder is wrong, or the property is.
//!
//! ```
//! // Arbitrary bytes through the coded protocol's receiver: must not panic.
//! sonde_fuzz_checks::coded_receiver(b"\xc5\x01\x00\x00 not a real symbol");
//! ```

// A check's job is to stop the process on a broken property; these are its assertions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod coded;
mod input;
mod iperf2;
mod proto;
mod serial;
mod stress;
mod switch;

pub use coded::{coded_receiver, coded_sender, coded_wire};
pub use iperf2::{
    iperf2_ack, iperf2_bounceback, iperf2_client_hdr, iperf2_server_report, iperf2_udp,
};
pub use proto::{
    capacity, datagram, datagram_format, foreign_peer, frame_decoder, iperf3_control, iperf3_json,
    iperf3_udp, latency_replies, message_decode, preamble, probe, udp_hello,
};
pub use serial::{serial_frames, serial_receiver};
pub use stress::stress_probe;
pub use switch::{switch_frames, switch_session};

/// A fuzz target: its name (the binary in `fuzz/` and the folder of its seeds) and its check.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order the campaign runs them.
pub const TARGETS: &[Target] = &[
    ("frame_decoder", frame_decoder),
    ("message_decode", message_decode),
    ("preamble", preamble),
    ("foreign_peer", foreign_peer),
    ("datagram", datagram),
    ("datagram_format", datagram_format),
    ("udp_hello", udp_hello),
    ("probe", probe),
    ("latency_replies", latency_replies),
    ("capacity", capacity),
    ("iperf3_control", iperf3_control),
    ("iperf3_json", iperf3_json),
    ("iperf3_udp", iperf3_udp),
    ("iperf2_client_hdr", iperf2_client_hdr),
    ("iperf2_udp", iperf2_udp),
    ("iperf2_server_report", iperf2_server_report),
    ("iperf2_bounceback", iperf2_bounceback),
    ("iperf2_ack", iperf2_ack),
    ("coded_wire", coded_wire),
    ("coded_receiver", coded_receiver),
    ("coded_sender", coded_sender),
    ("switch_frames", switch_frames),
    ("switch_session", switch_session),
    ("serial_frames", serial_frames),
    ("serial_receiver", serial_receiver),
    ("stress_probe", stress_probe),
];
