//! `DatagramHeader::parse` on arbitrary datagrams; what parses must emit the same 16 bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::datagram::{DatagramHeader, HEADER_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = DatagramHeader::parse(data) {
        assert_ne!(h.seq, 0);
        let mut out = [0u8; HEADER_LEN];
        h.emit(&mut out).unwrap();
        assert_eq!(&out[..], &data[..HEADER_LEN]);
    }
});
