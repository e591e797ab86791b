//! The userspace impairment engine: a transparent L2 forwarder in a link's impairment box.
//!
//! On this machine's kernel (no netem) every impairment other than a plain rate is applied
//! here. The box namespace holds two interfaces, one cabled to each end of the link; one
//! thread per box moves raw Ethernet frames between them with AF_PACKET sockets
//! ([`sock`]) and runs one `sonde_emu` [`Chain`] per direction on the monotonic clock
//! ([`clock`]): frames read from `a`'s side go through the `a`→`b` chain and are written out on
//! `b`'s side when the chain releases them, and the other way round. A direction whose IPv4
//! or IPv6 frames have impairments of their own runs a chain per such family beside its own,
//! frames split by EtherType ([`sonde_emu::impair::FamilySplit`]).
//!
//! Why a thread in this process rather than a child process: `setns(CLONE_NEWNET)` moves only
//! the calling thread, sockets stay in the namespace they were made in, and a thread hands its
//! chains (with their per-stage counters) back at join, which the run records. Why one thread
//! for both directions: on a 2-core machine the test's sender and receiver need the other
//! core, and the reverse direction of a bulk transfer carries only ACKs. It also suits a
//! half-duplex link, whose two chains draw on one rate budget
//! ([`sonde_emu::impair::SharedRate`]): one thread polls both in turn, at the instants each
//! announces, so the budget is never contended.
//!
//! Before the chain, the box drops IPv6 multicast listener reports ([`filter`]): frames the
//! test did not send, at moments that vary, which would otherwise take draws from the seeded
//! random streams.
//!
//! Why L2 and not a TUN device or routing in the router namespace: a bump in the wire needs
//! no address, route or ARP changes, works on any link (host to host too), and keeps the
//! kernel's own forwarding in the routers, as on a real path. The lab turns off checksum and
//! segmentation offloads on the interfaces facing a box so every frame is a real,
//! checksummed frame no larger than the MTU.

pub mod behind;
pub mod clock;
pub mod filter;
pub mod sock;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use sonde_emu::impair::{FamilySplit, StageStats};
use sonde_emu::{Direction, Instant, Packet};

use crate::error::LabError;
use sock::{PacketSocket, RxBatch, BATCH};

/// Longest sleep before the stop flag is looked at again.
const MAX_SLEEP: Duration = Duration::from_millis(20);

/// Most announced instants one turn catches up on before it reads the sockets again.
const MAX_CATCH_UP: usize = 4096;

/// Default spin window before a departure (see [`clock`]): none. With real-time priority
/// and a 1 ns timer slack the thread wakes from `ppoll` within a few µs of a departure
/// (p99 under 8 µs in `examples/forward_bench.rs`), while spinning, at 20 000 frames/s with a
/// delay, keeps the thread busy between every two departures and takes the core the test's
/// own sender needs on a 2-core machine (end-to-end delay error p99 117 µs without spinning,
/// 168 µs with 20 µs, 200+ µs with 50 µs, in the same benchmark).
pub const DEFAULT_SPIN: Duration = Duration::ZERO;

/// Packet I/O counters of one direction of a box.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct IoStats {
    /// Frames read.
    pub frames_rx: u64,
    /// Bytes read.
    pub bytes_rx: u64,
    /// Frames written.
    pub frames_tx: u64,
    /// Bytes written.
    pub bytes_tx: u64,
    /// Frames too large for a receive slot, dropped.
    pub truncated: u64,
    /// Frames the kernel refused to send (full device queue, link down).
    pub tx_refused: u64,
    /// How late frames left relative to the instant the chain announced, as a histogram:
    /// bucket `i` counts departures between `2^(i-1)` and `2^i` µs late (bucket 0: < 1 µs;
    /// the last bucket: everything later).
    pub lateness_log2_us: [u64; 16],
    /// How long frames waited in the socket before the engine read them (kernel arrival
    /// time to read), same buckets.
    pub read_wait_log2_us: [u64; 16],
    /// Frames that came without a kernel arrival time (delayed from when they were read).
    pub no_timestamp: u64,
    /// IPv6 multicast listener reports and dones dropped before the chain ([`filter`]).
    pub mld_dropped: u64,
}

