//! The AQM stages behind the rate limiter, on the virtual clock: what CoDel, FQ-CoDel, PIE and
//! a queue limit in time do to the sojourn time of saturating and sparse flows.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use sonde_emu::build::build_chain;
use sonde_emu::impair::Stage;
use sonde_emu::{ChainSeed, Instant, Packet};

mod common;
use common::{drive, impairments};

const MS: u64 = 1_000_000;

fn chain(text: &str) -> sonde_emu::impair::Chain {
    build_chain(&impairments(text), ChainSeed::from_raw(11)).unwrap_or_else(|e| panic!("{e}"))
}

/// An Ethernet + IPv4 + UDP frame of `len` bytes from source port `port`, entered at `t`.
fn udp(port: u16, len: usize, seq: u64, t: Instant) -> (Instant, Packet) {
    let mut f = vec![0u8; len.max(42)];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[23] = 17;
    f[26..30].copy_from_slice(&[10, 0, 0, 1]);
    f[30..34].copy_from_slice(&[10, 0, 0, 2]);
    f[34..36].copy_from_slice(&port.to_be_bytes());
    f[36..38].copy_from_slice(&5201u16.to_be_bytes());
    let mut p = Packet::new(f, seq);
    p.meta.entered = t;
    (t, p)
}

/// A flow of `n` frames of `len` bytes from `port`, one every `gap_ns` from `start_ns`,
/// numbered from `seq0`.
fn flow(port: u16, len: usize, n: u64, gap_ns: u64, seq0: u64) -> Vec<(Instant, Packet)> {
    (0..n)
        .map(|i| udp(port, len, seq0 + i, Instant::from_nanos(i * gap_ns)))
        .collect()
}

