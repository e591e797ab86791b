//! A hostile line into the serial receiver.
//! The property lives in `sonde_fuzz_checks::serial_receiver` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::serial_receiver(data));
