//! `DatagramFormat::classify` on arbitrary datagrams, in every format the runtime's UDP workers
//! read; what classifies as data must emit a header that classifies as the same sequence.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::datagram_format::{DatagramFormat, Received};

fuzz_target!(|data: &[u8]| {
    for f in [
        DatagramFormat::Sonde,
        DatagramFormat::Iperf3 { wide: false },
        DatagramFormat::Iperf3 { wide: true },
    ] {
        if let Received::Data { seq, send_ns } = f.classify(data) {
            assert!(data.len() >= f.header_len());
            let mut out = vec![0u8; f.header_len()];
            if f.emit(seq, send_ns, &mut out).is_ok() {
                assert!(matches!(f.classify(&out), Received::Data { seq: s, .. } if s == seq));
            }
        }
    }
});
