//! One test on the server: from the client's hello to its Done, in this connection's thread.
//!
//! This file admits the test (the key, the server's limits, the test request), collects its
//! data streams as the registry routes them here, and hands the test to the kind it asks for
//! (each `sonde-kind-*` crate's `server::serve`, over the core's [`ServedTest`]).

use super::registry::Arrival;
use super::Shared;
use crate::control_conn::ControlConn;
use crate::engine::{DataSocket, LocalStream};
use crate::error::RunError;
use crate::serving::policy::{self, ClientSlot, Refusal};
use crate::serving::served_test::{canonical, reack_one, OpenStream, ServedTest, TestRules, STEP};
use crate::sockets;
use crate::test_events::TestEvents;
use sonde_platform::host::software;
use sonde_platform::sockopt;
use sonde_proto::message::{RefuseCode, TestParams};
use sonde_proto::preamble::Cookie;
use sonde_proto::session::{ServerEvent, ServerSession};
use sonde_stats::model::{Direction, StreamRole};
use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{channel, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Serves one control connection, counting it against `--max-clients`; `early` is what the
/// client sent after its preamble (its first frame, read while it was identified).
pub(super) fn serve(stream: TcpStream, peer: SocketAddr, early: &[u8], shared: &Arc<Shared>) {
    let peer = SocketAddr::new(peer.ip().to_canonical(), peer.port());
    let slot = ClientSlot::take(&shared.active, shared.cfg.max_clients);
    let source = shared.sessions.take(peer.ip());
    // The interface the client reached this end by, for a welcome that tells it.
    let link = stream
        .local_addr()
        .ok()
        .and_then(|a| sonde_platform::link_facts::of_connection(a.ip(), peer.ip()));
    let Ok(mut conn) = ControlConn::new(stream) else {
        return;
    };
    conn.push_initial(early);
    let mut session = ServerSession::new(&software(), sockopt::available_congestion());
    if let Some(l) = link {
        session.set_link(l);
    }
    if let Some(key) = &shared.cfg.auth.psk {
        match crate::auth::fresh_nonce() {
            Ok(n) => session.require_psk(key.clone(), n),
            Err(e) => {
                (shared.log)(&format!("closed {peer}: no challenge for its key: {e}"));
                return;
            }
        }
    }
    let mut emit = (shared.sinks)(&peer.to_string());
    let rules = TestRules {
        port: shared.cfg.port,
        interval_secs: shared.cfg.interval_secs,
        rcv_timeout: shared.cfg.rcv_timeout,
        limits: shared.cfg.limits(),
    };
    let test = ServedTest::new(
        conn,
        session,
        peer,
        TestEvents::new(&mut *emit),
        (rules, &*shared.interrupt, &*shared.log),
    );
    let mut run = SessionRun {
        shared,
        test,
        cookie: None,
        auth_refused: false,
    };
    let over_limit = slot.over_limit();
    let result = run.execute(over_limit, source.refusal());
    run.test.events.close(result.as_ref().err());
    if let Some(c) = run.cookie {
        shared.registry.remove(&c);
    }
    match result {
        Ok(()) => {}
        Err(RunError::PeerAborted(r)) => {
            (shared.log)(&format!("client {peer} ended the test: {r}"))
        }
        // The server's own view of a vanished peer: "the client closed", not "the server".
        Err(RunError::PeerClosed) => (shared.log)(&format!(
            "test with {peer} failed: {}",
            RunError::ClientGone
        )),
        Err(e) => (shared.log)(&format!("test with {peer} failed: {e}")),
    }
    drop(slot);
    drop(source);
    let served = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    // As iperf3's -1, a client refused for its key does not use up the one test.
    if shared.cfg.one_off && served >= 1 && !over_limit && !run.auth_refused {
        shared.shutdown.store(true, Ordering::SeqCst);
    }
}

/// A test being admitted: the kind-neutral test and what only admission needs.
struct SessionRun<'a> {
    shared: &'a Arc<Shared>,
    test: ServedTest<'a>,
    cookie: Option<Cookie>,
    /// The client was refused for its pre-shared key (it saw nothing of the server).
    auth_refused: bool,
}

