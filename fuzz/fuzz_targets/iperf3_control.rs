//! The iperf3 control codec and client/server state machines.
//! The property lives in `sonde_fuzz_checks::iperf3_control` (shared with the stable corpus replay).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| sonde_fuzz_checks::iperf3_control(data));
