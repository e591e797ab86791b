//! `foreign::recognise` on a peer's first bytes (which peer that is not sonde sent them).
//! The property lives in `sonde_fuzz_checks::foreign_peer` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::foreign_peer(data));
