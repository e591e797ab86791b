//! Each impairment measured against its setting, on a virtual clock (after smoltcp's
//! `tests/netsim.rs`): 20 000 packets through each stage in a few milliseconds of real time.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

use std::time::Duration;

use sonde_emu::build::build_chain;
use sonde_emu::impair::{
    Chain, Corrupt, Delay, DelayConfig, Device, DeviceConfig, Distribution, Duplicate, GeParams,
    GilbertElliott, QueueLimit, RandomLoss, RateConfig, RateLimiter, Reorder, ReorderConfig, Stage,
};
use sonde_emu::{ChainSeed, Direction, Instant, Packet};
use sonde_scenario::Impairments;

mod common;
use common::{drive, impairments};

const N: u64 = 20_000;

/// `n` packets of `len` bytes, one every `gap_ns`, with `entered` set.
fn paced(n: u64, len: usize, gap_ns: u64) -> Vec<(Instant, Packet)> {
    (0..n)
        .map(|i| {
            let t = Instant::from_nanos(i * gap_ns);
            let mut p = Packet::new(vec![0x5a; len], i);
            p.meta.entered = t;
            (t, p)
        })
        .collect()
}

fn seqs(out: &[(Instant, Packet)]) -> Vec<u64> {
    out.iter().map(|(_, p)| p.meta.seq).collect()
}

fn rng(seed: u64) -> sonde_emu::seed::StageRng {
    ChainSeed::from_raw(seed).rng(0)
}

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn random_loss_five_percent() {
    let mut loss = ok(RandomLoss::new(0.05, rng(1)));
    let out = drive(&mut loss, paced(N, 64, 1_000));
    let lost = N - out.len() as u64;
    let rate = lost as f64 / N as f64;
    assert!((0.045..=0.055).contains(&rate), "loss {rate}");
    assert_eq!(loss.stats().dropped, lost);
}

/// Lengths of the runs of consecutive lost packets.
fn bursts(out: &[(Instant, Packet)], n: u64) -> Vec<u64> {
    let mut delivered = vec![false; n as usize];
    for (_, p) in out {
        delivered[p.meta.seq as usize] = true;
    }
    let mut runs = Vec::new();
    let mut run = 0;
    for d in delivered {
        if d {
            if run > 0 {
                runs.push(run);
            }
            run = 0;
        } else {
            run += 1;
        }
    }
    if run > 0 {
        runs.push(run);
    }
    runs
}

#[test]
fn gilbert_elliott_matches_stationary_loss_and_is_bursty() {
    let params = GeParams {
        p: 0.01,
        r: 0.3,
        loss_bad: 1.0,
        loss_good: 0.0,
    };
    // Bursts make the estimate noisy: 10 x N packets keeps its spread near 3 %.
    let n = 10 * N;
    let mut ge = ok(GilbertElliott::new(params, rng(2)));
    let out = drive(&mut ge, paced(n, 64, 1_000));
    let loss = (n - out.len() as u64) as f64 / n as f64;
    let expected = params.stationary_loss();
    assert!(
        (loss - expected).abs() < 0.1 * expected,
        "loss {loss}, expected {expected}"
    );
    let runs = bursts(&out, n);
    let mean = runs.iter().sum::<u64>() as f64 / runs.len() as f64;
    assert!(mean > 1.5, "mean burst {mean}");
    assert!(
        (mean - 1.0 / params.r).abs() < 0.15 / params.r,
        "mean burst {mean}"
    );

    // Same average loss, independent: bursts of about one packet.
    let mut random = ok(RandomLoss::new(expected, rng(2)));
    let runs = bursts(&drive(&mut random, paced(n, 64, 1_000)), n);
    let mean = runs.iter().sum::<u64>() as f64 / runs.len() as f64;
    assert!(mean < 1.1, "random loss mean burst {mean}");
}

