//! The capacity train's probes, acknowledgements and departure reports.
//! The property lives in `sonde_fuzz_checks::capacity` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::capacity(data));
