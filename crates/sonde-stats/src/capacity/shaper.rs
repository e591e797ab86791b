//! A long train through a token bucket: the head leaves at the peak (link) rate while the
//! bucket lasts, the tail at the shaped rate. Fitting arrival time against bytes delivered
//! with two straight lines (least squares, the knee where their total error is least) gives
//! both rates and the bucket depth: bytes delivered by the knee beyond what the shaped rate
//! alone would have delivered, `b ≈ B_knee − r · t_knee` (ShaperProbe's level shift,
//! Kanuparthy & Dovrolis, IMC 2011, as a regression). Only received datagrams count, so a
//! loss in the shaper's queue does not bias the tail rate.

use super::train::Arrival;
use serde::{Deserialize, Serialize};

/// Fewest points on either side of a knee.
pub const MIN_SEGMENT: usize = 4;
/// A knee counts when the head is at least this much faster than the tail...
pub const KNEE_RATE_RATIO: f64 = 1.2;
/// ... and two lines leave at most this share of one line's squared error.
pub const KNEE_ERROR_SHARE: f64 = 0.5;

/// What one long train says about a shaper.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ShapeFit {
    /// Rate of the train as a whole (first to last arrival), IP bits/s: the asymptotic
    /// dispersion rate when the train is long.
    pub whole_bps: f64,
    /// Rate after the knee, or of the one line when there is none, IP bits/s.
    pub tail_bps: f64,
    /// Rate before the knee, IP bits/s (None without a knee).
    pub head_bps: Option<f64>,
    /// Bytes delivered (after the first datagram) by the knee, and the bucket depth
    /// estimate in IP bytes (None without a knee).
    pub knee_bytes: Option<u64>,
    pub bucket_bytes: Option<f64>,
}

/// Least-squares line through centred points: (slope, intercept, squared error).
#[derive(Default, Clone, Copy)]
struct Sums {
    n: f64,
    x: f64,
    y: f64,
    xx: f64,
    xy: f64,
    yy: f64,
}

impl Sums {
    fn add(mut self, x: f64, y: f64) -> Self {
        self.n += 1.0;
        self.x += x;
        self.y += y;
        self.xx += x * x;
        self.xy += x * y;
        self.yy += y * y;
        self
    }

    fn minus(self, o: Self) -> Self {
        Self {
            n: self.n - o.n,
            x: self.x - o.x,
            y: self.y - o.y,
            xx: self.xx - o.xx,
            xy: self.xy - o.xy,
            yy: self.yy - o.yy,
        }
    }

    /// (slope, intercept, squared error); None when x does not vary.
    fn line(self) -> Option<(f64, f64, f64)> {
        let sxx = self.xx - self.x * self.x / self.n;
        let sxy = self.xy - self.x * self.y / self.n;
        let syy = self.yy - self.y * self.y / self.n;
        if self.n < 2.0 || sxx <= 0.0 {
            return None;
        }
        let slope = sxy / sxx;
        let icpt = (self.y - slope * self.x) / self.n;
        Some((slope, icpt, (syy - slope * sxy).max(0.0)))
    }
}

/// The best two-line split so far.
#[derive(Clone, Copy)]
struct Split {
    err: f64,
    knee: usize,
    head: f64,
    tail: f64,
    tail_icpt: f64,
}

/// Fits `arrivals` (in arrival order); None with fewer than `2 × MIN_SEGMENT` of them or no
/// time between the first and the last.
pub fn fit(arrivals: &[Arrival]) -> Option<ShapeFit> {
    let n = arrivals.len();
    if n < 2 * MIN_SEGMENT {
        return None;
    }
    let pts = delivery_points(arrivals)?;
    let (xl, yl) = *pts.last()?;
    if yl <= 0.0 {
        return None;
    }
    let whole_bps = xl * 8e9 / yl;
    // Centre the points so the sums stay small next to f64's precision.
    let (mx, my) = (xl / 2.0, yl / 2.0);
    let prefix = prefix_sums(&pts, mx, my);
    let all = *prefix.last()?;
    let (s1, _, e1) = all.line()?;
    if s1 <= 0.0 {
        return None;
    }
    let one = ShapeFit {
        whole_bps,
        tail_bps: 8e9 / s1,
        head_bps: None,
        knee_bytes: None,
        bucket_bytes: None,
    };
    let Some(Split {
        err: e2,
        knee: k,
        head: sh,
        tail: st,
        tail_icpt: it,
    }) = best_split(&prefix)
    else {
        return Some(one);
    };
    // Slopes are ns per byte: the rate is 8e9 / slope bits/s.
    if sh <= 0.0 || st <= 0.0 || st < KNEE_RATE_RATIO * sh || e2 > KNEE_ERROR_SHARE * e1 {
        return Some(one);
    }
    // The tail line in uncentred units: y = st * x + (it + my - st * mx); where it meets
    // y = 0 is the bytes delivered beyond the shaped rate.
    let icpt = it + my - st * mx;
    let knee_bytes = pts.get(k).map(|p| p.0 as u64);
    Some(ShapeFit {
        whole_bps,
        tail_bps: 8e9 / st,
        head_bps: Some(8e9 / sh),
        knee_bytes,
        bucket_bytes: Some((-icpt / st).max(0.0)),
    })
}