#[test]
fn rate_limiter_holds_rate_under_saturation() {
    // 1500-byte packets offered at 120 Mbit/s (one per 100 us) into 100 Mbit/s.
    let mut cfg = RateConfig::new(100_000_000);
    cfg.limit = QueueLimit::Packets(100);
    let mut rate = ok(RateLimiter::new(cfg));
    let out = drive(&mut rate, paced(N, 1500, 100_000));
    let first = out.first().map(|(t, _)| *t).unwrap_or_default();
    let last = out.last().map(|(t, _)| *t).unwrap_or_default();
    let bits = (out.len() as f64 - 1.0) * 1500.0 * 8.0;
    let measured = bits / (last - first).as_secs_f64();
    assert!((measured / 100e6 - 1.0).abs() < 0.01, "rate {measured}");
    let st = rate.stats();
    assert!(st.dropped > 0);
    assert!(st.max_queued <= 100, "queue reached {}", st.max_queued);
    assert_eq!(st.packets_in, st.packets_out + st.dropped + st.queued);
    // Offered 120, carried 100: a sixth dropped, less what the queue absorbed.
    let expected = N as f64 / 6.0 - 100.0;
    assert!(
        (st.dropped as f64 - expected).abs() < 0.01 * N as f64,
        "dropped {}",
        st.dropped
    );
}

#[test]
fn rate_limiter_queue_limit_tail_drops_exactly() {
    for (limit, len, kept) in [
        (QueueLimit::Packets(100), 1500, 100),
        (QueueLimit::Bytes(150_000), 1500, 100),
        (QueueLimit::Bytes(150_000), 1000, 150),
    ] {
        let mut cfg = RateConfig::new(10_000_000);
        cfg.limit = limit;
        let mut rate = ok(RateLimiter::new(cfg));
        for i in 0..200 {
            rate.push(Packet::new(vec![0; len], i), Instant::ZERO);
        }
        assert_eq!(rate.stats().dropped, 200 - kept, "{limit:?}");
        // The ones kept are the first ones, in order.
        let out = drive(&mut rate, Vec::new());
        assert_eq!(seqs(&out), (0..kept).collect::<Vec<_>>());
    }
}

#[test]
fn fixed_delay_is_exact() {
    let mut delay = Delay::new(DelayConfig::fixed(Duration::from_millis(10)), rng(3));
    let out = drive(&mut delay, paced(N, 64, 50_000));
    assert_eq!(out.len() as u64, N);
    for (t, p) in &out {
        assert_eq!(*t - p.meta.entered, Duration::from_millis(10));
    }
}

fn delay_moments(dist: Distribution, jitter_ms: u64) -> (f64, f64) {
    let cfg = DelayConfig {
        jitter: Duration::from_millis(jitter_ms),
        distribution: dist,
        keep_order: false,
        ..DelayConfig::fixed(Duration::from_millis(10))
    };
    let mut delay = Delay::new(cfg, rng(4));
    let out = drive(&mut delay, paced(N, 64, 50_000));
    let ds: Vec<f64> = out
        .iter()
        .map(|(t, p)| (*t - p.meta.entered).as_secs_f64() * 1e3)
        .collect();
    let mean = ds.iter().sum::<f64>() / ds.len() as f64;
    let var = ds.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / ds.len() as f64;
    (mean, var.sqrt())
}

#[test]
fn jitter_distributions_have_their_moments() {
    let (mean, sd) = delay_moments(Distribution::Normal, 2);
    assert!((mean - 10.0).abs() < 0.05, "normal mean {mean}");
    assert!((sd - 2.0).abs() < 0.05 * 2.0, "normal sd {sd}");
    let (mean, sd) = delay_moments(Distribution::Uniform, 3);
    assert!((mean - 10.0).abs() < 0.05, "uniform mean {mean}");
    assert!((sd - 3.0 / 3f64.sqrt()).abs() < 0.05, "uniform sd {sd}");
    let (mean, sd) = delay_moments(Distribution::Pareto, 2);
    assert!((mean - 10.0).abs() < 0.1, "pareto mean {mean}");
    assert!((sd - 2.0).abs() < 0.15 * 2.0, "pareto sd {sd}");
}

