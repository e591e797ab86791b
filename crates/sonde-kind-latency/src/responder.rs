//! The server side of UDP latency probes, called by `sonde server`'s UDP listener for every
//! datagram that starts with the probe magic.
//!
//! A reply is the request's own bytes with the kind and the server fields changed, so it is
//! never larger than the request (no amplification). The only state is a bounded table of
//! request counts per (client address, session token), which splits the client's loss into
//! upstream and downstream; idle entries expire (swept at most once a minute, the table
//! shrinking with them) and the oldest is evicted when it is full. Sweeping only when full
//! let a long-running server (`sonde agent`, a latency run every second) keep 4096 finished
//! sessions and a 650 KiB table for good after about an hour.
//! With a per-source limit (`sonde server --max-probe-rate`), probes from an address beyond it
//! go unanswered and are counted, so one source cannot make the server answer without bound.
//! With a key (`sonde server --psk-file`) only probes tagged with it are answered (see
//! `sonde_proto::probe_tag`), each sequence number once per session; the rest are dropped
//! silently and counted, for a rate-limited log line.

use sonde_platform::timestamp;
use sonde_proto::probe::{looks_like_probe, Probe, ProbeKind};
use sonde_proto::probe_tag::{ProbeKey, ReplayWindow};
use sonde_runtime_core::serving::source_limit::SourceLimiter;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// Sessions remembered at once.
pub const MAX_SESSIONS: usize = 4096;
/// A session with no probe for this long is forgotten.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);
/// Least time between two sweeps of idle sessions.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// See the module documentation.
#[derive(Debug, Default)]
pub struct Responder {
    sessions: HashMap<(SocketAddr, u64), Session>,
    /// When idle sessions were last swept out.
    swept: Option<Instant>,
    limiter: Option<SourceLimiter>,
    /// Only probes tagged with this key are answered.
    key: Option<ProbeKey>,
    /// Probes dropped for a missing, wrong or replayed tag since the last
    /// [`Responder::take_rejected`], and the address of the last of them.
    rejected: u64,
    last_rejected: Option<std::net::IpAddr>,
    /// Probes left unanswered because of the limit, since the last [`Responder::take_limited`],
    /// and the address of the last of them.
    limited: u64,
    last_limited: Option<std::net::IpAddr>,
}

/// One client session: requests received, when the last came, the sequence numbers answered.
#[derive(Debug, Clone, Copy)]
struct Session {
    count: u64,
    seen: Instant,
    replay: ReplayWindow,
}

impl Responder {
    /// A responder with no sessions.
    pub fn new() -> Self {
        Self::default()
    }

    /// A responder that answers each source at most at `limiter`'s rate.
    pub fn with_limit(limiter: SourceLimiter) -> Self {
        Self {
            limiter: Some(limiter),
            ..Self::default()
        }
    }

    /// This responder, answering only probes tagged with `key`.
    pub fn keyed(self, key: ProbeKey) -> Self {
        Self {
            key: Some(key),
            ..self
        }
    }

    /// Probes dropped for a missing, wrong or replayed tag since the last call, and the
    /// address of the last of them.
    pub fn take_rejected(&mut self) -> (u64, Option<std::net::IpAddr>) {
        (
            std::mem::take(&mut self.rejected),
            self.last_rejected.take(),
        )
    }

    /// Probes left unanswered because of the per-source limit since the last call, and the
    /// address of the last of them.
    pub fn take_limited(&mut self) -> (u64, Option<std::net::IpAddr>) {
        (std::mem::take(&mut self.limited), self.last_limited.take())
    }

