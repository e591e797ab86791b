//! Shared helpers: skip-or-fail, unique prefixes, guaranteed cleanup, serial execution,
//! scenarios, and in-namespace traffic.

use std::collections::BTreeSet;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use sonde_lab::{netns, Lab, LabOptions};
use sonde_scenario::Scenario;
use sonde_testkit::lab::available_with;
use sonde_testkit::scenario;
pub use sonde_testkit::which;

static SERIAL: Mutex<()> = Mutex::new(());

/// Tests run one at a time: they measure rates and delays on a 2-core machine.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// True when the lab can run here (root and iproute2, all a lab needs); otherwise says why
/// and returns false, or fails when `SONDE_REQUIRE_ALL=1`.
pub fn lab_available(test: &str) -> bool {
    available_with(sonde_lab::check_privileges(), test, &["ip", "tc"])
}

/// [`lab_available`] and `ping` installed, for the tests that measure with it.
pub fn lab_and_ping_available(test: &str) -> bool {
    available_with(sonde_lab::check_privileges(), test, &["ip", "tc", "ping"])
}

/// A unique prefix for one test: `sonde-t<pid>-<tag>`.
pub fn prefix(tag: &str) -> String {
    format!("sonde-t{}-{tag}", std::process::id() % 1_000_000)
}

/// Namespaces whose name starts with `prefix`.
pub fn leftovers(prefix: &str) -> Vec<String> {
    netns::list()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Removes whatever a test left under its prefix, whatever happened to the test.
pub struct Cleanup(pub String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = sonde_lab::clean_leftovers(&self.0);
    }
}

/// client - router - server, the `wan` link (router-server) impaired as `impair` (TOML
/// inline table body) in setting "s".
pub fn chain3(impair: &str) -> Scenario {
    let text = scenario::chain3(impair).name("t").seed(11).to_toml();
    Scenario::from_toml(&text).unwrap_or_else(|e| panic!("test scenario: {e}"))
}

/// Builds a lab or fails the test with the error.
pub fn build(s: &Scenario, settings: Option<&str>, opts: LabOptions) -> Lab {
    Lab::build(s, settings, opts).unwrap_or_else(|e| panic!("building the lab: {e}"))
}

/// Options with a prefix.
pub fn opts(prefix: &str) -> LabOptions {
    LabOptions {
        prefix: Some(prefix.to_owned()),
        ..LabOptions::default()
    }
}

/// The server's IPv4 address on its first link.
pub fn server4(lab: &Lab) -> std::net::Ipv4Addr {
    lab.node("server").unwrap_or_else(|e| panic!("{e}")).ifaces[0].ipv4
}

