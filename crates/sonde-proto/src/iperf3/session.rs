//! iperf3 control sessions as pure state machines: bytes in, bytes and events out.
//!
//! Calling order (both types): feed received bytes with `handle_bytes`, then drain
//! `poll_transmit` (bytes to write, in order) and `poll_event` (what happened). The runtime
//! answers events by calling the action methods, which are only valid in the phase named on
//! each; a call in another phase is ignored and reported by returning `false`. A protocol
//! violation makes `handle_bytes` return an error and the session is finished: the runtime
//! closes the connection (the server first sends the SERVER_ERROR the error suggests).
//!
//! Server sequence (as `iperf_server_api.c` runs it): cookie (read by the runtime, which routes data
//! connections by it) → PARAM_EXCHANGE → params → CREATE_STREAMS → TEST_START, TEST_RUNNING →
//! client's TEST_END → EXCHANGE_RESULTS → client results → own results, DISPLAY_RESULTS →
//! client's IPERF_DONE.

use super::codec::{encode_json, CodecError, InBuffer, MAX_PARAMS_LEN, MAX_RESULTS_LEN};
use super::params::{Iperf3Params, ParamsError};
use super::results::{Results, ResultsError};
use super::state::{errno, State, StateError};
use super::Cookie;
use serde_json::Value;
use std::collections::VecDeque;
use thiserror::Error;

