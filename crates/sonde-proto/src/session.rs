//! The control-protocol state machines of the client and the server, with checked transitions.
//!
//! Sequence (C = client, S = server), all over the control connection:
//!
//! ```text
//! C→S Hello            S→C Welcome | Refuse
//!      (C checks the server's capabilities before it asks for anything)
//! C→S TestRequest      S→C Accept | Refuse
//!      (a server with a pre-shared key: the Welcome carries a nonce, the request an HMAC
//!       answer, checked before anything else; see crate::psk)
//!      (C opens the data streams; S counts them)
//! S→C StreamsReady     C→S Start          data flows
//! S→C LiveInterval*    (optional, capability "live-intervals")
//! C→S Stop             (C decides the end: time, bytes or blocks)
//! S→C LiveInterval?    (the last, partial one, cut at the Stop)
//! S→C Results          C→S Results, Done
//! ```
//!
//! Either side may send `Abort` at any point. Calling order, as quinn-proto's `Connection`: feed
//! inbound messages with `handle`, tell the session what the runtime decided with the other
//! methods, then drain `poll_transmit` (messages to send) and `poll_event` (what happened). A
//! message that does not fit the current state is a [`ProtocolError`] and ends the session.

use crate::message::{
    negotiate, Abort, Accept, Hello, Message, Refusal, RefuseCode, Results, Stop, TestParams,
    Welcome, CAPABILITIES, LINK_FACTS,
};
use crate::preamble::Cookie;
use crate::psk::{self, Nonce, Psk};
use crate::{MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use sonde_stats::link::LinkFacts;
use sonde_stats::model::IntervalReport;
use std::collections::VecDeque;
use thiserror::Error;

/// A message arrived that the protocol does not allow in the current state.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ProtocolError {
    #[error("peer sent {got} while this end was {state}")]
    Unexpected {
        state: &'static str,
        got: &'static str,
    },
    #[error("peer speaks control protocol {peer}, this build needs {min}..={max}")]
    Version { peer: u16, min: u16, max: u16 },
    #[error("peer sent a malformed session cookie")]
    BadCookie,
    #[error("server sent a malformed authentication nonce")]
    BadNonce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientState {
    AwaitWelcome,
    /// Welcomed; the runtime has not yet asked for the test (it checks capabilities first).
    Welcomed,
    AwaitAccept,
    AwaitReady,
    Running,
    AwaitResults,
    Finished,
    Closed,
}

impl ClientState {
    fn name(self) -> &'static str {
        match self {
            ClientState::AwaitWelcome => "waiting for welcome",
            ClientState::Welcomed => "checking the server's capabilities",
            ClientState::AwaitAccept => "waiting for the test to be accepted",
            ClientState::AwaitReady => "setting up streams",
            ClientState::Running => "running",
            ClientState::AwaitResults => "waiting for results",
            ClientState::Finished => "finished",
            ClientState::Closed => "closed",
        }
    }
}

/// What the client runtime must react to.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    Welcomed {
        caps: Vec<String>,
        software: String,
        congestion_available: Vec<String>,
        /// The server's link facts, bounded; `None` when it reported none.
        link: Option<Box<LinkFacts>>,
    },
    Accepted {
        cookie: Cookie,
    },
    StreamsReady,
    LiveInterval(Box<IntervalReport>),
    PeerResults(Box<Results>),
    Refused(Refusal),
    Aborted(String),
}

/// The client side of one control session.
#[derive(Debug)]
pub struct ClientSession {
    state: ClientState,
    params: TestParams,
    out: VecDeque<Message>,
    events: VecDeque<ClientEvent>,
    psk: Option<Psk>,
    /// The server's challenge, when its Welcome asked for a pre-shared key.
    nonce: Option<Nonce>,
}

impl ClientSession {
    /// Starts a session for `params`; the Hello is queued for transmission.
    pub fn new(params: TestParams, software: &str) -> Self {
        let hello = Hello {
            version: PROTOCOL_VERSION,
            min_version: MIN_PROTOCOL_VERSION,
            software: software.to_string(),
            caps: CAPABILITIES.iter().map(|c| (*c).to_string()).collect(),
        };
        Self {
            state: ClientState::AwaitWelcome,
            params,
            out: VecDeque::from([Message::Hello(hello)]),
            events: VecDeque::new(),
            psk: None,
            nonce: None,
        }
    }

    /// Answers a server's pre-shared-key challenge with `psk` (`--psk-file`). Without it, a
    /// server that asks for a key refuses the request.
    pub fn set_psk(&mut self, psk: Psk) {
        self.psk = Some(psk);
    }

