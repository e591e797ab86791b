//! The handshake's messages: the client's hello, the server's welcome or refusal, and its
//! acceptance of a test with the cookie the data streams present.

use crate::preamble::{Cookie, COOKIE_LEN};
use serde::{Deserialize, Serialize};

use super::MessageError;

/// Client's opening message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub version: u16,
    pub min_version: u16,
    pub software: String,
    #[serde(default)]
    pub caps: Vec<String>,
}

/// Server's answer to an acceptable [`Hello`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    pub version: u16,
    pub software: String,
    #[serde(default)]
    pub caps: Vec<String>,
    /// TCP congestion-control algorithms the server host offers.
    #[serde(default)]
    pub congestion_available: Vec<String>,
    /// A server that requires a pre-shared key (`--psk-file`): its fresh challenge, 64 hex
    /// digits, which the client answers in [`TestParams::psk_answer`](super::TestParams::psk_answer) (see [`crate::psk`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_nonce: Option<String>,
    /// The server's link and TCP settings, for the interface the control connection reached
    /// it by (capability `link-facts`; an older server sends none). Read through
    /// [`LinkFacts::bounded`](sonde_stats::link::LinkFacts::bounded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<Box<sonde_stats::link::LinkFacts>>,
}

/// Why a server refuses a client or a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseCode {
    Busy,
    MaxClients,
    MaxDuration,
    MaxBitrate,
    BadParameter,
    Version,
    Congestion,
    Internal,
    /// The client did not prove it holds the server's pre-shared key.
    Auth,
}

impl RefuseCode {
    /// Stable short name, as in the JSON encoding.
    pub fn as_str(self) -> &'static str {
        match self {
            RefuseCode::Busy => "busy",
            RefuseCode::MaxClients => "max_clients",
            RefuseCode::MaxDuration => "max_duration",
            RefuseCode::MaxBitrate => "max_bitrate",
            RefuseCode::BadParameter => "bad_parameter",
            RefuseCode::Version => "version",
            RefuseCode::Congestion => "congestion",
            RefuseCode::Internal => "internal",
            RefuseCode::Auth => "auth",
        }
    }
}

/// A refusal with a message meant for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub code: RefuseCode,
    pub message: String,
}

/// Server's acceptance of a test: the cookie that data streams must present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accept {
    pub cookie: String,
}

impl Accept {
    pub fn new(cookie: &Cookie) -> Self {
        Self {
            cookie: crate::preamble::cookie_hex(cookie),
        }
    }

    /// Decodes the hex cookie.
    ///
    /// # Errors
    /// [`MessageError::BadCookie`] when it is not 32 hex digits.
    pub fn cookie(&self) -> Result<Cookie, MessageError> {
        let s = self.cookie.as_bytes();
        if s.len() != COOKIE_LEN * 2 {
            return Err(MessageError::BadCookie);
        }
        let mut out = [0u8; COOKIE_LEN];
        for (i, pair) in s.chunks_exact(2).enumerate() {
            let text = std::str::from_utf8(pair).map_err(|_| MessageError::BadCookie)?;
            out[i] = u8::from_str_radix(text, 16).map_err(|_| MessageError::BadCookie)?;
        }
        Ok(out)
    }
}
