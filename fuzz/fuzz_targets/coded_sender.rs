//! Hostile feedback and reports into the coded sender.
//! The property lives in `sonde_fuzz_checks::coded_sender` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::coded_sender(data));
