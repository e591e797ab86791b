//! Benchmark of the userspace impairment engine: frames per second through an impairment
//! box, and how precisely it applies a delay. Run as root:
//!
//! ```sh
//! cargo run --release -p sonde-lab --example forward_bench
//! ```
//!
//! Two hosts, `gen` and `sink`, joined by one link whose `gen`→`sink` direction goes through
//! the engine. The generator writes raw Ethernet frames (ethertype 0x88b5, a sequence number
//! and a `CLOCK_MONOTONIC` timestamp inside) with AF_PACKET `sendmmsg` from `gen`'s namespace.
//!
//! - Throughput: the link's only stage is 0 % loss (it forces the engine and costs a random
//!   draw per frame); the generator offers frames as fast as it can for 3 s and the result
//!   is the rate `sink`'s interface received (its kernel counter), over the last 2 s.
//! - Delay: a 10 ms delay; the generator paces frames and a receiver in `sink` reads them
//!   (AF_PACKET, `ppoll`), so error = arrival - timestamp - 10 ms, which includes the path
//!   (two veth hops) and the receiver's own wakeup; a run without the box gives that base.

use std::time::{Duration, Instant};

use sonde_emu::Packet;
use sonde_lab::forward::clock::{monotonic_ns, wait_readable};
use sonde_lab::forward::sock::{send_all, PacketSocket, BATCH};
use sonde_lab::{netns, Lab, LabOptions};
use sonde_scenario::Scenario;

type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

const SCENARIO: &str = r#"
name = "bench"
hosts = ["gen", "sink"]
[[link]]
name = "wire"
a = "gen"
b = "sink"
[[settings]]
name = "pass"
[[settings.link]]
link = "wire"
direction = "a-to-b"
impair = { loss = "0%" }
[[settings]]
name = "delay"
[[settings.link]]
link = "wire"
direction = "a-to-b"
impair = { delay = "10ms" }
[[test]]
name = "none"
command = ["true"]
"#;

const ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const DELAY_NS: i64 = 10_000_000;

fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len.max(30)];
    f[..6].copy_from_slice(&[0xff; 6]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&ETHERTYPE);
    f
}

/// Sends `len`-byte frames from `gen` for `secs`, at `pps` (0: as fast as possible).
fn generate(netns_name: &str, len: usize, pps: u64, secs: f64) -> Res<u64> {
    netns::enter(netns_name)?;
    let sock = PacketSocket::open("s-wire", false)?;
    let mut batch: Vec<Packet> = (0..BATCH)
        .map(|i| Packet::new(frame(len), i as u64))
        .collect();
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut seq = 0u64;
    let per_batch = if pps == 0 {
        1
    } else {
        (pps / 2000).clamp(1, BATCH as u64) as usize
    };
    while Instant::now() < end {
        if pps > 0 {
            let due = start + Duration::from_secs_f64(seq as f64 / pps as f64);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        let n = if pps == 0 { BATCH } else { per_batch };
        let ts = monotonic_ns();
        for p in batch.iter_mut().take(n) {
            p.data[14..22].copy_from_slice(&seq.to_be_bytes());
            p.data[22..30].copy_from_slice(&ts.to_be_bytes());
            seq += 1;
        }
        send_all(&sock, &batch[..n]);
    }
    Ok(seq)
}

/// `CLOCK_REALTIME - CLOCK_MONOTONIC`, ns: kernel receive timestamps are realtime.
fn realtime_offset() -> i64 {
    let read = |clock| {
        // SAFETY: timespec is plain data; clock_gettime only writes it.
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pointer.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec * 1_000_000_000 + ts.tv_nsec
    };
    (0..5)
        .map(|_| {
            let m0 = read(libc::CLOCK_MONOTONIC);
            let r = read(libc::CLOCK_REALTIME);
            let m1 = read(libc::CLOCK_MONOTONIC);
            (m1 - m0, r - (m0 + m1) / 2)
        })
        .min()
        .map_or(0, |(_, off)| off)
}

/// Frames read per `recvmmsg` in [`receive`].
const RECV_BATCH: usize = 64;

/// Reads the generator's frames in `sink` until `secs` pass; returns, per frame, the kernel's
/// receive timestamp (taken when the engine's write reached `sink`'s interface, so this
/// thread's own wakeups do not count) minus the generator's timestamp, in ns.
fn receive(netns_name: &str, secs: f64, ready: std::sync::mpsc::Sender<()>) -> Res<Vec<i64>> {
    netns::enter(netns_name)?;
    let sock = PacketSocket::open("s-wire", true)?;
    let fd = sock.raw_fd();
    enable_rx_timestamps(fd);
    let off = realtime_offset();
    let _ = ready.send(());
    let mut bufs = vec![[0u8; 2048]; RECV_BATCH];
    let mut ctrl = vec![[0u64; 16]; RECV_BATCH];
    let mut lat = Vec::new();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        wait_readable(&[fd], Duration::from_millis(20));
        receive_batch(fd, &mut bufs, &mut ctrl, off, &mut lat);
    }
    Ok(lat)
}

