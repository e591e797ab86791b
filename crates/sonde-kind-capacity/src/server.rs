//! The server's side of a capacity test (`sonde capacity`): after the server's set-up, send the
//! plan's trains on the test's one UDP stream, back to back within a train (`sendmmsg`
//! batches, each stamped with the wall clock as it is handed to the kernel), and between
//! trains wait for the client's acknowledgement and then stay idle at least as long as the
//! train took, so a shaper's queue drains and its bucket refills.
//!
//! With the plan's `tx_timestamps`, the socket also asks for the kernel's transmit stamps;
//! after each train the server sends the spread of the train's departure gaps (a departure
//! report, twice: it may be lost) so the client can tell whether the train left back to
//! back. The stamps are read from the error queue while the server waits anyway, at most
//! one train's worth kept.

use sonde_platform::{cpu, mmsg, poll, sockopt, timestamp, tx_timestamp};
use sonde_proto::capacity::{emit_departure, parse_ack, CapacityPlan, Departure, Probe};
use sonde_proto::session::ServerEvent;
use sonde_runtime_core::engine::DataSocket;
use sonde_runtime_core::error::RunError;
use sonde_runtime_core::serving::served_test::{OpenStream, ServedTest, STEP};
use std::net::UdpSocket;
use std::time::{Duration, Instant};

/// Longest wait for the acknowledgement of one train (a lost one costs this much).
const ACK_WAIT: Duration = Duration::from_secs(5);
/// Longest idle time between trains, whatever the last one took.
const MAX_IDLE: Duration = Duration::from_secs(3);
/// Slice of the waits, between looks at the control connection.
const SLICE: Duration = Duration::from_millis(5);
/// Most transmit stamps held at once: a long train's worth and its reports.
const STAMPS_KEPT: usize = *sonde_proto::capacity::limits::LONG_LEN.end() as usize + 8;

/// Runs an accepted capacity test from the client's start to its done.
pub fn serve(
    t: &mut ServedTest<'_>,
    p: &sonde_proto::message::TestParams,
    plan: CapacityPlan,
    streams: Vec<OpenStream>,
) -> Result<(), RunError> {
    let Some((stream, _, _)) = streams.into_iter().next() else {
        return Err(RunError::Setup(
            "a capacity test needs its UDP stream".into(),
        ));
    };
    let ack = stream.ack;
    let DataSocket::Udp(sock) = stream.socket else {
        return Err(RunError::Setup(
            "the capacity stream is not a UDP socket".into(),
        ));
    };
    t.await_start(&sock, ack)?;
    // The error queue of transmit stamps counts against the receive buffer.
    let stamping = plan.tx_timestamps && tx_timestamp::enable(&sock);
    let _ = sockopt::force_recv_buffer(&sock, if stamping { 8 << 20 } else { 1 << 20 });
    let mut stamps = stamping.then(Vec::new);
    let mut next_id = 0u32;
    let cpu0 = cpu::thread_times();
    let t0 = Instant::now();
    let mut stopped = false;
    let mut sent = 0u32;
    for train in 0..plan.trains() {
        let Some(count) = plan.train_len(train) else {
            break;
        };
        // Each short train at its probe size when the plan varies them.
        let len = (plan.train_payload(train, p.length_u32()) as usize)
            .max(sonde_proto::capacity::PROBE_HEADER_LEN);
        let start = Instant::now();
        send_train(&sock, train, count, len)?;
        sent += 1;
        let acked = until(
            t,
            start + ACK_WAIT,
            Some((&sock, train)),
            &mut stamps,
            &mut stopped,
        )?;
        if stopped {
            break;
        }
        if let Some(st) = stamps.as_mut() {
            report_departure(&sock, st, train, count, &mut next_id);
        }
        let took = if acked {
            start.elapsed()
        } else {
            Duration::ZERO
        };
        let idle = took
            .max(Duration::from_millis(u64::from(plan.spacing_ms)))
            .min(MAX_IDLE);
        until(t, Instant::now() + idle, None, &mut stamps, &mut stopped)?;
        if stopped {
            break;
        }
    }
    t.log(&format!(
        "capacity trains to {}: {sent} of {} sent in {:.2} s",
        t.peer,
        plan.trains(),
        t0.elapsed().as_secs_f64()
    ));
    let cpu = cpu::usage(cpu0, cpu::thread_times(), t0.elapsed().as_secs_f64());
    t.close_own_loop(stopped, cpu)
}

