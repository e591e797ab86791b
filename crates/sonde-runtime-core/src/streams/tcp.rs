//! TCP stream workers.

use super::{Budget, Control, StreamConfig, StreamShared};
use crate::clock::sleep_coarse;
use crate::error::is_timeout;
use crate::pacing::Pacer;
use sonde_platform::{cpu, zerocopy::ZeroCopySource};
use sonde_stats::cpu::CpuTimes;
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SLICE: Duration = Duration::from_millis(100);

/// Headroom of the kernel's pacing over the asked rate.
const KERNEL_PACING_HEADROOM: f64 = 1.05;

/// The SO_MAX_PACING_RATE (bytes/s) for `-b bits_per_sec`, None when unpaced.
///
/// Two layers pace a TCP sender with `-b`: the cumulative schedule here hands the socket each
/// chunk of a block when it is due ([`Pacer::chunk`]), which holds the average exactly; the kernel then spreads
/// those bytes over time at no more than `KERNEL_PACING_HEADROOM` × the asked rate (its
/// pacing counts TCP payload), so a 128 KiB write does not reach the path as one burst at line
/// rate, and a sender that fell behind can still catch up a little.
pub fn kernel_pacing_rate(bits_per_sec: u64) -> Option<u64> {
    (bits_per_sec > 0).then(|| (bits_per_sec as f64 / 8.0 * KERNEL_PACING_HEADROOM) as u64)
}

/// Sends until stopped or the budget is used up, then half-closes. Returns the thread's CPU.
pub fn send(
    mut sock: TcpStream,
    shared: Arc<StreamShared>,
    cfg: StreamConfig,
    budget: Option<Arc<Budget>>,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    let _ = sock.set_write_timeout(Some(SLICE));
    let mut buf = super::payload(cfg.length, shared.id);
    let Ok(mut file) = stream_file(&cfg, &shared, |p| std::fs::File::open(p), "open") else {
        return cpu::thread_times().saturating_sub(cpu0);
    };
    let zc = if cfg.zerocopy && file.is_none() {
        ZeroCopySource::new(&buf).ok()
    } else {
        None
    };
    let pacer = Pacer::new(cfg.rate.bits_per_sec());
    if let Some(rate) = kernel_pacing_rate(cfg.rate.bits_per_sec()).filter(|_| !cfg.fq_rate_set) {
        // Best effort: without it the cumulative schedule below still holds the average.
        let _ = sonde_platform::sockopt::set_max_pacing_rate(&sock, rate);
    }
    let released = ctl.wait_to_send();
    let pace = pacer.map(|p| (p, Instant::now()));
    let mut sent: u64 = 0;
    while released && !stopped(&ctl) {
        let want = match &budget {
            Some(b) => b.claim(cfg.length as u64) as usize,
            None => cfg.length,
        };
        let want = match &mut file {
            Some(f) => match read_block(f, &mut buf[..want]) {
                Ok(n) => n,
                Err(e) => {
                    shared.fail(format!("reading the -F file: {e}"));
                    break;
                }
            },
            None => want,
        };
        if want == 0 {
            if let Some(b) = &budget {
                b.close();
            }
            break;
        }
        let block = Block {
            buf: &buf[..want],
            zc: zc.as_ref(),
            pace,
        };
        if !block.write(&mut sock, &mut sent, &shared, &ctl) {
            break;
        }
        shared.packets.fetch_add(1, Ordering::Relaxed);
    }
    let _ = sock.flush();
    let _ = sock.shutdown(Shutdown::Write);
    shared.finished.store(true, Ordering::Relaxed);
    // Keep the socket open until the receiver has read everything and closed its end.
    let _ = sock.set_read_timeout(Some(SLICE));
    let mut sink = [0u8; 512];
    while !ctl.receivers_should_stop() {
        match sock.read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if is_timeout(&e) => {}
            Err(_) => break,
        }
    }
    cpu::thread_times().saturating_sub(cpu0)
}

fn stopped(ctl: &Control) -> bool {
    ctl.stop_send.load(Ordering::Relaxed) || ctl.abort.load(Ordering::Relaxed)
}

/// One block (`-l` bytes) to write, and how.
struct Block<'a> {
    buf: &'a [u8],
    /// Zero-copy: the block's first write comes from this registered copy of the payload.
    zc: Option<&'a ZeroCopySource>,
    /// Paced (`-b`): the schedule and when the stream started.
    pace: Option<(Pacer, Instant)>,
}