impl IoStats {
    fn record_lateness(&mut self, late_ns: u64, frames: u64) {
        self.lateness_log2_us[log2_bucket(late_ns)] += frames;
    }
}

/// The histogram bucket of `ns`: 0 below 1 µs, then one per power of two of µs, the last
/// holding everything from 16 ms.
fn log2_bucket(ns: u64) -> usize {
    let us = ns / 1_000;
    ((u64::BITS - us.leading_zeros()) as usize).min(15)
}

impl IoStats {
    fn record_read_wait(&mut self, arrival: Option<Instant>, now: Instant) {
        match arrival {
            Some(a) => self.read_wait_log2_us[log2_bucket((now - a).as_nanos() as u64)] += 1,
            None => self.no_timestamp += 1,
        }
    }
}

/// What one direction of a box did, for the run's record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DirectionReport {
    /// The link.
    pub link: String,
    /// The direction.
    pub direction: Direction,
    /// Each stage's name and counters, in chain order; a family's own chain after the
    /// direction's, its stages named with the family first (`ipv6 delay`).
    pub stages: Vec<(String, StageStats)>,
    /// The chain's totals.
    pub total: StageStats,
    /// Frame I/O.
    pub io: IoStats,
    /// True when the forwarder ran at real-time priority (see [`clock::try_realtime`]).
    pub realtime: bool,
}

/// What the forwarder needs to run one box.
#[derive(Debug)]
pub struct BoxSpec {
    /// The link.
    pub link: String,
    /// The box namespace.
    pub netns: String,
    /// The interface cabled to end `a`.
    pub a_iface: String,
    /// The interface cabled to end `b`.
    pub b_iface: String,
    /// The `a`→`b` chains (empty: pass through).
    pub a_to_b: FamilySplit,
    /// The `b`→`a` chains.
    pub b_to_a: FamilySplit,
    /// Spin window before each departure.
    pub spin: Duration,
}

/// A running box forwarder. Stop it with [`Forwarder::stop`]; dropping it stops it too.
#[derive(Debug)]
pub struct Forwarder {
    link: String,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<[DirectionReport; 2]>>,
}

struct Dir {
    direction: Direction,
    rx: PacketSocket,
    tx: PacketSocket,
    chain: FamilySplit,
    batch: RxBatch,
    out: Vec<Packet>,
    seq: u64,
    io: IoStats,
    /// The last instant given to the chain.
    last: Instant,
    /// Frames read this turn with their arrival times, before they enter the chain (kept to
    /// reuse its allocation).
    arrived: Vec<(Instant, Vec<u8>)>,
}

