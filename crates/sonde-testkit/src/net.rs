//! Loopback networking for tests: ports free for TCP and UDP on both families, whether IPv6
//! loopback exists, whether a given process listens on a port, and a relay for sonde's
//! control connection.

use std::net::{Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::require_all;

/// Whether this host can bind IPv6 loopback.
pub fn ipv6_loopback_available() -> bool {
    TcpListener::bind((Ipv6Addr::LOCALHOST, 0)).is_ok()
}

/// Whether `what` (a test that needs ::1) can run here; when not, says it skips (and fails
/// under `SONDE_REQUIRE_ALL=1`).
#[track_caller]
pub fn ipv6_loopback_or_skip(what: &str) -> bool {
    if ipv6_loopback_available() {
        return true;
    }
    assert!(!require_all(), "{what} needs IPv6 loopback (::1)");
    eprintln!("skipping {what}: no IPv6 loopback");
    false
}

fn next_candidate() -> u16 {
    static NEXT: OnceLock<AtomicU16> = OnceLock::new();
    let counter = NEXT.get_or_init(|| {
        // A random-ish base below Linux's ephemeral range (32768..), so a client's source port
        // never lands on a port we hand out.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let mix = (std::process::id().wrapping_mul(7919) ^ nanos) % 10_000;
        AtomicU16::new(20_000 + mix as u16)
    });
    let p = counter.fetch_add(1, Ordering::Relaxed);
    if p >= 32_000 {
        counter.store(20_000, Ordering::Relaxed);
    }
    p
}

fn port_is_free(port: u16) -> bool {
    let v4: SocketAddr = ([0, 0, 0, 0], port).into();
    let tcp4 = TcpListener::bind(v4).is_ok();
    let udp4 = UdpSocket::bind(v4).is_ok();
    let v6_ok = if ipv6_loopback_available() {
        let v6: SocketAddr = (Ipv6Addr::UNSPECIFIED, port).into();
        TcpListener::bind(v6).is_ok() && UdpSocket::bind(v6).is_ok()
    } else {
        true
    };
    tcp4 && udp4 && v6_ok
}

/// A port free for both TCP and UDP (IPv4 and, where present, IPv6), unique within this run.
pub fn free_port() -> u16 {
    for _ in 0..1000 {
        let p = next_candidate();
        if port_is_free(p) {
            return p;
        }
    }
    panic!("no free TCP+UDP port found in 20000..32000");
}

/// Whether process `pid` holds a TCP socket listening on `port` (Linux: the listening
/// sockets of `/proc/net/tcp{,6}` against the socket descriptors of `/proc/PID/fd`).
pub fn listens_on(pid: i32, port: u16) -> bool {
    let want = format!(":{port:04X}");
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address rem_address st ... inode (10th column)
            if f.len() > 9 && f[1].ends_with(&want) && f[3] == "0A" {
                inodes.push(format!("socket:[{}]", f[9]));
            }
        }
    }
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.filter_map(Result::ok)
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .any(|l| inodes.iter().any(|i| l.as_os_str() == i.as_str()))
}

/// The TCP half of a test relay: a loopback port whose connections are copied as they are to
/// `server` (sonde's control connection), and a stop flag the relay's threads watch, set when
/// this is dropped. The UDP half, which a test uses to damage or drop datagrams, binds the same
/// port number.
pub struct ControlRelay {
    pub port: u16,
    pub stop: Arc<AtomicBool>,
}

impl ControlRelay {
    pub fn start(server: u16) -> ControlRelay {
        let tcp = TcpListener::bind("127.0.0.1:0").expect("relay tcp bind");
        let port = tcp.local_addr().expect("relay addr").port();
        tcp.set_nonblocking(true).expect("nonblocking");
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let Ok((down, _)) = tcp.accept() else {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let _ = down.set_nonblocking(false);
                let Ok(up) = TcpStream::connect(("127.0.0.1", server)) else {
                    continue;
                };
                let (d2, u2) = (
                    down.try_clone().expect("clone"),
                    up.try_clone().expect("clone"),
                );
                let copy = |mut from: TcpStream, mut to: TcpStream| {
                    let _ = std::io::copy(&mut from, &mut to);
                    let _ = to.shutdown(std::net::Shutdown::Write);
                };
                thread::spawn(move || copy(down, up));
                thread::spawn(move || copy(u2, d2));
            }
        });
        ControlRelay { port, stop }
    }
}

impl Drop for ControlRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_free_port_is_free_and_this_process_is_seen_listening_on_it() {
        let port = free_port();
        assert_ne!(port, free_port(), "two calls hand out two ports");
        assert!(!listens_on(std::process::id() as i32, port));
        let _l = TcpListener::bind(("127.0.0.1", port)).unwrap();
        assert!(listens_on(std::process::id() as i32, port));
    }
}
