//! What a server-side session needs from the server it runs in, for a dialect that has its
//! own listener (iperf 2's): the configuration, the counters of clients, the flags that stop
//! it, the sinks and the log, and one admission decision for every test, so a client of any
//! dialect meets the same `--max-clients`, per-source and `--one-off` rules.

use super::policy::{ClientSlot, Refusal};
use super::source_slots::{SourceSlot, SourceSlots};
use super::{ServerConfig, SinkFactory};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The server as one session sees it.
pub struct Serving<'a> {
    pub cfg: &'a ServerConfig,
    /// Tests running or being set up (`--max-clients` counts them).
    pub active: &'a AtomicUsize,
    /// Tests served so far (`--one-off` stops after the first).
    pub served: &'a AtomicUsize,
    pub shutdown: &'a AtomicBool,
    pub interrupt: &'a AtomicBool,
    pub sinks: &'a SinkFactory,
    pub log: &'a (dyn Fn(&str) + Send + Sync),
    /// The refusal for a test from this address beyond the server's per-source test rate.
    pub source_refusal: &'a (dyn Fn(SocketAddr) -> Option<Refusal> + Sync),
    /// Sessions held per address (`--max-sessions-per-source`).
    pub sessions: &'a SourceSlots,
}

/// One test's places among the server's clients, held while it runs, and the reason to
/// refuse it, if there is one.
pub struct Admitted<'a> {
    _slot: ClientSlot<'a>,
    _source: SourceSlot<'a>,
    pub refusal: Option<String>,
    over_limit: bool,
}

impl<'a> Serving<'a> {
    /// Takes a client slot and a per-source slot for a test from `peer` and says whether it
    /// must be refused (per-source sessions, then `--max-clients`, then the test rate).
    pub fn admit(&self, peer: SocketAddr) -> Admitted<'a> {
        let slot = ClientSlot::take(self.active, self.cfg.max_clients);
        let source = self.sessions.take(peer.ip());
        let over_limit = slot.over_limit();
        let refusal = if let Some(busy) = source.refusal() {
            Some(busy.message())
        } else if over_limit {
            Some(
                Refusal::Busy {
                    max: self.cfg.max_clients.unwrap_or(0),
                }
                .message(),
            )
        } else {
            (self.source_refusal)(peer).map(|r| r.message())
        };
        Admitted {
            _slot: slot,
            _source: source,
            refusal,
            over_limit,
        }
    }

    /// The server is stopping (interrupted or done with `--one-off`).
    pub fn stopping(&self) -> bool {
        self.shutdown.load(Ordering::Relaxed) || self.interrupt.load(Ordering::Relaxed)
    }

    /// Counts a test that ran (or was refused) and, with `--one-off`, stops the server after
    /// the first one that was not turned away as over `--max-clients`.
    pub fn served(&self, admitted: Admitted<'_>) {
        let over_limit = admitted.over_limit;
        drop(admitted);
        self.served.fetch_add(1, Ordering::SeqCst);
        if self.cfg.one_off && !over_limit {
            self.shutdown.store(true, Ordering::SeqCst);
        }
    }

    /// Writes one line to the server's log.
    pub fn log(&self, line: &str) {
        (self.log)(line);
    }
}