impl Dir {
    /// Reads what is waiting, runs the chain through each frame's arrival in time order,
    /// brings it up to `now` once the socket is empty and sends what is due. Returns true when
    /// a full batch was read (more may be waiting).
    ///
    /// The chain is polled at each instant it announced, in order, rather than once at `now`:
    /// a thread that wakes 30 µs late then sends late, but the chain's schedule does not slip.
    /// Without this a rate limiter or device model whose next slot counts from the poll instant
    /// would lose every wakeup's lateness (a 100 Mbit/s limiter delivered 80 Mbit/s in tests).
    ///
    /// Frames enter at the kernel's arrival time, and the departures announced before that
    /// time are taken first. A device ring therefore holds what a real one would when the frame
    /// came: after the thread was held up for 5 ms, frames that arrived at 5000/s meet a ring
    /// that was draining all along, not one that is empty with 25 frames arriving at once
    /// (which dropped frames below the device's ceiling on a busy host).
    fn turn(&mut self, now: Instant) -> bool {
        let offset = clock::realtime_offset();
        let Dir {
            rx,
            batch,
            io,
            arrived,
            ..
        } = self;
        let n = batch
            .recv(rx, |frame, truncated, arrival| {
                if truncated {
                    io.truncated += 1;
                    return;
                }
                io.frames_rx += 1;
                io.bytes_rx += frame.len() as u64;
                if filter::is_mld(frame) {
                    io.mld_dropped += 1;
                    return;
                }
                let arrival =
                    arrival.map(|a| Instant::from_nanos((a as i64 - offset).max(0) as u64));
                io.record_read_wait(arrival, now);
                arrived.push((arrival.unwrap_or(now).min(now), frame.to_vec()));
            })
            .unwrap_or(0);
        let mut arrived = std::mem::take(&mut self.arrived);
        for (arrival, frame) in arrived.drain(..) {
            // Never back in time: a frame stamped before an instant the chain has seen enters
            // at that instant.
            self.catch_up(arrival, now);
            let at = arrival.max(self.last);
            self.last = at;
            let mut pkt = Packet::new(frame, self.seq);
            pkt.meta.entered = at;
            self.seq += 1;
            self.chain.push(pkt, at);
        }
        self.arrived = arrived;
        if n == BATCH {
            // More frames wait in the socket, and they came after these: the chain goes no
            // further than the last arrival until they are in. Running it up to `now` first
            // would drain the ring of slots those frames should fill (under overload the
            // device then moved far fewer frames than its rate).
            self.flush();
            return true;
        }
        self.catch_up(now, now);
        self.last = now;
        let before = self.out.len();
        while let Some(p) = self.chain.poll(now) {
            self.out.push(p);
        }
        self.io.record_lateness(0, (self.out.len() - before) as u64);
        self.flush();
        false
    }

    /// Polls the chain at every instant it announces up to `until`, never going back in time;
    /// what leaves is `now - instant` late.
    fn catch_up(&mut self, until: Instant, now: Instant) {
        for _ in 0..MAX_CATCH_UP {
            let Some(due) = self.chain.next_wakeup().filter(|&w| w <= until) else {
                break;
            };
            let at = due.max(self.last);
            self.last = at;
            let before = self.out.len();
            while let Some(p) = self.chain.poll(at) {
                self.out.push(p);
            }
            let sent = self.out.len() - before;
            self.io
                .record_lateness((now - at).as_nanos() as u64, sent as u64);
            if sent == 0 && self.chain.next_wakeup() == Some(due) {
                break;
            }
        }
    }

    fn flush(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let (sent, refused) = sock::send_all(&self.tx, &self.out);
        self.io.frames_tx += sent as u64;
        self.io.tx_refused += refused as u64;
        self.io.bytes_tx += self
            .out
            .iter()
            .take(sent)
            .map(|p| p.len() as u64)
            .sum::<u64>();
        self.out.clear();
    }

    fn report(&self, link: &str, realtime: bool) -> DirectionReport {
        DirectionReport {
            link: link.to_owned(),
            direction: self.direction,
            stages: self.chain.stage_stats(),
            total: self.chain.stats(),
            io: self.io,
            realtime,
        }
    }
}

fn open_dirs(spec: BoxSpec) -> Result<(String, [Dir; 2], Duration), LabError> {
    crate::netns::enter(&spec.netns)?;
    let open = |ifname: &str, rx: bool| {
        PacketSocket::open(ifname, rx).map_err(|e| {
            let what = format!("AF_PACKET socket on {ifname}");
            LabError::os(what, &spec.netns, e)
        })
    };
    let a_rx = open(&spec.a_iface, true)?;
    let b_rx = open(&spec.b_iface, true)?;
    let a_tx = open(&spec.a_iface, false)?;
    let b_tx = open(&spec.b_iface, false)?;
    let dir = |direction, rx, tx, chain| Dir {
        direction,
        rx,
        tx,
        chain,
        batch: RxBatch::new(),
        out: Vec::with_capacity(BATCH),
        seq: 0,
        io: IoStats::default(),
        last: Instant::ZERO,
        arrived: Vec::with_capacity(BATCH),
    };
    Ok((
        spec.link,
        [
            dir(Direction::AToB, a_rx, b_tx, spec.a_to_b),
            dir(Direction::BToA, b_rx, a_tx, spec.b_to_a),
        ],
        spec.spin,
    ))
}