    /// Sessions currently remembered.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// The session of `key`, made (evicting the idle or the oldest when the table is full)
    /// when new.
    fn session(&mut self, key: (SocketAddr, u64), now: Instant) -> &mut Session {
        let new = !self.sessions.contains_key(&key);
        if new
            && (self.sessions.len() >= MAX_SESSIONS
                || self
                    .swept
                    .is_none_or(|t| now.saturating_duration_since(t) >= SWEEP_EVERY))
        {
            self.sweep(now);
        }
        if new && self.sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = self
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.seen)
                .map(|(k, _)| *k)
            {
                self.sessions.remove(&oldest);
            }
        }
        self.sessions.entry(key).or_insert(Session {
            count: 0,
            seen: now,
            replay: ReplayWindow::default(),
        })
    }

    /// Forgets the sessions idle for [`SESSION_IDLE`] and gives back the table's room
    /// beyond what is left.
    fn sweep(&mut self, now: Instant) {
        self.swept = Some(now);
        self.sessions
            .retain(|_, s| now.saturating_duration_since(s.seen) < SESSION_IDLE);
        if self.sessions.capacity() > 4 * self.sessions.len() + 64 {
            self.sessions.shrink_to(2 * self.sessions.len());
        }
    }

    fn count(&mut self, key: (SocketAddr, u64), bump: bool, now: Instant) -> u64 {
        let s = self.session(key, now);
        if bump {
            s.count += 1;
        }
        s.seen = now;
        s.count
    }

    /// With a key: true when `datagram` carries a valid tag and (a request) a sequence
    /// number not answered before in its session. Without a key: always true.
    fn admitted(&mut self, datagram: &[u8], p: &Probe, peer: SocketAddr, now: Instant) -> bool {
        let Some(key) = &self.key else {
            return true;
        };
        let ok = key.check(datagram).is_ok()
            && (p.kind != ProbeKind::Request
                || self.session((peer, p.token), now).replay.accept(p.seq));
        if !ok {
            self.rejected += 1;
            self.last_rejected = Some(peer.ip().to_canonical());
        }
        ok
    }

    /// Answers `datagram` (just read from `sock`, from `peer`, sent to this host's address
    /// `dst` when known) if it is a probe, from `dst` (sonde_platform::pktinfo). Returns false
    /// when it is not a probe, so the caller can try other formats; true when it was one
    /// (answered, or dropped as malformed or as a reply).
    pub fn handle(
        &mut self,
        sock: &UdpSocket,
        datagram: &mut [u8],
        peer: SocketAddr,
        dst: Option<IpAddr>,
    ) -> bool {
        if !looks_like_probe(datagram) {
            return false;
        }
        let recv_ns = timestamp::last_rx_ns(sock).unwrap_or_else(timestamp::realtime_ns);
        let Ok(p) = Probe::parse(datagram) else {
            return true;
        };
        if !p.kind.is_query() || !self.admitted(datagram, &p, peer, Instant::now()) {
            return true;
        }
        if let Some(l) = &mut self.limiter {
            if !l.allow(peer.ip(), Instant::now()) {
                self.limited += 1;
                self.last_limited = Some(peer.ip().to_canonical());
                return true;
            }
        }
        let count = self.count(
            (peer, p.token),
            p.kind == ProbeKind::Request,
            Instant::now(),
        );
        let Some(answer) = p.answer(recv_ns, timestamp::realtime_ns(), count) else {
            return true;
        };
        if answer.emit(datagram).is_ok() {
            let _ = sonde_platform::pktinfo::send(sock, datagram, peer, dst);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_proto::probe::HEADER_LEN;

    #[test]
    fn answers_requests_counts_and_ignores_replies() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut r = Responder::new();
        let peer = client.local_addr().unwrap();
        let mut buf = vec![0xABu8; 80];
        Probe::request(5, 1, 100).emit(&mut buf).unwrap();
        assert!(r.handle(&server, &mut buf, peer, None));
        let mut got = [0u8; 200];
        let n = client.recv(&mut got).unwrap();
        assert_eq!(n, 80, "reply as long as the request");
        assert_eq!(&got[HEADER_LEN..n], &[0xAB; 24][..], "padding echoed");
        let reply = Probe::parse(&got[..n]).unwrap();
        assert_eq!(reply.kind, ProbeKind::Reply);
        assert_eq!(
            (reply.seq, reply.client_send_ns, reply.server_count),
            (1, 100, 1)
        );
        assert!(reply.server_send_ns >= reply.server_recv_ns);

        // A reply sent to the responder is swallowed, not answered.
        let mut echo = got[..n].to_vec();
        assert!(r.handle(&server, &mut echo, peer, None));
        let mut q = [0u8; HEADER_LEN];
        let mut cq = Probe::request(5, 0, 0);
        cq.kind = ProbeKind::CountQuery;
        cq.emit(&mut q).unwrap();
        assert!(r.handle(&server, &mut q, peer, None));
        let n = client.recv(&mut got).unwrap();
        let c = Probe::parse(&got[..n]).unwrap();
        assert_eq!((c.kind, c.server_count), (ProbeKind::CountReply, 1));
        assert!(!r.handle(&server, &mut b"SNDH\x01".to_vec(), peer, None));
    }

    #[test]
    fn a_source_over_its_limit_gets_no_answer() {
        use sonde_runtime_core::serving::source_limit::RateCap;
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut r = Responder::with_limit(SourceLimiter::new(RateCap::per_second(3)));
        let peer = client.local_addr().unwrap();
        for seq in 1..=10 {
            let mut buf = vec![0u8; 64];
            Probe::request(9, seq, 100).emit(&mut buf).unwrap();
            assert!(r.handle(&server, &mut buf, peer, None));
        }
        let mut got = [0u8; 200];
        let mut answered = 0;
        while client.recv(&mut got).is_ok() {
            answered += 1;
        }
        assert_eq!(answered, 3, "the burst of the limit, then nothing");
        assert_eq!(r.take_limited(), (7, Some(peer.ip())));
        assert_eq!(r.take_limited(), (0, None));
    }

    #[test]
    fn a_keyed_responder_answers_only_tagged_probes_once() {
        use sonde_proto::probe_tag::TAGGED_LEN;
        let psk = |k: &str| sonde_proto::psk::Psk::from_file_bytes(k.as_bytes()).unwrap();
        let key = ProbeKey::new(&psk("0123456789abcdef0123456789abcdef"));
        let other = ProbeKey::new(&psk("fedcba9876543210fedcba9876543210"));
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut r = Responder::new().keyed(key.clone());
        let peer = client.local_addr().unwrap();
        let probe = |seq: u64, k: Option<&ProbeKey>| {
            let mut b = vec![0u8; 80];
            Probe::request(4, seq, 100).emit(&mut b).unwrap();
            if let Some(k) = k {
                k.seal(&mut b).unwrap();
            }
            b
        };
        let mut got = [0u8; 200];
        // Untagged, wrongly tagged: dropped, no reply.
        assert!(r.handle(&server, &mut probe(1, None), peer, None));
        assert!(r.handle(&server, &mut probe(1, Some(&other)), peer, None));
        assert!(client.recv(&mut got).is_err(), "no answer without the key");
        assert_eq!(r.take_rejected(), (2, Some(peer.ip())));
        // Tagged with the key: answered, as long as the request, tag echoed.
        let sent = probe(1, Some(&key));
        assert!(r.handle(&server, &mut sent.clone(), peer, None));
        let n = client.recv(&mut got).unwrap();
        assert_eq!(n, sent.len());
        assert_eq!(&got[HEADER_LEN..TAGGED_LEN], &sent[HEADER_LEN..TAGGED_LEN]);
        assert_eq!(Probe::parse(&got[..n]).unwrap().server_count, 1);
        // The same probe again (a replay): dropped.
        assert!(r.handle(&server, &mut sent.clone(), peer, None));
        assert!(client.recv(&mut got).is_err(), "a replay is not answered");
        assert_eq!(r.take_rejected(), (1, Some(peer.ip())));
        assert!(r.handle(&server, &mut probe(2, Some(&key)), peer, None));
        assert!(client.recv(&mut got).is_ok());
    }

    #[test]
    fn session_table_is_bounded() {
        let mut r = Responder::new();
        let now = Instant::now();
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        for token in 0..(MAX_SESSIONS as u64 + 50) {
            r.count((peer, token), true, now + Duration::from_millis(token));
        }
        assert_eq!(r.sessions(), MAX_SESSIONS);
        assert_eq!(r.count((peer, MAX_SESSIONS as u64 + 49), true, now), 2);
    }

    #[test]
    fn finished_sessions_are_forgotten_before_the_table_fills() {
        let mut r = Responder::new();
        let t0 = Instant::now();
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        // A latency run a second, as an agent's schedule makes them: five probes each.
        for run in 0..3000u64 {
            let at = t0 + Duration::from_secs(run);
            for _ in 0..5 {
                r.count((peer, run), true, at);
            }
        }
        // Only the runs of the last SESSION_IDLE, and those since the last sweep, remain.
        let idle = SESSION_IDLE.as_secs() as usize;
        let sweep = SWEEP_EVERY.as_secs() as usize;
        assert!(
            (idle..=idle + sweep).contains(&r.sessions()),
            "{} sessions",
            r.sessions()
        );
        assert!(r.sessions.capacity() <= 4 * r.sessions() + 64);
        // A session still running keeps its count across a sweep.
        assert_eq!(
            r.count((peer, 2999), true, t0 + Duration::from_secs(3100)),
            6
        );
        // Ten minutes later a new run finds the table swept to itself.
        let later = t0 + Duration::from_secs(3000) + SESSION_IDLE * 2;
        assert_eq!(r.count((peer, 5000), true, later), 1);
        assert_eq!(r.sessions(), 1);
        assert!(r.sessions.capacity() <= 64 + 4, "{}", r.sessions.capacity());
    }
}
