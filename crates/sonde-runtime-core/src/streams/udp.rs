//! UDP stream workers, one set for every datagram format (sonde's, iperf3's and iperf 2's
//! headers, see [`DatagramFormat`]; iperf 2's client header rides after its own as the
//! config's `prefix`).
//!
//! Sending: a paced sender (`-b`) gives every datagram its own departure time and waits for it
//! precisely; intended bursts (`--burst N`) leave back to back at the paced average rate (see
//! [`crate::pacing`] for the schedule and where batching takes over). Unpaced and very high
//! rate senders batch: quinn-udp's `sendmsg` with UDP GSO (one call carries up to 64
//! datagrams, each with its own header), or `sendmmsg` with `--no-gso`, where the OS has no
//! GSO, or after a GSO error. Receiving uses quinn-udp's `recvmmsg` with GRO, splitting
//! coalesced buffers at the reported stride, and the kernel's per-datagram receive time.

use super::{Budget, Control, StreamConfig, StreamShared};
use crate::clock::{now_ns, PreciseSleeper};
use crate::pacing::{datagram_gap_ns, datagrams_per_departure, DepartureSchedule, Pacing};
use crate::schedule_slips::ScheduleSlips;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState, BATCH_SIZE};
use sonde_platform::{cpu, poll, timestamp};
use sonde_proto::datagram_format::{DatagramFormat, Received};
use sonde_proto::iperf3::udp::repeating_payload;
use sonde_proto::udp_hello::HelloAck;
use sonde_stats::cpu::CpuTimes;
use std::io::{ErrorKind, IoSliceMut};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(50);

/// Whether this host's UDP senders may use GSO (process-wide, like the OS knob it mirrors).
/// `--no-gso` turns it off: every datagram then leaves as its own packet through `sendmmsg`,
/// which is also the path taken where the OS has no GSO.
static GSO_ENABLED: AtomicBool = AtomicBool::new(true);

/// Chooses the UDP sending path for the rest of the process.
pub fn set_gso(enabled: bool) {
    GSO_ENABLED.store(enabled, Ordering::Relaxed);
}
/// Whether a UDP socket would send with GSO and receive with GRO here: the kernel's answer
/// for this socket, and for GSO `--no-gso` as well (what the workers decide the same way).
pub fn offloads(sock: &UdpSocket) -> (bool, bool) {
    match UdpSocketState::new(sock.into()) {
        Ok(state) => (
            GSO_ENABLED.load(Ordering::Relaxed) && state.max_gso_segments() > 1,
            state.gro_segments() > 1,
        ),
        Err(_) => (false, false),
    }
}

/// Largest GSO super-datagram.
const GSO_BYTES: usize = 65_000;

