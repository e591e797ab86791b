//! The stress client's UDP probe header.
//! The property lives in `sonde_fuzz_checks::stress_probe` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::stress_probe(data));
