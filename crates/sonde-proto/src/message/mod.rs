//! sonde's control messages, their type bytes, and capability negotiation.
//!
//! Each message is one [`crate::frame`] whose type byte names the variant and whose body is the
//! variant's fields as compact JSON. JSON keeps the protocol readable in captures and lets a
//! later release add fields (unknown fields are ignored, missing optional ones default), while
//! the frame type byte keeps dispatch typed and cheap. Bodies are bounded by the frame limit.
//!
//! Capabilities: the client lists what it can do in [`Hello::caps`]; the server answers with the
//! subset it also supports in [`Welcome::caps`]. Features are only used when both list them.
//!
//! One job a file: the handshake's messages (`handshake`), the test request and its limits
//! (`params`), the end of a test (`results`), and the frame codec that dispatches on the type
//! byte (`codec`).

mod codec;
mod handshake;
mod params;
mod results;
#[cfg(test)]
mod tests;

pub use codec::{Message, MessageError};
pub use handshake::{Accept, Hello, Refusal, RefuseCode, Welcome};
pub use params::{limits, ParamError, ProfileRequest, TestParams};
pub use results::{Abort, PeerStream, ProcessLoad, Results, SentCount, Stop, MAX_RESULT_NOTES};

/// The capability under which a server's welcome carries its link facts.
pub const LINK_FACTS: &str = "link-facts";
/// A server that spaces the datagrams of a profile's burst by the stream's gap.
pub const PROFILE_GAP: &str = "profile-gap";

/// Capabilities this build implements.
pub const CAPABILITIES: &[&str] = &[
    "tcp",
    "udp",
    "reverse",
    "bidir",
    "live-intervals",
    "burst",
    "steady-pacing",
    "skip-rx-copy",
    "fq-rate",
    "dont-fragment",
    "affinity",
    "profile",
    "coded",
    "capacity",
    "cpu-load",
    "coded-options",
    LINK_FACTS,
    PROFILE_GAP,
    crate::psk::CAPABILITY,
    crate::probe_tag::CAPABILITY,
];

/// The capabilities both ends support, in this build's order.
pub fn negotiate(peer_caps: &[String]) -> Vec<String> {
    CAPABILITIES
        .iter()
        .filter(|c| peer_caps.iter().any(|p| p == *c))
        .map(|c| (*c).to_string())
        .collect()
}
