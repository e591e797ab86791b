//! The threads of a profile run: a sender per stream this end sends (each datagram at its due
//! time and never closer than the stream's gap to the one before it in its burst, each stamped
//! with the wall clock as it leaves), a receiver per stream it receives (kernel receive
//! timestamps where the OS gives them, into the pure accounting of `sonde_profile::receive`).
//!
//! Senders keep exact times with [`sonde_runtime_core::clock::PreciseSleeper`]; a sender held
//! up sends a late datagram at once rather than skipping it, but never sooner than the gap
//! after the one before it in its burst had left (its send returned), so a burst keeps at
//! least its spacing (back to back for a gap of 0), as the profile says. The price: each
//! spaced datagram goes the time of one send later than the plan has it (microseconds). Each datagram's stamp is read as it leaves, which is its own due time
//! (its burst's plus its place times the gap) whenever the sender keeps its schedule: a spaced
//! burst's last datagram is measured from when it left, not from its burst's start. The
//! stamp is read before the send, so a socket buffer that stays full (a link pushing back)
//! counts in the delay; this host's own hold-ups (another process on the sender's core) do
//! not, as they are not the link's.

use sonde_platform::timestamp;
use sonde_profile::receive::StreamReceiver;
use sonde_profile::schedule::Schedule;
use sonde_profile::StreamSpec;
use sonde_proto::datagram::DatagramHeader;
use sonde_proto::message::SentCount;
use sonde_proto::udp_hello::{Hello, HelloAck};
use sonde_runtime_core::clock::PreciseSleeper;
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a waiting thread looks at its stop flag.
const CHECK: Duration = Duration::from_millis(20);

/// A stream this end sends, or receives.
pub struct ProfileStream {
    pub id: u32,
    pub spec: StreamSpec,
    pub socket: UdpSocket,
    /// The server's receiving sockets answer hellos repeated by a client that lost an ack.
    pub ack: Option<HelloAck>,
}

struct Sending {
    id: u32,
    sent: Arc<AtomicU64>,
    handle: JoinHandle<Result<(), String>>,
}

struct Receiving {
    id: u32,
    /// Datagrams the stream's plan sends.
    planned: u64,
    received: Arc<AtomicU64>,
    handle: JoinHandle<StreamReceiver>,
}

/// The running threads of one end.
pub struct Workers {
    stop_send: Arc<AtomicBool>,
    stop_recv: Arc<AtomicBool>,
    senders: Vec<Sending>,
    receivers: Vec<Receiving>,
    pending: Vec<ProfileStream>,
    profile_s: f64,
}

impl Workers {
    /// Starts the receivers of `receive` now; the senders of `send` wait for [`Self::start`].
    ///
    /// # Errors
    /// The OS error when a thread cannot be started.
    pub fn new(
        send: Vec<ProfileStream>,
        receive: Vec<ProfileStream>,
        profile_s: f64,
    ) -> std::io::Result<Self> {
        let stop_recv = Arc::new(AtomicBool::new(false));
        let mut receivers = Vec::new();
        for s in receive {
            let received = Arc::new(AtomicU64::new(0));
            let (stop, count) = (stop_recv.clone(), received.clone());
            let id = s.id;
            let planned = Schedule::new(&s.spec, profile_s).datagrams();
            let handle = std::thread::Builder::new()
                .name(format!("profile-rx-{id}"))
                .spawn(move || receive_stream(s, profile_s, &stop, &count))?;
            receivers.push(Receiving {
                id,
                planned,
                received,
                handle,
            });
        }
        Ok(Self {
            stop_send: Arc::new(AtomicBool::new(false)),
            stop_recv,
            senders: Vec::new(),
            receivers,
            pending: send,
            profile_s,
        })
    }

    /// Starts the senders: the profile's clock starts at `t0`.
    ///
    /// # Errors
    /// The OS error when a thread cannot be started.
    pub fn start(&mut self, t0: Instant) -> std::io::Result<()> {
        for s in std::mem::take(&mut self.pending) {
            let sent = Arc::new(AtomicU64::new(0));
            let (stop, count, profile_s, id) =
                (self.stop_send.clone(), sent.clone(), self.profile_s, s.id);
            let handle = std::thread::Builder::new()
                .name(format!("profile-tx-{id}"))
                .spawn(move || send_stream(&s, profile_s, t0, &stop, &count))?;
            self.senders.push(Sending { id, sent, handle });
        }
        Ok(())
    }

    /// Whether every sender has sent its whole plan (or failed).
    pub fn senders_done(&self) -> bool {
        self.senders.iter().all(|s| s.handle.is_finished())
    }

    /// Whether every receiver has counted its stream's whole plan (true with none).
    pub fn receivers_complete(&self) -> bool {
        self.receivers
            .iter()
            .all(|r| r.received.load(Ordering::Relaxed) >= r.planned)
    }