/// Asks the kernel for a receive timestamp (`SO_TIMESTAMPNS`) on each frame read from `fd`.
fn enable_rx_timestamps(fd: libc::c_int) {
    let one: libc::c_int = 1;
    // SAFETY: valid fd and option value.
    unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
}

/// Reads what is queued on `fd` (one `recvmmsg` into `bufs`, their control messages into
/// `ctrl`, without waiting) and pushes each generator frame's latency onto `lat`.
fn receive_batch(
    fd: libc::c_int,
    bufs: &mut [[u8; 2048]],
    ctrl: &mut [[u64; 16]],
    off: i64,
    lat: &mut Vec<i64>,
) {
    let mut iovs: Vec<libc::iovec> = bufs
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    let mut msgs: Vec<libc::mmsghdr> = iovs
        .iter_mut()
        .zip(ctrl.iter_mut())
        .map(|(iov, c)| {
            // SAFETY: plain data, pointers set below.
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = iov;
            m.msg_hdr.msg_iovlen = 1;
            m.msg_hdr.msg_control = c.as_mut_ptr().cast();
            m.msg_hdr.msg_controllen = std::mem::size_of_val(c);
            m
        })
        .collect();
    // SAFETY: headers point at live buffers of the stated sizes.
    let n = unsafe {
        libc::recvmmsg(
            fd,
            msgs.as_mut_ptr(),
            msgs.len() as u32,
            libc::MSG_DONTWAIT,
            std::ptr::null_mut(),
        )
    };
    for (m, b) in msgs.iter().zip(bufs.iter()).take(n.max(0) as usize) {
        let f = &b[..m.msg_len as usize];
        if f.len() < 30 || f[12..14] != ETHERTYPE {
            continue;
        }
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&f[22..30]);
        if let Some(a) = arrival_ns(&m.msg_hdr, off) {
            lat.push(a - u64::from_be_bytes(ts) as i64);
        }
    }
}

/// The kernel receive timestamp of the frame `hdr` was filled for, on the monotonic clock
/// (`off` is [`realtime_offset`]); None when the kernel gave none.
fn arrival_ns(hdr: &libc::msghdr, off: i64) -> Option<i64> {
    // SAFETY: the kernel filled msg_control; CMSG_* walk it within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(hdr);
        let mut t = None;
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                t = Some(ts.tv_sec * 1_000_000_000 + ts.tv_nsec - off);
            }
            c = libc::CMSG_NXTHDR(hdr, c);
        }
        t
    }
}

/// Lab options; `SONDE_SPIN_US` overrides the forwarder's spin window.
fn options() -> LabOptions {
    let mut o = LabOptions::default();
    if let Some(us) = std::env::var("SONDE_SPIN_US")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        o.spin = Duration::from_micros(us);
    }
    o
}