/// Runs `ping` in `node` and returns the average RTT in ms.
pub fn ping_avg_ms(lab: &Lab, node: &str, args: &[&str]) -> f64 {
    let out = lab
        .command(node, "ping", args)
        .unwrap_or_else(|e| panic!("{e}"))
        .output()
        .unwrap_or_else(|e| panic!("ping: {e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ping {args:?} failed: {text}");
    // rtt min/avg/max/mdev = 0.045/0.061/0.093/0.012 ms
    text.lines()
        .find_map(|l| l.split(" = ").nth(1))
        .and_then(|v| v.split('/').nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no rtt in ping output: {text}"))
}

/// Sends `count` UDP datagrams (8-byte sequence number, 8-byte send time, padding to `len`) from `from` to
/// the server's port 9000 at `pps`, with a receiver in the server. Returns the sequence
/// numbers received, each with its arrival time relative to the first send.
pub fn udp_run(lab: &Lab, count: u64, pps: u64, len: usize) -> Vec<(u64, Duration)> {
    udp_run_counting_late(lab, count, pps, len).0
}

/// A send this late against its schedule leaves a device's 20-frame ring at 8000 frames/s
/// empty (20 frames drain in 2.5 ms).
pub const LATE_SEND: Duration = Duration::from_micros(2_500);

/// [`udp_run`], and how many sends left [`LATE_SEND`] or more after their planned time (the
/// sending thread held off the CPU). Arrival times are the kernel's receive timestamps where
/// it gives them (the wall clock after the read otherwise), so a receiving thread that
/// wakes late does not bunch the arrivals it reads; both clocks are `CLOCK_REALTIME`,
/// counted from the sender's start.
pub fn udp_run_counting_late(
    lab: &Lab,
    count: u64,
    pps: u64,
    len: usize,
) -> (Vec<(u64, Duration)>, u64) {
    let (got, late) = udp_run_timed(lab, count, pps, len);
    (got.into_iter().map(|d| (d.seq, d.arrived)).collect(), late)
}

/// One datagram of [`udp_run_timed`]: its sequence number, when it really left and when it
/// arrived, both from the sender's start.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    pub seq: u64,
    pub sent: Duration,
    pub arrived: Duration,
}

/// [`udp_run_counting_late`] with each datagram's real send time, read from the clock just
/// before the send and carried in bytes 8..16 of the datagram (`len` is at least 16): a delay
/// measured from it leaves out how late the sending thread was.
pub fn udp_run_timed(lab: &Lab, count: u64, pps: u64, len: usize) -> (Vec<Timed>, u64) {
    use sonde_platform::timestamp;
    let dst = SocketAddr::from((server4(lab), 9000));
    let server_ns = lab
        .netns("server")
        .unwrap_or_else(|e| panic!("{e}"))
        .to_owned();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let receiver = std::thread::spawn(move || -> Vec<(u64, u64, u64)> {
        netns::enter(&server_ns).unwrap_or_else(|e| panic!("{e}"));
        let sock = UdpSocket::bind(("0.0.0.0", 9000)).unwrap_or_else(|e| panic!("bind: {e}"));
        timestamp::enable_rx(&sock);
        big_rcvbuf(&sock);
        let _ = ready_tx.send(());
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        while timestamp::wait_readable(&sock, Duration::from_millis(500)).unwrap_or(false) {
            while let Ok(r) = timestamp::recv(&sock, &mut buf) {
                if r.len >= 16 {
                    let word = |at: usize| {
                        let mut w = [0u8; 8];
                        w.copy_from_slice(&buf[at..at + 8]);
                        u64::from_be_bytes(w)
                    };
                    got.push((word(0), word(8), r.best_ns()));
                }
            }
        }
        got
    });
    let _ = ready_rx.recv();
    let (start_ns, late) = lab
        .in_node("client", move || {
            let sock = UdpSocket::bind(("0.0.0.0", 0)).unwrap_or_else(|e| panic!("bind: {e}"));
            let mut buf = vec![0u8; len.max(16)];
            let start_ns = timestamp::realtime_ns();
            let start = Instant::now();
            let gap = Duration::from_nanos(1_000_000_000 / pps.max(1));
            let mut late = 0u64;
            for seq in 0..count {
                buf[..8].copy_from_slice(&seq.to_be_bytes());
                let due = start + gap * seq as u32;
                while Instant::now() < due {
                    std::hint::spin_loop();
                }
                if Instant::now().saturating_duration_since(due) >= LATE_SEND {
                    late += 1;
                }
                buf[8..16].copy_from_slice(&timestamp::realtime_ns().to_be_bytes());
                let _ = sock.send_to(&buf, dst);
            }
            (start_ns, late)
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let got = receiver
        .join()
        .unwrap_or_else(|_| panic!("receiver panicked"));
    let got = got
        .into_iter()
        .map(|(seq, sent_ns, ns)| Timed {
            seq,
            sent: Duration::from_nanos(sent_ns.saturating_sub(start_ns)),
            arrived: Duration::from_nanos(ns.saturating_sub(start_ns)),
        })
        .collect();
    (got, late)
}

/// The sequence numbers in 0..count missing from `got`.
pub fn lost(got: &[(u64, Duration)], count: u64) -> BTreeSet<u64> {
    let seen: BTreeSet<u64> = got.iter().map(|(s, _)| *s).collect();
    (0..count).filter(|s| !seen.contains(s)).collect()
}

/// 16 MiB of receive buffer, so the receiving test thread never drops what the lab delivered.
pub fn big_rcvbuf(sock: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let size: libc::c_int = 16 << 20;
    // SAFETY: a valid socket fd and a c_int option value.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUFFORCE,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
