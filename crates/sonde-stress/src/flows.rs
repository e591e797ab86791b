//! What one stress run drives, TCP connections or UDP flows ([`Flows`]), and the one way to
//! run either ([`Flows::run`]), so that a single run and every step of a ramp go the same way.
//!
//! The two clients (`client::run`, `client::udp::run`) take their own configurations and
//! fail with their own errors; [`RunError`] is either, as the caller needs no more than what
//! failed and why.

use crate::client::udp::{UdpStressConfig, UdpStressError};
use crate::client::{StressConfig, StressError};
use sonde_stats::sink::Sink;
use sonde_stats::stress::model::{StressEvent, StressMode, StressSummary, Transport};
use std::sync::atomic::AtomicBool;

/// One run's configuration: `-P` TCP connections, or `-P` UDP flows (`-u`).
#[derive(Debug, Clone)]
pub enum Flows {
    Tcp(StressConfig),
    Udp(UdpStressConfig),
}

/// Why a run (TCP or UDP) could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Tcp(#[from] StressError),
    #[error(transparent)]
    Udp(#[from] UdpStressError),
}

impl Flows {
    /// The service driven.
    pub fn mode(&self) -> StressMode {
        match self {
            Self::Tcp(c) => c.mode,
            Self::Udp(c) => c.mode,
        }
    }

    /// The device's address.
    pub fn addr(&self) -> std::net::SocketAddr {
        match self {
            Self::Tcp(c) => c.addr,
            Self::Udp(c) => c.addr,
        }
    }

    /// TCP or UDP.
    pub fn transport(&self) -> Transport {
        match self {
            Self::Tcp(_) => Transport::Tcp,
            Self::Udp(_) => Transport::Udp,
        }
    }

    /// Connections (UDP: flows) asked for.
    pub fn count(&self) -> u32 {
        match self {
            Self::Tcp(c) => c.connections,
            Self::Udp(c) => c.flows,
        }
    }

    /// The same run with `n` connections (UDP: `n` flows sharing the same offered rate).
    #[must_use]
    pub fn with_count(&self, n: u32) -> Self {
        match self {
            Self::Tcp(c) => Self::Tcp(StressConfig {
                connections: n,
                ..c.clone()
            }),
            Self::Udp(c) => Self::Udp(UdpStressConfig {
                flows: n,
                ..c.clone()
            }),
        }
    }

    /// Runs it, events to `sink` as they happen; the summary (also emitted as `End`).
    ///
    /// # Errors
    /// The event loop fails, or not one connection (socket) could be opened.
    pub fn run(
        &self,
        stop: &AtomicBool,
        sink: &mut dyn Sink<StressEvent>,
    ) -> Result<StressSummary, RunError> {
        match self {
            Self::Tcp(c) => Ok(crate::client::run(c, stop, sink)?),
            Self::Udp(c) => Ok(crate::client::udp::run(c, stop, sink)?),
        }
    }
}
