//! TCP latency: handshake times to any service (`--tcp-connect`), and request/response
//! transactions on one connection to a sonde server (`--tcp-rr`, netperf's TCP_RR).
//!
//! Each probe is one blocking transaction timed with the monotonic clock; the schedule is the
//! same absolute one as the datagram prober (a transaction that overruns its slot delays only
//! itself), `--flood` runs them back to back. A refused or timed-out connect is a lost probe
//! (a refused one is counted as refused too: nothing listens); a broken tcp-rr connection ends
//! the run with the statistics so far.
//!
//! With a key (`--psk-file`) tcp-rr answers the server's challenge before the first
//! transaction (`sonde_proto::probe_tag`); a keyed server refuses a client without one.

use super::run_state::RunState;
use super::{start_event, target, LatencyConfig, LatencyError, LatencyOutcome};
use socket2::{Domain, Protocol, SockAddr, Socket, Type};
use sonde_platform::{poll, timestamp};
use sonde_proto::preamble::RR_MAGIC;
use sonde_proto::probe::RR_REFUSAL_MAGIC;
use sonde_proto::probe::{
    emit_rr_refusal, parse_rr_refusal, parse_rr_size, MAX_PROBE_LEN, MAX_RR_REFUSAL_LEN,
    RR_HEADER_LEN,
};
use sonde_proto::probe_tag::{
    emit_rr_challenge, parse_rr_challenge, ProbeKey, RR_ANSWER_LEN, RR_CHALLENGE_LEN,
    RR_CHALLENGE_MAGIC, RR_KEYED_BIT,
};
use sonde_proto::psk::AuthError;
use sonde_runtime_core::clock::sleep_until;
use sonde_stats::latency::model::{LatencyEvent, LatencyMode};
use sonde_stats::latency::tracker::{Reply, ScheduleTracker};
use sonde_stats::sink::{deliver, Sink};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const USER_CLOCK: &str =
    "user-space monotonic clock around the blocking calls (connect, or write then read)";

fn connect(peer: SocketAddr, timeout: Duration) -> std::io::Result<TcpStream> {
    let s = Socket::new(Domain::for_address(peer), Type::STREAM, Some(Protocol::TCP))?;
    s.set_tcp_nodelay(true)?;
    s.connect_timeout(&SockAddr::from(peer), timeout)?;
    Ok(s.into())
}

/// The open tcp-rr connection.
struct Rr {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Rr {
    fn open(
        peer: SocketAddr,
        size: usize,
        timeout: Duration,
        key: Option<&ProbeKey>,
    ) -> Result<Self, LatencyError> {
        let mut stream = connect(peer, timeout)
            .map_err(|e| LatencyError::io(format!("connecting to {peer}"), e))?;
        let size_field = size as u32 | if key.is_some() { RR_KEYED_BIT } else { 0 };
        let mut hello = RR_MAGIC.to_vec();
        hello.extend_from_slice(&size_field.to_be_bytes());
        stream
            .write_all(&hello)
            .map_err(|e| LatencyError::io("sending the tcp-rr preamble", e))?;
        stream
            .set_read_timeout(Some(timeout))
            .map_err(|e| LatencyError::io("setting a read timeout", e))?;
        let mut rr = Self {
            stream,
            buf: vec![0u8; size],
        };
        if let Some(k) = key {
            rr.answer_challenge(k, size_field)?;
        }
        Ok(rr)
    }

    /// Reads the server's challenge (or its refusal) and answers it with `key`.
    fn answer_challenge(&mut self, key: &ProbeKey, size_field: u32) -> Result<(), LatencyError> {
        let mut c = [0u8; RR_CHALLENGE_LEN];
        let old = |_| {
            LatencyError::Setup(
                "tcp-rr: the server closed the connection instead of sending its key challenge \
                 (a sonde server older than keyed tcp-rr; run it from this release)"
                    .into(),
            )
        };
        self.stream.read_exact(&mut c[..1]).map_err(old)?;
        if c[0] == RR_REFUSAL_MAGIC[0] {
            self.stream.read_exact(&mut c[1..8]).map_err(old)?;
        }
        if &c[..8] != RR_CHALLENGE_MAGIC.as_slice() {
            return Err(self.refusal_after(&c[..8]));
        }
        self.stream.read_exact(&mut c[8..]).map_err(old)?;
        let nonce = parse_rr_challenge(&c)
            .ok_or_else(|| LatencyError::Setup("tcp-rr: malformed key challenge".into()))?;
        self.stream
            .write_all(&key.rr_answer(&nonce, size_field))
            .map_err(|e| LatencyError::io("answering the tcp-rr key challenge", e))
    }

