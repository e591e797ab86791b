//! `sonde switch-test`: a long transfer through the dual-stack switch library that changes
//! family every N seconds, or when a verdict file says the other family is better
//! (`--policy`); both ends hash the stream (SHA-256) and the client compares.
//!
//! The application protocol on top of the library is tiny: the client streams pseudo-random
//! bytes and ends its stream; the server answers with `SWTR`, its SHA-256 (32), the byte
//! count (8), and its switch records as JSON (length 4, then the bytes; at most 16 MiB).

use super::exit;
use super::switch_driver::SwitchDriver;
use super::switch_policy::Chooser;
use super::switch_samples::Samples;
use super::switch_schedule::Schedule;
use crate::flags::switch::SwitchTestArgs;
use crate::output::outln;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use sonde_live::envelope::Envelope;
use sonde_platform::resolve::{resolve, Family as ResolveFamily};
use sonde_switch::{AnyConn, AnyListener, Backend, Family, Options, Stats, SwitchRecord, Targets};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REPLY_MAGIC: &[u8; 4] = b"SWTR";
const MAX_REPLY_JSON: usize = 16 << 20;

/// Runs the switch-test command.
pub fn run(a: SwitchTestArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    let r = if a.listen {
        serve(&a, interrupt)
    } else {
        client(&a, interrupt)
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            let text = error_text(&e);
            // A client that failed before it measured still writes its document, saying why.
            if a.json && !a.listen {
                let mut doc = json!({ "test": "switch-test", "start": start_json(&a) });
                Envelope::new(KIND)
                    .partial(true)
                    .error(Some(&text))
                    .stamp(&mut doc);
                crate::output::document(std::io::stdout(), &doc);
            }
            eprintln!("sonde: error - {text}");
            exit::FAILED
        }
    }
}

/// The document kind ([`sonde_live::envelope`]).
const KIND: &str = "switch-test";

/// `e` and its causes, each once: an I/O error's text often already holds its cause, and
/// `{:#}` would print it twice ("refused (os error 111): refused (os error 111)").
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let c = cause.to_string();
        if !text.contains(&c) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&c);
        }
    }
    text
}

fn backend(a: &SwitchTestArgs) -> Backend {
    if a.backend == "mptcp" {
        Backend::Mptcp
    } else {
        Backend::Framed
    }
}