    /// Stops the senders and waits for them; returns what each sent and the first failure.
    pub fn stop_senders(&mut self) -> (Vec<SentCount>, Option<String>) {
        self.stop_send.store(true, Ordering::SeqCst);
        let mut counts = Vec::new();
        let mut error = None;
        for s in std::mem::take(&mut self.senders) {
            let r = s.handle.join();
            let packets = s.sent.load(Ordering::SeqCst);
            counts.push(SentCount {
                id: s.id,
                bytes: 0,
                packets,
            });
            match r {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    error.get_or_insert(format!("stream {}: {e}", s.id));
                }
                Err(_) => {
                    error.get_or_insert(format!("stream {}: sender thread failed", s.id));
                }
            }
        }
        (counts, error)
    }

    /// Waits until every receiver has counted what its peer sent (`peer_sent`, None when
    /// unknown) or `grace` passes, then stops the receivers and returns their accounts.
    pub fn drain_receivers(
        &mut self,
        peer_sent: &dyn Fn(u32) -> Option<u64>,
        grace: Duration,
    ) -> Vec<StreamReceiver> {
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            let all = self
                .receivers
                .iter()
                .all(|r| peer_sent(r.id).is_some_and(|n| r.received.load(Ordering::Relaxed) >= n));
            if all {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop_recv.store(true, Ordering::SeqCst);
        std::mem::take(&mut self.receivers)
            .into_iter()
            .filter_map(|r| r.handle.join().ok())
            .collect()
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.stop_send.store(true, Ordering::SeqCst);
        self.stop_recv.store(true, Ordering::SeqCst);
    }
}

/// Sends stream `s`'s datagrams from `t0` until its plan ends or `stop` is set; counts each
/// datagram sent in `sent`. A burst with no gap goes whole once begun; a spaced one looks at
/// `stop` while it waits between datagrams, so a long spaced burst does not hold a stop up.
fn send_stream(
    s: &ProfileStream,
    profile_s: f64,
    t0: Instant,
    stop: &AtomicBool,
    sent: &AtomicU64,
) -> Result<(), String> {
    let plan = Schedule::new(&s.spec, profile_s);
    let gap = Duration::from_nanos(plan.gap_ns());
    let mut buf = sonde_runtime_core::streams::payload(s.spec.size as usize, s.id);
    let mut sleeper = PreciseSleeper::new();
    for k in 0..plan.bursts() {
        let first = plan.first_seq(k);
        let mut previous: Option<Instant> = None;
        for seq in first..first + u64::from(plan.burst_len()) {
            let Some(mut due) = plan
                .send_ns(seq)
                .and_then(|ns| t0.checked_add(Duration::from_nanos(ns)))
            else {
                return Err(format!("datagram {seq} is due beyond this clock's range"));
            };
            if let Some(p) = previous {
                due = due.max(p + gap);
            }
            if (previous.is_none() || !gap.is_zero())
                && !wait_unless_stopped(&mut sleeper, due, stop)
            {
                return Ok(());
            }
            let header = DatagramHeader {
                seq,
                send_ns: timestamp::realtime_ns(),
            };
            header.emit(&mut buf).map_err(|e| e.to_string())?;
            send_datagram(&s.socket, &buf)?;
            // The next one waits the gap from when this one had left, not from when its send
            // began: a send held up inside the kernel must not bring the two together.
            previous = Some(Instant::now());
            sent.store(seq, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Waits until `due`; false when `stop` was set first.
fn wait_unless_stopped(sleeper: &mut PreciseSleeper, due: Instant, stop: &AtomicBool) -> bool {
    while !sleeper.wait_until(due, CHECK) {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
    }
    !stop.load(Ordering::Relaxed)
}

/// Sends one datagram, retrying briefly while the socket buffer is full (the burst must leave
/// whole; the network, not this host, should be what drops it).
fn send_datagram(sock: &UdpSocket, d: &[u8]) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_millis(200);
    loop {
        match sock.send(d) {
            Ok(_) => return Ok(()),
            Err(e)
                if matches!(e.raw_os_error(), Some(libc::ENOBUFS) | Some(libc::EAGAIN))
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_micros(50));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Counts stream `s`'s arrivals until `stop` is set.
fn receive_stream(
    s: ProfileStream,
    profile_s: f64,
    stop: &AtomicBool,
    count: &AtomicU64,
) -> StreamReceiver {
    let mut acc = StreamReceiver::new(s.id, &s.spec, profile_s);
    timestamp::enable_rx(&s.socket);
    let mut buf = vec![0u8; s.spec.size.max(64) as usize + 64];
    while !stop.load(Ordering::Relaxed) {
        match timestamp::wait_readable(&s.socket, CHECK) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(_) => std::thread::sleep(CHECK),
        }
        while let Ok(r) = timestamp::recv(&s.socket, &mut buf) {
            let d = &buf[..r.len.min(buf.len())];
            if let (Some(ack), Ok(_)) = (s.ack, Hello::parse(d)) {
                let _ = s.socket.send(&ack.emit());
                continue;
            }
            if let Ok(h) = DatagramHeader::parse(d) {
                acc.on_datagram(h.seq, h.send_ns, r.best_ns());
                count.store(acc.received(), Ordering::Relaxed);
            }
        }
    }
    acc
}
