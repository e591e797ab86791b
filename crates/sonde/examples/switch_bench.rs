//! Throughput through the switching library against a plain TCP stream on loopback, with the
//! same application on top: a sender writing 128 KiB buffers for SECS seconds, a receiver
//! reading into 256 KiB and counting, both in this process. No hashing and no filling, so the
//! figures are the transport's alone (the library's framing, copies and acknowledgements).
//!
//! A third mode, `replay-floor`, is the plain stream plus the one thing any design that
//! survives a path change must add: the sender keeps a copy of every byte until the peer has
//! it, here a copy of each buffer into an 8 MiB ring (the library's replay capacity) before
//! the write. Nothing else (no framing, no acknowledgements, no threads): what the replay
//! copy alone costs a plain stream writing the same buffers.
//!
//! `switch_bench plain|library|replay-floor SECS [ADDR]` prints one line:
//! `MODE BYTES SECONDS BITS_PER_S`.
//! ADDR is an IPv4 loopback address (127.0.0.1 by default); the library also listens on ::1
//! but never switches. `bench/switch.sh` alternates the modes and takes medians.

use sonde_switch::{Conn, Family, Listener, Options, Targets};
use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const SEND: usize = 128 * 1024;
const RECV: usize = 256 * 1024;

/// The replay copy of `replay-floor`: an 8 MiB ring the sender copies every buffer into.
struct ReplayRing {
    ring: Vec<u8>,
    at: usize,
}

impl ReplayRing {
    fn new() -> Self {
        Self {
            ring: vec![0u8; 8 << 20],
            at: 0,
        }
    }

    fn keep(&mut self, data: &[u8]) {
        let mut data = data;
        while !data.is_empty() {
            let room = self.ring.len() - self.at;
            let n = room.min(data.len());
            self.ring[self.at..self.at + n].copy_from_slice(&data[..n]);
            self.at = (self.at + n) % self.ring.len();
            data = &data[n..];
        }
        std::hint::black_box(&mut self.ring);
    }
}

fn plain(addr: IpAddr, secs: f64, replay: bool) -> Res<(u64, f64)> {
    let l = TcpListener::bind(SocketAddr::new(addr, 0))?;
    let to = l.local_addr()?;
    let rx = std::thread::spawn(move || -> std::io::Result<(u64, f64)> {
        let (mut s, _) = l.accept()?;
        let mut buf = vec![0u8; RECV];
        let mut n = 0u64;
        let start = Instant::now();
        loop {
            match s.read(&mut buf)? {
                0 => return Ok((n, start.elapsed().as_secs_f64())),
                k => n += k as u64,
            }
        }
    });
    let mut s = TcpStream::connect(to)?;
    s.set_nodelay(true)?;
    let buf = vec![0x5au8; SEND];
    let mut ring = replay.then(ReplayRing::new);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        if let Some(r) = ring.as_mut() {
            r.keep(&buf);
        }
        s.write_all(&buf)?;
    }
    s.shutdown(std::net::Shutdown::Write)?;
    Ok(rx.join().map_err(|_| "receiver panicked")??)
}

fn library(addr: IpAddr, secs: f64) -> Res<(u64, f64)> {
    let l = Listener::bind(&[SocketAddr::new(addr, 0), "[::1]:0".parse()?])?;
    let targets = Targets::from_addrs(&l.local_addrs());
    let rx = std::thread::spawn(move || -> Result<(u64, f64), sonde_switch::Error> {
        let c = l.accept(Some(Duration::from_secs(10)))?;
        let mut buf = vec![0u8; RECV];
        let mut n = 0u64;
        let start = Instant::now();
        loop {
            match c.recv(&mut buf)? {
                0 => break,
                k => n += k as u64,
            }
        }
        c.close()?;
        Ok((n, start.elapsed().as_secs_f64()))
    });
    let c = Conn::connect(&targets, Family::V4, Options::default())?;
    let buf = vec![0x5au8; SEND];
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        c.send_all(&buf)?;
    }
    c.finish()?;
    let r = rx.join().map_err(|_| "receiver panicked")??;
    c.close()?;
    Ok(r)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: switch_bench plain|library|replay-floor SECS [IPV4_ADDR]";
    let mode = args.get(1).ok_or(usage)?;
    let secs: f64 = args.get(2).ok_or(usage)?.parse()?;
    let addr: IpAddr = args.get(3).map_or("127.0.0.1", String::as_str).parse()?;
    let (bytes, took) = match mode.as_str() {
        "plain" => plain(addr, secs, false)?,
        "replay-floor" => plain(addr, secs, true)?,
        "library" => library(addr, secs)?,
        _ => return Err(usage.into()),
    };
    println!("{mode} {bytes} {took:.3} {:.0}", bytes as f64 * 8.0 / took);
    Ok(())
}
