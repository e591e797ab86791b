//! iperf3's JSON parameters and results.
//! The property lives in `sonde_fuzz_checks::iperf3_json` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf3_json(data));