#[test]
fn jitter_keeps_order_unless_told() {
    let cfg = DelayConfig {
        jitter: Duration::from_millis(5),
        ..DelayConfig::fixed(Duration::from_millis(10))
    };
    let mut delay = Delay::new(cfg, rng(5));
    let out = drive(&mut delay, paced(N, 64, 100_000));
    assert_eq!(seqs(&out), (0..N).collect::<Vec<_>>());
    assert_eq!(delay.stats().reordered, 0);
}

#[test]
fn device_with_backpressure_keeps_its_ceiling_and_drops_only_upstream() {
    // 10 000 pkt/s offered to an 8000 pkt/s device with a 4-frame ring and flow control, 2 s:
    // the ring never drops; the 1000-frame upstream queue fills and drops the rest.
    let cfg = DeviceConfig {
        backpressure: true,
        queue: Some(1000),
        ..DeviceConfig::dropping(8000, 4)
    };
    let mut dev = ok(Device::new(cfg));
    let out = drive(&mut dev, paced(N, 64, 100_000));
    let times: Vec<u64> = out.iter().map(|(t, _)| t.as_nanos()).collect();
    for w in times.windows(2) {
        assert!(
            w[1] - w[0] >= 125_000,
            "departures {} ns apart",
            w[1] - w[0]
        );
    }
    let parts = dev.parts();
    let (queue, ring) = (parts[0].1, parts[1].1);
    assert_eq!(ring.dropped, 0);
    assert!(queue.dropped > 0 && queue.max_queued == 1000, "{queue:?}");
    assert_eq!(queue.packets_in, N);
    assert_eq!(out.len() as u64 + queue.dropped, N);
}

#[test]
fn device_ceiling_holds_and_full_ring_drops() {
    // 10 000 pkt/s offered to an 8000 pkt/s device with a 20-frame ring, for 2 s.
    let mut dev = ok(Device::new(DeviceConfig::dropping(8000, 20)));
    let out = drive(&mut dev, paced(N, 64, 100_000));
    let times: Vec<u64> = out.iter().map(|(t, _)| t.as_nanos()).collect();
    // No 1 s window holds more than 8000 departures: 8001 departures span more than 1 s.
    for w in times.windows(8001) {
        assert!(w[8000] - w[0] >= 1_000_000_000);
    }
    let st = dev.stats();
    assert!(st.dropped > 0);
    assert!(st.max_queued <= 20);
    assert_eq!(st.packets_in, st.packets_out + st.dropped + st.queued);
    let carried = out.len() as f64 / (times.last().copied().unwrap_or(1) as f64 / 1e9);
    assert!((carried - 8000.0).abs() < 10.0, "carried {carried} pkt/s");

    // A burst of 30 frames at once into an empty 20-frame ring: 10 dropped.
    let mut dev = ok(Device::new(DeviceConfig::dropping(8000, 20)));
    let burst: Vec<_> = (0..30)
        .map(|i| (Instant::ZERO, Packet::new(vec![0; 64], i)))
        .collect();
    let out = drive(&mut dev, burst);
    assert_eq!(seqs(&out), (0..20).collect::<Vec<_>>());
    assert_eq!(dev.stats().dropped, 10);
}

