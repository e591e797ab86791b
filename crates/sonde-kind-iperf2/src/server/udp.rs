//! Every iperf 2 UDP test on the server's one iperf 2 UDP socket. iperf 2 sends a UDP test
//! from one client port, each datagram with its header, and opens nothing else, so a test is
//! the datagrams of one client address and port ([`super::udp_flow`]); it ends with the
//! client's negated sequence number, answered with the server report, again for each repeat
//! (iperf 2 repeats its final datagram until a report arrives).
//!
//! Bounded: at most [`MAX_FLOWS`] tests at once (beyond `--max-clients`), finished and refused
//! clients remembered for [`REMEMBER`] in tables of at most [`MAX_REMEMBERED`], and a test
//! whose datagrams stop for the server's `--rcv-timeout` ends with an error.

use super::udp_flow::Flow;
use sonde_platform::{pktinfo, poll};
use sonde_proto::iperf2::client_hdr::UdpClientHeader;
use sonde_proto::iperf2::request::test_params;
use sonde_proto::iperf2::udp::UdpDatagram;
use sonde_runtime_core::clock::now_ns;
use sonde_runtime_core::serving::admission::{Admitted, Serving};
use sonde_runtime_core::serving::policy;
use sonde_runtime_core::serving::served_test::canonical;
use sonde_runtime_core::start::{start_event, StartContext};
use sonde_stats::model::{ConnectedStream, Event, Role, StreamRole};
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// Tests received at once.
pub const MAX_FLOWS: usize = 1024;
/// How long a finished test's report (and a refusal) is remembered, for repeated finals.
pub const REMEMBER: Duration = Duration::from_secs(10);
/// Most finished or refused clients remembered.
pub const MAX_REMEMBERED: usize = 4096;
/// A test whose datagrams stop this long ends, without `--rcv-timeout`.
pub const IDLE_DEFAULT: Duration = Duration::from_secs(60);

struct Active<'a> {
    flow: Flow,
    admitted: Admitted<'a>,
    started: Instant,
    limit_secs: f64,
}

/// The state of the socket's tests.
struct Tests<'a> {
    port: u16,
    active: HashMap<SocketAddr, Active<'a>>,
    /// The report each finished client gets again for a repeated final datagram.
    finished: HashMap<SocketAddr, (Vec<u8>, Instant)>,
    refused: HashMap<SocketAddr, Instant>,
}

/// Serves UDP tests on `sock` until the server stops.
pub fn serve(sock: &UdpSocket, ctx: &Serving<'_>) {
    let port = sock.local_addr().map_or(0, |a| a.port());
    let mut tests = Tests {
        port,
        active: HashMap::new(),
        finished: HashMap::new(),
        refused: HashMap::new(),
    };
    let mut buf = vec![0u8; 65536];
    let _ = sock.set_nonblocking(true);
    while !ctx.stopping() {
        if matches!(poll::readable(sock, Duration::from_millis(50)), Ok(true)) {
            // A bounded batch per turn, so the housekeeping below runs under any load.
            for _ in 0..4096 {
                let Ok((n, peer, dst)) = pktinfo::recv(sock, &mut buf) else {
                    break;
                };
                let d = buf.get(..n).unwrap_or_default();
                if let Some(reply) = tests.on_datagram(d, peer, dst, ctx) {
                    let _ = pktinfo::send(sock, &reply, peer, dst);
                }
            }
        }
        tests.housekeeping(ctx);
    }
}

impl<'a> Tests<'a> {
    /// Handles one datagram; returns a report to send back, if it calls for one.
    fn on_datagram(
        &mut self,
        d: &[u8],
        peer: SocketAddr,
        dst: Option<IpAddr>,
        ctx: &Serving<'a>,
    ) -> Option<Vec<u8>> {
        let now = now_ns();
        if let Some(a) = self.active.get_mut(&peer) {
            let (h, _) = UdpDatagram::parse(d).ok()?;
            let seq = h.seq(a.flow.wide);
            if seq >= 0 {
                a.flow.on_data(seq as u64, send_ns(&h), now, d.len() as u64);
                return None;
            }
            let last = seq.unsigned_abs();
            a.flow.on_data(last, send_ns(&h), now, d.len() as u64);
            let a = self.active.remove(&peer)?;
            return Some(self.end(peer, a, Some(last), None, ctx));
        }
        if let Some((report, _)) = self.finished.get(&peer) {
            let (h, _) = UdpDatagram::parse(d).ok()?;
            return h.is_final(true).then(|| report.clone());
        }
        if self.refused.contains_key(&peer) {
            return None;
        }
        self.begin(d, peer, dst, now, ctx);
        None
    }

