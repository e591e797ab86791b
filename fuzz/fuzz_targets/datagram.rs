//! sonde's UDP data and profile datagram header; parsed headers emit the same bytes.
//! The property lives in `sonde_fuzz_checks::datagram` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::datagram(data));