fn serve(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<i32> {
    let addrs = match (backend(a), a.v4, a.v6) {
        (Backend::Framed, _, _) => [
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), a.port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), a.port),
        ],
        // MPTCP listens on all addresses but must announce real ones.
        (Backend::Mptcp, Some(v4), Some(v6)) => [
            SocketAddr::new(IpAddr::V4(v4), a.port),
            SocketAddr::new(IpAddr::V6(v6), a.port),
        ],
        (Backend::Mptcp, _, _) => anyhow::bail!(
            "--listen --backend mptcp needs --v4 and --v6: the addresses to announce to clients"
        ),
    };
    let l = AnyListener::bind(backend(a), &addrs, Options::default())?;
    eprintln!(
        "sonde switch-test: listening on port {} (IPv4 and IPv6)",
        a.port
    );
    while !interrupt.load(Ordering::SeqCst) {
        let c = match l.accept(Some(Duration::from_millis(200))) {
            Ok(c) => c,
            Err(sonde_switch::Error::TimedOut(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        match serve_one(&c, Duration::from_secs_f64(a.more.interval)) {
            Ok(n) => eprintln!("sonde switch-test: {n} bytes received, hash sent"),
            Err(e) => eprintln!("sonde switch-test: a test failed - {}", error_text(&e)),
        }
        if a.one_off {
            break;
        }
    }
    Ok(exit::OK)
}

fn serve_one(c: &AnyConn, interval: Duration) -> anyhow::Result<u64> {
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut n = 0u64;
    let start = Instant::now();
    let mut samples = Samples::new(interval);
    loop {
        let k = c.recv(&mut buf)?;
        if k == 0 {
            break;
        }
        samples.delivered(start.elapsed(), k as u64);
        h.update(buf.get(..k).unwrap_or(&[]));
        n += k as u64;
    }
    let mut records = switches_json(&c.stats());
    records["received_over_time"] = samples.json();
    let body = serde_json::to_vec(&records)?;
    let mut reply = REPLY_MAGIC.to_vec();
    reply.extend_from_slice(&h.finalize());
    reply.extend_from_slice(&n.to_be_bytes());
    reply.extend_from_slice(&(body.len() as u32).to_be_bytes());
    reply.extend_from_slice(&body);
    c.send_all(&reply)?;
    c.close()?;
    Ok(n)
}

/// Fast pseudo-random filler (xorshift64), so the hash sees varied bytes.
fn fill(buf: &mut [u8], state: &mut u64) {
    for chunk in buf.chunks_mut(8) {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let b = state.to_le_bytes();
        chunk.copy_from_slice(b.get(..chunk.len()).unwrap_or(&[]));
    }
}

/// The server's address per family: HOST looked up through sonde-platform's resolver
/// (bounded in time, and left at Ctrl-C), then `--v4` / `--v6` where given.
fn targets(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<Targets> {
    let mut t = match &a.host {
        // The error's text already holds its cause; `{:#}` would print that twice.
        Some(h) => Targets::from_addrs(
            &resolve(h, a.port, ResolveFamily::Any, interrupt)
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        ),
        None => Targets::default(),
    };
    if let Some(v4) = a.v4 {
        t.v4 = Some(SocketAddr::new(IpAddr::V4(v4), a.port));
    }
    if let Some(v6) = a.v6 {
        t.v6 = Some(SocketAddr::new(IpAddr::V6(v6), a.port));
    }
    if t.v4.is_none() || t.v6.is_none() {
        let has =
            |a: Option<SocketAddr>| a.map_or_else(|| "none".to_owned(), |a| a.ip().to_string());
        anyhow::bail!(
            "switch-test needs an IPv4 and an IPv6 address of the server; {} has IPv4 {}, IPv6 {} (give --v4 and --v6)",
            a.host.as_deref().unwrap_or("the command line"),
            has(t.v4),
            has(t.v6)
        );
    }
    Ok(t)
}

/// Connects, saying what the peer is when it does not answer as a switch-test server.
fn connect(a: &SwitchTestArgs, t: &Targets, fam: Family) -> anyhow::Result<AnyConn> {
    match AnyConn::connect(backend(a), t, fam, Options::default()) {
        Err(sonde_switch::Error::TimedOut(_)) => {
            let addr = if fam == Family::V6 { t.v6 } else { t.v4 };
            match addr {
                Some(addr) => Err(anyhow::anyhow!(super::switch_peer::hello_timed_out(addr))),
                None => anyhow::bail!("the HELLO exchange timed out"),
            }
        }
        r => Ok(r?),
    }
}

struct Outcome {
    bytes: u64,
    secs: f64,
    sha: [u8; 32],
    server_sha: Vec<u8>,
    server_bytes: u64,
    client: Stats,
    server: Value,
    interrupted: bool,
    policy: Chooser,
    /// What ended the transfer early (a failed switch, send or close); the document is then
    /// partial: the client's side as far as it got, no server figures.
    error: Option<String>,
}

fn client(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<i32> {
    let t = targets(a, interrupt)?;
    let fam = if a.start == "6" {
        Family::V6
    } else {
        Family::V4
    };
    let mut chooser = Chooser::new(&a.policy)?;
    let c = connect(a, &t, fam)?;
    let mut stream = Stream::new();
    let start = Instant::now();
    let (sent, switching) =
        send_while_switching(a, &c, fam, start, &mut chooser, &mut stream, interrupt);
    let mut secs = start.elapsed().as_secs_f64();
    let ended = (|| -> anyhow::Result<(Vec<u8>, u64, Value)> {
        switching?;
        sent?;
        stream.send_rest(&c)?;
        secs = start.elapsed().as_secs_f64();
        close_transfer(&c)
    })();
    // A failure after the connection keeps what was measured: the document (or table) is
    // printed, partial, with the error, and the exit status says it failed.
    let (server_sha, server_bytes, server, error) = match ended {
        Ok((sha, n, server)) => (sha, n, server, None),
        Err(e) => (Vec::new(), 0, Value::Null, Some(e.to_string())),
    };
    let o = Outcome {
        bytes: stream.bytes,
        secs,
        sha: stream.hash.finalize().into(),
        server_sha,
        server_bytes,
        client: c.stats(),
        server,
        interrupted: interrupt.load(Ordering::SeqCst),
        policy: chooser,
        error,
    };
    report(a, &o)
}

/// Streams for `-t` seconds (or until Ctrl-C or the last switch) while a thread of its own
/// switches: the schedule says when (every `--every` s, or at `--at` times), the chooser
/// where to (the other family, or what a `--policy` verdict says); see `switch_driver`. The
/// sender's result, then the switcher's.
fn send_while_switching(
    a: &SwitchTestArgs,
    c: &AnyConn,
    family: Family,
    start: Instant,
    chooser: &mut Chooser,
    stream: &mut Stream,
    interrupt: &AtomicBool,
) -> (anyhow::Result<()>, anyhow::Result<()>) {
    let end = start + Duration::from_secs_f64(a.time);
    let schedule = Schedule::new(a.every, &a.more.at);
    let stop = AtomicBool::new(false);
    let switched = AtomicU64::new(0);
    let driver = SwitchDriver {
        conn: c,
        start,
        family,
        limit: a.more.switches,
        stop: &stop,
        switched: &switched,
    };
    std::thread::scope(|s| {
        let switcher = s.spawn(|| driver.run(chooser, schedule));
        let sent = stream.send_until(c, end, interrupt, &stop);
        stop.store(true, Ordering::SeqCst);
        let switching = switcher
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the switching thread panicked")));
        (sent, switching)
    })
}

/// Ends the stream and reads the server's reply: its SHA-256, byte count and switch records.
fn close_transfer(c: &AnyConn) -> anyhow::Result<(Vec<u8>, u64, Value)> {
    c.finish()?;
    let reply = read_reply(c)?;
    // The server's figures are in: a failed close loses nothing measured.
    if let Err(e) = c.close() {
        eprintln!("sonde switch-test: warning - closing the connection: {e}");
    }
    Ok(reply)
}

/// The client's stream: pseudo-random chunks, hashed whole as they are made.
struct Stream {
    hash: Sha256,
    buf: Vec<u8>,
    seed: u64,
    /// What of the current chunk is still to send.
    pending: std::ops::Range<usize>,
    /// Bytes sent.
    bytes: u64,
}

impl Stream {
    fn new() -> Self {
        Self {
            hash: Sha256::new(),
            buf: vec![0u8; 128 * 1024],
            seed: 0x9e37_79b9_7f4a_7c15u64,
            pending: 0..0,
            bytes: 0,
        }
    }

    /// Sends until `end`, Ctrl-C or `stop`.
    fn send_until(
        &mut self,
        c: &AnyConn,
        end: Instant,
        interrupt: &AtomicBool,
        stop: &AtomicBool,
    ) -> anyhow::Result<()> {
        while Instant::now() < end
            && !interrupt.load(Ordering::SeqCst)
            && !stop.load(Ordering::SeqCst)
        {
            if self.pending.is_empty() {
                fill(&mut self.buf, &mut self.seed);
                self.hash.update(&self.buf);
                self.pending = 0..self.buf.len();
            }
            let k = c.send(self.buf.get(self.pending.clone()).unwrap_or(&[]))?;
            self.pending.start += k;
            self.bytes += k as u64;
        }
        Ok(())
    }

    /// The hash covers whole chunks: sends the rest of the current one.
    fn send_rest(&mut self, c: &AnyConn) -> anyhow::Result<()> {
        c.send_all(self.buf.get(self.pending.clone()).unwrap_or(&[]))?;
        self.bytes += self.pending.len() as u64;
        Ok(())
    }
}

/// Prints the run's table or document, says why it failed once on stderr; the exit code.
fn report(a: &SwitchTestArgs, o: &Outcome) -> anyhow::Result<i32> {
    let equal = o.error.is_none()
        && o.sha.as_slice() == o.server_sha.as_slice()
        && o.bytes == o.server_bytes;
    if a.json {
        crate::output::document(std::io::stdout(), &document(a, o, equal));
    } else {
        let _whole = crate::signals::writing();
        print_table(o, equal);
    }
    // Cut short by a signal, the transfer did not reach its end: that is not a pass.
    let Some(why) = failure(o, equal) else {
        return Ok(exit::OK);
    };
    crate::output::run_error(&why, o.error.is_none() && o.interrupted);
    Ok(exit::FAILED)
}

fn read_reply(c: &AnyConn) -> anyhow::Result<(Vec<u8>, u64, Value)> {
    let mut head = [0u8; 48];
    c.recv_exact(&mut head)?;
    if head.get(..4) != Some(&REPLY_MAGIC[..]) {
        anyhow::bail!("the server's reply does not start with SWTR");
    }
    let sha = head.get(4..36).unwrap_or(&[]).to_vec();
    let mut n = [0u8; 8];
    n.copy_from_slice(head.get(36..44).unwrap_or(&[0; 8]));
    let mut l = [0u8; 4];
    l.copy_from_slice(head.get(44..48).unwrap_or(&[0; 4]));
    let len = u32::from_be_bytes(l) as usize;
    if len > MAX_REPLY_JSON {
        anyhow::bail!("the server's switch records claim {len} bytes");
    }
    let mut body = vec![0u8; len];
    c.recv_exact(&mut body)?;
    Ok((sha, u64::from_be_bytes(n), serde_json::from_slice(&body)?))
}

fn ms(d: Option<Duration>) -> Value {
    d.map_or(Value::Null, |d| json!(d.as_secs_f64() * 1e3))
}

fn record_json(r: &SwitchRecord) -> Value {
    json!({
        "at": r.at.as_secs_f64(),
        "kind": format!("{:?}", r.kind).to_lowercase(),
        "from": r.from.map(Family::name),
        "to": r.to.name(),
        "setup_ms": ms(r.setup),
        "first_sent_ms": ms(r.first_sent),
        "first_received_ms": ms(r.first_received),
        "stall_ms": ms(r.stall),
        "replayed": r.replayed,
        "duplicates": r.duplicates,
    })
}

fn switches_json(s: &Stats) -> Value {
    json!({
        "switches": s.switches.iter().map(record_json).collect::<Vec<_>>(),
        "received": s.received,
        "received_by_family": { "ipv4": s.received_by_family[0], "ipv6": s.received_by_family[1] },
        "duplicates": s.duplicates,
        "held_ahead": s.held_ahead,
        "heartbeat_failures": s.heartbeat_failures,
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The run's parameters, the document's `start`.
fn start_json(a: &SwitchTestArgs) -> Value {
    json!({ "host": a.host, "port": a.port, "backend": a.backend, "time": a.time, "every": a.every, "start_family": a.start, "switches": a.more.switches, "at": a.more.at })
}

fn document(a: &SwitchTestArgs, o: &Outcome, equal: bool) -> Value {
    let c = &o.client;
    let mut doc = json!({
        "test": "switch-test",
        "start": start_json(a),
        "client": { "switches": c.switches.iter().map(record_json).collect::<Vec<_>>() },
        "server": o.server,
        "policy": o.policy.json(),
        "end": {
            "bytes": o.bytes,
            "seconds": o.secs,
            "bits_per_second": o.bytes as f64 * 8.0 / o.secs.max(1e-9),
            "switches": c.switches.len(),
            // A partial transfer's hash covers bytes that never went: none is given.
            "sha256": if o.error.is_some() { Value::Null } else { json!(hex(&o.sha)) },
            "server_sha256": if o.error.is_some() { Value::Null } else { json!(hex(&o.server_sha)) },
            "server_bytes": o.server_bytes,
            "hash_equal": equal,
            "replayed": c.replayed,
            "sent_by_family": { "ipv4": c.sent_by_family[0], "ipv6": c.sent_by_family[1] },
            "interrupted": o.interrupted,
        },
    });
    // Ended early: a signal, or a failure that cut the transfer; a hash mismatch did not.
    Envelope::new(KIND)
        .partial(o.interrupted || o.error.is_some())
        .error(failure(o, equal).as_deref())
        .stamp(&mut doc);
    doc
}

/// Why the run failed, whichever way (None: it passed), as every command's document says.
fn failure(o: &Outcome, equal: bool) -> Option<String> {
    o.error.clone().or_else(|| {
        if o.interrupted {
            Some("interrupted".into())
        } else {
            (!equal).then(|| "the stream's SHA-256 or length differs at the two ends".into())
        }
    })
}

fn fmt_ms(v: &Value) -> String {
    v.as_f64().map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

fn print_table(o: &Outcome, equal: bool) {
    let server: &[Value] = o
        .server
        .get("switches")
        .and_then(Value::as_array)
        .map_or(&[], |v| v);
    outln!("  #      at s  to    setup ms  stall ms  to-data ms  replayed B  dup B");
    for (i, r) in o.client.switches.iter().enumerate() {
        let s = server.get(i);
        let get = |k: &str| s.and_then(|s| s.get(k)).cloned().unwrap_or(Value::Null);
        outln!(
            "{:>3} {:>9.3}  {:<4} {:>9} {:>9} {:>11} {:>11} {:>6}",
            i + 1,
            r.at.as_secs_f64(),
            r.to.name(),
            fmt_ms(&ms(r.setup)),
            fmt_ms(&get("stall_ms")),
            fmt_ms(&get("first_received_ms")),
            r.replayed,
            get("duplicates").as_u64().unwrap_or(0),
        );
    }
    for line in o.policy.lines() {
        outln!("{line}");
    }
    let c = &o.client;
    outln!(
        "{} bytes in {:.2} s = {:.1} Mbit/s, {} switches; sent IPv4 {} B, IPv6 {} B; replayed {} B",
        o.bytes,
        o.secs,
        o.bytes as f64 * 8.0 / o.secs.max(1e-9) / 1e6,
        c.switches.len(),
        c.sent_by_family[0],
        c.sent_by_family[1],
        c.replayed
    );
    if let Some(e) = &o.error {
        outln!("partial: the transfer ended early ({e}); no server figures, no hash check");
        return;
    }
    if o.interrupted {
        outln!(
            "partial: interrupted after {:.2} s; the hash covers what was sent",
            o.secs
        );
    }
    outln!(
        "SHA-256 sent {} / received {} ({} bytes): {}",
        hex(&o.sha),
        hex(&o.server_sha),
        o.server_bytes,
        if equal { "equal" } else { "DIFFERENT" }
    );
}
