//! Clock-offset estimation for one-way delays, and the bounded sample reservoir it works on.
//!
//! With the four timestamps of a probe (client send C1, server receive S1, server send S2,
//! client receive C2) the NTP on-wire calculation (RFC 5905 §8) gives the offset
//! `θ = ((S1 − C1) + (S2 − C2)) / 2` (server clock minus client clock) and the delay
//! `δ = (C2 − C1) − (S2 − S1)`. θ is exact only when the path is symmetric; queueing makes it
//! wrong by half the asymmetry. Probes that met the least queueing (the fastest third by δ)
//! are the most symmetric, so sonde takes the median θ of those, like NTP's clock filter takes
//! the sample of least delay. One-way figures from it are estimates and labelled so
//! (crusader syncs the same way at start and users still asked what it means: crusader #5).
//!
//! The reservoir (Vitter's algorithm R, seeded, so runs are reproducible) keeps at most
//! [`RESERVOIR`] samples whatever the run length; tests with fewer samples are exact.

/// Samples kept for offset estimation and plots.
pub const RESERVOIR: usize = 4096;

/// One probe's delay and offset, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetSample {
    pub delay_ns: i64,
    pub offset_ns: i64,
}

impl OffsetSample {
    /// From the four timestamps (ns, each on its own host's clock).
    pub fn from_stamps(c1: u64, s1: u64, s2: u64, c2: u64) -> Self {
        let (c1, s1, s2, c2) = (c1 as i128, s1 as i128, s2 as i128, c2 as i128);
        let offset = ((s1 - c1) + (s2 - c2)) / 2;
        let delay = (c2 - c1) - (s2 - s1);
        let sat = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        Self {
            delay_ns: sat(delay),
            offset_ns: sat(offset),
        }
    }
}

/// A uniform random sample of at most `cap` items from a stream of any length.
#[derive(Debug, Clone)]
pub struct Reservoir<T> {
    items: Vec<T>,
    cap: usize,
    seen: u64,
    rng: u64,
}

impl<T: Copy> Reservoir<T> {
    /// An empty reservoir holding at most `cap` items (at least 1).
    pub fn new(cap: usize) -> Self {
        Self {
            items: Vec::new(),
            cap: cap.max(1),
            seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    fn next_rand(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    /// Offers one item.
    pub fn push(&mut self, item: T) {
        self.seen += 1;
        if self.items.len() < self.cap {
            self.items.push(item);
            return;
        }
        let j = self.next_rand() % self.seen;
        if let Some(slot) = self.items.get_mut(j as usize) {
            *slot = item;
        }
    }

    /// The kept items (in no particular order).
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// How many items were offered in all.
    pub fn seen(&self) -> u64 {
        self.seen
    }
}

/// The median offset of the fastest third (by delay) of `samples`; None when empty.
pub fn estimate_offset(samples: &[OffsetSample]) -> Option<i64> {
    if samples.is_empty() {
        return None;
    }
    let mut v = samples.to_vec();
    v.sort_by_key(|s| s.delay_ns);
    let k = v.len().div_ceil(3);
    let mut offs: Vec<i64> = v[..k].iter().map(|s| s.offset_ns).collect();
    offs.sort_unstable();
    let mid = offs.len() / 2;
    Some(if offs.len() % 2 == 1 {
        offs[mid]
    } else {
        ((offs[mid - 1] as i128 + offs[mid] as i128) / 2) as i64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_wire_calculation() {
        // Server clock 1 000 ns ahead; 100 ns up, 300 ns down, 50 ns turnaround.
        let s = OffsetSample::from_stamps(10_000, 11_100, 11_150, 10_450);
        assert_eq!(s.delay_ns, 400);
        // θ = ((1100) + (700)) / 2 = 900: off by half the 200 ns asymmetry.
        assert_eq!(s.offset_ns, 900);
    }

    #[test]
    fn fastest_third_wins_over_queued_probes() {
        // True offset 5 000 ns. Six symmetric fast probes (delay 200) and six probes queued
        // 10 µs upstream, whose naive offsets are 5 000 µs off.
        let mut v = Vec::new();
        for i in 0..6u64 {
            let c1 = 1_000_000 * i;
            v.push(OffsetSample::from_stamps(
                c1,
                c1 + 100 + 5_000,
                c1 + 5_100,
                c1 + 200,
            ));
            let q = 10_000;
            v.push(OffsetSample::from_stamps(
                c1 + 500,
                c1 + 500 + 100 + q + 5_000,
                c1 + 500 + 100 + q + 5_000,
                c1 + 500 + 100 + q + 100,
            ));
        }
        assert_eq!(estimate_offset(&v), Some(5_000));
        let naive: i64 = v.iter().map(|s| s.offset_ns).sum::<i64>() / v.len() as i64;
        assert_eq!(naive, 7_500);
        assert_eq!(estimate_offset(&[]), None);
    }

    #[test]
    fn even_count_takes_the_middle_pair() {
        let v: Vec<OffsetSample> = [(1, 10), (2, 20), (3, 30), (4, 40), (50, 0), (60, 0)]
            .iter()
            .map(|&(d, o)| OffsetSample {
                delay_ns: d,
                offset_ns: o,
            })
            .collect();
        // Fastest third of 6 = 2 samples: offsets 10 and 20.
        assert_eq!(estimate_offset(&v), Some(15));
    }

    #[test]
    fn reservoir_is_bounded_and_uniform_enough() {
        let mut r = Reservoir::new(100);
        for i in 0..100_000u32 {
            r.push(i);
        }
        assert_eq!(r.items().len(), 100);
        assert_eq!(r.seen(), 100_000);
        let late = r.items().iter().filter(|&&i| i >= 50_000).count();
        assert!(
            (30..=70).contains(&late),
            "{late} of 100 from the second half"
        );
    }
}
