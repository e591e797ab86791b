//! What the latency client reads back: probe replies, ICMP echo replies, tcp-rr size and refusal.
//! The property lives in `sonde_fuzz_checks::latency_replies` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::latency_replies(data));