    /// Whether the server's Welcome asked for a pre-shared key.
    pub fn server_requires_psk(&self) -> bool {
        self.nonce.is_some()
    }

    /// Handles one message from the server.
    ///
    /// # Errors
    /// [`ProtocolError`] when the message does not fit the state; the session is then closed.
    pub fn handle(&mut self, msg: Message) -> Result<(), ProtocolError> {
        use ClientState as S;
        match (self.state, msg) {
            (S::Closed | S::Finished, m) => return Err(self.unexpected(&m)),
            (_, Message::Abort(Abort { reason })) => {
                self.state = S::Closed;
                self.events.push_back(ClientEvent::Aborted(reason));
            }
            (S::AwaitWelcome | S::Welcomed | S::AwaitAccept, Message::Refuse(r)) => {
                self.state = S::Closed;
                self.events.push_back(ClientEvent::Refused(r));
            }
            (S::AwaitWelcome, Message::Welcome(w)) => {
                if w.version < MIN_PROTOCOL_VERSION || w.version > PROTOCOL_VERSION {
                    self.state = S::Closed;
                    return Err(ProtocolError::Version {
                        peer: w.version,
                        min: MIN_PROTOCOL_VERSION,
                        max: PROTOCOL_VERSION,
                    });
                }
                if let Some(n) = &w.auth_nonce {
                    let Some(n) = psk::unhex::<{ psk::NONCE_LEN }>(n) else {
                        self.state = S::Closed;
                        return Err(ProtocolError::BadNonce);
                    };
                    self.nonce = Some(n);
                }
                self.state = S::Welcomed;
                self.events.push_back(ClientEvent::Welcomed {
                    caps: negotiate(&w.caps),
                    software: w.software,
                    congestion_available: w.congestion_available,
                    link: w.link.map(LinkFacts::bounded),
                });
            }
            (S::AwaitAccept, Message::Accept(a)) => {
                let cookie = a.cookie().map_err(|_| {
                    self.state = S::Closed;
                    ProtocolError::BadCookie
                })?;
                self.state = S::AwaitReady;
                self.events.push_back(ClientEvent::Accepted { cookie });
            }
            (S::AwaitReady, Message::StreamsReady) => {
                self.state = S::Running;
                self.out.push_back(Message::Start);
                self.events.push_back(ClientEvent::StreamsReady);
            }
            (S::Running | S::AwaitResults, Message::LiveInterval(r)) => {
                self.events.push_back(ClientEvent::LiveInterval(r));
            }
            (S::AwaitResults, Message::Results(r)) => {
                self.events.push_back(ClientEvent::PeerResults(r));
            }
            (_, m) => {
                let e = self.unexpected(&m);
                self.state = S::Closed;
                return Err(e);
            }
        }
        Ok(())
    }

    fn unexpected(&self, m: &Message) -> ProtocolError {
        ProtocolError::Unexpected {
            state: self.state.name(),
            got: m.name(),
        }
    }

    /// After [`ClientEvent::Welcomed`], once the runtime found the server can run the test:
    /// queues the TestRequest. Until then the server has seen nothing of the test, so a client
    /// that refuses an older server (a missing capability) never shows it a request it cannot
    /// read.
    pub fn request(&mut self) {
        if self.state == ClientState::Welcomed {
            self.state = ClientState::AwaitAccept;
            let mut params = self.params.clone();
            params.psk_answer = None;
            if let (Some(k), Some(n)) = (&self.psk, &self.nonce) {
                // Encoding a TestParams cannot fail; if it did, the server refuses the
                // request for its missing answer, which says what is wrong.
                if let Ok(bytes) = serde_json::to_vec(&params) {
                    params.psk_answer = Some(k.answer(n, &bytes));
                }
            }
            self.out.push_back(Message::TestRequest(Box::new(params)));
        }
    }

    /// The client decided the test is over (end condition reached); queues Stop.
    pub fn stop(&mut self, stop: Stop) {
        if self.state == ClientState::Running {
            self.state = ClientState::AwaitResults;
            self.out.push_back(Message::Stop(stop));
        }
    }

    /// Sends the client's own results after the server's arrived; the session is then finished.
    pub fn send_results(&mut self, results: Results) {
        if self.state == ClientState::AwaitResults {
            self.state = ClientState::Finished;
            self.out.push_back(Message::Results(Box::new(results)));
            self.out.push_back(Message::Done);
        }
    }

    /// Gives up (Ctrl-C, local failure); queues Abort unless already closed.
    pub fn abort(&mut self, reason: &str) {
        if !matches!(self.state, ClientState::Closed | ClientState::Finished) {
            self.state = ClientState::Closed;
            self.out.push_back(Message::Abort(Abort {
                reason: reason.to_string(),
            }));
        }
    }

