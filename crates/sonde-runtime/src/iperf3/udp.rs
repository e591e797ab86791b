//! UDP stream workers speaking iperf3's datagram format (12- or 16-byte header).
//!
//! One datagram per system call: iperf3 peers pace per stream with `-b`, and the rates the
//! interoperability tests use are far below what this costs. Counters go into the same
//! [`StreamShared`] as sonde's workers, and reception uses sonde's tracker (RFC 3550 jitter
//! from the header's send time and the local arrival time; the clock offset cancels out).

use crate::clock::{now_ns, sleep_coarse};
use crate::os::{cpu, poll};
use crate::pacing::Pacer;
use crate::streams::{Budget, Control, StreamShared};
use sonde_proto::iperf3::udp::{header_len, is_reply, repeating_payload, UdpHeader};
use sonde_stats::cpu::CpuTimes;
use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(50);

/// What a UDP sender needs to know.
#[derive(Debug, Clone, Copy)]
pub struct UdpWire {
    pub length: usize,
    pub bitrate: u64,
    /// 64-bit sequence numbers.
    pub wide: bool,
    pub repeating: bool,
}

/// Sends until stopped or the budget is used up. Returns the thread's CPU.
pub fn send(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    wire: UdpWire,
    budget: Option<Arc<Budget>>,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    if let Err(e) = send_loop(&sock, &shared, wire, budget.as_deref(), &ctl) {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

fn send_loop(
    sock: &UdpSocket,
    shared: &StreamShared,
    wire: UdpWire,
    budget: Option<&Budget>,
    ctl: &Control,
) -> std::io::Result<()> {
    let hlen = header_len(wire.wide);
    let len = wire.length.max(hlen);
    let mut buf = if wire.repeating {
        repeating_payload(len)
    } else {
        crate::streams::payload(len, shared.id)
    };
    let pacer = Pacer::new(wire.bitrate);
    let start = Instant::now();
    let (mut seq, mut sent) = (0u64, 0u64);
    while !ctl.stop_send.load(Ordering::Relaxed) && !ctl.abort.load(Ordering::Relaxed) {
        if let Some(p) = pacer {
            let due = start + p.due_at(sent + len as u64);
            if due > Instant::now() {
                sleep_coarse(due.min(Instant::now() + SLICE));
                continue;
            }
        }
        let n = match budget {
            Some(b) => match b.claim(len as u64) as usize {
                0 => break,
                c => c.max(hlen),
            },
            None => len,
        };
        let hdr = UdpHeader::at(now_ns(), seq + 1);
        if hdr.emit(&mut buf, wire.wide).is_err() {
            return Err(std::io::Error::other("32-bit UDP sequence number overflow"));
        }
        match sock.send(&buf[..n]) {
            Ok(k) => {
                seq += 1;
                sent += k as u64;
                shared.bytes.fetch_add(k as u64, Ordering::Relaxed);
                shared.packets.store(seq, Ordering::Relaxed);
            }
            Err(e)
                if e.kind() == ErrorKind::WouldBlock || e.raw_os_error() == Some(libc::ENOBUFS) =>
            {
                poll::writable(sock, SLICE)?;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Receives until the drain deadline or abort. Returns the thread's CPU.
pub fn receive(
    sock: UdpSocket,
    shared: Arc<StreamShared>,
    wide: bool,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    if let Err(e) = receive_loop(&sock, &shared, wide, &ctl) {
        shared.fail(e.to_string());
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}

fn receive_loop(
    sock: &UdpSocket,
    shared: &StreamShared,
    wide: bool,
    ctl: &Control,
) -> std::io::Result<()> {
    sock.set_nonblocking(true)?;
    let mut buf = vec![0u8; 65_536];
    loop {
        if ctl.receivers_should_stop() {
            return Ok(());
        }
        if !poll::readable(sock, SLICE)? {
            continue;
        }
        for _ in 0..256 {
            let n = match sock.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionRefused
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(e),
            };
            let d = &buf[..n];
            if n == 4 && is_reply(d) {
                continue;
            }
            let arrival = now_ns();
            let Ok(mut t) = shared.udp_rx.lock() else {
                return Ok(());
            };
            match UdpHeader::parse(d, wide) {
                Ok(h) => t.on_datagram(h.seq, h.send_ns(), arrival, n as u64),
                Err(_) => t.on_datagram(0, 0, arrival, n as u64),
            }
            shared.bytes.store(t.counters().bytes, Ordering::Relaxed);
        }
    }
}
