//! Is IPv4 or IPv6 better, and is the difference more than noise? (`sonde compare-ip`)
//!
//! Latency samples are skewed and heavy-tailed, so their medians are compared with the
//! Mann-Whitney U test (normal approximation with tie correction), which assumes no
//! distribution. BTC sessions are compared with Welch's t-test (means, no equal variances
//! assumed); the short throughput run alternates the families in rounds and compares them pair
//! by pair ([`paired_ratio_p`]). Each gives a two-sided p-value; "significant" means
//! p < [`ALPHA`] and a relative difference of at least [`MIN_RELATIVE`] (a statistically
//! certain 0.3 % is of no interest to an operator).

use serde::{Deserialize, Serialize};

/// Significance level.
pub const ALPHA: f64 = 0.05;
/// Smallest relative difference worth calling a difference.
pub const MIN_RELATIVE: f64 = 0.05;
/// Smallest latency difference worth calling a difference, ms: below it the figures are within
/// timestamping noise (a few microseconds on loopback), whatever the test says.
pub const MIN_LATENCY_DIFF_MS: f64 = 0.02;

/// The outcome of one comparison of A (IPv4) and B (IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// "a", "b" or "neither".
    pub better: Better,
    /// |A - B| / the larger of the two, in percent ([`crate::verdict::margin_pct`]).
    #[serde(default)]
    pub difference_percent: f64,
    pub p_value: Option<f64>,
    #[serde(default)]
    pub significant: bool,
}

/// Which side won.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    A,
    B,
    Neither,
}

/// Standard normal CDF (Abramowitz-Stegun 7.1.26 erf, |error| < 1.5e-7).
pub fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// Two-sided Mann-Whitney U p-value for samples `a` and `b`; None when either has fewer than
/// 3 values.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a.iter().map(|&v| (v, true)).collect();
    all.extend(b.iter().map(|&v| (v, false)));
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let (mut rank_a, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let r = (i + j) as f64 / 2.0 + 1.0;
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        rank_a += all[i..=j].iter().filter(|x| x.1).count() as f64 * r;
        i = j + 1;
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let u = rank_a - na * (na + 1.0) / 2.0;
    let mean = na * nb / 2.0;
    let nn = na + nb;
    let var = na * nb / 12.0 * ((nn + 1.0) - ties / (nn * (nn - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = (u - mean).abs() / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).clamp(0.0, 1.0))
}

/// Two-sided Welch t-test p-value, from Student's t with the Welch-Satterthwaite degrees of
/// freedom (so two or three sessions a side give an honest, wide p, not a normal-theory one);
/// None when either side has fewer than 2 values.
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let ((ma, va), (mb, vb)) = (mean_variance(a), mean_variance(b));
    let (qa, qb) = (va / a.len() as f64, vb / b.len() as f64);
    let se = (qa + qb).sqrt();
    if se == 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb).abs() / se;
    let df = (qa + qb).powi(2) / (qa * qa / (a.len() - 1) as f64 + qb * qb / (b.len() - 1) as f64);
    Some(student_t_two_sided(t, df))
}

/// The mean and the sample variance (n - 1 in the denominator) of `s`, at least 2 values.
fn mean_variance(s: &[f64]) -> (f64, f64) {
    let n = s.len() as f64;
    let m = s.iter().sum::<f64>() / n;
    let v = s.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}

/// The pairs `(a[i], b[i])` that [`paired_ratio_p`] tests: both positive and finite, the
/// longer side's extra values left out. A figure, direction or count reported beside that
/// p-value comes from these same pairs, or it may say another thing than the test.
pub fn positive_pairs(a: &[f64], b: &[f64]) -> Vec<(f64, f64)> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| **x > 0.0 && **y > 0.0 && x.is_finite() && y.is_finite())
        .map(|(x, y)| (*x, *y))
        .collect()
}

