//! The serial block protocol's framing and control payloads.
//! The property lives in `sonde_fuzz_checks::serial_frames` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::serial_frames(data));
