//! `preamble::classify` on arbitrary first bytes of a connection.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::preamble::{
    classify, data_preamble, Preamble, PreambleError, CONTROL_MAGIC, DATA_MAGIC, DATA_PREAMBLE_LEN,
    RR_MAGIC,
};

fuzz_target!(|data: &[u8]| {
    match classify(data) {
        Ok(Preamble::Control) => assert!(data.starts_with(CONTROL_MAGIC)),
        Ok(Preamble::Data { cookie, stream_id }) => {
            assert!(data.starts_with(DATA_MAGIC));
            assert_eq!(
                data_preamble(&cookie, stream_id)[..],
                data[..DATA_PREAMBLE_LEN]
            );
        }
        Ok(Preamble::Rr) => assert!(data.starts_with(RR_MAGIC)),
        Ok(Preamble::Foreign(v)) => assert_eq!(v, data),
        Err(PreambleError::Incomplete(n)) => assert!(n > 0 && data.len() + n <= DATA_PREAMBLE_LEN),
    }
});
