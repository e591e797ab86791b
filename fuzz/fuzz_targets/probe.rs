//! Latency probes as the responder reads them, with and without a key tag.
//! The property lives in `sonde_fuzz_checks::probe` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::probe(data));