/// One point per arrival: (bytes delivered after the first datagram, ns since the first
/// arrival). None for no arrivals.
fn delivery_points(arrivals: &[Arrival]) -> Option<Vec<(f64, f64)>> {
    let t0 = arrivals.first()?.rx_ns;
    let mut pts = Vec::with_capacity(arrivals.len());
    let mut bytes = 0u64;
    for (i, a) in arrivals.iter().enumerate() {
        if i > 0 {
            bytes += u64::from(a.ip_bytes);
        }
        pts.push((bytes as f64, a.rx_ns.saturating_sub(t0) as f64));
    }
    Some(pts)
}

/// The running sums of the points centred on (`mx`, `my`): entry `i` sums points `0..i`, so
/// the last sums them all.
fn prefix_sums(pts: &[(f64, f64)], mx: f64, my: f64) -> Vec<Sums> {
    let mut prefix = Vec::with_capacity(pts.len() + 1);
    let mut sum = Sums::default();
    prefix.push(sum);
    for &(x, y) in pts {
        sum = sum.add(x - mx, y - my);
        prefix.push(sum);
    }
    prefix
}

/// The two-line split of least total squared error, each side at least [`MIN_SEGMENT`]
/// points; None when no split has two lines. `prefix` is [`prefix_sums`] of the points.
fn best_split(prefix: &[Sums]) -> Option<Split> {
    let all = *prefix.last()?;
    let n = prefix.len() - 1;
    // Head = points 0..=k, tail = k..n (the knee point in both).
    let mut best: Option<Split> = None;
    for k in (MIN_SEGMENT - 1)..=n.checked_sub(MIN_SEGMENT)? {
        let head = prefix[k + 1];
        let tail = all.minus(prefix[k]);
        let (Some((sh, _, eh)), Some((st, it, et))) = (head.line(), tail.line()) else {
            continue;
        };
        if !best.is_some_and(|b| b.err <= eh + et) {
            best = Some(Split {
                err: eh + et,
                knee: k,
                head: sh,
                tail: st,
                tail_icpt: it,
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1500-byte datagrams: the first `head` at `peak` bit/s, the rest at `rate`.
    fn shaped(n: usize, head: usize, peak: f64, rate: f64) -> Vec<Arrival> {
        let mut t = 0.0;
        (0..n)
            .map(|i| {
                if i > 0 {
                    t += 1500.0 * 8e9 / if i < head { peak } else { rate };
                }
                Arrival {
                    seq: i as u32,
                    ip_bytes: 1500,
                    rx_ns: t as u64,
                    tx_ns: 0,
                }
            })
            .collect()
    }

    #[test]
    fn a_token_bucket_shows_peak_rate_and_depth() {
        // 1 Gbit/s for 100 packets, then 100 Mbit/s: the bucket is what the head delivered
        // beyond 100 Mbit/s: 99 × 1500 × (1 − 0.1) = 133 650 bytes.
        let f = fit(&shaped(600, 100, 1e9, 100e6)).unwrap();
        assert!((f.tail_bps / 100e6 - 1.0).abs() < 1e-3, "{f:?}");
        assert!((f.head_bps.unwrap() / 1e9 - 1.0).abs() < 0.01, "{f:?}");
        let b = f.bucket_bytes.unwrap();
        assert!((b / 133_650.0 - 1.0).abs() < 0.02, "{b}");
        // The whole-train rate is biased high by the bucket.
        assert!(f.whole_bps > 1.1 * f.tail_bps);
    }

    #[test]
    fn a_plain_link_has_no_knee() {
        let f = fit(&shaped(500, 0, 1e9, 10e6)).unwrap();
        assert!((f.tail_bps / 10e6 - 1.0).abs() < 1e-3, "{f:?}");
        assert_eq!(f.head_bps, None);
        assert_eq!(f.bucket_bytes, None);
        assert!(fit(&shaped(5, 0, 1e9, 10e6)).is_none());
    }
}
