//! Bulk transfer capacity (RFC 3148): what one TCP connection moves, measured as a series of
//! sessions of growing size, with running statistics across the sessions. Pure: one session's
//! figures in, the series' summary out.

use serde::{Deserialize, Serialize};

/// One BTC session: one TCP transfer of `size` bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcSession {
    /// 1-based, in the order run.
    pub index: u32,
    /// "IPv4" or "IPv6".
    pub family: String,
    /// Bytes asked for (`-n`; 0 in documents from before it was recorded).
    #[serde(default)]
    pub size: u64,
    /// Bytes the receiver counted.
    pub bytes: u64,
    /// From the first byte sent to the last byte received.
    pub seconds: f64,
    /// TCP payload bits per second at the receiver: the BTC of this session.
    pub goodput_bps: f64,
    pub retransmits: u64,
    /// Largest congestion window (bytes) and mean smoothed RTT (µs) from TCP_INFO.
    pub max_cwnd: Option<u64>,
    pub mean_rtt_us: Option<u32>,
    /// The sender's congestion control.
    pub congestion: Option<String>,
    /// When the session started, seconds since the Unix epoch (0 in documents from before
    /// it was recorded).
    #[serde(default)]
    pub start_unix_s: f64,
}

/// Running statistics of the sessions' goodput (bits/s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BtcStats {
    pub sessions: usize,
    pub min_bps: f64,
    pub max_bps: f64,
    pub mean_bps: f64,
    pub median_bps: f64,
    /// Sample standard deviation (n - 1 in the divisor; 0 for a single session), bits/s.
    #[serde(default)]
    pub stddev_bps: f64,
    /// Sample variance, (bits/s)^2: the square of `stddev_bps`.
    #[serde(default)]
    pub variance: f64,
}

/// A session that did not give figures (it could not connect, the server refused, the
/// transfer broke): recorded with its error, and the run goes on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcFailure {
    /// 1-based, in the same numbering as the sessions that succeeded.
    pub index: u32,
    /// The family asked for: "IPv4", "IPv6" or "any".
    pub family: String,
    #[serde(default)]
    pub size: u64,
    /// Seconds since the Unix epoch (0 in documents from before it was recorded).
    #[serde(default)]
    pub start_unix_s: f64,
    pub error: String,
}

impl BtcStats {
    /// The statistics of `sessions`' goodput; None without sessions.
    pub fn of<'a>(sessions: impl IntoIterator<Item = &'a BtcSession>) -> Option<Self> {
        let mut v: Vec<f64> = sessions.into_iter().map(|s| s.goodput_bps).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        let mean = v.iter().sum::<f64>() / n as f64;
        let variance = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Self {
            sessions: n,
            min_bps: v[0],
            max_bps: v[n - 1],
            mean_bps: mean,
            median_bps: median,
            stddev_bps: variance.sqrt(),
            variance,
        })
    }
}

/// The default session sizes: 6 MB, doubling, up to and including `max` (at least one).
pub fn doubling_sizes(first: u64, max: u64) -> Vec<u64> {
    let mut sizes = vec![first.max(1)];
    while let Some(next) = sizes
        .last()
        .and_then(|s| s.checked_mul(2))
        .filter(|&n| n <= max)
    {
        sizes.push(next);
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(goodput_bps: f64) -> BtcSession {
        BtcSession {
            index: 1,
            family: "IPv4".into(),
            size: 1,
            bytes: 1,
            seconds: 1.0,
            goodput_bps,
            retransmits: 0,
            max_cwnd: None,
            mean_rtt_us: None,
            congestion: None,
            start_unix_s: 0.0,
        }
    }

    #[test]
    fn running_statistics_of_goodput() {
        assert_eq!(BtcStats::of(&[]), None);
        let s: Vec<BtcSession> = [90e6, 95e6, 80e6, 96e6].map(session).to_vec();
        let st = BtcStats::of(&s).unwrap();
        assert_eq!(st.sessions, 4);
        assert_eq!((st.min_bps, st.max_bps), (80e6, 96e6));
        assert!((st.mean_bps - 90.25e6).abs() < 1.0);
        assert!((st.median_bps - 92.5e6).abs() < 1.0);
        let odd = BtcStats::of(&s[..3]).unwrap();
        assert_eq!(odd.median_bps, 90e6);
    }

    #[test]
    fn spread_is_the_sample_variance_and_its_root() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, 32 / 7.
        let s: Vec<BtcSession> = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]
            .map(session)
            .to_vec();
        let st = BtcStats::of(&s).unwrap();
        assert!((st.variance - 32.0 / 7.0).abs() < 1e-12, "{st:?}");
        assert!((st.stddev_bps - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // 10 and 14 Mbit/s: mean 12, variance (4 + 4) / 1 (Mbit/s)^2, deviation 2.83 Mbit/s.
        let two = BtcStats::of(&[session(10e6), session(14e6)]).unwrap();
        assert!((two.variance - 8e12).abs() < 1.0);
        assert!((two.stddev_bps - 2.828_427e6).abs() < 1.0);
        let one = BtcStats::of(&[session(10e6)]).unwrap();
        assert_eq!((one.variance, one.stddev_bps), (0.0, 0.0));
    }

    #[test]
    fn sizes_double_up_to_the_cap() {
        let mb = 1_000_000;
        assert_eq!(
            doubling_sizes(6 * mb, 48 * mb),
            vec![6 * mb, 12 * mb, 24 * mb, 48 * mb]
        );
        assert_eq!(doubling_sizes(6 * mb, 1), vec![6 * mb]);
        assert_eq!(doubling_sizes(u64::MAX, u64::MAX), vec![u64::MAX]);
    }
}
