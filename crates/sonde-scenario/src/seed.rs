//! Stable seed mixing: a run's seed from the scenario seed and the run id.
//!
//! The mixing is spelled out here (FNV-1a over the name, then SplitMix64) rather than taken
//! from `std::hash`, whose output may change between Rust releases; the impairment engine
//! derives its per-stage seeds with the same functions.

/// One step of SplitMix64: a bijective, well-mixed 64-bit function.
pub const fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a over `bytes`: a stable hash of a name.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Mixes a run seed with a name, giving an independent seed (used for per-run seeds too).
pub fn mix(seed: u64, name: &str) -> u64 {
    splitmix64(seed ^ splitmix64(fnv1a(name.as_bytes())))
}
