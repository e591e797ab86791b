//! Reed-Solomon throughput at the default block (128 source symbols of 1420 bytes, the
//! default repair count), one core, against a plain copy of the same bytes.
//!
//! `cargo bench -p sonde-coded` prints Gbit/s of block data for: encode (all repair symbols);
//! decode in the worst case (as many source symbols lost as there are repair symbols, so
//! every repair symbol is needed), through `BlockDecoder` as the receiver uses it, copies of
//! arriving symbols included; and `memcpy` of the block's bytes as the reference. Each figure
//! is the fastest of many timed calls: on a shared machine noise only makes calls slower.
//! A plain bench binary (no criterion) keeps the workspace free of a bench-only dependency.

use std::hint::black_box;
use std::time::{Duration, Instant};

use sonde_coded::block::{repair_count, BlockDecoder, EncodedBlock};

const K: u16 = 128;
const SYMBOL: usize = 1420;
const MIN_CALLS: usize = 20;

/// The fastest single call of `f` within `budget` (at least `MIN_CALLS` calls). On a machine
/// shared with other work, preemption only ever adds time, so the fastest call is the best
/// estimate of what the operation costs on a core of its own.
fn best(budget: Duration, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    let mut fastest = Duration::MAX;
    let mut calls = 0;
    while calls < MIN_CALLS || start.elapsed() < budget {
        let t = Instant::now();
        f();
        fastest = fastest.min(t.elapsed());
        calls += 1;
    }
    fastest
}

fn gbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 * 8.0 / t.as_secs_f64() / 1e9
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let len = usize::from(K) * SYMBOL;
    let data: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
    let r = repair_count(K);
    let budget = Duration::from_secs(2);

    let mut dst = vec![0u8; len];
    let t_copy = best(budget, || {
        dst.copy_from_slice(black_box(&data));
        black_box(&dst);
    });

    let t_enc = best(budget, || {
        let b = EncodedBlock::encode(0, black_box(data.clone()), SYMBOL);
        black_box(b.ok());
    });
    // The encode figure includes one clone of the block (the sender hands over its buffer);
    // that copy is what the memcpy line measures, so it is a small part.

    let block = EncodedBlock::encode(0, data.clone(), SYMBOL)?;
    // Worst case: the first `r` source symbols lost, all `r` repair symbols needed.
    let arriving: Vec<(u16, Vec<u8>)> = (r..K + r)
        .filter_map(|esi| block.symbol(esi).map(|s| (esi, s.to_vec())))
        .collect();
    // One source symbol lost: as little decoding work as a loss can ask for.
    let one_lost: Vec<(u16, Vec<u8>)> = (1..=K)
        .filter_map(|esi| block.symbol(esi).map(|s| (esi, s.to_vec())))
        .collect();
    let mut ok = true;
    let mut decode = |symbols: &[(u16, Vec<u8>)]| {
        let Ok(mut d) = BlockDecoder::new(K, len as u32, SYMBOL) else {
            ok = false;
            return;
        };
        for (esi, s) in symbols {
            d.add(*esi, s);
        }
        match d.decode() {
            Ok(out) => ok &= out.len() == len,
            Err(_) => ok = false,
        }
    };
    let t_dec = best(budget, || decode(&arriving));
    let t_dec1 = best(budget, || decode(&one_lost));
    let restored = {
        let mut d = BlockDecoder::new(K, len as u32, SYMBOL)?;
        for (esi, s) in &arriving {
            d.add(*esi, s);
        }
        d.decode()?
    };
    if !ok || restored != data {
        return Err("decode did not restore the block".into());
    }

    println!(
        "block: k={K} source symbols of {SYMBOL} bytes ({len} bytes), {r} repair symbols; \
         decode with {r} source symbols lost"
    );
    println!(
        "{:<34} {:>10} {:>10}",
        "operation (one core)", "us/block", "Gbit/s"
    );
    for (name, t) in [
        ("memcpy of the block (reference)", t_copy),
        ("reed-solomon encode", t_enc),
        ("reed-solomon decode (worst case)", t_dec),
        ("reed-solomon decode (1 lost)", t_dec1),
    ] {
        println!(
            "{name:<34} {:>10.1} {:>10.2}",
            t.as_secs_f64() * 1e6,
            gbps(len, t)
        );
    }
    Ok(())
}
