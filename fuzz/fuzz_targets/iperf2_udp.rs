//! iperf 2's UDP datagram header.
//! The property lives in `sonde_fuzz_checks::iperf2_udp` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf2_udp(data));
