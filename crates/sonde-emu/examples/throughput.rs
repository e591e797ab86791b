//! How many packets per second the engine core sustains through a full chain.
//!
//! Run with `cargo run --release -p sonde-emu --example throughput [PACKETS]`. Every stage is
//! on (rate, device, delay with jitter, reorder, loss, duplicate, corrupt), the virtual clock
//! offers 80 % of the rate limit so nearly every packet crosses every stage, and each packet's
//! buffer is allocated as a forwarder would. The figure is the CPU cost of the core alone,
//! single-threaded, without the reads and writes of the forwarding path.

use std::time::Instant as Wall;

use sonde_emu::build::build_chain;
use sonde_emu::impair::Stage;
use sonde_emu::{ChainSeed, Direction, Instant, Packet};
use sonde_scenario::Impairments;

const CHAIN: &str = r#"
rate = "10gbit"
queue_limit = "1000pkt"
device = { pps = 20000000, ring = 1024 }
delay = "1ms"
jitter = "100us"
distribution = "normal"
reorder = { probability = "1%", gap = 3, max_hold = "1ms" }
loss = "1%"
duplicate = "1%"
corrupt = "0.1%"
"#;

fn run(imp: &Impairments, len: usize, packets: u64) -> (f64, u64) {
    let mut chain = match build_chain(imp, ChainSeed::new(1, "bench", Direction::AToB)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("bad chain: {e}");
            std::process::exit(1);
        }
    };
    // 80 % of 10 Gbit/s.
    let gap_ns = (len as u64 * 8 * 10).div_ceil(80);
    let mut out = 0u64;
    let start = Wall::now();
    for i in 0..packets {
        let now = Instant::from_nanos(i * gap_ns);
        // Release everything due before this arrival, at its own instant.
        while let Some(t) = chain.next_wakeup().filter(|t| *t < now) {
            while let Some(p) = chain.poll(t) {
                out += 1;
                std::hint::black_box(&p);
            }
        }
        chain.push(Packet::new(vec![0x5a; len], i), now);
        while let Some(p) = chain.poll(now) {
            out += 1;
            std::hint::black_box(&p);
        }
    }
    while let Some(t) = chain.next_wakeup() {
        while let Some(p) = chain.poll(t) {
            out += 1;
            std::hint::black_box(&p);
        }
    }
    (start.elapsed().as_secs_f64(), out)
}

fn main() {
    let packets: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let imp: Impairments = match toml::from_str(CHAIN) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("bad chain: {e}");
            std::process::exit(1);
        }
    };
    println!("full chain (rate, device, delay+jitter, reorder, loss, duplicate, corrupt), {packets} packets");
    println!(
        "{:>6}  {:>12}  {:>10}  {:>8}",
        "bytes", "pkt/s in", "Gbit/s in", "ns/pkt"
    );
    for len in [64usize, 512, 1500] {
        let (secs, out) = run(&imp, len, packets);
        let pps = packets as f64 / secs;
        println!(
            "{len:>6}  {pps:>12.0}  {:>10.2}  {:>8.0}   ({out} out)",
            pps * len as f64 * 8.0 / 1e9,
            1e9 / pps
        );
    }
}