/// Why a session ended on a protocol violation.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SessionError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Codec(#[from] CodecError),
    #[error("bad parameters: {0}")]
    Params(#[from] ParamsError),
    #[error("bad results: {0}")]
    Results(#[from] ResultsError),
    #[error("unexpected state {state:?} while {phase}")]
    Unexpected { state: State, phase: &'static str },
    #[error("session already finished")]
    Finished,
}

impl SessionError {
    /// The iperf3 error number a server sends for this violation.
    pub fn iperf3_errno(&self) -> i32 {
        match self {
            SessionError::Params(p) => p.iperf3_errno(),
            SessionError::Codec(_) => errno::RECV_PARAMS,
            SessionError::Results(_) => errno::RECV_RESULTS,
            _ => errno::MESSAGE,
        }
    }
}

fn state_bytes(states: &[State]) -> Vec<u8> {
    states.iter().map(|s| s.to_byte()).collect()
}

/// What the server side learns from the client.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    /// Parameters arrived and were read; answer with `accept`, `refuse` or `deny`.
    Params(Box<Iperf3Params>),
    /// The client's TEST_END: stop, then call `exchange_results`.
    TestEnd,
    /// The client's results; answer with `send_results`.
    ClientResults(Box<Results>),
    /// IPERF_DONE: the test is over.
    Done,
    /// CLIENT_TERMINATE: the client gave up (Ctrl-C).
    ClientTerminated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SPhase {
    Greeting,
    Params,
    Decide,
    CreateStreams,
    Running,
    Ended,
    ClientResults,
    OwnResults,
    AwaitDone,
    Finished,
}

impl SPhase {
    fn name(self) -> &'static str {
        match self {
            SPhase::Greeting => "greeting",
            SPhase::Params => "waiting for parameters",
            SPhase::Decide => "deciding on the parameters",
            SPhase::CreateStreams => "creating streams",
            SPhase::Running => "running the test",
            SPhase::Ended => "ending the test",
            SPhase::ClientResults => "waiting for the client's results",
            SPhase::OwnResults => "sending results",
            SPhase::AwaitDone => "waiting for IPERF_DONE",
            SPhase::Finished => "finished",
        }
    }
}

/// The server end of one iperf3 control connection (after its cookie was read).
#[derive(Debug)]
pub struct ServerSession {
    cookie: Cookie,
    phase: SPhase,
    input: InBuffer,
    out: VecDeque<Vec<u8>>,
    events: VecDeque<ServerEvent>,
}

impl ServerSession {
    /// A session for the control connection that sent `cookie`; call `begin` or `deny` next.
    pub fn new(cookie: Cookie) -> Self {
        Self {
            cookie,
            phase: SPhase::Greeting,
            input: InBuffer::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    pub fn cookie(&self) -> &Cookie {
        &self.cookie
    }

    pub fn is_finished(&self) -> bool {
        self.phase == SPhase::Finished
    }

    /// Greeting: sends PARAM_EXCHANGE.
    pub fn begin(&mut self) -> bool {
        self.step(SPhase::Greeting, SPhase::Params, &[State::ParamExchange])
    }

    /// Any phase: ACCESS_DENIED (the server is busy), then the session is over.
    pub fn deny(&mut self) {
        self.out.push_back(state_bytes(&[State::AccessDenied]));
        self.phase = SPhase::Finished;
    }

    /// Any phase: SERVER_ERROR with iperf3's error number and errno 0; the session is over.
    pub fn refuse(&mut self, i_errno: i32) {
        let mut b = state_bytes(&[State::ServerError]);
        b.extend_from_slice(&i_errno.to_be_bytes());
        b.extend_from_slice(&0i32.to_be_bytes());
        self.out.push_back(b);
        self.phase = SPhase::Finished;
    }

    /// Any phase: SERVER_TERMINATE (the server is shutting down).
    pub fn terminate(&mut self) {
        self.out.push_back(state_bytes(&[State::ServerTerminate]));
        self.phase = SPhase::Finished;
    }

    /// Decide: accepts the parameters and sends CREATE_STREAMS.
    pub fn accept(&mut self) -> bool {
        self.step(
            SPhase::Decide,
            SPhase::CreateStreams,
            &[State::CreateStreams],
        )
    }

    /// CreateStreams: all streams are here; sends TEST_START and TEST_RUNNING.
    pub fn start(&mut self) -> bool {
        let states = [State::TestStart, State::TestRunning];
        self.step(SPhase::CreateStreams, SPhase::Running, &states)
    }

    /// Ended: data sockets are closed and own figures ready; sends EXCHANGE_RESULTS.
    pub fn exchange_results(&mut self) -> bool {
        let ok = self.step(
            SPhase::Ended,
            SPhase::ClientResults,
            &[State::ExchangeResults],
        );
        if ok {
            let _ = self.process();
        }
        ok
    }

    /// OwnResults: sends the server's results and DISPLAY_RESULTS.
    pub fn send_results(&mut self, r: &Results) -> bool {
        if self.phase != SPhase::OwnResults {
            return false;
        }
        match encode_json(&r.to_json(), MAX_RESULTS_LEN) {
            Ok(b) => self.out.push_back(b),
            Err(_) => return false,
        }
        self.step(
            SPhase::OwnResults,
            SPhase::AwaitDone,
            &[State::DisplayResults],
        )
    }

    fn step(&mut self, from: SPhase, to: SPhase, states: &[State]) -> bool {
        if self.phase != from {
            return false;
        }
        self.out.push_back(state_bytes(states));
        self.phase = to;
        true
    }

    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.out.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<ServerEvent> {
        self.events.pop_front()
    }

    /// Feeds bytes read from the control connection.
    ///
    /// # Errors
    /// [`SessionError`] on a protocol violation; the session is then finished.
    pub fn handle_bytes(&mut self, data: &[u8]) -> Result<(), SessionError> {
        if self.phase == SPhase::Finished {
            return Err(SessionError::Finished);
        }
        let r = self.input.push(data).map_err(SessionError::from);
        let r = r.and_then(|()| self.process());
        if r.is_err() {
            self.phase = SPhase::Finished;
        }
        r
    }

    fn process(&mut self) -> Result<(), SessionError> {
        loop {
            match self.phase {
                SPhase::Params => {
                    let Some(v) = self.input.take_json(MAX_PARAMS_LEN)? else {
                        return Ok(());
                    };
                    let p = Iperf3Params::parse(&v)?;
                    self.events.push_back(ServerEvent::Params(Box::new(p)));
                    self.phase = SPhase::Decide;
                }
                SPhase::ClientResults => {
                    let Some(v) = self.input.take_json(MAX_RESULTS_LEN)? else {
                        return Ok(());
                    };
                    let r = Results::parse(&v)?;
                    self.events
                        .push_back(ServerEvent::ClientResults(Box::new(r)));
                    self.phase = SPhase::OwnResults;
                }
                SPhase::Finished => return Ok(()),
                phase => {
                    let Some(b) = self.input.take_byte() else {
                        return Ok(());
                    };
                    let state = State::from_byte(b)?;
                    match (phase, state) {
                        (_, State::ClientTerminate) => {
                            self.events.push_back(ServerEvent::ClientTerminated);
                            self.phase = SPhase::Finished;
                        }
                        (SPhase::Running, State::TestEnd) => {
                            self.events.push_back(ServerEvent::TestEnd);
                            self.phase = SPhase::Ended;
                        }
                        (SPhase::AwaitDone, State::IperfDone) => {
                            self.events.push_back(ServerEvent::Done);
                            self.phase = SPhase::Finished;
                        }
                        _ => {
                            self.phase = SPhase::Finished;
                            return Err(SessionError::Unexpected {
                                state,
                                phase: phase.name(),
                            });
                        }
                    }
                }
            }
        }
    }
}

/// What the client side learns from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEvent {
    /// CREATE_STREAMS: open the data connections now.
    CreateStreams,
    /// TEST_START (and usually TEST_RUNNING right after): start counting.
    TestStart,
    /// TEST_RUNNING: data flows.
    TestRunning,
    /// EXCHANGE_RESULTS: answer with `send_results`.
    ExchangeResults,
    /// The server's results.
    ServerResults(Box<Results>),
    /// DISPLAY_RESULTS: IPERF_DONE was queued; the test is over.
    Done,
    /// ACCESS_DENIED: the server is busy.
    AccessDenied,
    /// SERVER_ERROR with iperf3's error number and errno.
    ServerError { i_errno: i32, errno: i32 },
    /// SERVER_TERMINATE.
    ServerTerminated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CPhase {
    AwaitParamExchange,
    AwaitCreate,
    AwaitStart,
    Running,
    AwaitExchange,
    SendResults,
    AwaitServerResults,
    AwaitDisplay,
    ErrorPair,
    Finished,
}

/// The client end of an iperf3 control connection.
#[derive(Debug)]
pub struct ClientSession {
    phase: CPhase,
    params: Vec<u8>,
    input: InBuffer,
    out: VecDeque<Vec<u8>>,
    events: VecDeque<ClientEvent>,
}

impl ClientSession {
    /// A session that sends `cookie` and, when asked, `params` (see [`super::params::params_json`]).
    ///
    /// # Errors
    /// [`CodecError::TooLong`] when the parameters exceed 8 KiB.
    pub fn new(cookie: &Cookie, params: &Value) -> Result<Self, CodecError> {
        let params = encode_json(params, MAX_PARAMS_LEN)?;
        Ok(Self {
            phase: CPhase::AwaitParamExchange,
            params,
            input: InBuffer::new(),
            out: VecDeque::from([cookie.to_vec()]),
            events: VecDeque::new(),
        })
    }

    pub fn is_finished(&self) -> bool {
        self.phase == CPhase::Finished
    }

    /// Running: sends TEST_END.
    pub fn test_end(&mut self) -> bool {
        if self.phase != CPhase::Running {
            return false;
        }
        self.out.push_back(state_bytes(&[State::TestEnd]));
        self.phase = CPhase::AwaitExchange;
        true
    }

    /// SendResults: sends the client's results.
    pub fn send_results(&mut self, r: &Results) -> bool {
        if self.phase != CPhase::SendResults {
            return false;
        }
        match encode_json(&r.to_json(), MAX_RESULTS_LEN) {
            Ok(b) => self.out.push_back(b),
            Err(_) => return false,
        }
        self.phase = CPhase::AwaitServerResults;
        let _ = self.process();
        true
    }

    /// Any phase: CLIENT_TERMINATE; the session is over.
    pub fn terminate(&mut self) {
        self.out.push_back(state_bytes(&[State::ClientTerminate]));
        self.phase = CPhase::Finished;
    }

    pub fn poll_transmit(&mut self) -> Option<Vec<u8>> {
        self.out.pop_front()
    }

    pub fn poll_event(&mut self) -> Option<ClientEvent> {
        self.events.pop_front()
    }

    /// Feeds bytes read from the control connection.
    ///
    /// # Errors
    /// [`SessionError`] on a protocol violation; the session is then finished.
    pub fn handle_bytes(&mut self, data: &[u8]) -> Result<(), SessionError> {
        if self.phase == CPhase::Finished {
            return Err(SessionError::Finished);
        }
        let r = self.input.push(data).map_err(SessionError::from);
        let r = r.and_then(|()| self.process());
        if r.is_err() {
            self.phase = CPhase::Finished;
        }
        r
    }

    /// The server closed the connection. iperf3 before 3.21 sends only the error number after
    /// SERVER_ERROR for a failed authentication, then closes: that half pair is still the
    /// server's error (with errno 0), reported as [`ClientEvent::ServerError`]. Returns
    /// whether it was; otherwise the close is the runtime's "closed unexpectedly".
    pub fn handle_eof(&mut self) -> bool {
        if self.phase != CPhase::ErrorPair {
            return false;
        }
        self.phase = CPhase::Finished;
        let Some(i_errno) = self.input.take_i32() else {
            return false;
        };
        self.events
            .push_back(ClientEvent::ServerError { i_errno, errno: 0 });
        true
    }

    fn process(&mut self) -> Result<(), SessionError> {
        loop {
            match self.phase {
                CPhase::Finished | CPhase::SendResults => return Ok(()),
                CPhase::ErrorPair => {
                    let Some((i_errno, errno)) = self.input.take_i32_pair() else {
                        return Ok(());
                    };
                    self.events
                        .push_back(ClientEvent::ServerError { i_errno, errno });
                    self.phase = CPhase::Finished;
                }
                CPhase::AwaitServerResults => {
                    // A state byte (an error) may come instead of the JSON.
                    if let Some(b) = self.input.peek() {
                        if matches!(b, 0xFE | 0xFF | 11) {
                            self.state_byte()?;
                            continue;
                        }
                    }
                    let Some(v) = self.input.take_json(MAX_RESULTS_LEN)? else {
                        return Ok(());
                    };
                    let r = Results::parse(&v)?;
                    self.events
                        .push_back(ClientEvent::ServerResults(Box::new(r)));
                    self.phase = CPhase::AwaitDisplay;
                }
                _ => {
                    if !self.state_byte()? {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Consumes one state byte; false when none is buffered.
    fn state_byte(&mut self) -> Result<bool, SessionError> {
        let Some(b) = self.input.take_byte() else {
            return Ok(false);
        };
        let state = State::from_byte(b)?;
        let phase = self.phase;
        match (phase, state) {
            (_, State::AccessDenied) => {
                self.events.push_back(ClientEvent::AccessDenied);
                self.phase = CPhase::Finished;
            }
            (_, State::ServerError) => self.phase = CPhase::ErrorPair,
            (_, State::ServerTerminate) => {
                self.events.push_back(ClientEvent::ServerTerminated);
                self.phase = CPhase::Finished;
            }
            (CPhase::AwaitParamExchange, State::ParamExchange) => {
                self.out.push_back(std::mem::take(&mut self.params));
                self.phase = CPhase::AwaitCreate;
            }
            (CPhase::AwaitCreate, State::CreateStreams) => {
                self.events.push_back(ClientEvent::CreateStreams);
                self.phase = CPhase::AwaitStart;
            }
            (CPhase::AwaitStart, State::TestStart) => {
                self.events.push_back(ClientEvent::TestStart);
            }
            (CPhase::AwaitStart, State::TestRunning) => {
                self.events.push_back(ClientEvent::TestRunning);
                self.phase = CPhase::Running;
            }
            (CPhase::AwaitExchange, State::ExchangeResults) => {
                self.events.push_back(ClientEvent::ExchangeResults);
                self.phase = CPhase::SendResults;
            }
            (CPhase::AwaitDisplay, State::DisplayResults) => {
                self.out.push_back(state_bytes(&[State::IperfDone]));
                self.events.push_back(ClientEvent::Done);
                self.phase = CPhase::Finished;
            }
            _ => {
                self.phase = CPhase::Finished;
                return Err(SessionError::Unexpected {
                    state,
                    phase: "running the client",
                });
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
