//! The coded protocol's datagrams; parsed ones emit the same bytes.
//! The property lives in `sonde_fuzz_checks::coded_wire` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::coded_wire(data));
