//! Connections that have not yet said what they are: a bounded table with a deadline each.
//!
//! A server that gives every new connection a thread until it identifies itself can be
//! starved by peers that connect and send nothing (iperf3 #788): the threads, or a cap on
//! them, run out before a legitimate client gets its turn. This table holds unidentified
//! connections for one event loop instead, each with its own deadline, and when it is full it
//! makes room by closing the *oldest* one, so a new client is always heard: a flood of idle
//! connections only ever evicts itself.
//!
//! The table is pure: the caller reads the bytes a connection asks for ([`Pending::need`]),
//! feeds them back ([`Pending::feed`]) and passes `now` to every call that looks at time.
//! What counts as identified is decided by `sonde_proto::preamble::classify`, extended to the
//! whole 37-byte cookie for iperf3 clients and, for a sonde control connection, to its first
//! control frame (the client's hello, which a sonde client sends with the preamble): the
//! handler after it never waits for a slow peer either, so a peer that sends a valid preamble
//! and then nothing costs a table entry, not a thread.

use sonde_proto::iperf3::COOKIE_LEN as IPERF3_COOKIE_LEN;
use sonde_proto::preamble::{classify, Preamble, PreambleError, CONTROL_MAGIC};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Most bytes read at once while identifying (an iperf3 cookie; longer preambles are read in
/// several steps).
pub const MAX_IDENTIFY_LEN: usize = IPERF3_COOKIE_LEN;
/// Largest first control frame held here; a longer one is handed over at its length prefix
/// (the session then reads, and refuses, it with its own limits).
pub const MAX_HELLO_LEN: usize = 16 * 1024;
/// The control frame's length prefix.
const FRAME_PREFIX: usize = 4;

/// A slot in the table; stable while the connection is pending.
pub type Key = usize;

/// A connection leaving the table, with what was learnt about it.
#[derive(Debug)]
pub struct Leaving<C> {
    pub conn: C,
    pub peer: SocketAddr,
    /// Accept order (iperf3 data streams are ordered by it).
    pub seq: u64,
    /// Bytes it sent before it left.
    pub sent: usize,
    /// What it sent after its preamble: a control connection's first frame, for its session.
    pub early: Vec<u8>,
}

/// What feeding bytes to a connection decided.
#[derive(Debug)]
pub enum Fed<C> {
    /// Still incomplete; read [`Pending::need`] more bytes.
    More,
    /// Identified: it leaves the table for its handler.
    Identified(Leaving<C>, Preamble),
}

struct Entry<C> {
    conn: C,
    peer: SocketAddr,
    seq: u64,
    buf: Vec<u8>,
    born: u64,
}

/// Unidentified connections, at most `cap` of them, each allowed `timeout` from its arrival.
pub struct Pending<C> {
    slots: Vec<Option<Entry<C>>>,
    free: Vec<Key>,
    /// (deadline, key, birth number) in arrival order: deadlines only grow, so the front is
    /// the next to expire and the oldest to evict. Entries of keys since reused are skipped.
    order: VecDeque<(Instant, Key, u64)>,
    len: usize,
    cap: usize,
    timeout: Duration,
    births: u64,
}

impl<C> Pending<C> {
    /// A table of at most `cap` (at least 1) connections, each given `timeout`.
    pub fn new(cap: usize, timeout: Duration) -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
            len: 0,
            cap: cap.max(1),
            timeout,
            births: 0,
        }
    }

    /// Connections pending now.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The most it holds.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Adds a connection that arrived at `now`. When the table is full the oldest pending
    /// connection is evicted first and returned, for the caller to close.
    pub fn insert(
        &mut self,
        conn: C,
        peer: SocketAddr,
        seq: u64,
        now: Instant,
    ) -> (Key, Option<Leaving<C>>) {
        let evicted = if self.len >= self.cap {
            self.evict_oldest()
        } else {
            None
        };
        self.births += 1;
        let entry = Entry {
            conn,
            peer,
            seq,
            buf: Vec::new(),
            born: self.births,
        };
        let key = match self.free.pop() {
            Some(k) => {
                if let Some(slot) = self.slots.get_mut(k) {
                    *slot = Some(entry);
                }
                k
            }
            None => {
                self.slots.push(Some(entry));
                self.slots.len() - 1
            }
        };
        self.order.push_back((now + self.timeout, key, self.births));
        self.len += 1;
        if self.order.len() > 2 * self.cap + 1024 {
            // Connections that identified quickly leave stale entries behind a slow one.
            let slots = &self.slots;
            self.order
                .retain(|&(_, k, b)| matches!(slots.get(k), Some(Some(e)) if e.born == b));
        }
        (key, evicted)
    }

    /// The connection under `key`, to read from.
    pub fn conn_mut(&mut self, key: Key) -> Option<&mut C> {
        self.entry_mut(key).map(|e| &mut e.conn)
    }

    /// How many bytes `key` must still send before it can be identified (0 when unknown).
    pub fn need(&self, key: Key) -> usize {
        self.slots
            .get(key)
            .and_then(Option::as_ref)
            .map_or(0, |e| need(&e.buf))
    }

    /// Appends what `key` sent (never more than [`Pending::need`] is kept) and decides.
    pub fn feed(&mut self, key: Key, bytes: &[u8]) -> Option<Fed<C>> {
        let e = self.entry_mut(key)?;
        let room = need(&e.buf);
        e.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
        match identify(&e.buf) {
            None => Some(Fed::More),
            Some(p) => self.remove(key).map(|l| Fed::Identified(l, p)),
        }
    }

    /// Takes `key` out of the table (it closed, failed, or is being dropped).
    pub fn remove(&mut self, key: Key) -> Option<Leaving<C>> {
        let e = self.slots.get_mut(key).and_then(Option::take)?;
        self.free.push(key);
        self.len -= 1;
        let sent = e.buf.len();
        let early = match classify(&e.buf) {
            Ok(Preamble::Control) => e.buf.get(CONTROL_MAGIC.len()..).unwrap_or(&[]).to_vec(),
            _ => Vec::new(),
        };
        Some(Leaving {
            conn: e.conn,
            peer: e.peer,
            seq: e.seq,
            sent,
            early,
        })
    }

    /// Takes out every connection whose deadline is at or before `now`.
    pub fn expire(&mut self, now: Instant) -> Vec<Leaving<C>> {
        let mut gone = Vec::new();
        while let Some(&(deadline, key, born)) = self.order.front() {
            if deadline > now && self.is_live(key, born) {
                break;
            }
            self.order.pop_front();
            if self.is_live(key, born) {
                gone.extend(self.remove(key));
            }
        }
        gone
    }

    /// When the next connection expires, if any is pending.
    pub fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(&(deadline, key, born)) = self.order.front() {
            if self.is_live(key, born) {
                return Some(deadline);
            }
            self.order.pop_front();
        }
        None
    }

    /// Takes out the connection that has waited longest (to make room).
    pub fn evict_oldest(&mut self) -> Option<Leaving<C>> {
        while let Some((_, key, born)) = self.order.pop_front() {
            if self.is_live(key, born) {
                return self.remove(key);
            }
        }
        None
    }

    /// Takes out everything (at shutdown).
    pub fn drain(&mut self) -> Vec<Leaving<C>> {
        self.order.clear();
        (0..self.slots.len())
            .filter_map(|k| self.remove(k))
            .collect()
    }

    fn is_live(&self, key: Key, born: u64) -> bool {
        matches!(self.slots.get(key), Some(Some(e)) if e.born == born)
    }

    fn entry_mut(&mut self, key: Key) -> Option<&mut Entry<C>> {
        self.slots.get_mut(key).and_then(Option::as_mut)
    }
}

