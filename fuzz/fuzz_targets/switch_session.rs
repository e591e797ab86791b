//! Hostile frames, path changes and calls into switching sessions.
//! The property lives in `sonde_fuzz_checks::switch_session` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::switch_session(data));
