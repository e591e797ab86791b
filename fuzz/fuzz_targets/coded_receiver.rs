//! Hostile (raw and CRC-sealed) datagrams into the coded receiver.
//! The property lives in `sonde_fuzz_checks::coded_receiver` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::coded_receiver(data));
