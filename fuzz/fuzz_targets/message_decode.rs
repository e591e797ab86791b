//! `Message::decode` on an arbitrary type byte and body; what decodes must re-encode and decode
//! again to a message of the same kind.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::frame::{Frame, FrameDecoder};
use sonde_proto::message::Message;

fuzz_target!(|data: &[u8]| {
    let Some((&msg_type, body)) = data.split_first() else {
        return;
    };
    let f = Frame {
        msg_type,
        body: body.to_vec(),
    };
    if let Ok(Some(m)) = Message::decode(&f) {
        let wire = m.encode().expect("a decoded message re-encodes");
        let mut d = FrameDecoder::new();
        d.push(&wire);
        let again = d.next_frame().unwrap().unwrap();
        assert_eq!(again.msg_type, msg_type);
        let back = Message::decode(&again).unwrap().unwrap();
        assert_eq!(back.name(), m.name());
    }
});