    fn transact(&mut self, seq: u64) -> Result<(), LatencyError> {
        let io = |e| LatencyError::io("tcp-rr transaction", e);
        if let Some(head) = self.buf.get_mut(..8) {
            head.copy_from_slice(&seq.to_be_bytes());
        }
        self.stream.write_all(&self.buf).map_err(io)?;
        let Some((first, rest)) = self.buf.split_first_mut() else {
            return Ok(());
        };
        self.stream
            .read_exact(std::slice::from_mut(first))
            .map_err(io)?;
        if *first == RR_REFUSAL_MAGIC[0] {
            return Err(self.refusal());
        }
        self.stream.read_exact(rest).map_err(io)
    }

    /// Reads the rest of a refusal whose first byte came in (bounded, until the server closes).
    fn refusal(&mut self) -> LatencyError {
        self.refusal_after(&RR_REFUSAL_MAGIC[..1])
    }

    /// Reads the rest of a refusal whose first bytes, `got`, came in.
    fn refusal_after(&mut self, got: &[u8]) -> LatencyError {
        let mut got = got.to_vec();
        let _ = (&mut self.stream)
            .take((MAX_RR_REFUSAL_LEN - got.len().min(MAX_RR_REFUSAL_LEN)) as u64)
            .read_to_end(&mut got);
        match parse_rr_refusal(&got) {
            Some(msg) => LatencyError::Refused(msg),
            None => LatencyError::Setup("tcp-rr: the server sent a malformed reply".into()),
        }
    }
}

/// Runs tcp-connect or tcp-rr.
pub(crate) fn run(
    cfg: &LatencyConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<LatencyEvent>,
) -> Result<LatencyOutcome, LatencyError> {
    let peer = target(cfg, interrupt)?;
    let size = cfg.size.clamp(1, MAX_PROBE_LEN);
    let rr = match cfg.mode {
        LatencyMode::TcpRr => {
            let key = cfg.psk.as_ref().map(ProbeKey::new);
            Some(Rr::open(peer, size, cfg.timeout, key.as_ref())?)
        }
        _ => None,
    };
    deliver(emit, &tcp_start_event(cfg, peer, rr.as_ref(), size));
    let mut st = RunState::new(cfg, emit);
    let mut probes = TcpProbes {
        cfg,
        peer,
        rr,
        sched: (!cfg.flood).then(|| ScheduleTracker::new(cfg.interval.as_nanos() as u64)),
    };
    let result = probes.run(&mut st, interrupt);
    if result.is_ok() {
        probes.end(&mut st, interrupt);
    }
    let msg = result
        .err()
        .or_else(|| {
            interrupt
                .load(Ordering::Relaxed)
                .then_some(LatencyError::Interrupted)
        })
        .map(|e| e.to_string());
    let schedule = probes.sched.and_then(|s| s.stats());
    Ok(st.finish(msg.is_some(), msg, |s| s.schedule = schedule))
}

/// The start event: tcp-rr reports its connection and transaction size, tcp-connect has
/// neither.
fn tcp_start_event(
    cfg: &LatencyConfig,
    peer: SocketAddr,
    rr: Option<&Rr>,
    size: usize,
) -> LatencyEvent {
    let (local, meaning) = match rr {
        Some(r) => (
            r.stream
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            "bytes per transaction, each way (TCP payload)".to_string(),
        ),
        None => (
            String::new(),
            "none (a TCP handshake carries no payload)".to_string(),
        ),
    };
    start_event(
        cfg,
        peer,
        local,
        if rr.is_some() { size } else { 0 },
        meaning,
        USER_CLOCK.into(),
    )
}

/// The probes of one run: a handshake each (tcp-connect) or a transaction each on the open
/// connection (tcp-rr), and the schedule statistics.
struct TcpProbes<'a> {
    cfg: &'a LatencyConfig,
    peer: SocketAddr,
    rr: Option<Rr>,
    sched: Option<ScheduleTracker>,
}

