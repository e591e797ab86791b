//! The dispersion-rate histogram of the short trains and its local modes.
//!
//! Packet-pair and short-train rates on a loaded path are multimodal and the capacity is not
//! always the strongest mode (Dovrolis et al., "Packet-dispersion techniques and a
//! capacity-estimation methodology", IEEE/ACM ToN 2004), so every local mode is reported.
//! The bin width follows pathrate: 12.5 % of the range between the 10th and 90th
//! percentiles, but never below 1 % of the median (a tight distribution would otherwise give
//! bins narrower than the stamps' resolution).

use serde::{Deserialize, Serialize};

/// Share of the 10th-90th percentile range one bin spans.
pub const BIN_SHARE_OF_RANGE: f64 = 0.125;
/// The narrowest bin, as a share of the median rate.
pub const MIN_BIN_SHARE_OF_MEDIAN: f64 = 0.01;

/// One local mode: a bin holding more rates than its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Mode {
    /// The bin's lower and upper edge, bits/s.
    pub low_bps: f64,
    pub high_bps: f64,
    /// Rates in the bin.
    #[serde(default)]
    pub count: u32,
}

impl Mode {
    pub fn center_bps(&self) -> f64 {
        (self.low_bps + self.high_bps) / 2.0
    }
}

/// The histogram's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub bin_bps: f64,
    /// Lower edge of bin 0.
    #[serde(default)]
    pub start_bps: f64,
    #[serde(default)]
    pub counts: Vec<u32>,
    /// Local modes, strongest first.
    #[serde(default)]
    pub modes: Vec<Mode>,
}

/// Most bins a histogram may have (bounds the allocation whatever the rates).
pub const MAX_BINS: usize = 10_000;

/// The `q` quantile (0..=1) of sorted `v` by linear interpolation; None when empty.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    if n == 0 {
        return None;
    }
    let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    let (a, b) = (sorted.get(lo)?, sorted.get(hi)?);
    Some(a + (b - a) * (pos - lo as f64))
}

/// Coefficient of variation (standard deviation over mean); None with fewer than two rates.
pub fn cov(rates: &[f64]) -> Option<f64> {
    let n = rates.len();
    if n < 2 {
        return None;
    }
    let mean = rates.iter().sum::<f64>() / n as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(var.sqrt() / mean)
}

impl Histogram {
    /// The histogram of `rates` (bits/s, finite and positive ones only); None without any.
    pub fn of(rates: &[f64]) -> Option<Self> {
        let mut v: Vec<f64> = rates
            .iter()
            .copied()
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        v.sort_by(f64::total_cmp);
        let median = quantile(&v, 0.5)?;
        let range = quantile(&v, 0.9)? - quantile(&v, 0.1)?;
        let span = v.last()? - v.first()?;
        let bin = (BIN_SHARE_OF_RANGE * range)
            .max(MIN_BIN_SHARE_OF_MEDIAN * median)
            .max(span / MAX_BINS as f64);
        let start = (v.first()? / bin).floor() * bin;
        let nbins = ((span / bin).floor() as usize + 2).min(MAX_BINS + 2);
        let mut counts = vec![0u32; nbins];
        for r in &v {
            let i = (((r - start) / bin).floor() as usize).min(nbins - 1);
            counts[i] += 1;
        }
        let mut modes: Vec<Mode> = (0..nbins)
            .filter(|&i| {
                let c = counts[i];
                let left = if i == 0 { 0 } else { counts[i - 1] };
                let right = counts.get(i + 1).copied().unwrap_or(0);
                c > 0 && c > left && c >= right
            })
            .map(|i| Mode {
                low_bps: start + i as f64 * bin,
                high_bps: start + (i + 1) as f64 * bin,
                count: counts[i],
            })
            .collect();
        modes.sort_by(|a, b| b.count.cmp(&a.count).then(b.low_bps.total_cmp(&a.low_bps)));
        Some(Self {
            bin_bps: bin,
            start_bps: start,
            counts,
            modes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile(&v, 0.5), Some(3.0));
        assert_eq!(quantile(&v, 0.1), Some(1.4));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn two_clusters_give_two_modes_strongest_first() {
        let mut rates = vec![100e6; 12];
        rates.extend([99e6, 101e6, 50e6, 50e6, 50e6, 51e6]);
        let h = Histogram::of(&rates).unwrap();
        // 10th-90th percentile range 50..100 Mbit/s -> bin 12.5 % of it.
        assert!(
            (h.bin_bps - 0.125 * (100e6 - 50e6)).abs() < 1.0,
            "{}",
            h.bin_bps
        );
        assert_eq!(h.modes.len(), 2, "{:?}", h.modes);
        let top = h.modes[0];
        assert!(top.low_bps <= 100e6 && 100e6 < top.high_bps);
        assert_eq!(top.count, 13); // 99 Mbit/s falls in the bin below
        assert!(h.modes[1].low_bps <= 50e6 && 51e6 < h.modes[1].high_bps);
        assert_eq!(h.counts.iter().sum::<u32>(), 18);
    }

    #[test]
    fn a_tight_distribution_gets_one_percent_bins() {
        let h = Histogram::of(&[100e6, 100e6, 100e6, 100.2e6]).unwrap();
        assert!((h.bin_bps - 1e6).abs() < 1e3, "{}", h.bin_bps);
        assert_eq!(h.modes.len(), 1);
        assert!(Histogram::of(&[f64::NAN, 0.0]).is_none());
    }

    #[test]
    fn cov_of_constant_rates_is_zero() {
        assert_eq!(cov(&[5.0, 5.0, 5.0]), Some(0.0));
        let c = cov(&[90.0, 110.0]).unwrap();
        assert!((c - 0.1414).abs() < 1e-3, "{c}");
        assert_eq!(cov(&[1.0]), None);
    }
}
