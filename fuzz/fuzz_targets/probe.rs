//! `probe::Probe::parse` on arbitrary datagrams; what parses must emit the same header bytes,
//! and an answer is never answered again.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::probe::{Probe, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Probe::parse(data) {
        let mut out = [0u8; HEADER_LEN];
        p.emit(&mut out).unwrap();
        assert_eq!(&out[..6], &data[..6]);
        assert_eq!(&out[8..], &data[8..HEADER_LEN]);
        if let Some(a) = p.answer(1, 2, 3) {
            assert!(a.answer(1, 2, 3).is_none());
        }
    }
});