impl TcpProbes<'_> {
    /// Probes on the schedule until the count or the duration is reached; Ctrl-C and a
    /// broken tcp-rr connection end the run with an error.
    fn run(&mut self, st: &mut RunState, interrupt: &AtomicBool) -> Result<(), LatencyError> {
        let cfg = self.cfg;
        let end_at = cfg.duration.map(|d| st.start + d);
        let mut seq = 0u64;
        loop {
            if interrupt.load(Ordering::Relaxed) {
                return Err(LatencyError::Interrupted);
            }
            if cfg.count.is_some_and(|c| seq >= c) {
                return Ok(());
            }
            let due = if cfg.flood {
                Instant::now()
            } else {
                st.start
                    + cfg
                        .interval
                        .saturating_mul(u32::try_from(seq).unwrap_or(u32::MAX))
            };
            if end_at.is_some_and(|e| due >= e || Instant::now() >= e) {
                return Ok(());
            }
            wait_for(st, due, interrupt);
            // No probe starts at or after the end (its interval row was cut there).
            if end_at.is_some_and(|e| Instant::now() >= e) {
                return Ok(());
            }
            seq += 1;
            self.probe(st, seq, due)?;
        }
    }

    /// The rest of the run's time (a scheduled run lasts its slots), then the end of probing.
    fn end(&self, st: &mut RunState, interrupt: &AtomicBool) {
        let end = st.probing_end(self.cfg, st.tracker.sent(), Instant::now());
        wait_for(st, end, interrupt);
        if !interrupt.load(Ordering::Relaxed) {
            st.end_probing(end);
        }
    }

    /// Times probe `seq` (due at `due`); a failed handshake is a lost probe, a failed tcp-rr
    /// transaction an error.
    fn probe(&mut self, st: &mut RunState, seq: u64, due: Instant) -> Result<(), LatencyError> {
        let wall = timestamp::realtime_ns();
        st.sent(seq, wall);
        let t0 = Instant::now();
        if let Some(s) = &mut self.sched {
            s.on_send(
                due.duration_since(st.start).as_nanos() as u64,
                t0.duration_since(st.start).as_nanos() as u64,
            );
        }
        let ok = match &mut self.rr {
            Some(r) => {
                r.transact(seq)?;
                true
            }
            None => match connect(self.peer, self.cfg.timeout) {
                Ok(_) => true,
                Err(e) => {
                    // A refusal is nothing listening, told apart from a path that lost the SYN.
                    if e.kind() == std::io::ErrorKind::ConnectionRefused {
                        st.tracker.on_refused();
                    }
                    false
                }
            },
        };
        if ok {
            let rtt = t0.elapsed().as_nanos() as u64;
            st.answer(&Reply {
                seq,
                sent_ns: wall,
                recv_ns: wall + rtt,
                server: None,
            });
        }
        Ok(())
    }
}

/// Waits until `due` (or Ctrl-C), in slices so that Ctrl-C and interval lines are not held up
/// by a long interval, then emits the interval lines that are due.
fn wait_for(st: &mut RunState, due: Instant, interrupt: &AtomicBool) {
    while Instant::now() + Duration::from_millis(50) < due && !interrupt.load(Ordering::Relaxed) {
        st.report_due(Instant::now());
        std::thread::sleep(Duration::from_millis(20).min(due - Instant::now()));
    }
    if interrupt.load(Ordering::Relaxed) {
        return;
    }
    sleep_until(due);
    st.report_due(Instant::now());
}

