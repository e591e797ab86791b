//! [`Error`]: why a switch test failed at either end, the library's own error inside.

use crate::policy::PolicyError;
use crate::wire::ReplyError;

/// Why a switch test (or the server's side of one) failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The switch library: a listen, connect, send, receive, switch or close.
    #[error(transparent)]
    Switch(#[from] sonde_switch::Error),
    /// The verdict file of a policy.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The server's reply broke the protocol ([`crate::wire`]).
    #[error(transparent)]
    Reply(#[from] ReplyError),
    /// The HELLO got no answer; says what listens there instead ([`crate::peer`]).
    #[error("{0}")]
    NotASwitchTestServer(String),
    /// The switching thread ended by a panic.
    #[error("the switching thread panicked")]
    SwitcherPanicked,
}

/// What a switch test tells as it goes (the command line prints it on standard error).
#[derive(Debug)]
pub enum Event {
    /// The server took a test to its end: the bytes it received, the hash sent back.
    Served { bytes: u64 },
    /// One test the server served failed; it goes on with the next.
    TestFailed(Error),
    /// The client has the server's figures but closing the connection failed (nothing
    /// measured is lost).
    CloseFailed(sonde_switch::Error),
}
