//! Arbitrary bytes in input-chosen chunks through the control connection's frame decoder.
//! The property lives in `sonde_fuzz_checks::frame_decoder` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::frame_decoder(data));
