//! iperf 2's client header (TCP stream start and UDP datagram).
//! The property lives in `sonde_fuzz_checks::iperf2_client_hdr` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf2_client_hdr(data));
