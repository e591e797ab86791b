//! iperf3's UDP datagram header and UDP hello.
//! The property lives in `sonde_fuzz_checks::iperf3_udp` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf3_udp(data));
