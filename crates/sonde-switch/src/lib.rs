//! One byte stream over an IPv4 and an IPv6 connection that moves between them on the fly,
//! with no byte lost, duplicated or reordered.
//!
//! A TCP connection cannot change address family, and its acknowledgements only prove that
//! the peer's kernel holds the bytes; so this crate frames the stream with its own offsets,
//! has the receiving application's side confirm what it took, and keeps what is unconfirmed:
//! a planned move continues on the new connection where the old one stops, and what a failed
//! connection may have lost is resent from the confirmed offset. [`session`] is the pure state machine (bytes and times in,
//! bytes and events out), [`wire`] the frame format, [`stats`] what a session measured, and
//! [`conn`] drives it over TCP sockets with threads; [`policy`] decides when to switch from
//! what the measurements found (from `sonde compare-ip`'s verdict itself with the `policy`
//! feature, off by default).
//!
//! ```no_run
//! use sonde_switch::{Conn, Family, Listener, Options, Targets};
//! # fn main() -> Result<(), sonde_switch::Error> {
//! let listener = Listener::bind(&["127.0.0.1:0".parse().unwrap(), "[::1]:0".parse().unwrap()])?;
//! let targets = Targets::from_addrs(&listener.local_addrs());
//! let client = Conn::connect(&targets, Family::V4, Options::default())?;
//! let server = listener.accept(None)?;
//! client.send_all(b"hello")?;
//! client.switch(Family::V6)?; // make-before-break: the stream moves to IPv6
//! client.send_all(b" world")?;
//! client.finish()?;
//! let mut buf = [0u8; 11];
//! server.recv_exact(&mut buf)?;
//! # Ok(()) }
//! ```

mod any;
pub mod conn;
mod error;
mod framer;
pub mod mptcp;
mod options;
mod path;
mod paths;
pub mod policy;
mod ready;
pub mod session;
mod stash;
pub mod stats;
pub mod wire;

pub use any::{AnyConn, AnyListener};
pub use conn::{Conn, Error, Listener, Options, Targets};
pub use mptcp::{Backend, MptcpConn, MptcpListener};
pub use stats::{Family, Stats, SwitchKind, SwitchRecord};
