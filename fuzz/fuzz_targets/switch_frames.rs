//! The switching library's frames on a byte stream; parsed ones emit the same bytes.
//! The property lives in `sonde_fuzz_checks::switch_frames` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::switch_frames(data));
