//! `Message::decode` on an arbitrary type byte and body; decoded messages re-encode.
//! The property lives in `sonde_fuzz_checks::message_decode` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::message_decode(data));
