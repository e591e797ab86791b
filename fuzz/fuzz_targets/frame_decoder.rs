//! Arbitrary bytes, pushed in chunks whose sizes the input chooses, through `FrameDecoder`.
//! Every frame that comes out is also fed to `Message::decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sonde_proto::frame::{FrameDecoder, MAX_FRAME_LEN};
use sonde_proto::message::Message;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the chunk size, so splits at every offset get explored.
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(split).max(1);
    let mut d = FrameDecoder::new();
    let mut consumed = 0usize;
    for piece in rest.chunks(chunk) {
        d.push(piece);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => {
                    assert!(f.body.len() < MAX_FRAME_LEN);
                    consumed += 5 + f.body.len();
                    let _ = Message::decode(&f);
                }
                Ok(None) => break,
                Err(_) => return,
            }
        }
    }
    assert_eq!(consumed + d.buffered(), rest.len());
});
