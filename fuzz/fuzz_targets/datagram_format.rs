//! Every datagram format the UDP workers read (sonde, iperf3 32/64-bit).
//! The property lives in `sonde_fuzz_checks::datagram_format` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::datagram_format(data));