    pub fn is_running(&self) -> bool {
        self.state == ClientState::Running
    }
    pub fn is_finished(&self) -> bool {
        self.state == ClientState::Finished
    }
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.out.pop_front()
    }
    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ServerState {
    AwaitHello,
    AwaitRequest,
    Deciding,
    AwaitStreams,
    AwaitStart,
    Running,
    Stopping,
    AwaitClientResults,
    AwaitDone,
    Finished,
    Closed,
}

impl ServerState {
    fn name(self) -> &'static str {
        match self {
            ServerState::AwaitHello => "waiting for hello",
            ServerState::AwaitRequest => "waiting for a test request",
            ServerState::Deciding => "deciding on the request",
            ServerState::AwaitStreams => "waiting for data streams",
            ServerState::AwaitStart => "waiting for start",
            ServerState::Running => "running",
            ServerState::Stopping => "stopping",
            ServerState::AwaitClientResults => "waiting for client results",
            ServerState::AwaitDone => "waiting for done",
            ServerState::Finished => "finished",
            ServerState::Closed => "closed",
        }
    }
}

/// What the server runtime must react to.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    Greeted {
        caps: Vec<String>,
        software: String,
    },
    TestRequested(Box<TestParams>),
    Started,
    StopRequested(Stop),
    PeerResults(Box<Results>),
    Done,
    Aborted(String),
    /// The session refused the client for its key (wrong, missing, or a client too old to
    /// answer); the Refuse is queued and the session is closed. The text says why.
    AuthRefused(String),
}

/// The server side of one control session.
#[derive(Debug)]
pub struct ServerSession {
    state: ServerState,
    software: String,
    congestion_available: Vec<String>,
    caps: Vec<String>,
    out: VecDeque<Message>,
    events: VecDeque<ServerEvent>,
    /// `--psk-file`: the key and this connection's fresh challenge.
    psk: Option<(Psk, Nonce)>,
    /// This end's link facts, for a client that lists `link-facts`.
    link: Option<LinkFacts>,
}

impl ServerSession {
    pub fn new(software: &str, congestion_available: Vec<String>) -> Self {
        Self {
            state: ServerState::AwaitHello,
            software: software.to_string(),
            congestion_available,
            caps: Vec::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
            psk: None,
            link: None,
        }
    }

    /// The facts of the link the client reached this end by, for its welcome (sent only to a
    /// client that lists `link-facts`). Call before the first `handle`.
    pub fn set_link(&mut self, link: LinkFacts) {
        self.link = Some(link);
    }

    /// Requires the client to prove it holds `psk`, answering `nonce` (fresh and random for
    /// every connection: the runtime draws it). Call before the first `handle`.
    pub fn require_psk(&mut self, psk: Psk, nonce: Nonce) {
        self.psk = Some((psk, nonce));
    }

    fn refuse_auth(&mut self, e: &psk::AuthError) {
        self.refuse(RefuseCode::Auth, &e.to_string());
        self.events
            .push_back(ServerEvent::AuthRefused(e.to_string()));
    }

    /// Checks the client's answer to this connection's challenge, if a key is required.
    fn check_answer(&self, p: &mut TestParams) -> Result<(), psk::AuthError> {
        let answer = p.psk_answer.take();
        let Some((key, nonce)) = &self.psk else {
            return Ok(());
        };
        let bytes = serde_json::to_vec(&*p).map_err(|_| psk::AuthError::Malformed)?;
        key.verify(nonce, &bytes, answer.as_deref())
    }

