//! The serial block protocol (sonde-serial): HDLC-like framing with a CRC, the control
//! payloads, and the receiver state machine fed a hostile line.

use sonde_serial::control::{Begin, End, EndAck};
use sonde_serial::frame::{Deframer, Frame, MAX_PAYLOAD};
use sonde_serial::Receiver;

use crate::input::Records;

/// Line bytes through the deframer, and the unstuffed form through `Frame::parse`: every
/// frame that comes out emits bytes that deframe to the same frame; control payloads that
/// parse emit the same bytes.
pub fn serial_frames(data: &[u8]) {
    let mut frames = Vec::new();
    Deframer::new().push_all(data, |r| {
        if let Ok(f) = r {
            frames.push(f);
        }
    });
    if let Ok(f) = Frame::parse(data) {
        frames.push(f);
    }
    for f in frames {
        assert!(f.payload.len() <= MAX_PAYLOAD);
        let mut again = Vec::new();
        Deframer::new().push_all(&f.emit(), |r| again.push(r));
        assert_eq!(again, vec![Ok(f.clone())]);
        if let Some(b) = Begin::parse(&f.payload) {
            assert_eq!(Begin::parse(&b.emit()), Some(b));
        }
        if let Some(e) = End::parse(&f.payload) {
            assert_eq!(e.emit(), f.payload);
        }
        if let Some(a) = EndAck::parse(&f.payload) {
            assert_eq!(a.emit(), f.payload);
        }
    }
}

/// A hostile line into the receiver: each record is either raw line bytes or a frame with a
/// valid CRC built from the record (kind, transfer, seq, payload), so the receiver's logic is
/// reached behind the checksum. Answers and events are drained after each record.
pub fn serial_receiver(data: &[u8]) {
    let mut rx = Receiver::new();
    for rec in Records::new(data) {
        match rec.split_first() {
            Some((&pick, body)) if pick & 1 == 1 && body.len() >= 3 => {
                let (kind, rest) = (body[0] % 8, &body[1..]);
                let f = Frame {
                    kind: kind_of(kind),
                    transfer: u16::from(rest[0] % 2),
                    seq: u32::from(rest[1] % 8),
                    payload: rest[2..].to_vec(),
                };
                rx.handle_input(&f.emit());
            }
            _ => rx.handle_input(rec),
        }
        while rx.poll_transmit().is_some() {}
        while rx.poll_event().is_some() {}
        let _ = (rx.stats(), rx.noise());
    }
}

fn kind_of(b: u8) -> sonde_serial::frame::Kind {
    use sonde_serial::frame::Kind;
    match b {
        0 | 1 => Kind::Begin,
        2 => Kind::Data,
        3 => Kind::Ack,
        4 => Kind::Nak,
        5 => Kind::End,
        _ => Kind::EndAck,
    }
}
