//! `preamble::classify` on a connection's first bytes.
//! The property lives in `sonde_fuzz_checks::preamble` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::preamble(data));
