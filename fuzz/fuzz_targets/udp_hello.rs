//! `udp_hello::Hello::parse` and `HelloAck::parse` on arbitrary datagrams; what parses must emit
//! the same bytes, and no datagram is both a hello and an ack.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::udp_hello::{Hello, HelloAck};

fuzz_target!(|data: &[u8]| {
    let hello = Hello::parse(data);
    let ack = HelloAck::parse(data);
    assert!(!(hello.is_ok() && ack.is_ok()));
    if let Ok(h) = hello {
        assert_eq!(&h.emit()[..], data);
    }
    if let Ok(a) = ack {
        assert_eq!(&a.emit()[..], data);
    }
});
