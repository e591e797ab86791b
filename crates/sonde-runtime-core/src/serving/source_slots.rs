//! How many control connections each client address holds at once (`--max-sessions-per-source`).
//!
//! A control connection that has identified itself (a sonde hello, an iperf3 cookie, a tcp-rr
//! preamble) gets a thread of its own, and a client that then says nothing keeps it until the
//! session's own timeout. Without a bound, one address could open thousands of such
//! connections and hold as many threads. Counting them per address lets a flood from one
//! source be refused while every other address is served as before. A slot is an RAII guard,
//! so a session that ends on any path gives its slot back; the table holds only addresses with
//! a connection open, so it is bounded by the open connections.

use super::policy::Refusal;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Control connections one address may hold at once unless configured otherwise: far above
/// what one client runs (each test has one), far below the threads a server can afford.
pub const DEFAULT_SESSIONS_PER_SOURCE: usize = 64;

/// The open control connections per client address.
#[derive(Debug)]
pub struct SourceSlots {
    max: Option<usize>,
    open: Mutex<HashMap<IpAddr, usize>>,
}

impl SourceSlots {
    /// At most `max` per address (`None`: no limit, the connections are still counted).
    pub fn new(max: Option<usize>) -> Self {
        Self {
            max,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Counts one more control connection from `source` until the returned slot is dropped.
    pub fn take(&self, source: IpAddr) -> SourceSlot<'_> {
        let source = source.to_canonical();
        let mut open = self.lock();
        let n = open.entry(source).or_insert(0);
        *n += 1;
        let over = self.max.is_some_and(|m| *n > m);
        SourceSlot {
            slots: self,
            source,
            over,
        }
    }

    /// Control connections open from `source` now.
    #[cfg(test)]
    fn open(&self, source: IpAddr) -> usize {
        self.lock()
            .get(&source.to_canonical())
            .copied()
            .unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, usize>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One counted control connection; dropping it gives the slot back.
#[derive(Debug)]
pub struct SourceSlot<'a> {
    slots: &'a SourceSlots,
    source: IpAddr,
    over: bool,
}

impl SourceSlot<'_> {
    /// The refusal when this connection is beyond the limit (refuse it, then drop the slot).
    pub fn refusal(&self) -> Option<Refusal> {
        let max = self.slots.max.filter(|_| self.over)?;
        Some(Refusal::SourceBusy {
            message: format!(
                "too many connections from {}: the server holds at most {max} control \
                 connections from one address at once (--max-sessions-per-source); try again \
                 when some have ended",
                self.source
            ),
        })
    }
}

impl Drop for SourceSlot<'_> {
    fn drop(&mut self) {
        let mut open = self.slots.lock();
        if let Some(n) = open.get_mut(&self.source) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.source);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));

    #[test]
    fn connections_beyond_the_limit_are_refused_and_others_unaffected() {
        let slots = SourceSlots::new(Some(2));
        let a1 = slots.take(A);
        let a2 = slots.take(A);
        let a3 = slots.take(A);
        let b1 = slots.take(B);
        assert!(a1.refusal().is_none() && a2.refusal().is_none());
        let why = a3.refusal().map(|r| r.message()).unwrap_or_default();
        assert!(
            why.contains("192.0.2.1") && why.contains("at most 2"),
            "{why}"
        );
        assert!(b1.refusal().is_none());
        assert_eq!((slots.open(A), slots.open(B)), (3, 1));
    }

    #[test]
    fn a_dropped_slot_is_given_back_and_the_table_forgets_idle_addresses() {
        let slots = SourceSlots::new(Some(1));
        let first = slots.take(A);
        assert!(slots.take(A).refusal().is_some());
        drop(first);
        assert_eq!(slots.open(A), 0);
        assert!(slots.lock().is_empty());
        assert!(slots.take(A).refusal().is_none());
    }

    #[test]
    fn a_mapped_ipv4_address_counts_as_the_ipv4_one() {
        let slots = SourceSlots::new(Some(1));
        let _v4 = slots.take(A);
        let mapped = IpAddr::V6(Ipv4Addr::new(192, 0, 2, 1).to_ipv6_mapped());
        assert!(slots.take(mapped).refusal().is_some());
        let other = IpAddr::V6(Ipv6Addr::LOCALHOST);
        assert!(slots.take(other).refusal().is_none());
    }

    #[test]
    fn without_a_limit_nothing_is_refused() {
        let slots = SourceSlots::new(None);
        let held: Vec<_> = (0..1000).map(|_| slots.take(A)).collect();
        assert!(held.iter().all(|s| s.refusal().is_none()));
        assert_eq!(slots.open(A), 1000);
    }
}