/// What `buf` (the first bytes of a connection) is, once it is complete: sonde's preambles,
/// or a foreign (iperf3) connection once its whole cookie is in.
fn identify(buf: &[u8]) -> Option<Preamble> {
    (need(buf) == 0).then(|| classify(buf).ok()).flatten()
}

/// Bytes still missing before `buf` can be identified.
fn need(buf: &[u8]) -> usize {
    match classify(buf) {
        Ok(Preamble::Foreign(b)) => MAX_IDENTIFY_LEN.saturating_sub(b.len()),
        Ok(Preamble::Control) => first_frame_missing(buf.get(CONTROL_MAGIC.len()..).unwrap_or(&[])),
        Ok(_) => 0,
        Err(PreambleError::Incomplete(n)) => n,
    }
}

/// Bytes missing from the first control frame in `after` (what followed the magic): its
/// length prefix, then as much as the prefix says, unless that is 0 or over
/// [`MAX_HELLO_LEN`] (then nothing more is waited for).
fn first_frame_missing(after: &[u8]) -> usize {
    let Some(prefix) = after.get(..FRAME_PREFIX) else {
        return FRAME_PREFIX - after.len();
    };
    let len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
    if len == 0 || len > MAX_HELLO_LEN {
        return 0;
    }
    (FRAME_PREFIX + len).saturating_sub(after.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::preamble::{CONTROL_MAGIC, DATA_MAGIC};

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn table(cap: usize) -> (Pending<u32>, Instant) {
        (Pending::new(cap, Duration::from_secs(15)), Instant::now())
    }

    /// The control magic followed by a first frame of `body_len` body bytes.
    fn control_with_frame(body_len: u32) -> Vec<u8> {
        let mut v = CONTROL_MAGIC.to_vec();
        v.extend_from_slice(&body_len.to_be_bytes());
        v.extend(std::iter::repeat_n(b'x', body_len as usize));
        v
    }

    /// Feeds `bytes` as the gate reads them (never more than asked for) until it decides.
    fn feed_all(t: &mut Pending<u32>, k: Key, mut bytes: &[u8]) -> Option<Fed<u32>> {
        loop {
            let n = t.need(k).min(bytes.len());
            match t.feed(k, &bytes[..n]) {
                Some(Fed::More) if n > 0 => bytes = &bytes[n..],
                other => return other,
            }
        }
    }

    #[test]
    fn a_control_connection_leaves_with_its_first_frame() {
        let (mut t, now) = table(4);
        let (k, ev) = t.insert(7, peer(1), 1, now);
        assert!(ev.is_none());
        assert_eq!(t.need(k), 8);
        assert!(matches!(t.feed(k, b"SONDE"), Some(Fed::More)));
        assert_eq!(t.need(k), 3);
        // The magic alone is not enough: a peer that stops here holds no thread.
        assert!(matches!(t.feed(k, &CONTROL_MAGIC[5..]), Some(Fed::More)));
        assert_eq!(t.need(k), 4, "the frame's length prefix");
        let whole = control_with_frame(10);
        assert!(matches!(t.feed(k, &whole[8..12]), Some(Fed::More)));
        assert_eq!(t.need(k), 10);
        assert!(matches!(t.feed(k, &whole[12..20]), Some(Fed::More)));
        match t.feed(k, &whole[20..]) {
            Some(Fed::Identified(l, Preamble::Control)) => {
                assert_eq!((l.conn, l.seq, l.sent), (7, 1, 22));
                assert_eq!(
                    l.early,
                    whole[8..].to_vec(),
                    "the frame goes to the session"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(t.len(), 0);
        assert!(t.next_deadline().is_none());
    }

    #[test]
    fn an_empty_or_oversized_first_frame_is_handed_over_at_its_prefix() {
        for len in [0, MAX_HELLO_LEN as u32 + 1, u32::MAX] {
            let (mut t, now) = table(4);
            let (k, _) = t.insert(1, peer(1), 1, now);
            let mut bytes = CONTROL_MAGIC.to_vec();
            bytes.extend_from_slice(&len.to_be_bytes());
            match feed_all(&mut t, k, &bytes) {
                Some(Fed::Identified(l, Preamble::Control)) => assert_eq!(l.early.len(), 4),
                other => panic!("{len}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_data_preamble_needs_its_cookie_and_stream_id() {
        let (mut t, now) = table(4);
        let (k, _) = t.insert(1, peer(1), 1, now);
        assert!(matches!(t.feed(k, DATA_MAGIC), Some(Fed::More)));
        assert_eq!(t.need(k), 20);
        let mut rest = [9u8; 20];
        rest[16..].copy_from_slice(&3u32.to_be_bytes());
        match t.feed(k, &rest) {
            Some(Fed::Identified(_, Preamble::Data { cookie, stream_id })) => {
                assert_eq!((cookie, stream_id), ([9u8; 16], 3));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_iperf3_cookie_is_read_whole_before_it_leaves() {
        let (mut t, now) = table(4);
        let (k, _) = t.insert(1, peer(1), 1, now);
        assert!(matches!(t.feed(k, b"abc"), Some(Fed::More)));
        assert_eq!(t.need(k), 34);
        // bytes beyond the cookie are never taken from the peer's stream
        let rest = [b'a'; 40];
        match t.feed(k, &rest) {
            Some(Fed::Identified(l, Preamble::Foreign(b))) => {
                assert_eq!((b.len(), l.sent), (37, 37));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deadlines_expire_in_arrival_order() {
        let (mut t, now) = table(8);
        let (a, _) = t.insert(1, peer(1), 1, now);
        let (_b, _) = t.insert(2, peer(2), 2, now + Duration::from_secs(5));
        assert_eq!(t.next_deadline(), Some(now + Duration::from_secs(15)));
        assert!(t.expire(now + Duration::from_secs(14)).is_empty());
        let gone = t.expire(now + Duration::from_secs(15));
        assert_eq!(gone.iter().map(|l| l.conn).collect::<Vec<_>>(), vec![1]);
        // a removed key's stale deadline never expires its reuser early
        let (c, _) = t.insert(3, peer(3), 3, now + Duration::from_secs(16));
        assert_eq!(c, a);
        assert_eq!(t.next_deadline(), Some(now + Duration::from_secs(20)));
        let gone = t.expire(now + Duration::from_secs(20));
        assert_eq!(gone.iter().map(|l| l.conn).collect::<Vec<_>>(), vec![2]);
        assert_eq!(t.len(), 1);
        assert_eq!(t.next_deadline(), Some(now + Duration::from_secs(31)));
    }

    #[test]
    fn a_full_table_evicts_its_oldest_so_a_newcomer_is_always_heard() {
        let (mut t, now) = table(3);
        for i in 0..3 {
            assert!(t.insert(i, peer(1), u64::from(i), now).1.is_none());
        }
        let (k, ev) = t.insert(99, peer(2), 3, now);
        assert_eq!(ev.map(|l| l.conn), Some(0));
        assert_eq!(t.len(), 3);
        // the newcomer can identify itself at once
        assert!(matches!(
            feed_all(&mut t, k, &control_with_frame(3)),
            Some(Fed::Identified(l, Preamble::Control)) if l.conn == 99
        ));
        // a flood of 10 000 more evicts only itself, in order, and memory stays bounded
        let evicted = (100..10_100)
            .filter(|&i| t.insert(i, peer(3), u64::from(i), now).1.is_some())
            .count();
        // the first one only fills the newcomer's place
        assert_eq!(evicted, 9_999);
        assert_eq!(t.len(), 3);
        assert!(t.slots.len() <= 3);
        assert!(t.order.len() <= 2 * 3 + 1024);
        let left: Vec<_> = t.drain().into_iter().map(|l| l.conn).collect();
        assert_eq!(left.len(), 3);
        assert!(t.len() == 0 && t.evict_oldest().is_none());
    }

    #[test]
    fn unknown_keys_are_harmless() {
        let (mut t, _) = table(2);
        assert!(t.feed(5, b"x").is_none());
        assert!(t.remove(5).is_none());
        assert_eq!(t.need(5), 0);
        assert!(t.conn_mut(5).is_none());
    }
}
