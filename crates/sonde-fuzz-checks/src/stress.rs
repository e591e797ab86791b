//! The stress client's UDP probe header (sonde-stress), read back from the device under
//! test's echo service: what parses emits the same header bytes.

use sonde_stress::client::udp::probe::{Probe, LEN};

pub fn stress_probe(data: &[u8]) {
    if let Some(p) = Probe::parse(data) {
        let mut out = [0u8; LEN];
        assert!(p.emit(&mut out));
        assert_eq!(&out[..], &data[..LEN]);
        assert_eq!(Probe::parse(&out), Some(p));
    }
}
