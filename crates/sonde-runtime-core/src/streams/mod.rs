//! Data-stream workers: one thread per stream, sending or receiving, with shared counters the
//! meter reads at interval boundaries.
//!
//! Senders stop when `Control::stop_send` is set or a shared [`Budget`] (`-n` / `-k`) is used
//! up; they then half-close TCP so the receiver can count every byte in flight. Receivers run
//! until EOF (TCP), until every datagram the sender reported has arrived (UDP), until the drain
//! deadline, or until `Control::abort`.

pub mod budget;
pub mod tcp;
pub mod udp;

pub use budget::Budget;

use sonde_proto::datagram_format::DatagramFormat;
use sonde_proto::message::TestParams;
use sonde_stats::model::StreamRole;
use sonde_stats::udp_rx::UdpReceiveTracker;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Flags shared by all workers of one test.
#[derive(Debug, Default)]
pub struct Control {
    /// Senders stop writing and half-close.
    pub stop_send: AtomicBool,
    /// Everything stops at once (Ctrl-C, peer gone).
    pub abort: AtomicBool,
    /// Receivers stop at this `clock::now_ns()` value (0 = no deadline yet).
    pub recv_deadline_ns: AtomicU64,
    /// Senders wait while this is set. A server's receivers and meter start as soon as every
    /// stream is connected (data the client sends early is counted, not lost), while its
    /// senders wait for the client's start: before it, the client may still be waiting for a
    /// lost UDP acknowledgement on that very socket.
    pub hold_send: AtomicBool,
}

impl Control {
    pub fn receivers_should_stop(&self) -> bool {
        if self.abort.load(Ordering::Relaxed) {
            return true;
        }
        let d = self.recv_deadline_ns.load(Ordering::Relaxed);
        d != 0 && crate::clock::now_ns() >= d
    }

