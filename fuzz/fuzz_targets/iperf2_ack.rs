//! iperf 2's client header acknowledgement.
//! The property lives in `sonde_fuzz_checks::iperf2_ack` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf2_ack(data));