/// Serves one tcp-rr connection (after its `SONDE/R1` preamble): echoes transactions until the
/// client closes, `stop()` says so, or the client is idle for 60 s. With `key` (the server's
/// `--psk-file`) only a client that answers the challenge with it is served; others get a
/// refusal (and the error says why, for the log).
pub fn serve_rr(
    mut stream: TcpStream,
    key: Option<&ProbeKey>,
    stop: impl Fn() -> bool,
) -> Result<(), String> {
    const IDLE: Duration = Duration::from_secs(60);
    /// How long a client may take to answer the key challenge.
    const ANSWER: Duration = Duration::from_secs(10);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut head = [0u8; RR_HEADER_LEN];
    read_full(&mut stream, &mut head, &stop, IDLE)?;
    let size_field = u32::from_be_bytes(head);
    let keyed = size_field & RR_KEYED_BIT != 0;
    let size = parse_rr_size(&(size_field & !RR_KEYED_BIT).to_be_bytes())
        .map_err(|_| "tcp-rr: bad transaction size".to_string())?;
    if keyed {
        let nonce = sonde_runtime_core::auth::fresh_nonce().map_err(|e| format!("tcp-rr: {e}"))?;
        stream
            .write_all(&emit_rr_challenge(&nonce))
            .map_err(|e| format!("tcp-rr: {e}"))?;
        let mut answer = [0u8; RR_ANSWER_LEN];
        read_full(&mut stream, &mut answer, &stop, ANSWER)?;
        if key.is_some_and(|k| !k.rr_verify(&nonce, size_field, &answer)) {
            return Err(refuse_rr_auth(stream, AuthError::Mismatch));
        }
    } else if key.is_some() {
        return Err(refuse_rr_auth(stream, AuthError::Missing));
    }
    let mut buf = vec![0u8; size];
    loop {
        match read_full(&mut stream, &mut buf, &stop, IDLE) {
            Ok(()) => {}
            Err(e) if e.is_empty() => return Ok(()),
            Err(e) => return Err(e),
        }
        stream.write_all(&buf).map_err(|e| format!("tcp-rr: {e}"))?;
    }
}

/// Refuses a tcp-rr client for its key, with the control protocol's words for `why`; the
/// error for the server's log.
fn refuse_rr_auth(stream: TcpStream, why: AuthError) -> String {
    let why = format!("auth: {why}");
    refuse_rr(stream, &why);
    format!("refused: {why}")
}

/// Refuses a tcp-rr connection with `msg` (see `sonde_proto::probe::RR_REFUSAL_MAGIC`): the
/// refusal, then the write side closed and what the client still sends read and dropped
/// until it closes (at most two seconds), so that no reset can overtake the refusal.
pub fn refuse_rr(mut stream: TcpStream, msg: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    if stream.write_all(&emit_rr_refusal(msg)).is_err() {
        return;
    }
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut sink = [0u8; 4096];
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        if !matches!(poll::readable(&stream, left), Ok(true)) {
            return;
        }
        if !matches!(stream.read(&mut sink), Ok(n) if n > 0) {
            return;
        }
    }
}

/// Reads exactly `buf.len()` bytes; Err("") on a clean close before the first byte.
fn read_full(
    stream: &mut TcpStream,
    buf: &mut [u8],
    stop: &impl Fn() -> bool,
    idle: Duration,
) -> Result<(), String> {
    let mut got = 0;
    let mut last = Instant::now();
    while got < buf.len() {
        if stop() {
            return Err(String::new());
        }
        if last.elapsed() > idle {
            return Err(format!("tcp-rr: client idle for {} s", idle.as_secs()));
        }
        if !matches!(poll::readable(stream, Duration::from_millis(200)), Ok(true)) {
            continue;
        }
        match stream.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Err(String::new()),
            Ok(0) => return Err("tcp-rr: client closed mid-transaction".into()),
            Ok(n) => {
                got += n;
                last = Instant::now();
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock
                        | std::io::ErrorKind::TimedOut
                        | std::io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(format!("tcp-rr: {e}")),
        }
    }
    Ok(())
}