fn random_cookie() -> Cookie {
    let mut c = [0u8; 16];
    sonde_platform::random::fill(&mut c);
    c
}

impl SessionRun<'_> {
    /// The session refused the client for its key and queued the refusal (already sent).
    fn auth_refused(&mut self, why: &str) -> Result<(), RunError> {
        self.auth_refused = true;
        self.test.log(&format!("refused {}: {why}", self.test.peer));
        Ok(())
    }

    fn refuse(&mut self, code: RefuseCode, msg: String) -> Result<(), RunError> {
        self.test.refuse(code, msg)
    }

    fn execute(&mut self, over_limit: bool, source_busy: Option<Refusal>) -> Result<(), RunError> {
        match self.test.next_event(STEP, "the client's hello")? {
            ServerEvent::Greeted { caps, .. } => {
                self.test.cpu_load = caps.iter().any(|c| c == "cpu-load");
            }
            ServerEvent::AuthRefused(why) => return self.auth_refused(&why),
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => return Err(RunError::Protocol("unexpected first message".into())),
        }
        if self.shared.cfg.auth.rsa.is_some() && self.shared.cfg.auth.psk.is_none() {
            // Only iperf3's credentials admit a client here; a sonde client can send them.
            self.auth_refused = true;
            return self.refuse(
                RefuseCode::Auth,
                "this server admits only clients with iperf3 RSA credentials (it has no \
                 --psk-file): run `sonde client --iperf3 --username USER \
                 --rsa-public-key-path FILE`"
                    .into(),
            );
        }
        if let Some(busy) = source_busy {
            return self.refuse(busy.code(), busy.message());
        }
        if over_limit {
            let max = self.shared.cfg.max_clients.unwrap_or(0);
            let busy = Refusal::Busy { max };
            return self.refuse(busy.code(), busy.message());
        }
        if let Some(r) = self.shared.test_rate_refusal(self.test.peer) {
            return self.refuse(r.code(), r.message());
        }
        let params = match self.test.next_event(STEP, "the test request")? {
            ServerEvent::TestRequested(p) => *p,
            ServerEvent::AuthRefused(why) => return self.auth_refused(&why),
            ServerEvent::Aborted(r) => return Err(RunError::PeerAborted(r)),
            _ => {
                // The session refused invalid parameters itself.
                self.test.flush()?;
                return Ok(());
            }
        };
        let limits = self.shared.cfg.limits();
        if let Some(r) = policy::check_test(&limits, &params, &sockopt::available_congestion()) {
            return self.refuse(r.code(), r.message());
        }
        let params = Arc::new(params);
        let cookie = random_cookie();
        let (tx, rx) = channel();
        self.shared.registry.insert(cookie, params.clone(), tx);
        self.cookie = Some(cookie);
        self.test.session.accept(&cookie);
        self.test.flush()?;
        (self.shared.log)(&format!(
            "accepted a {} test from {}",
            describe(&params),
            self.test.peer
        ));
        let streams = self.collect_streams(&params, &rx)?;
        self.test.session.streams_ready();
        self.test.flush()?;
        if params.profile.is_some() {
            return crate::profile::server::serve(&mut self.test, &params, streams);
        }
        if params.coded {
            return crate::coded::server::serve(&mut self.test, &params, streams);
        }
        if let Some(plan) = params.capacity {
            return crate::capacity::server::serve(&mut self.test, &params, plan, streams);
        }
        // Receivers and the clock start now, so that nothing the client sends once it has
        // the streams-ready message is lost or timed wrongly while its start is in flight
        // (seconds, on a lossy link); senders wait for that start (see `until_stop`).
        crate::client::server::serve(&mut self.test, &params, cookie, streams)
    }

    /// Collects the test's data streams as the registry routes them here, answering
    /// repeated UDP hellos and the control connection meanwhile; gives up after [`STEP`].
    fn collect_streams(
        &mut self,
        p: &TestParams,
        rx: &Receiver<Arrival>,
    ) -> Result<Vec<OpenStream>, RunError> {
        let want = p.stream_count() as usize;
        let mut got: BTreeMap<u32, OpenStream> = BTreeMap::new();
        let deadline = Instant::now() + STEP;
        while got.len() < want {
            self.check_stream_wait(got.len(), want, deadline)?;
            self.serve_control_during_setup()?;
            // Until streams-ready goes out the client sends only hellos, so every socket can
            // be read here: a hello whose ack was lost is answered again.
            for (s, _, _) in got.values() {
                if let (DataSocket::Udp(u), Some(ack)) = (&s.socket, s.ack) {
                    let _ = u.set_nonblocking(true);
                    reack_one(u, &ack);
                }
            }
            while let Ok(a) = rx.recv_timeout(Duration::from_millis(5)) {
                let (id, stream) = arrived_stream(p, a)?;
                got.insert(id, stream);
            }
        }
        Ok(got.into_values().collect())
    }

    /// Ends the wait for streams (telling the client why) when it took too long or the
    /// server is shutting down.
    fn check_stream_wait(
        &mut self,
        got: usize,
        want: usize,
        deadline: Instant,
    ) -> Result<(), RunError> {
        if Instant::now() >= deadline {
            let msg = format!(
                "only {got} of {want} data streams arrived within {} s",
                STEP.as_secs()
            );
            self.test.abort(&msg);
            return Err(RunError::Setup(msg));
        }
        if self.test.interrupted() {
            self.test.abort("the server is shutting down");
            return Err(RunError::Interrupted);
        }
        Ok(())
    }

    /// Handles one control message while streams arrive, if one comes within 5 ms; only an
    /// abort from the client matters then.
    fn serve_control_during_setup(&mut self) -> Result<(), RunError> {
        match self.test.pump(Duration::from_millis(5))? {
            Some(ServerEvent::Aborted(r)) => Err(RunError::PeerAborted(r)),
            _ => Ok(()),
        }
    }
}