impl Block<'_> {
    /// Writes the block, `sent` counting the stream's bytes. Paced, it goes in
    /// [`Pacer::chunk`]s, each when its first byte is due, so the bytes sent follow the rate to
    /// within one chunk rather than one block. False when the stream ends here: it failed
    /// (the error is in `shared`), was aborted, or (paced) was stopped while waiting.
    fn write(
        &self,
        sock: &mut TcpStream,
        sent: &mut u64,
        shared: &StreamShared,
        ctl: &Control,
    ) -> bool {
        let len = self.buf.len();
        let chunk = self.pace.map_or(len, |(p, _)| p.chunk(len));
        let mut off = 0;
        while off < len {
            if ctl.abort.load(Ordering::Relaxed) {
                return false;
            }
            if let Some((p, start)) = self.pace {
                if !wait_until(start + p.due_at(*sent), ctl) {
                    return false;
                }
            }
            let end = (off + chunk).min(len);
            let r = match self.zc {
                Some(z) if off == 0 => z.send(sock, end),
                _ => sock.write(&self.buf[off..end]),
            };
            match r {
                Ok(0) => {
                    shared.fail("connection closed by peer".into());
                    return false;
                }
                Ok(n) => {
                    off += n;
                    *sent += n as u64;
                    shared.data_sent();
                    shared.bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
                Err(e) if is_timeout(&e) => {}
                Err(e) => {
                    shared.fail(e.to_string());
                    return false;
                }
            }
        }
        true
    }
}

/// Sleeps until `due`, a slice at a time so that a stop is seen; false when the senders were
/// stopped or aborted first.
fn wait_until(due: Instant, ctl: &Control) -> bool {
    loop {
        if stopped(ctl) {
            return false;
        }
        let now = Instant::now();
        if due <= now {
            return true;
        }
        sleep_coarse(due.min(now + SLICE));
    }
}

/// The stream's `-F` file, opened with `open`; a failure ends the stream with that error.
fn stream_file(
    cfg: &StreamConfig,
    shared: &StreamShared,
    open: fn(&std::path::Path) -> std::io::Result<std::fs::File>,
    verb: &str,
) -> Result<Option<std::fs::File>, ()> {
    cfg.file.as_deref().map(open).transpose().map_err(|e| {
        shared.fail(format!("cannot {verb} the -F file: {e}"));
        shared.finished.store(true, Ordering::Relaxed);
    })
}

/// Fills `buf` from `f` as far as the file goes; fewer bytes (0 at its end) only at its end.
fn read_block(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Receives until EOF, the drain deadline or abort. Returns the thread's CPU.
/// With `skip_rx_copy` the kernel discards the data instead of copying it here (where it
/// can); with a `file` (`-F`) what arrives is written into it.
pub fn receive(
    mut sock: TcpStream,
    shared: Arc<StreamShared>,
    cfg: &StreamConfig,
    ctl: Arc<Control>,
) -> CpuTimes {
    let cpu0 = cpu::thread_times();
    let _ = sock.set_read_timeout(Some(SLICE));
    let mut buf = vec![0u8; cfg.length.clamp(16 * 1024, 1 << 20)];
    let Ok(mut out) = stream_file(cfg, &shared, |p| std::fs::File::create(p), "create") else {
        return cpu::thread_times().saturating_sub(cpu0);
    };
    let mut skip = cfg.skip_rx_copy && out.is_none();
    loop {
        if ctl.receivers_should_stop() {
            break;
        }
        let got = if skip {
            match sonde_platform::discard::discard(&sock, buf.len()) {
                Err(e) if e.kind() == ErrorKind::Unsupported => {
                    skip = false;
                    continue;
                }
                r => r,
            }
        } else {
            sock.read(&mut buf)
        };
        match got {
            Ok(0) => break,
            Ok(n) => {
                if let Some(f) = &mut out {
                    if let Err(e) = f.write_all(&buf[..n]) {
                        shared.fail(format!("writing the -F file: {e}"));
                        break;
                    }
                }
                shared.bytes.fetch_add(n as u64, Ordering::Relaxed);
                shared.data_read_at(crate::clock::now_ns());
            }
            Err(e) if is_timeout(&e) => {}
            Err(e) => {
                shared.fail(e.to_string());
                break;
            }
        }
    }
    shared.finished.store(true, Ordering::Relaxed);
    cpu::thread_times().saturating_sub(cpu0)
}