    /// Handles one message from the client.
    ///
    /// # Errors
    /// [`ProtocolError`] when the message does not fit the state or the version is unsupported;
    /// a Refuse or Abort explaining it is queued for the client.
    pub fn handle(&mut self, msg: Message) -> Result<(), ProtocolError> {
        use ServerState as S;
        match (self.state, msg) {
            (S::Closed | S::Finished, m) => return Err(self.unexpected(&m)),
            (_, Message::Abort(Abort { reason })) => {
                self.state = S::Closed;
                self.events.push_back(ServerEvent::Aborted(reason));
            }
            (S::AwaitHello, Message::Hello(h)) => {
                if h.version < MIN_PROTOCOL_VERSION || h.min_version > PROTOCOL_VERSION {
                    let err = ProtocolError::Version {
                        peer: h.version,
                        min: MIN_PROTOCOL_VERSION,
                        max: PROTOCOL_VERSION,
                    };
                    self.refuse(RefuseCode::Version, &err.to_string());
                    return Err(err);
                }
                self.caps = negotiate(&h.caps);
                if self.psk.is_some() && !self.caps.iter().any(|c| c == psk::CAPABILITY) {
                    self.refuse_auth(&psk::AuthError::OldClient);
                    return Ok(());
                }
                self.state = S::AwaitRequest;
                self.out.push_back(Message::Welcome(Welcome {
                    version: PROTOCOL_VERSION,
                    software: self.software.clone(),
                    caps: self.caps.clone(),
                    congestion_available: self.congestion_available.clone(),
                    auth_nonce: self.psk.as_ref().map(|(_, n)| psk::hex(n)),
                    link: self
                        .link
                        .clone()
                        .filter(|_| self.caps.iter().any(|c| c == LINK_FACTS))
                        .map(Box::new),
                }));
                self.events.push_back(ServerEvent::Greeted {
                    caps: self.caps.clone(),
                    software: h.software,
                });
            }
            (S::AwaitRequest, Message::TestRequest(mut p)) => {
                if let Err(e) = self.check_answer(&mut p) {
                    self.refuse_auth(&e);
                    return Ok(());
                }
                if let Err(e) = p.validate() {
                    self.refuse(RefuseCode::BadParameter, &e.to_string());
                    return Ok(());
                }
                self.state = S::Deciding;
                self.events.push_back(ServerEvent::TestRequested(p));
            }
            (S::AwaitStart, Message::Start) => {
                self.state = S::Running;
                self.events.push_back(ServerEvent::Started);
            }
            (S::Running, Message::Stop(s)) => {
                self.state = S::Stopping;
                self.events.push_back(ServerEvent::StopRequested(s));
            }
            (S::AwaitClientResults, Message::Results(r)) => {
                self.state = S::AwaitDone;
                self.events.push_back(ServerEvent::PeerResults(r));
            }
            (S::AwaitDone, Message::Done) => {
                self.state = S::Finished;
                self.events.push_back(ServerEvent::Done);
            }
            (_, m) => {
                let e = self.unexpected(&m);
                self.abort(&e.to_string());
                return Err(e);
            }
        }
        Ok(())
    }

    fn unexpected(&self, m: &Message) -> ProtocolError {
        ProtocolError::Unexpected {
            state: self.state.name(),
            got: m.name(),
        }
    }

    /// Refuses the client or its test (busy, over a limit, bad parameter); the session closes.
    pub fn refuse(&mut self, code: RefuseCode, message: &str) {
        if matches!(
            self.state,
            ServerState::AwaitHello | ServerState::AwaitRequest | ServerState::Deciding
        ) {
            self.out.push_back(Message::Refuse(Refusal {
                code,
                message: message.to_string(),
            }));
        } else {
            self.out.push_back(Message::Abort(Abort {
                reason: message.to_string(),
            }));
        }
        self.state = ServerState::Closed;
    }

    /// Accepts the requested test; data streams must present `cookie`.
    pub fn accept(&mut self, cookie: &Cookie) {
        if self.state == ServerState::Deciding {
            self.state = ServerState::AwaitStreams;
            self.out.push_back(Message::Accept(Accept::new(cookie)));
        }
    }

    /// All data streams are connected.
    pub fn streams_ready(&mut self) {
        if self.state == ServerState::AwaitStreams {
            self.state = ServerState::AwaitStart;
            self.out.push_back(Message::StreamsReady);
        }
    }

    /// Queues a live interval report when the client negotiated `live-intervals`: while the
    /// test runs, and the last one cut at the client's Stop, before the results.
    pub fn live_interval(&mut self, report: IntervalReport) {
        let live = matches!(self.state, ServerState::Running | ServerState::Stopping);
        if live && self.caps.iter().any(|c| c == "live-intervals") {
            self.out.push_back(Message::LiveInterval(Box::new(report)));
        }
    }

    /// The server's own results after a Stop.
    pub fn send_results(&mut self, results: Results) {
        if self.state == ServerState::Stopping {
            self.state = ServerState::AwaitClientResults;
            self.out.push_back(Message::Results(Box::new(results)));
        }
    }

    /// Gives up (server shutting down, limit exceeded mid-test, local failure).
    pub fn abort(&mut self, reason: &str) {
        if !matches!(self.state, ServerState::Closed | ServerState::Finished) {
            self.state = ServerState::Closed;
            self.out.push_back(Message::Abort(Abort {
                reason: reason.to_string(),
            }));
        }
    }

    pub fn is_closed(&self) -> bool {
        matches!(self.state, ServerState::Closed | ServerState::Finished)
    }
    pub fn poll_transmit(&mut self) -> Option<Message> {
        self.out.pop_front()
    }
    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod psk_tests;
#[cfg(test)]
mod tests;
