//! The frame codec: each message is one frame whose type byte names the variant and whose
//! body is the variant as compact JSON.

use crate::frame::{self, Frame, FrameError, OPTIONAL_TYPE_BASE};
use serde::Deserialize;
use sonde_stats::model::IntervalReport;
use thiserror::Error;

use super::{Abort, Accept, Hello, Refusal, Results, Stop, TestParams, Welcome};

/// A control message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Hello(Hello),
    Welcome(Welcome),
    Refuse(Refusal),
    TestRequest(Box<TestParams>),
    Accept(Accept),
    StreamsReady,
    Start,
    Stop(Stop),
    Results(Box<Results>),
    Abort(Abort),
    Done,
    /// Optional: the server's live interval report (capability `live-intervals`).
    LiveInterval(Box<IntervalReport>),
}

/// Why a frame is not a valid message.
#[derive(Debug, Error)]
pub enum MessageError {
    #[error("unknown mandatory control message type {0:#04x}")]
    UnknownType(u8),
    #[error("malformed body of control message type {ty:#04x}: {source}")]
    BadBody { ty: u8, source: serde_json::Error },
    #[error("session cookie is not 32 hex digits")]
    BadCookie,
    #[error(transparent)]
    Frame(#[from] FrameError),
}

mod types {
    pub const HELLO: u8 = 0x01;
    pub const WELCOME: u8 = 0x02;
    pub const REFUSE: u8 = 0x03;
    pub const TEST_REQUEST: u8 = 0x04;
    pub const ACCEPT: u8 = 0x05;
    pub const STREAMS_READY: u8 = 0x06;
    pub const START: u8 = 0x07;
    pub const STOP: u8 = 0x08;
    pub const RESULTS: u8 = 0x09;
    pub const ABORT: u8 = 0x0A;
    pub const DONE: u8 = 0x0B;
    pub const LIVE_INTERVAL: u8 = 0x80;
}

fn body<T: for<'de> Deserialize<'de>>(f: &Frame) -> Result<T, MessageError> {
    serde_json::from_slice(&f.body).map_err(|source| MessageError::BadBody {
        ty: f.msg_type,
        source,
    })
}

impl Message {
    /// Short name for logs and errors.
    pub fn name(&self) -> &'static str {
        match self {
            Message::Hello(_) => "hello",
            Message::Welcome(_) => "welcome",
            Message::Refuse(_) => "refuse",
            Message::TestRequest(_) => "test-request",
            Message::Accept(_) => "accept",
            Message::StreamsReady => "streams-ready",
            Message::Start => "start",
            Message::Stop(_) => "stop",
            Message::Results(_) => "results",
            Message::Abort(_) => "abort",
            Message::Done => "done",
            Message::LiveInterval(_) => "live-interval",
        }
    }

    /// Decodes a frame. `Ok(None)` for an unknown optional type, which the caller skips.
    ///
    /// # Errors
    /// [`MessageError`] for an unknown mandatory type or a body that does not parse.
    pub fn decode(f: &Frame) -> Result<Option<Message>, MessageError> {
        use types::*;
        let msg = match f.msg_type {
            HELLO => Message::Hello(body(f)?),
            WELCOME => Message::Welcome(body(f)?),
            REFUSE => Message::Refuse(body(f)?),
            TEST_REQUEST => Message::TestRequest(Box::new(body(f)?)),
            ACCEPT => Message::Accept(body(f)?),
            STREAMS_READY => Message::StreamsReady,
            START => Message::Start,
            STOP => Message::Stop(body(f)?),
            RESULTS => Message::Results(Box::new(body(f)?)),
            ABORT => Message::Abort(body(f)?),
            DONE => Message::Done,
            LIVE_INTERVAL => Message::LiveInterval(Box::new(body(f)?)),
            t if t >= OPTIONAL_TYPE_BASE => return Ok(None),
            t => return Err(MessageError::UnknownType(t)),
        };
        Ok(Some(msg))
    }

    /// Encodes the message as one frame.
    ///
    /// # Errors
    /// [`MessageError::Frame`] if the body exceeds the frame limit.
    pub fn encode(&self) -> Result<Vec<u8>, MessageError> {
        use types::*;
        let json = |v: Result<Vec<u8>, serde_json::Error>, ty: u8| {
            v.map_err(|source| MessageError::BadBody { ty, source })
        };
        let (ty, bytes) = match self {
            Message::Hello(m) => (HELLO, json(serde_json::to_vec(m), HELLO)?),
            Message::Welcome(m) => (WELCOME, json(serde_json::to_vec(m), WELCOME)?),
            Message::Refuse(m) => (REFUSE, json(serde_json::to_vec(m), REFUSE)?),
            Message::TestRequest(m) => (TEST_REQUEST, json(serde_json::to_vec(m), TEST_REQUEST)?),
            Message::Accept(m) => (ACCEPT, json(serde_json::to_vec(m), ACCEPT)?),
            Message::StreamsReady => (STREAMS_READY, Vec::new()),
            Message::Start => (START, Vec::new()),
            Message::Stop(m) => (STOP, json(serde_json::to_vec(m), STOP)?),
            Message::Results(m) => (RESULTS, json(serde_json::to_vec(m), RESULTS)?),
            Message::Abort(m) => (ABORT, json(serde_json::to_vec(m), ABORT)?),
            Message::Done => (DONE, Vec::new()),
            Message::LiveInterval(m) => {
                (LIVE_INTERVAL, json(serde_json::to_vec(m), LIVE_INTERVAL)?)
            }
        };
        Ok(frame::encode(ty, &bytes)?)
    }
}