#[test]
fn reorder_duplicate_corrupt_match_settings() {
    let cfg = ReorderConfig {
        probability: 0.1,
        gap: 3,
        max_hold: Duration::from_millis(10),
    };
    let mut reorder = ok(Reorder::new(cfg, rng(6)));
    let out = drive(&mut reorder, paced(N, 64, 10_000));
    let mut got = seqs(&out);
    assert_ne!(got, (0..N).collect::<Vec<_>>());
    got.sort_unstable();
    assert_eq!(got, (0..N).collect::<Vec<_>>());
    let share = reorder.stats().reordered as f64 / N as f64;
    assert!((0.09..=0.11).contains(&share), "reordered {share}");

    let mut dup = ok(Duplicate::new(0.05, rng(7)));
    let out = drive(&mut dup, paced(N, 64, 10_000));
    let extra = out.len() as u64 - N;
    assert!((950..=1050).contains(&extra), "duplicates {extra}");
    assert_eq!(
        out.iter().filter(|(_, p)| p.meta.duplicate).count() as u64,
        extra
    );

    let mut corrupt = ok(Corrupt::new(0.01, rng(8)));
    let out = drive(&mut corrupt, paced(N, 64, 10_000));
    let damaged = out.iter().filter(|(_, p)| p.data != vec![0x5a; 64]).count() as u64;
    assert!((170..=230).contains(&damaged), "corrupted {damaged}");
    assert_eq!(corrupt.stats().corrupted, damaged);
}

fn lossy_impairments() -> Impairments {
    let text = r#"
        loss = "5%"
        delay = "5ms"
        jitter = "1ms"
        duplicate = "1%"
        reorder = { probability = "2%", gap = 2 }
    "#;
    impairments(text)
}

#[test]
fn same_seed_same_pattern_different_seed_different() {
    let imp = lossy_impairments();
    let run = |seed: u64| {
        let mut chain = ok(build_chain(
            &imp,
            ChainSeed::new(seed, "wan", Direction::AToB),
        ));
        let out = drive(&mut chain, paced(N, 64, 10_000));
        out.iter()
            .map(|(t, p)| (t.as_nanos(), p.meta.seq, p.meta.duplicate))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
    // The other direction of the same link has its own stream.
    let mut back = ok(build_chain(&imp, ChainSeed::new(1, "wan", Direction::BToA)));
    let back: Vec<_> = drive(&mut back, paced(N, 64, 10_000))
        .iter()
        .map(|(t, p)| (t.as_nanos(), p.meta.seq, p.meta.duplicate))
        .collect();
    assert_ne!(run(1), back);
}

#[test]
fn rate_delay_loss_chain_composes() {
    let imp = impairments(
        r#"
        rate = "100mbit"
        queue_limit = "100pkt"
        delay = "10ms"
        loss = "5%"
        "#,
    );
    let mut chain = ok(build_chain(&imp, ChainSeed::new(9, "wan", Direction::AToB)));
    assert_eq!(
        chain
            .stage_stats()
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>(),
        ["rate", "delay", "loss"]
    );
    // 1500-byte packets at 120 Mbit/s.
    let out = drive(&mut chain, paced(N, 1500, 100_000));
    let stats = chain.stage_stats();
    let (rate, loss) = (stats[0].1, stats[2].1);
    // Every packet waited at least the 10 ms of propagation, plus its queueing.
    assert!(out
        .iter()
        .all(|(t, p)| *t - p.meta.entered >= Duration::from_millis(10)));
    // Loss applies to what the bottleneck let through.
    let lost = loss.dropped as f64 / rate.packets_out as f64;
    assert!((0.045..=0.055).contains(&lost), "loss {lost}");
    // Goodput is 95 % of the rate.
    let (first, last) = (out[0].0, out[out.len() - 1].0);
    let mbit = (out.len() - 1) as f64 * 1500.0 * 8.0 / (last - first).as_secs_f64() / 1e6;
    assert!((mbit - 95.0).abs() < 1.0, "goodput {mbit} Mbit/s");
    let total = chain.stats();
    assert_eq!(total.packets_in, N);
    assert_eq!(total.packets_out, out.len() as u64);
    assert_eq!(total.dropped, rate.dropped + loss.dropped);
}

#[test]
fn chain_of_nothing_is_a_wire() {
    let mut chain = Chain::new();
    let out = drive(&mut chain, paced(100, 64, 1_000));
    assert!(out.iter().all(|(t, p)| *t == p.meta.entered));
}