/// Sojourn in ms of each packet out that `pick` selects and that entered at or after `from_ms`.
fn sojourns(out: &[(Instant, Packet)], from_ms: u64, pick: impl Fn(u64) -> bool) -> Vec<f64> {
    out.iter()
        .filter(|(_, p)| pick(p.meta.seq) && p.meta.entered >= Instant::from_millis(from_ms))
        .map(|(t, p)| (*t - p.meta.entered).as_secs_f64() * 1e3)
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// A responsive bulk sender from `port`: AIMD on a 20 ms round trip (one more packet per
/// round, the window halved at most once a round when its stage drops), beside `others`,
/// until `end`. Returns every packet out with its instant.
fn drive_aimd(
    stage: &mut dyn Stage,
    port: u16,
    others: Vec<(Instant, Packet)>,
    end: Instant,
) -> Vec<(Instant, Packet)> {
    const RTT: u64 = 20 * MS;
    let mut others = others.into_iter().peekable();
    let (mut out, mut now, mut seq) = (Vec::new(), Instant::ZERO, 0u64);
    let (mut cwnd, mut next_send, mut last_cut, mut last_grow) = (4.0f64, now, now, now);
    let mut seen_drops = 0;
    while now < end {
        let wake = [
            Some(next_send),
            others.peek().map(|(t, _)| *t),
            stage.next_wakeup(),
        ];
        now = now.max(wake.into_iter().flatten().min().unwrap_or(end));
        if now >= next_send {
            stage.push(udp(port, 1500, seq, now).1, now);
            seq += 1;
            next_send = now.add_nanos((RTT as f64 / cwnd) as u64);
        }
        while let Some((_, pkt)) = others.next_if(|(t, _)| *t <= now) {
            stage.push(pkt, now);
        }
        while let Some(pkt) = stage.poll(now) {
            out.push((now, pkt));
        }
        let dropped = stage.stats().dropped;
        if dropped > seen_drops && now - last_cut >= std::time::Duration::from_nanos(RTT) {
            cwnd = (cwnd / 2.0).max(1.0);
            last_cut = now;
        } else if now - last_grow >= std::time::Duration::from_nanos(RTT) {
            cwnd += 1.0;
            last_grow = now;
        }
        seen_drops = dropped;
    }
    out
}

#[test]
fn codel_holds_a_responsive_flow_near_target_and_bounds_an_unresponsive_one() {
    let mut c = chain("rate = \"10mbit\"\naqm = \"codel\"");
    let out = drive_aimd(&mut c, 1000, Vec::new(), Instant::from_secs(20));
    let late = sojourns(&out, 10_000, |_| true);
    eprintln!(
        "codel AIMD: mean {:.2} ms, max {:.2} ms, dropped {}",
        mean(&late),
        max(&late),
        c.stats().dropped
    );
    assert!(c.stats().dropped > 0);
    assert!(mean(&late) < 15.0, "mean sojourn {} ms", mean(&late));
    // The same sender fills a 100 ms FIFO instead.
    let mut fifo = chain("rate = \"10mbit\"\nqueue_limit = \"100ms\"");
    let fifo_late = sojourns(
        &drive_aimd(&mut fifo, 1000, Vec::new(), Instant::from_secs(20)),
        10_000,
        |_| true,
    );
    eprintln!("fifo AIMD: mean {:.2} ms", mean(&fifo_late));
    assert!(mean(&fifo_late) > 3.0 * mean(&late));
    // 1500-byte frames at 12 Mbit/s, never slowing: a FIFO of 1000 packets would hold 1.2 s.
    let mut c = chain("rate = \"10mbit\"\naqm = \"codel\"");
    let all = sojourns(&drive(&mut c, flow(1000, 1500, 30_000, MS, 0)), 0, |_| true);
    eprintln!(
        "codel unresponsive: mean {:.2} ms, max {:.2} ms",
        mean(&all),
        max(&all)
    );
    assert!(max(&all) < 300.0, "sojourn up to {} ms", max(&all));
}

#[test]
fn fq_codel_keeps_a_sparse_flow_fast_beside_a_bulk_flow() {
    let mut c = chain("rate = \"10mbit\"\naqm = \"fq_codel\"");
    // A responsive bulk flow and 100 bytes every 20 ms for 20 s.
    let sparse = flow(2000, 100, 1000, 20 * MS, 1_000_000);
    let out = drive_aimd(&mut c, 1000, sparse, Instant::from_secs(21));
    let sparse = sojourns(&out, 0, |s| s >= 1_000_000);
    let bulk = sojourns(&out, 10_000, |s| s < 1_000_000);
    eprintln!(
        "fq_codel: sparse {} out, mean {:.3} max {:.3} ms; bulk mean {:.2} ms, max {:.2} ms",
        sparse.len(),
        mean(&sparse),
        max(&sparse),
        mean(&bulk),
        max(&bulk)
    );
    assert_eq!(sparse.len(), 1000, "sparse packets lost");
    assert!(
        max(&sparse) < 3.0,
        "sparse sojourn up to {} ms",
        max(&sparse)
    );
    assert!(mean(&bulk) < 15.0, "bulk sojourn {} ms", mean(&bulk));
}

#[test]
fn fq_codel_shares_bytes_fairly_between_packet_sizes() {
    let mut c = chain("rate = \"10mbit\"\naqm = \"fq_codel\"");
    // Each flow alone would fill the link: 1500-byte frames vs 300-byte frames, 10 Mbit/s each.
    let mut arrivals = flow(1000, 1500, 5_000, 1_200_000, 0);
    arrivals.extend(flow(2000, 300, 25_000, 240_000, 1_000_000));
    let out = drive(&mut c, arrivals);
    let bytes = |big: bool| -> u64 {
        out.iter()
            .filter(|(t, p)| (p.meta.seq < 1_000_000) == big && *t <= Instant::from_secs(6))
            .map(|(_, p)| p.len() as u64)
            .sum()
    };
    let (a, b) = (bytes(true) as f64, bytes(false) as f64);
    eprintln!("fq_codel DRR: {a} vs {b} bytes, ratio {:.3}", a / b);
    assert!((a / b - 1.0).abs() < 0.10, "{a} vs {b} bytes");
}

#[test]
fn pie_settles_near_its_target() {
    let mut c = chain("rate = \"10mbit\"\naqm = \"pie\"");
    let out = drive(&mut c, flow(1000, 1500, 20_000, MS, 0));
    let late = sojourns(&out, 15_000, |_| true);
    eprintln!(
        "pie: mean {:.2} ms, max {:.2} ms, dropped {}",
        mean(&late),
        max(&late),
        c.stats().dropped
    );
    assert!(c.stats().dropped > 0);
    assert!(
        (mean(&late) - 15.0).abs() < 10.0,
        "mean sojourn {} ms",
        mean(&late)
    );
}

#[test]
fn pie_lets_an_initial_burst_through() {
    // 100 ms at twice the rate of a 12 Mbit/s link, then quiet.
    let mut c = chain("rate = \"12mbit\"\naqm = \"pie\"");
    let out = drive(&mut c, flow(1000, 1500, 200, MS / 2, 0));
    assert_eq!(out.len(), 200);
    assert_eq!(c.stats().dropped, 0);
}

#[test]
fn queue_limit_in_time_bounds_the_sojourn() {
    // 100 ms at 20 Mbit/s: 250 000 bytes. 1500-byte frames at 30 Mbit/s for 3 s.
    let mut c = chain("rate = \"20mbit\"\nqueue_limit = \"100ms\"");
    let out = drive(&mut c, flow(1000, 1500, 7_500, 400_000, 0));
    let all = sojourns(&out, 0, |_| true);
    let packet_ms = 1500.0 * 8.0 / 20e6 * 1e3;
    eprintln!(
        "queue 100ms: max {:.3} ms, max queued {}",
        max(&all),
        c.stage_stats()[0].1.max_queued
    );
    assert!(
        max(&all) <= 100.0 + packet_ms,
        "sojourn up to {} ms",
        max(&all)
    );
    assert!(max(&all) > 95.0, "the queue never filled: {} ms", max(&all));
    assert_eq!(c.stage_stats()[0].1.max_queued, 250_000 / 1500);
}

#[test]
fn the_bufferbloat_scenario_runs_every_aqm_in_the_engine() {
    use sonde_emu::backend::{plan, Backend, KernelCaps};
    let text = sonde_scenario::builtin_text("bufferbloat").unwrap();
    let s = sonde_scenario::Scenario::from_toml(text).unwrap();
    let caps = KernelCaps {
        has_netem: true,
        has_tbf: true,
        has_htb: true,
    };
    for name in ["codel", "fq_codel", "pie"] {
        let p = plan(&s, name, caps).unwrap();
        assert!(p.directions.iter().all(|d| d.backend == Backend::Userspace));
        let chains = sonde_emu::build::build_settings(&s, name, s.seed).unwrap();
        assert_eq!(chains.len(), 2, "{name}");
    }
}