/// Waits until `deadline`, or with `ack` until the client acknowledges that train
/// (true), watching the control connection and reading transmit stamps into `stamps`
/// (an error queue with entries makes the socket poll ready); sets `stopped` when the
/// client stops.
fn until(
    t: &mut ServedTest<'_>,
    deadline: Instant,
    ack: Option<(&UdpSocket, u32)>,
    stamps: &mut Option<Vec<(u32, u64)>>,
    stopped: &mut bool,
) -> Result<bool, RunError> {
    let mut buf = [0u8; 64];
    loop {
        if t.interrupted() {
            t.session.abort("the server is shutting down");
            let _ = t.flush();
            return Err(RunError::Interrupted);
        }
        if let Some(m) = t.conn.try_recv()? {
            t.session
                .handle(m)
                .map_err(|e| RunError::Protocol(e.to_string()))?;
            match t.session.poll_event() {
                Some(ServerEvent::StopRequested(_)) => {
                    *stopped = true;
                    return Ok(false);
                }
                Some(ServerEvent::Aborted(r)) => return Err(RunError::PeerAborted(r)),
                _ => {}
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(false);
        }
        let wait = (deadline - now).min(SLICE);
        let Some((sock, train)) = ack else {
            std::thread::sleep(wait);
            continue;
        };
        if poll::readable_precise(sock, wait).map_err(|e| RunError::Stream { id: 1, source: e })? {
            if let Some(st) = stamps.as_mut() {
                tx_timestamp::drain(sock, st, STAMPS_KEPT);
            }
            while let Ok(n) = sock.recv(&mut buf) {
                if buf.get(..n).and_then(parse_ack) == Some(train) {
                    return Ok(true);
                }
            }
        }
    }
}

/// Sends the departure report of train `train` (`count` datagrams), from the transmit stamps
/// read so far into `stamps`; `next_id` is the stamp id of the train's first datagram, and
/// after the call of whatever the socket sends next.
fn report_departure(
    sock: &UdpSocket,
    stamps: &mut Vec<(u32, u64)>,
    train: u32,
    count: u32,
    next_id: &mut u32,
) {
    tx_timestamp::drain(sock, stamps, STAMPS_KEPT);
    let range = *next_id..next_id.saturating_add(count);
    let mut mine: Vec<u64> = stamps
        .drain(..)
        .filter(|(id, _)| range.contains(id))
        .map(|(_, ns)| ns)
        .collect();
    *next_id = range.end;
    if let Some(d) = Departure::of(train, &mut mine) {
        let report = emit_departure(&d);
        for _ in 0..2 {
            if sock.send(&report).is_ok() {
                *next_id = next_id.saturating_add(1);
            }
        }
    }
}

/// Sends train `train` of `count` datagrams of `len` bytes back to back.
fn send_train(sock: &UdpSocket, train: u32, count: u32, len: usize) -> Result<(), RunError> {
    let mut bufs = vec![vec![0u8; len]; mmsg::MAX_BATCH.min(count as usize)];
    let mut seq = 0u32;
    let deadline = Instant::now() + STEP;
    while seq < count {
        let n = (count - seq).min(bufs.len() as u32);
        let send_ns = timestamp::realtime_ns();
        for (i, b) in bufs.iter_mut().take(n as usize).enumerate() {
            let probe = Probe {
                train,
                seq: seq + i as u32,
                count,
                send_ns,
            };
            probe
                .emit(b)
                .map_err(|e| RunError::Setup(format!("capacity probe: {e}")))?;
        }
        let views: Vec<&[u8]> = bufs.iter().take(n as usize).map(Vec::as_slice).collect();
        match mmsg::send_connected(sock, &views) {
            Ok(k) => seq += k as u32,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(RunError::Timeout("room in the socket's send buffer"));
                }
                let _ = poll::writable(sock, Duration::from_millis(10));
            }
            // A refused datagram (ICMP from a client that went away) ends the test below.
            Err(e) => return Err(RunError::Stream { id: 1, source: e }),
        }
    }
    Ok(())
}
