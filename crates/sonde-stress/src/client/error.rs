//! Why a TCP stress run fails ([`StressError`]), and the one epoll wait every phase makes
//! ([`poll_once`]), whose failure is one.
//!
//! A leaf of `client`: the connections, the connect phase, the storm, the overload and the
//! data run all wait and fail through it, and it knows none of them.

use mio::{Events, Poll};
use std::net::SocketAddr;
use std::time::Duration;

/// Why a stress run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum StressError {
    #[error("event loop: {0}")]
    Poll(#[source] std::io::Error),
    #[error("no connection to {addr} could be opened ({why})")]
    NoneConnected { addr: SocketAddr, why: String },
}

/// One epoll wait; an interrupted wait is an empty one.
pub(crate) fn poll_once(
    poll: &mut Poll,
    events: &mut Events,
    wait: Duration,
) -> Result<(), StressError> {
    match poll.poll(events, Some(wait)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            events.clear();
            Ok(())
        }
        Err(e) => Err(StressError::Poll(e)),
    }
}