/// A data connection the registry routed to this test, as a local stream (keyed by id).
fn arrived_stream(p: &TestParams, a: Arrival) -> Result<(u32, OpenStream), RunError> {
    // This end sends on the streams the client receives on.
    let role = |id: u32| {
        if p.client_sends(id) {
            StreamRole::Receiver
        } else {
            StreamRole::Sender
        }
    };
    Ok(match a {
        Arrival::Tcp(id, t) => {
            let role = role(id);
            sockets::apply_tcp(&sockets::as_socket2(&t), p, "server")?;
            let local = t.local_addr().map(canonical).unwrap_or_default();
            let remote = t.peer_addr().map(canonical).unwrap_or_default();
            let socket = DataSocket::Tcp(t);
            let stream = LocalStream {
                id,
                role,
                socket,
                ack: None,
            };
            (id, (stream, local, remote))
        }
        Arrival::Udp(id, u, ack) => {
            let role = role(id);
            let local = u.local_addr().map(canonical).unwrap_or_default();
            let remote = u.peer_addr().map(canonical).unwrap_or_default();
            let socket = DataSocket::Udp(u);
            let stream = LocalStream {
                id,
                role,
                socket,
                ack: Some(ack),
            };
            (id, (stream, local, remote))
        }
    })
}

fn describe(p: &TestParams) -> String {
    let proto = match p.protocol {
        sonde_stats::model::Protocol::Tcp => "TCP",
        sonde_stats::model::Protocol::Udp => "UDP",
    };
    let dir = match p.direction {
        Direction::Upload => "upload",
        Direction::Reverse => "reverse",
        Direction::Bidir => "bidir",
    };
    format!("{proto} {dir} x{}", p.parallel)
}
