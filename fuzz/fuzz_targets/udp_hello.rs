//! The UDP hello and its acknowledgement.
//! The property lives in `sonde_fuzz_checks::udp_hello` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::udp_hello(data));