    /// A datagram from a new client: its header read, checked and admitted, its test started.
    fn begin(
        &mut self,
        d: &[u8],
        peer: SocketAddr,
        dst: Option<IpAddr>,
        now: u64,
        ctx: &Serving<'a>,
    ) {
        let Ok((h, _)) = UdpClientHeader::parse(d) else {
            return;
        };
        let wide = h.header.wide_seq();
        let seq = h.datagram.seq(wide);
        if seq <= 0 {
            return; // The final of a test this server does not know (or no longer does).
        }
        let mut p = test_params(&h.header, true);
        p.parallel = 1;
        let admitted = ctx.admit(peer);
        let refusal = h
            .header
            .check()
            .err()
            .map(|r| r.to_string())
            .or_else(|| admitted.refusal.clone())
            .or_else(|| self.over_capacity())
            .or_else(|| policy::check_test(&ctx.cfg.limits(), &p, &[]).map(|r| r.message()));
        if let Some(msg) = refusal {
            ctx.log(&format!(
                "refused iperf 2 UDP client {}: {msg}",
                canonical(peer)
            ));
            remember(&mut self.refused, peer, Instant::now());
            ctx.served(admitted);
            return;
        }
        let local = SocketAddr::new(dst.unwrap_or(peer.ip()), self.port);
        let interval = ctx.cfg.interval_secs.unwrap_or(1.0);
        let mut sink = (ctx.sinks)(&canonical(peer));
        let start = start_event(
            &p,
            StartContext {
                role: Role::Server,
                local: canonical(local),
                remote: canonical(peer),
                server_port: self.port,
                cookie: String::new(),
                interval_secs: interval,
                connected: vec![ConnectedStream {
                    id: 1,
                    role: StreamRole::Receiver,
                    local: canonical(local),
                    remote: canonical(peer),
                }],
                sockets: Default::default(),
            },
        );
        sonde_stats::sink::deliver(&mut *sink, &Event::Start(Box::new(start)));
        let limit_secs = policy::watchdog_secs(&ctx.cfg.limits(), &p);
        let mut flow = Flow::new(p, wide, interval, now, sink);
        flow.on_data(seq as u64, send_ns(&h.datagram), now, d.len() as u64);
        self.active.insert(
            peer,
            Active {
                flow,
                admitted,
                started: Instant::now(),
                limit_secs,
            },
        );
    }

    fn over_capacity(&self) -> Option<String> {
        (self.active.len() >= MAX_FLOWS)
            .then(|| format!("the server receives at most {MAX_FLOWS} iperf 2 UDP tests at once"))
    }

    /// Ends a test, remembers its report and counts it served.
    fn end(
        &mut self,
        peer: SocketAddr,
        mut a: Active<'a>,
        sent: Option<u64>,
        error: Option<String>,
        ctx: &Serving<'a>,
    ) -> Vec<u8> {
        if let Some(e) = &error {
            ctx.log(&format!(
                "iperf 2 UDP test with {} failed: {e}",
                canonical(peer)
            ));
        }
        let report = a.flow.finish(sent, error);
        remember(&mut self.finished, peer, (report.clone(), Instant::now()));
        ctx.served(a.admitted);
        report
    }

    /// Intervals of every test; tests gone silent or over their time ended; old memories
    /// forgotten.
    fn housekeeping(&mut self, ctx: &Serving<'a>) {
        let now = now_ns();
        let idle = ctx.cfg.rcv_timeout.unwrap_or(IDLE_DEFAULT);
        let mut ended = Vec::new();
        for (peer, a) in &mut self.active {
            a.flow.tick(now);
            if a.flow.idle_ns(now) >= idle.as_nanos() as u64 {
                ended.push((*peer, format!("no datagram for {} s", idle.as_secs())));
            } else if a.started.elapsed().as_secs_f64() > a.limit_secs {
                ended.push((*peer, "test exceeded the server's time limit".to_string()));
            }
        }
        for (peer, why) in ended {
            if let Some(a) = self.active.remove(&peer) {
                self.end(peer, a, None, Some(why), ctx);
            }
        }
        self.finished.retain(|_, (_, at)| at.elapsed() < REMEMBER);
        self.refused.retain(|_, at| at.elapsed() < REMEMBER);
    }
}

/// The client's send time in nanoseconds (its own clock; only differences are used).
fn send_ns(h: &UdpDatagram) -> u64 {
    u64::from(h.sent.sec) * 1_000_000_000 + u64::from(h.sent.usec.min(999_999)) * 1000
}

/// Remembers `peer` in a bounded table: when full, the oldest half is forgotten.
fn remember<V>(table: &mut HashMap<SocketAddr, V>, peer: SocketAddr, v: V)
where
    V: Remembered,
{
    if table.len() >= MAX_REMEMBERED {
        let mut ages: Vec<(SocketAddr, Instant)> =
            table.iter().map(|(k, v)| (*k, v.at())).collect();
        ages.sort_by_key(|(_, at)| *at);
        for (k, _) in ages.into_iter().take(MAX_REMEMBERED / 2) {
            table.remove(&k);
        }
    }
    table.insert(peer, v);
}

/// What a remembered entry says about when it was made.
trait Remembered {
    fn at(&self) -> Instant;
}

impl Remembered for Instant {
    fn at(&self) -> Instant {
        *self
    }
}

impl Remembered for (Vec<u8>, Instant) {
    fn at(&self) -> Instant {
        self.1
    }
}
