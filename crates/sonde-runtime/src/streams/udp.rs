//! UDP stream workers with batched I/O.
//!
//! Sending uses quinn-udp's `sendmsg` with UDP GSO: one syscall carries up to 64 datagrams,
//! each with its own sonde header (sequence, send time). Receiving uses its `recvmmsg` with GRO,
//! splitting coalesced buffers at the reported stride. Where the OS lacks GSO/GRO quinn-udp
//! falls back to one datagram per call, and so does the sender after a GSO error.

use super::{Budget, Control, SendConfig, StreamShared};
use crate::clock::{now_ns, sleep_coarse};
use crate::os::{cpu, poll};
use crate::pacing::Pacer;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState, BATCH_SIZE};
use sonde_proto::datagram::DatagramHeader;
use sonde_proto::udp_hello::{Hello, HelloAck, HELLO_LEN};
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
/// Largest GSO super-datagram.
const GSO_BYTES: usize = 65_000;

/// Sends until stopped or the budget is used up. Returns the thread's CPU.
pub fn send(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    cfg: SendConfig,
    budget: Option<Arc<Budget>>,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    if let Err(e) = send_loop(&sock, &shared, &cfg, budget.as_deref(), &ctl) {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

fn send_loop(
    sock: &UdpSocket,
    shared: &StreamShared,
    cfg: &SendConfig,
    budget: Option<&Budget>,
    ctl: &Control,
) -> std::io::Result<()> {
    let state = UdpSocketState::new(sock.into())?;
    let dest = sock.peer_addr()?;
    let len = cfg.length;
    let mut gso = GSO_ENABLED.load(Ordering::Relaxed) && state.max_gso_segments() > 1;
    let max_segs = if gso {
        state.max_gso_segments().min(GSO_BYTES / len).max(1)
    } else {
        crate::os::mmsg::MAX_BATCH
    };
    let block = super::payload(len, shared.id);
    let mut buf = Vec::with_capacity(len * max_segs);
    for _ in 0..max_segs {
        buf.extend_from_slice(&block);
    }
    let pacer = Pacer::new(cfg.bitrate);
    if !ctl.wait_to_send() {
        return Ok(());
    }
    let start = Instant::now();
    let mut seq: u64 = 0;
    let mut sent_bytes: u64 = 0;
    while !ctl.stop_send.load(Ordering::Relaxed) && !ctl.abort.load(Ordering::Relaxed) {
        let mut k = max_segs;
        if let Some(p) = pacer {
            // Send in bursts of at most ~1 ms of traffic (and at most one GSO batch), sleeping
            // between them: the cumulative schedule keeps the average exact while the thread
            // stays idle instead of spinning on sub-millisecond gaps.
            let per_ms = (p.allowance(Duration::from_millis(1)) / len as u64).max(1) as usize;
            let burst = per_ms.min(max_segs) as u64;
            let allowed = p.allowance(start.elapsed());
            let need = sent_bytes + burst * len as u64;
            if allowed < need {
                let due = start + p.due_at(need);
                sleep_coarse(due.min(Instant::now() + SLICE));
                continue;
            }
            k = k.min(((allowed - sent_bytes) / len as u64).max(1) as usize);
        }
        let mut last_len = len;
        if let Some(b) = budget {
            let mut granted = 0;
            while granted < k {
                let n = b.claim(len as u64) as usize;
                if n == 0 {
                    break;
                }
                granted += 1;
                last_len = n.max(sonde_proto::datagram::HEADER_LEN);
                if n < len {
                    break;
                }
            }
            if granted == 0 {
                break;
            }
            k = granted;
        }
        let stamp = now_ns();
        for i in 0..k {
            let hdr = DatagramHeader {
                seq: seq + 1 + i as u64,
                send_ns: stamp,
            };
            let _ = hdr.emit(&mut buf[i * len..]);
        }
        let total = (k - 1) * len + last_len;
        let t = Transmit {
            destination: dest,
            ecn: None,
            contents: &buf[..total],
            segment_size: (k > 1).then_some(len),
            src_ip: None,
        };
        if !gso {
            send_mmsg(sock, &buf[..total], len, k, ctl)?;
            seq += k as u64;
            sent_bytes += total as u64;
            shared.bytes.fetch_add(total as u64, Ordering::Relaxed);
            shared.packets.store(seq, Ordering::Relaxed);
            continue;
        }
        // Retry the same batch until it goes out: its budget is already claimed.
        loop {
            match state.try_send(sock.into(), &t) {
                Ok(()) => {
                    seq += k as u64;
                    sent_bytes += total as u64;
                    shared.bytes.fetch_add(total as u64, Ordering::Relaxed);
                    shared.packets.store(seq, Ordering::Relaxed);
                    break;
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock
                        || e.raw_os_error() == Some(libc::ENOBUFS) =>
                {
                    if ctl.abort.load(Ordering::Relaxed) {
                        return Ok(());
                    }
                    poll::writable(sock, SLICE)?;
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    // ICMP port unreachable from an earlier datagram: the receiver is gone or
                    // not yet there. The batch counts as sent (it left this host).
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) if k > 1 && matches!(e.raw_os_error(), Some(libc::EIO | libc::EINVAL)) => {
                    gso = false; // GSO refused on this path: sendmmsg from now on.
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    }
    Ok(())
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
        match crate::os::mmsg::send_connected(sock, &datagrams[done..]) {
            Ok(n) => done += n.max(1).min(datagrams.len() - done),
            Err(e)
                if e.kind() == ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS) =>
            {
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

/// Receives until every expected datagram arrived, the drain deadline passes, or abort.
/// `ack` is what to answer when a retransmitted hello reaches this socket (server side).
pub fn receive(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    ack: Option<HelloAck>,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    if let Err(e) = receive_loop(&sock, &shared, ack, &ctl) {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

fn receive_loop(
    sock: &UdpSocket,
    shared: &StreamShared,
    ack: Option<HelloAck>,
    ctl: &Control,
) -> std::io::Result<()> {
    let state = UdpSocketState::new(sock.into())?;
    let seg = 65_536;
    let mut storage = vec![0u8; seg * BATCH_SIZE];
    let mut meta = vec![RecvMeta::default(); BATCH_SIZE];
    let mut kernel_clock: Option<bool> = None;
    loop {
        if ctl.receivers_should_stop() {
            return Ok(());
        }
        let expected = shared.expected_packets.load(Ordering::Relaxed);
        if expected > 0 {
            if let Ok(t) = shared.udp_rx.lock() {
                let c = t.counters();
                if c.unique >= expected {
                    return Ok(());
                }
            }
        }
        if !poll::readable(sock, SLICE)? {
            continue;
        }
        let n = {
            let mut bufs: Vec<IoSliceMut<'_>> =
                storage.chunks_mut(seg).map(IoSliceMut::new).collect();
            match state.recv(sock.into(), &mut bufs, &mut meta) {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                    continue
                }
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(e),
            }
        };
        let user_arrival = now_ns();
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
                if d.len() == HELLO_LEN && (Hello::parse(d).is_ok() || HelloAck::parse(d).is_ok()) {
                    if let Some(a) = ack {
                        let _ = sock.send(&a.emit());
                    }
                    continue;
                }
                match DatagramHeader::parse(d) {
                    Ok(h) => tracker.on_datagram(h.seq, h.send_ns, arrival, d.len() as u64),
                    Err(_) => tracker.on_datagram(0, 0, arrival, d.len() as u64),
                }
            }
        }
        shared
            .bytes
            .store(tracker.counters().bytes, Ordering::Relaxed);
        shared.last_rx_ns.store(user_arrival, Ordering::Relaxed);
    }
}