/// Forwards until `stop`; returns whether it ran at real-time priority.
fn run(dirs: &mut [Dir; 2], stop: &AtomicBool, spin: Duration) -> bool {
    clock::tighten_timer_slack();
    let realtime = clock::try_realtime(10);
    let fds = [dirs[0].rx.raw_fd(), dirs[1].rx.raw_fd()];
    while !stop.load(Ordering::Relaxed) {
        let now = clock::now();
        let mut more = false;
        for d in dirs.iter_mut() {
            more |= d.turn(now);
        }
        if more {
            continue;
        }
        let next = dirs.iter().filter_map(|d| d.chain.next_wakeup()).min();
        let now = clock::now();
        let wait = match next {
            Some(t) if t <= now => continue,
            Some(t) => t - now,
            None => MAX_SLEEP,
        };
        if wait > spin {
            clock::wait_readable(&fds, (wait - spin).min(MAX_SLEEP));
        } else {
            std::hint::spin_loop();
        }
    }
    realtime
}

impl Forwarder {
    /// Starts the box's thread: it enters the namespace, opens its sockets, then forwards
    /// until stopped. Returns once the sockets are open, so frames sent after this returns
    /// are forwarded.
    ///
    /// # Errors
    /// [`LabError::Os`] when the namespace or a socket cannot be opened.
    pub fn start(spec: BoxSpec) -> Result<Forwarder, LabError> {
        let link = spec.link.clone();
        let netns = spec.netns.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), LabError>>();
        let thread_stop = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name(format!("sonde-fwd-{link}"))
            .spawn(move || {
                let (link, mut dirs, spin) = match open_dirs(spec) {
                    Ok(v) => v,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return [Direction::AToB, Direction::BToA].map(|direction| {
                            DirectionReport {
                                link: String::new(),
                                direction,
                                stages: Vec::new(),
                                total: StageStats::default(),
                                io: IoStats::default(),
                                realtime: false,
                            }
                        });
                    }
                };
                let _ = ready_tx.send(Ok(()));
                let realtime = run(&mut dirs, &thread_stop, spin);
                [
                    dirs[0].report(&link, realtime),
                    dirs[1].report(&link, realtime),
                ]
            })
            .map_err(|e| LabError::os("spawn the forwarder thread", &netns, e))?;
        let mut fwd = Forwarder {
            link,
            stop,
            handle: Some(handle),
        };
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(fwd),
            Ok(Err(e)) => {
                fwd.halt();
                Err(e)
            }
            Err(_) => {
                fwd.halt();
                Err(LabError::ForwarderDied {
                    link: fwd.link.clone(),
                    direction: Direction::AToB,
                })
            }
        }
    }

    /// The link this forwarder impairs.
    pub fn link(&self) -> &str {
        &self.link
    }

    fn halt(&mut self) -> Option<[DirectionReport; 2]> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take().and_then(|h| h.join().ok())
    }

    /// Stops the thread and returns what each direction did.
    ///
    /// # Errors
    /// [`LabError::ForwarderDied`] when the thread panicked.
    pub fn stop(mut self) -> Result<[DirectionReport; 2], LabError> {
        let link = self.link.clone();
        self.halt().ok_or(LabError::ForwarderDied {
            link,
            direction: Direction::AToB,
        })
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.halt();
    }
}