fn throughput(s: &Scenario, len: usize) -> Res<()> {
    let lab = Lab::build(s, Some("pass"), options())?;
    let gen_ns = lab.netns("gen")?.to_owned();
    let gen = std::thread::spawn(move || generate(&gen_ns, len, 0, 3.0));
    std::thread::sleep(Duration::from_millis(1000));
    let rx = |lab: &Lab| -> Res<(u64, Instant)> {
        let c = lab.counters("sink")?;
        let wire = c
            .iter()
            .find(|c| c.name == "s-wire")
            .map_or(0, |c| c.rx_packets);
        Ok((wire, Instant::now()))
    };
    let (p0, t0) = rx(&lab)?;
    std::thread::sleep(Duration::from_millis(1800));
    let (p1, t1) = rx(&lab)?;
    let offered = gen.join().map_err(|_| "generator panicked")??;
    let report = lab.finish();
    let pps = (p1 - p0) as f64 / (t1 - t0).as_secs_f64();
    let io = report.userspace.first().map(|d| d.io).unwrap_or_default();
    println!(
        "{len:>5} B frames: {:>9.0} frames/s = {:>6.3} Gbit/s through the engine \
         (offered {:.0}/s; engine read {}, wrote {}, refused {})",
        pps,
        pps * len as f64 * 8.0 / 1e9,
        offered as f64 / 3.0,
        io.frames_rx,
        io.frames_tx,
        io.tx_refused
    );
    Ok(())
}

fn percentile(sorted: &[i64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(f64::NAN, |v| *v as f64 / 1e3)
}

fn delay(s: &Scenario, settings: Option<&str>, len: usize, pps: u64) -> Res<()> {
    let lab = Lab::build(s, settings, options())?;
    let (gen_ns, sink_ns) = (lab.netns("gen")?.to_owned(), lab.netns("sink")?.to_owned());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let recv = std::thread::spawn(move || receive(&sink_ns, 2.5, ready_tx));
    let _ = ready_rx.recv();
    let gen = std::thread::spawn(move || generate(&gen_ns, len, pps, 2.0));
    let sent = gen.join().map_err(|_| "generator panicked")??;
    let mut lat = recv.join().map_err(|_| "receiver panicked")??;
    let report = lab.finish();
    let expected = if settings.is_some() { DELAY_NS } else { 0 };
    for l in &mut lat {
        *l -= expected;
    }
    lat.sort_unstable();
    let what = if settings.is_some() {
        "10 ms delay"
    } else {
        "no box (base)"
    };
    println!(
        "{what:>13}, {len} B at {pps}/s: {} of {sent} received; error p50 {:.1} µs, \
         p99 {:.1} µs, p99.9 {:.1} µs, max {:.1} µs",
        lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        percentile(&lat, 0.999),
        percentile(&lat, 1.0),
    );
    if let Some(d) = report.userspace.first() {
        println!(
            "{:>13}  engine-side: departure lateness p50 {}, p99 {}, p99.9 {}; socket wait p99 {}",
            "",
            bucket_bound(&d.io.lateness_log2_us, 0.5),
            bucket_bound(&d.io.lateness_log2_us, 0.99),
            bucket_bound(&d.io.lateness_log2_us, 0.999),
            bucket_bound(&d.io.read_wait_log2_us, 0.99),
        );
    }
    Ok(())
}

/// The upper bound of the log2-µs histogram bucket holding quantile `q`.
fn bucket_bound(h: &[u64; 16], q: f64) -> String {
    let total: u64 = h.iter().sum();
    let mut seen = 0;
    for (i, n) in h.iter().enumerate() {
        seen += n;
        if total > 0 && seen as f64 >= q * total as f64 {
            return if i == 15 {
                "≥ 16 ms".into()
            } else {
                format!("< {} µs", 1u64 << i)
            };
        }
    }
    "-".into()
}

fn main() -> Res<()> {
    sonde_lab::check_privileges()?;
    let s = Scenario::from_toml(SCENARIO)?;
    let part = std::env::args().nth(1).unwrap_or_default();
    if part != "delay" {
        println!("throughput (0 % loss stage, offered as fast as the generator can):");
        for len in [1500, 64] {
            throughput(&s, len)?;
        }
    }
    if part == "throughput" {
        return Ok(());
    }
    println!("delay accuracy:");
    delay(&s, None, 64, 20_000)?;
    for (len, pps) in [(64, 20_000), (1500, 20_000), (1500, 83_000), (64, 250_000)] {
        delay(&s, Some("delay"), len, pps)?;
    }
    Ok(())
}