/// Two-sided paired t-test p-value of the ratio of `a` to `b`, pair `i` being `(a[i], b[i])`
/// measured side by side in time (round `i` of an interleaved run): Student's t with n - 1
/// degrees of freedom on the log ratios `ln(a[i] / b[i])`, against 0.
///
/// A rate drifts with whatever else the hosts and the path carry, and by a factor more than by
/// an amount; a drift that both sides of a pair share cancels in their ratio. Samples taken
/// one family after the other (the intervals of one upload, then the other's) would be no
/// replicates: every interval of a run shares that run's conditions, so their spread
/// understates the run-to-run spread and the test grows confident of a difference that is the
/// moment's. None with fewer than 2 pairs of positive values (extra values of the longer side
/// are ignored).
pub fn paired_ratio_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let d: Vec<f64> = positive_pairs(a, b)
        .iter()
        .map(|(x, y)| (x / y).ln())
        .collect();
    if d.len() < 2 {
        return None;
    }
    let (mean, var) = mean_variance(&d);
    let n = d.len() as f64;
    let se = (var / n).sqrt();
    if se == 0.0 {
        return Some(if mean == 0.0 { 1.0 } else { 0.0 });
    }
    Some(student_t_two_sided(mean.abs() / se, n - 1.0))
}

/// P(|T| >= t) for Student's t with `df` degrees of freedom: I_{df/(df+t^2)}(df/2, 1/2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !(t.is_finite() && df.is_finite() && df > 0.0) {
        return if t.is_infinite() { 0.0 } else { 1.0 };
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// ln Gamma(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error about 1e-15).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Gamma(x) Gamma(1 - x) = pi / sin(pi x).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = C[0];
    for (i, c) in C.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz's method).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    // The fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_known_points() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }

    #[test]
    fn mann_whitney_separates_shifted_samples() {
        let a: Vec<f64> = (0..50).map(|i| 1.0 + (i % 10) as f64 * 0.01).collect();
        let b: Vec<f64> = a.iter().map(|x| x + 0.5).collect();
        assert!(mann_whitney_p(&a, &b).unwrap() < 1e-6);
        assert!(mann_whitney_p(&a, &a).unwrap() > 0.9);
        assert!(mann_whitney_p(&a[..2], &b).is_none());
        // U = 3 for n = 4/4: z = 5 / sqrt(12) = 1.443, two-sided p = 0.149.
        let p = mann_whitney_p(&[1.0, 2.0, 5.0, 7.0], &[3.0, 6.0, 8.0, 9.0]).unwrap();
        assert!((p - 0.149).abs() < 0.001, "{p}");
    }

    #[test]
    fn student_t_known_points() {
        // Two-sided p of t at df (tables): 1.0 @ 1 -> 0.5; 2.0 @ 2 -> 0.1835;
        // 2.228 @ 10 -> 0.05; 1.96 @ a large df -> 0.05.
        for (t, df, p) in [
            (1.0, 1.0, 0.5),
            (2.0, 2.0, 0.183_503),
            (2.228_139, 10.0, 0.05),
            (1.959_964, 1e6, 0.05),
        ] {
            let got = student_t_two_sided(t, df);
            assert!((got - p).abs() < 1e-4, "t {t} df {df}: {got} against {p}");
        }
        assert_eq!(student_t_two_sided(0.0, 3.0), 1.0);
        // Two values a side, well apart: a real but not astronomically small p.
        let p = welch_p(&[94.0, 95.5], &[18.7, 18.9]).unwrap();
        assert!(p > 1e-6 && p < 0.01, "{p}");
    }

    #[test]
    fn paired_ratio_test_known_point() {
        // ln ratios 0.1, 0.2, 0.3: mean 0.2, sd 0.1, t = 3.464 at df 2, two-sided p = 0.0742.
        let b = [1.0, 2.0, 3.0];
        let a: Vec<f64> = b
            .iter()
            .zip([0.1f64, 0.2, 0.3])
            .map(|(x, d)| x * d.exp())
            .collect();
        let p = paired_ratio_p(&a, &b).unwrap();
        assert!((p - 0.0742).abs() < 5e-4, "{p}");
        // A shared drift cancels: the same 2:1 ratio at any level is certain.
        assert_eq!(
            paired_ratio_p(&[2.0, 20.0, 200.0], &[1.0, 10.0, 100.0]),
            Some(0.0)
        );
        assert_eq!(paired_ratio_p(&[2.0], &[1.0]), None);
        assert_eq!(paired_ratio_p(&[2.0, 0.0], &[1.0, 1.0]), None);
    }

    #[test]
    fn welch_separates_shifted_means() {
        let a = [100.0, 101.0, 99.0, 100.0];
        let b = [80.0, 81.0, 79.0, 80.0];
        assert!(welch_p(&a, &b).unwrap() < 1e-6);
        assert!(welch_p(&a, &a).unwrap() > 0.9);
        assert_eq!(welch_p(&a[..1], &b), None);
        assert_eq!(welch_p(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch_p(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
    }
}
