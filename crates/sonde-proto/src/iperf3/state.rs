//! iperf3's control state bytes and error numbers.
//!
//! A state byte is a signed `char` on the control connection (`iperf.h`). Values 3, 5-8 and 15
//! are defined by iperf3 but never sent; receiving one, or any undefined value, is a protocol
//! error for the peer (iperf3 reports "received an unknown control message").

use thiserror::Error;

/// A state byte as defined by iperf3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    TestStart,
    TestRunning,
    TestEnd,
    ParamExchange,
    CreateStreams,
    ServerTerminate,
    ClientTerminate,
    ExchangeResults,
    DisplayResults,
    IperfDone,
    AccessDenied,
    ServerError,
}

/// A byte that is not a state iperf3 sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum StateError {
    #[error("state byte {0} ({0:#04x}) is defined by iperf3 but never sent")]
    NeverSent(u8),
    #[error("unknown state byte {0} ({0:#04x})")]
    Unknown(u8),
}

impl State {
    /// The byte on the wire.
    pub fn to_byte(self) -> u8 {
        let v: i8 = match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => -1,
            State::ServerError => -2,
        };
        v as u8
    }

    /// Checked conversion from a received byte.
    ///
    /// # Errors
    /// [`StateError`] for values iperf3 never sends.
    pub fn from_byte(b: u8) -> Result<State, StateError> {
        Ok(match b as i8 {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            -1 => State::AccessDenied,
            -2 => State::ServerError,
            3 | 5..=8 | 15 => return Err(StateError::NeverSent(b)),
            _ => return Err(StateError::Unknown(b)),
        })
    }
}

/// iperf3's `i_errno` values that sonde sends or explains (`iperf_api.h`).
pub mod errno {
    pub const DURATION: i32 = 5;
    pub const NUM_STREAMS: i32 = 6;
    pub const BLOCK_SIZE: i32 = 7;
    pub const BUF_SIZE: i32 = 8;
    pub const MSS: i32 = 10;
    pub const OMIT: i32 = 12;
    pub const UNIMPLEMENTED: i32 = 13;
    pub const BURST: i32 = 15;
    pub const UDP_BLOCK_SIZE: i32 = 20;
    pub const BAD_TOS: i32 = 21;
    pub const REVERSE_BIDIR: i32 = 25;
    pub const TOTAL_RATE: i32 = 27;
    pub const MAX_DURATION: i32 = 37;
    pub const RECV_PARAMS: i32 = 114;
    pub const RECV_RESULTS: i32 = 117;
    pub const MESSAGE: i32 = 110;
    pub const ACCEPT: i32 = 104;
    pub const ACCESS_DENIED: i32 = 121;
    pub const AUTH: i32 = 142;
    pub const NO_DATA: i32 = 144;
    pub const SERVER_DURATION: i32 = 160;

    /// iperf3's message for an error number (as its client prints it), or a generic text.
    pub fn describe(code: i32) -> String {
        let s = match code {
            DURATION => "test duration valid values are 0 to 86400 seconds",
            NUM_STREAMS => "number of parallel streams too large (maximum = 128)",
            BLOCK_SIZE => "block size too large",
            BUF_SIZE => "socket buffer size too large",
            MSS => "TCP MSS too large (maximum = 32767 bytes)",
            OMIT => "bogus value for --omit",
            UNIMPLEMENTED => "not implemented yet",
            BURST => "invalid burst count (maximum = 1000)",
            UDP_BLOCK_SIZE => "block size invalid (minimum = 16 bytes, maximum = 65507 bytes)",
            BAD_TOS => "bad TOS value (must be between 0 and 255 inclusive)",
            REVERSE_BIDIR => "cannot be both reverse and bidirectional",
            TOTAL_RATE => "total required bandwidth is larger than server limit",
            MAX_DURATION => {
                "client's requested duration exceeds the server's maximum permitted limit"
            }
            RECV_PARAMS => "unable to receive parameters from client",
            RECV_RESULTS => "unable to receive results",
            MESSAGE => "received an unknown control message",
            ACCEPT => "unable to accept connection from client",
            ACCESS_DENIED => "the server is busy running a test. try again later",
            AUTH => "test authorization failed",
            NO_DATA => "no data received within the receive timeout",
            SERVER_DURATION => "the server's maximum test duration expired",
            _ => return format!("iperf3 error {code}"),
        };
        format!("{s} (iperf3 error {code})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips_or_is_rejected() {
        for b in 0..=255u8 {
            match State::from_byte(b) {
                Ok(s) => assert_eq!(s.to_byte(), b),
                Err(StateError::NeverSent(x)) | Err(StateError::Unknown(x)) => assert_eq!(x, b),
            }
        }
        assert_eq!(State::AccessDenied.to_byte(), 0xFF);
        assert_eq!(State::ServerError.to_byte(), 0xFE);
        assert_eq!(State::from_byte(3), Err(StateError::NeverSent(3)));
        assert_eq!(State::from_byte(0x63), Err(StateError::Unknown(0x63)));
    }

    #[test]
    fn error_texts_name_the_code() {
        assert!(errno::describe(27).contains("bandwidth"));
        assert!(errno::describe(9999).contains("9999"));
    }
}