    /// Blocks a sender until it may send; false when the test ended first.
    pub fn wait_to_send(&self) -> bool {
        while self.hold_send.load(Ordering::Relaxed) {
            if self.abort.load(Ordering::Relaxed) || self.stop_send.load(Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        true
    }

    /// Lets receivers drain for `grace` more, then stop.
    pub fn set_recv_deadline(&self, grace: Duration) {
        let at = crate::clock::now_ns().saturating_add(grace.as_nanos() as u64);
        self.recv_deadline_ns.store(at.max(1), Ordering::Relaxed);
    }
}

/// Counters of one stream, written by its worker and read by the meter.
#[derive(Debug)]
pub struct StreamShared {
    pub id: u32,
    pub role: StreamRole,
    pub bytes: AtomicU64,
    /// Writes (TCP) or datagrams (UDP) sent; for UDP also the last sequence number used.
    pub packets: AtomicU64,
    /// UDP receivers: datagrams the sender reported sending (0 = not known yet).
    pub expected_packets: AtomicU64,
    pub udp_rx: Mutex<UdpReceiveTracker>,
    pub finished: AtomicBool,
    /// Receivers: `clock::now_ns()` of the last data's arrival (0 = none yet): when it was
    /// read, less how long it waited in the socket when the kernel stamped it. A receiver's
    /// span ends there when that is after the stop: bytes drained after the stop arrived
    /// after it.
    pub last_rx_ns: AtomicU64,
    /// `clock::now_ns()` when this stream's data began (0 = not yet): a sender's first write,
    /// a receiver's first arrival (when it was read, less how long it waited in the socket
    /// when the kernel stamped it). An end's test clock starts at its streams' first data
    /// (see `Meter::settle_clock`).
    pub first_data_ns: AtomicU64,
    pub error: Mutex<Option<String>>,
    /// Paced UDP senders: when they fell behind their schedule.
    pub slips: Mutex<crate::schedule_slips::ScheduleSlips>,
}

impl StreamShared {
    pub fn new(id: u32, role: StreamRole) -> Self {
        Self {
            id,
            role,
            bytes: AtomicU64::new(0),
            packets: AtomicU64::new(0),
            expected_packets: AtomicU64::new(0),
            udp_rx: Mutex::new(UdpReceiveTracker::new()),
            finished: AtomicBool::new(false),
            last_rx_ns: AtomicU64::new(0),
            first_data_ns: AtomicU64::new(0),
            error: Mutex::new(None),
            slips: Mutex::new(Default::default()),
        }
    }

    /// A receiver read data at `ns` (`clock::now_ns()`): the last read, and the first if none
    /// was noted before.
    pub fn data_read_at(&self, ns: u64) {
        self.data_read(0, 0, ns);
    }

    /// A receiver read data at `ns` (`clock::now_ns()`) whose first and last pieces had
    /// waited `first_waited_ns` and `last_waited_ns` in the socket (0 when unknown): the last
    /// arrival, and the first if none was noted.
    pub fn data_read(&self, first_waited_ns: u64, last_waited_ns: u64, ns: u64) {
        self.last_rx_ns
            .store(ns.saturating_sub(last_waited_ns).max(1), Ordering::Relaxed);
        let arrived = ns.saturating_sub(first_waited_ns).max(1);
        let _ =
            self.first_data_ns
                .compare_exchange(0, arrived, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// A sender's write went out: notes the first.
    pub fn data_sent(&self) {
        if self.first_data_ns.load(Ordering::Relaxed) == 0 {
            self.first_data_ns
                .store(crate::clock::now_ns().max(1), Ordering::Relaxed);
        }
    }

    pub fn fail(&self, msg: String) {
        if let Ok(mut e) = self.error.lock() {
            e.get_or_insert(msg);
        }
    }

    pub fn error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|e| e.clone())
    }
}

/// How this host's streams of one test send and receive: length, rate and burst, the datagram
/// format and payload, and the per-socket choices (zero-copy, discarding receives).
#[derive(Debug, Clone)]
pub struct StreamConfig {
    pub length: usize,
    /// Target rate of this stream, 0 = unlimited.
    pub rate: sonde_stats::units::Rate,
    /// UDP: datagrams sent back to back at each departure (`--burst`, 1 = smooth pacing).
    pub burst: u32,
    /// UDP: how a paced sender treats lost schedule (`--steady-pacing`).
    pub pacing: crate::pacing::Pacing,
    pub zerocopy: bool,
    /// UDP: the header every datagram carries.
    pub format: DatagramFormat,
    /// UDP: payload of repeated "0123456789" (iperf3's `--repeating-payload`).
    pub repeating_payload: bool,
    /// UDP: bytes every datagram carries right after its header, as many as fit (iperf 2's
    /// client header, which its server reads from the first datagram); the first datagram
    /// is lengthened to hold all of them. Empty for sonde and iperf3.
    pub prefix: Vec<u8>,
    /// TCP receivers: discard without copying (`--skip-rx-copy`).
    pub skip_rx_copy: bool,
    /// The socket's kernel pacing was set explicitly (`--fq-rate`): `-b` leaves it alone.
    pub fq_rate_set: bool,
    /// TCP (`-F`): senders send this file's bytes and stop at its end; receivers write what
    /// they read into it.
    pub file: Option<std::path::PathBuf>,
}

impl StreamConfig {
    /// A sonde-format sender: `length`-byte writes or datagrams at `rate` (0 = unlimited),
    /// smoothly paced. `length` is a checked request's (at most 16 MiB).
    pub fn new(length: sonde_stats::units::Size, rate: sonde_stats::units::Rate) -> Self {
        Self {
            length: length.as_len(),
            rate,
            burst: 1,
            pacing: crate::pacing::Pacing::Average,
            zerocopy: false,
            format: DatagramFormat::Sonde,
            repeating_payload: false,
            prefix: Vec::new(),
            skip_rx_copy: false,
            fq_rate_set: false,
            file: None,
        }
    }

    /// How a sonde test's senders send.
    pub fn for_test(p: &TestParams) -> Self {
        Self {
            burst: p.burst.max(1),
            pacing: if p.steady_pacing {
                crate::pacing::Pacing::Steady
            } else {
                crate::pacing::Pacing::Average
            },
            zerocopy: p.zerocopy,
            skip_rx_copy: p.skip_rx_copy,
            fq_rate_set: !p.fq_rate.is_unlimited(),
            ..Self::new(p.length, p.rate)
        }
    }
}

/// Payload for a stream: a fixed pseudo-random block, filled once (as iperf3 does), so the
/// data is not trivially compressible.
pub fn payload(len: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(2_654_435_761).max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x & 0xFF) as u8
        })
        .collect()
}