/// Sends until stopped or the budget is used up. Returns the thread's CPU.
pub fn send(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    cfg: StreamConfig,
    budget: Option<Arc<Budget>>,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    let result = Sender::new(&sock, &shared, &cfg).and_then(|mut s| {
        if ctl.wait_to_send() {
            s.run(budget.as_deref(), &ctl)
        } else {
            Ok(())
        }
    });
    if let Err(e) = result {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

/// One stream's sending state: the socket, its batch buffer and its counters.
struct Sender<'a> {
    sock: &'a UdpSocket,
    shared: &'a StreamShared,
    state: UdpSocketState,
    format: DatagramFormat,
    len: usize,
    /// Datagrams one system call may carry.
    max_batch: usize,
    /// Datagrams per departure (1 when smoothly paced).
    per_departure: usize,
    /// Nanoseconds between departures of one datagram at the asked rate (0 unpaced).
    gap_ns: u64,
    gso: bool,
    buf: Vec<u8>,
    bitrate: u64,
    pacing: Pacing,
    seq: u64,
    dest: std::net::SocketAddr,
    /// The first datagram when the prefix does not fit the others (sent alone, then None).
    first: Option<Vec<u8>>,
}

impl<'a> Sender<'a> {
    fn new(
        sock: &'a UdpSocket,
        shared: &'a StreamShared,
        cfg: &StreamConfig,
    ) -> std::io::Result<Self> {
        let state = UdpSocketState::new(sock.into())?;
        let len = cfg.length.max(cfg.format.header_len());
        let gso = GSO_ENABLED.load(Ordering::Relaxed) && state.max_gso_segments() > 1;
        let max_batch = if gso {
            state.max_gso_segments().min(GSO_BYTES / len).max(1)
        } else {
            sonde_platform::mmsg::MAX_BATCH
        };
        let header = cfg.format.header_len();
        let whole = (header + cfg.prefix.len()).max(len);
        let mut first = if cfg.repeating_payload {
            repeating_payload(whole)
        } else {
            super::payload(whole, shared.id)
        };
        if let Some(p) = first.get_mut(header..header + cfg.prefix.len()) {
            p.copy_from_slice(&cfg.prefix);
        }
        let block = first[..len].to_vec();
        let mut buf = Vec::with_capacity(len * max_batch);
        for _ in 0..max_batch {
            buf.extend_from_slice(&block);
        }
        Ok(Self {
            sock,
            shared,
            state,
            format: cfg.format,
            len,
            max_batch,
            per_departure: datagrams_per_departure(
                len,
                cfg.rate.bits_per_sec(),
                cfg.burst,
                max_batch,
            ),
            gap_ns: datagram_gap_ns(len, cfg.rate.bits_per_sec()),
            gso,
            buf,
            bitrate: cfg.rate.bits_per_sec(),
            pacing: cfg.pacing,
            seq: 0,
            dest: sock.peer_addr()?,
            first: (whole > len).then_some(first),
        })
    }

    fn stopped(ctl: &Control) -> bool {
        ctl.stop_send.load(Ordering::Relaxed) || ctl.abort.load(Ordering::Relaxed)
    }

    /// Sends departures on schedule until stopped or the budget is used up.
    fn run(&mut self, budget: Option<&Budget>, ctl: &Control) -> std::io::Result<()> {
        let mut schedule = DepartureSchedule::with_pacing(self.bitrate, self.pacing);
        let mut sleeper = schedule.as_ref().map(|_| PreciseSleeper::new());
        let mut slips = ScheduleSlips::default();
        slips.steady = self.pacing == Pacing::Steady;
        let start = Instant::now();
        while !Self::stopped(ctl) {
            if let (Some(s), Some(sl)) = (&schedule, &mut sleeper) {
                let due = start + Duration::from_nanos(s.next_departure_ns());
                if !sl.wait_until(due, SLICE) {
                    continue;
                }
            }
            let left_at = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            let count = match &schedule {
                Some(s) => {
                    let late = left_at.saturating_sub(s.next_departure_ns());
                    let before = slips;
                    slips.record(late, self.gap_ns);
                    if slips != before {
                        if let Ok(mut shared) = self.shared.slips.lock() {
                            *shared = slips;
                        }
                    }
                    s.batch(late, self.gap_ns, self.per_departure, self.max_batch)
                }
                None => self.per_departure,
            };
            let (bytes, more) = self.departure(count, budget, ctl)?;
            if let Some(s) = &mut schedule {
                s.on_departure(left_at, bytes);
            }
            if !more {
                break;
            }
        }
        Ok(())
    }

    /// Sends one departure's `count` datagrams back to back, in as many calls as the batch
    /// size needs. Returns the bytes sent and false when the budget is used up.
    fn departure(
        &mut self,
        count: usize,
        budget: Option<&Budget>,
        ctl: &Control,
    ) -> std::io::Result<(u64, bool)> {
        let mut left = count;
        let mut bytes = 0;
        if let Some(first) = self.first.take() {
            if budget.is_some_and(|b| b.claim(first.len() as u64) == 0) {
                return Ok((0, false));
            }
            bytes += self.send_first(first, ctl)?;
            left = left.saturating_sub(1);
        }
        while left > 0 && !ctl.abort.load(Ordering::Relaxed) {
            let want = left.min(self.max_batch);
            let (k, last_len) = match budget {
                Some(b) => claim(b, want, self.len, self.format.header_len()),
                None => (want, self.len),
            };
            if k == 0 {
                return Ok((bytes, false));
            }
            bytes += self.send_batch(k, last_len, ctl)?;
            if k < want {
                return Ok((bytes, false));
            }
            left -= k;
        }
        Ok((bytes, true))
    }

    /// Stamps and sends `k` datagrams (the last `last_len` bytes long) in one call, retrying
    /// until the kernel took them all. Returns the bytes sent.
    fn send_batch(&mut self, k: usize, last_len: usize, ctl: &Control) -> std::io::Result<u64> {
        let stamp = now_ns();
        for i in 0..k {
            let at = i * self.len;
            let seq = self.seq + 1 + i as u64;
            self.format
                .emit(seq, stamp, &mut self.buf[at..at + self.len])
                .map_err(std::io::Error::other)?;
        }
        let total = (k - 1) * self.len + last_len;
        if k == 1 {
            send_one(self.sock, &self.buf[..total], ctl)?;
        } else if self.gso {
            if !self.send_gso(k, total, ctl)? {
                self.gso = false; // GSO refused on this path: sendmmsg from now on.
                send_mmsg(self.sock, &self.buf[..total], self.len, k, ctl)?;
            }
        } else {
            send_mmsg(self.sock, &self.buf[..total], self.len, k, ctl)?;
        }
        self.seq += k as u64;
        self.shared.data_sent();
        self.shared.bytes.fetch_add(total as u64, Ordering::Relaxed);
        self.shared.packets.store(self.seq, Ordering::Relaxed);
        Ok(total as u64)
    }

    /// Stamps and sends the lengthened first datagram on its own. Returns its bytes.
    fn send_first(&mut self, mut first: Vec<u8>, ctl: &Control) -> std::io::Result<u64> {
        self.format
            .emit(1, now_ns(), &mut first)
            .map_err(std::io::Error::other)?;
        send_one(self.sock, &first, ctl)?;
        self.seq = 1;
        self.shared.data_sent();
        self.shared
            .bytes
            .fetch_add(first.len() as u64, Ordering::Relaxed);
        self.shared.packets.store(1, Ordering::Relaxed);
        Ok(first.len() as u64)
    }

    /// One GSO send of `k` datagrams; false when the path refuses GSO (nothing was sent).
    fn send_gso(&self, k: usize, total: usize, ctl: &Control) -> std::io::Result<bool> {
        let t = Transmit {
            destination: self.dest,
            ecn: None,
            contents: &self.buf[..total],
            segment_size: Some(self.len),
            src_ip: None,
        };
        loop {
            match self.state.try_send(self.sock.into(), &t) {
                Ok(()) => return Ok(true),
                Err(e) if is_full(&e) => {
                    if ctl.abort.load(Ordering::Relaxed) {
                        return Ok(true);
                    }
                    poll::writable(self.sock, SLICE)?;
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    // ICMP port unreachable from an earlier datagram: the receiver is gone or
                    // not yet there. The batch counts as sent (it left this host).
                    std::thread::sleep(Duration::from_millis(1));
                    return Ok(true);
                }
                Err(e) if k > 1 && matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) => {
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Claims up to `want` datagrams of `len` bytes from the budget: how many, and the last one's
/// length (a final datagram may be shorter, but never shorter than the header).
fn claim(b: &Budget, want: usize, len: usize, header: usize) -> (usize, usize) {
    let (mut granted, mut last_len) = (0, len);
    while granted < want {
        let n = b.claim(len as u64) as usize;
        if n == 0 {
            break;
        }
        granted += 1;
        last_len = n.max(header);
        if n < len {
            break;
        }
    }
    (granted, last_len)
}

fn is_full(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS)
}

/// Sends one datagram, waiting while the socket buffer is full.
fn send_one(sock: &UdpSocket, d: &[u8], ctl: &Control) -> std::io::Result<()> {
    loop {
        match sock.send(d) {
            Ok(_) => return Ok(()),
            Err(e) if is_full(&e) => {
                if ctl.abort.load(Ordering::Relaxed) {
                    return Ok(());
                }
                poll::writable(sock, SLICE)?;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                // About an earlier datagram (see `send_gso`); this one left.
                std::thread::sleep(Duration::from_millis(1));
                return Ok(());
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Sends `k` datagrams of `len` bytes (the last may be shorter) laid out back to back in
/// `buf`, one packet each, retrying until the kernel has taken all of them.
fn send_mmsg(
    sock: &UdpSocket,
    buf: &[u8],
    len: usize,
    k: usize,
    ctl: &Control,
) -> std::io::Result<()> {
    let datagrams: Vec<&[u8]> = buf.chunks(len).take(k).collect();
    let mut done = 0;
    while done < datagrams.len() {
        match sonde_platform::mmsg::send_connected(sock, &datagrams[done..]) {
            Ok(n) => done += n.max(1).min(datagrams.len() - done),
            Err(e) if is_full(&e) => {
                if ctl.abort.load(Ordering::Relaxed) {
                    return Ok(());
                }
                poll::writable(sock, SLICE)?;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                done += 1; // that datagram left; the ICMP error is about an earlier one
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// How a receiver reads its stream.
#[derive(Debug, Clone, Copy)]
pub struct ReceiveConfig {
    pub format: DatagramFormat,
    /// Server side of a sonde stream: the ack to repeat when a retransmitted hello arrives.
    pub ack: Option<HelloAck>,
}

/// Receives until every expected datagram arrived, the drain deadline passes, or abort.
pub fn receive(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    cfg: ReceiveConfig,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    if let Err(e) = receive_loop(&sock, &shared, cfg, &ctl) {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

/// How long (ns) the datagram the kernel stamped at `kernel_wall` waited before being read at
/// `read_wall` (both wall clock): a receiver thread the scheduler kept off the CPU reads a
/// socket's first data late. Waits over 100 ms are taken for a wall clock step, not a wait.
fn arrived_before_read(kernel_wall: Option<u64>, read_wall: u64) -> u64 {
    const MAX_WAIT_NS: u64 = 100_000_000;
    kernel_wall
        .map(|k| read_wall.saturating_sub(k))
        .filter(|&w| w <= MAX_WAIT_NS)
        .unwrap_or(0)
}

/// True when every datagram the sender reported sending has arrived.
fn all_arrived(shared: &StreamShared) -> bool {
    let expected = shared.expected_packets.load(Ordering::Relaxed);
    expected > 0
        && shared
            .udp_rx
            .lock()
            .is_ok_and(|t| t.counters().unique >= expected)
}

fn receive_loop(
    sock: &UdpSocket,
    shared: &StreamShared,
    cfg: ReceiveConfig,
    ctl: &Control,
) -> std::io::Result<()> {
    let state = UdpSocketState::new(sock.into())?;
    let seg = 65_536;
    let mut storage = vec![0u8; seg * BATCH_SIZE];
    let mut meta = vec![RecvMeta::default(); BATCH_SIZE];
    let mut kernel_clock: Option<bool> = None;
    loop {
        if ctl.receivers_should_stop() || all_arrived(shared) {
            return Ok(());
        }
        if !poll::readable(sock, SLICE)? {
            continue;
        }
        let Some(n) = recv_batch(&state, sock, &mut storage, seg, &mut meta)? else {
            continue;
        };
        let user_arrival = now_ns();
        let read_wall = timestamp::realtime_ns();
        // The kernel times of the batch's first and last data datagrams: when the stream's
        // data began and (so far) ended.
        let mut first_data_wall: Option<u64> = None;
        let mut last_data_wall: Option<u64> = None;
        let Ok(mut tracker) = shared.udp_rx.lock() else {
            return Ok(());
        };
        for (m, chunk) in meta.iter().take(n).zip(storage.chunks(seg)) {
            // Jitter needs arrival times on one clock for the whole stream: the kernel's receive
            // timestamp (SO_TIMESTAMPNS, per datagram) when the first datagram has one, else ours
            // (per batch). Only differences of transit times matter, so the clocks' offsets cancel.
            let kernel = *kernel_clock.get_or_insert(m.timestamp.is_some());
            let arrival = match (kernel, m.timestamp) {
                (true, Some(t)) => u64::try_from(t.as_nanos()).unwrap_or(u64::MAX),
                _ => user_arrival,
            };
            let data = &chunk[..m.len.min(chunk.len())];
            let stride = if m.stride == 0 {
                data.len().max(1)
            } else {
                m.stride
            };
            for d in data.chunks(stride) {
                match cfg.format.classify(d) {
                    Received::SetUp => {
                        if let Some(a) = cfg.ack {
                            let _ = sock.send(&a.emit());
                        }
                    }
                    Received::Data { seq, send_ns } => {
                        if kernel {
                            first_data_wall.get_or_insert(arrival);
                            last_data_wall = Some(arrival);
                        }
                        tracker.on_datagram(seq, send_ns, arrival, d.len() as u64)
                    }
                    Received::Malformed => tracker.on_datagram(0, 0, arrival, d.len() as u64),
                }
            }
        }
        let bytes = tracker.counters().bytes;
        batch_read(
            shared,
            bytes,
            (first_data_wall, last_data_wall),
            read_wall,
            user_arrival,
        );
    }
}

/// One `recvmmsg` (or GRO read) into `storage`'s `seg`-byte slots: how many it filled, or
/// None when the socket had nothing after all or refused (an ICMP error about an earlier
/// datagram).
#[inline]
fn recv_batch(
    state: &UdpSocketState,
    sock: &UdpSocket,
    storage: &mut [u8],
    seg: usize,
    meta: &mut [RecvMeta],
) -> std::io::Result<Option<usize>> {
    let mut bufs: Vec<IoSliceMut<'_>> = storage.chunks_mut(seg).map(IoSliceMut::new).collect();
    match state.recv(sock.into(), &mut bufs, meta) {
        Ok(n) => Ok(Some(n)),
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => Ok(None),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(None),
        Err(e) => Err(e),
    }
}

/// After a batch: the stream's byte count, and when its data was read (`first`, `last`: the
/// kernel times of the batch's first and last data datagrams, `read_wall` the read's).
#[inline]
fn batch_read(
    shared: &StreamShared,
    bytes: u64,
    (first, last): (Option<u64>, Option<u64>),
    read_wall: u64,
    user_arrival: u64,
) {
    shared.bytes.store(bytes, Ordering::Relaxed);
    if bytes > 0 {
        shared.data_read(
            arrived_before_read(first, read_wall),
            arrived_before_read(last, read_wall),
            user_arrival,
        );
    } else {
        // Only hellos so far: not data, so not the stream's first arrival.
        shared.last_rx_ns.store(user_arrival, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::arrived_before_read;

    #[test]
    fn a_first_datagram_read_late_is_dated_by_its_kernel_stamp() {
        assert_eq!(arrived_before_read(Some(1_000_000), 5_000_000), 4_000_000);
        // No stamp, a stamp after the read (clocks), or one too old to be a wait: no correction.
        assert_eq!(arrived_before_read(None, 5_000_000), 0);
        assert_eq!(arrived_before_read(Some(6_000_000), 5_000_000), 0);
        assert_eq!(arrived_before_read(Some(1), 2_000_000_000), 0);
    }
}
