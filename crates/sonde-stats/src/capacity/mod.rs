//! Path capacity by packet dispersion (RFC 5136's IP-layer capacity), pure: the trains as
//! received in, the estimate out.
//!
//! Two kinds of train, after pathrate (Dovrolis, Ramanathan, Moore) and ShaperProbe:
//! - **short trains** of back-to-back datagrams: each gives one dispersion rate ([`train`]);
//!   their histogram's local modes ([`histogram`]) hold the link's (peak) capacity. A token
//!   bucket lets a short train through at the link rate, so these never see a shaper.
//! - **long trains**, far longer than a bucket: a two-line fit of arrival time against bytes
//!   ([`shaper`]) gives the sustained (shaped) rate after the knee, the peak rate before it
//!   and the bucket depth. Their whole-train rate is the asymptotic dispersion rate (ADR),
//!   a lower bound of the capacity used to discard sub-capacity modes.
//!
//! Long trains are the slow part of a run; [`converge`] says when the ones received so far
//! agree well enough that more would not change the sustained rate, so a run can stop early.
//!
//! And one guard: when a long train arrives about as fast as the sender handed it to its
//! kernel, nothing on the path slowed it down; the figure is the sending host's speed (on
//! plain veth, for one), and the estimate says the host is the limit instead of a number.
//!
//! Every rate here is at the IP layer (IP header + UDP header + payload, as RFC 5136 counts);
//! [`Layers`] converts to the UDP payload and to Ethernet frames as Linux shapers count them.

pub mod converge;
pub mod departure;
pub mod histogram;
pub mod longest;
pub mod shaper;
pub mod sizes;
pub mod train;

use histogram::{cov, quantile, Histogram, Mode};
use serde::{Deserialize, Serialize};
use shaper::ShapeFit;
use train::{Train, TrainFigures};

/// Long trains arriving at no less than this share of their departure rate (the median of
/// the per-train ratios) were not slowed by the path. Below 1 because the receiving host's
/// own per-packet work slows a train a little (on loopback, 0.85-1.0 of the sender's pace).
pub const HOST_LIMIT_SHARE: f64 = 0.8;
/// A sustained rate below this share of the peak, with a knee in most long trains, is a
/// shaper's.
pub const SHAPED_SHARE: f64 = 0.9;
/// A knee counts as a token bucket only when the bucket it shows holds at least this many
/// of the train's datagrams: a smaller one is what any shaper's minimum burst (Linux tbf
/// takes two frames) and back-to-back arrival make anyway, and on such paths one train
/// shows it and the next does not, which would make the verdict a coin toss.
pub const MIN_BUCKET_DATAGRAMS: f64 = 4.0;
/// Bytes Linux tbf/htb add to the IP packet when charging it: the Ethernet header (no FCS,
/// preamble or inter-frame gap unless `overhead`/`linklayer` is configured).
pub const ETHERNET_HEADER: u32 = 14;

/// Sizes of one probe datagram at each layer, for converting rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    /// UDP payload bytes.
    pub payload: u32,
    /// IP packet bytes: payload + 8 (UDP) + 20 (IPv4) or 40 (IPv6).
    pub ip: u32,
}

impl Layers {
    /// The layers of a `payload`-byte datagram over IPv6 (`v6`) or IPv4.
    pub fn udp(payload: u32, v6: bool) -> Self {
        Self {
            payload,
            ip: payload + 8 + if v6 { 40 } else { 20 },
        }
    }

    /// An IP-layer rate as UDP payload bits/s.
    pub fn payload_bps(&self, ip_bps: f64) -> f64 {
        ip_bps * f64::from(self.payload) / f64::from(self.ip.max(1))
    }

    /// An IP-layer rate as the bits/s a Linux shaper charges (IP + Ethernet header).
    pub fn frame_bps(&self, ip_bps: f64) -> f64 {
        ip_bps * f64::from(self.ip + ETHERNET_HEADER) / f64::from(self.ip.max(1))
    }
}

/// Counts of one kind of train.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TrainCounts {
    pub trains: u32,
    /// Every datagram arrived, in order.
    pub clean: u32,
    /// Stamped in batches by the receiving host.
    pub coalesced: u32,
    /// Gave a rate.
    pub used: u32,
}

/// What limits the path, as far as the trains tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Long trains arrived as fast as they left: the hosts, not the path, set the rate.
    HostLimited,
    /// A token bucket: a peak rate, a lower sustained rate and a bucket.
    Shaped,
    /// One rate throughout: the path's capacity.
    Link,
    /// Too few usable trains.
    Unmeasured,
}

impl Verdict {
    /// The name as the document spells it (`"host-limited"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::HostLimited => "host-limited",
            Verdict::Shaped => "shaped",
            Verdict::Link => "link",
            Verdict::Unmeasured => "unmeasured",
        }
    }
}

/// The capacity estimate (every rate IP bits/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub verdict: Verdict,
    pub short: TrainCounts,
    pub long: TrainCounts,
    /// Dispersion rates of the clean short trains.
    #[serde(default)]
    pub short_rates: Vec<f64>,
    pub histogram: Option<Histogram>,
    /// Coefficient of variation of `short_rates`.
    pub cov: Option<f64>,
    /// The mode taken as the peak capacity: the strongest one reaching the ADR (pathrate's
    /// rule), else the strongest. The capacity is reported as this bin's range.
    pub peak: Option<Mode>,
    /// Median whole-train rate of the long trains (asymptotic dispersion rate).
    pub adr_bps: Option<f64>,
    /// Median rate after the knee (or of the whole fit) of the long trains, and their range.
    pub sustained_bps: Option<f64>,
    pub sustained_min_bps: Option<f64>,
    pub sustained_max_bps: Option<f64>,
    /// Median bucket depth of the long trains that showed a knee, IP bytes.
    pub bucket_bytes: Option<f64>,
    /// Long trains with a knee holding a bucket of at least [`MIN_BUCKET_DATAGRAMS`].
    pub knees: u32,
    /// Median departure rate of the long trains at the sender.
    pub departure_bps: Option<f64>,
    /// Median over the long trains of arrival rate / departure rate.
    pub arrival_share: Option<f64>,
    #[serde(default)]
    pub fits: Vec<ShapeFit>,
}

fn median(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    quantile(v, 0.5)
}

fn count(figs: &[TrainFigures]) -> TrainCounts {
    TrainCounts {
        trains: figs.len() as u32,
        clean: figs.iter().filter(|f| f.clean).count() as u32,
        coalesced: figs.iter().filter(|f| f.coalesced).count() as u32,
        used: 0,
    }
}

/// `f`, the fit of `t`, without its knee when the bucket holds fewer than
/// [`MIN_BUCKET_DATAGRAMS`] of the train's datagrams: one line, the tail rate as fitted.
pub fn bucket_knee(t: &Train, f: ShapeFit) -> ShapeFit {
    let datagram = t.arrivals.first().map_or(0.0, |a| f64::from(a.ip_bytes));
    if f.bucket_bytes
        .is_some_and(|b| b >= MIN_BUCKET_DATAGRAMS * datagram)
    {
        return f;
    }
    ShapeFit {
        head_bps: None,
        knee_bytes: None,
        bucket_bytes: None,
        ..f
    }
}

/// The estimate from the short and the long trains.
pub fn estimate(short: &[Train], long: &[Train]) -> Estimate {
    let sf: Vec<TrainFigures> = short.iter().map(Train::figures).collect();
    let mut sc = count(&sf);
    let short_rates: Vec<f64> = sf
        .iter()
        .filter(|f| f.clean)
        .filter_map(|f| f.rx_bps)
        .collect();
    sc.used = short_rates.len() as u32;
    let lf: Vec<TrainFigures> = long.iter().map(Train::figures).collect();
    let mut lc = count(&lf);
    let fits: Vec<ShapeFit> = long
        .iter()
        .filter_map(|t| shaper::fit(&t.arrivals).map(|f| bucket_knee(t, f)))
        .collect();
    lc.used = fits.len() as u32;
    let adr_bps = median(&mut fits.iter().map(|f| f.whole_bps).collect::<Vec<_>>());
    let mut tails: Vec<f64> = fits.iter().map(|f| f.tail_bps).collect();
    let sustained_bps = median(&mut tails);
    let knees = fits.iter().filter(|f| f.head_bps.is_some()).count() as u32;
    let bucket_bytes = median(
        &mut fits
            .iter()
            .filter_map(|f| f.bucket_bytes)
            .collect::<Vec<_>>(),
    );
    let departure_bps = median(&mut lf.iter().filter_map(|f| f.tx_bps).collect::<Vec<_>>());
    let arrival_share = median(
        &mut lf
            .iter()
            .filter_map(|f| Some(f.rx_bps? / f.tx_bps.filter(|&t| t > 0.0)?))
            .collect::<Vec<_>>(),
    );
    let histogram = Histogram::of(&short_rates);
    let peak = histogram.as_ref().and_then(|h| {
        let floor = adr_bps.unwrap_or(0.0);
        h.modes
            .iter()
            .find(|m| m.high_bps >= floor)
            .or(h.modes.first())
            .copied()
    });
    let verdict = match (adr_bps, sustained_bps) {
        (Some(adr), Some(sus)) => {
            let head = peak.map(|m| m.center_bps()).unwrap_or(adr);
            if arrival_share.is_some_and(|r| r >= HOST_LIMIT_SHARE) {
                Verdict::HostLimited
            } else if 2 * knees > lc.used && sus < SHAPED_SHARE * head {
                Verdict::Shaped
            } else {
                Verdict::Link
            }
        }
        _ => Verdict::Unmeasured,
    };
    Estimate {
        verdict,
        short: sc,
        long: lc,
        cov: cov(&short_rates),
        short_rates,
        histogram,
        peak,
        adr_bps,
        sustained_bps,
        sustained_min_bps: tails.first().copied(),
        sustained_max_bps: tails.last().copied(),
        bucket_bytes: if verdict == Verdict::Shaped {
            bucket_bytes
        } else {
            None
        },
        knees,
        departure_bps,
        arrival_share,
        fits,
    }
}

#[cfg(test)]
mod tests {
    use super::train::Arrival;
    use super::*;

    /// A train of `n` 1500-byte datagrams: the first `head` arrive every `peak_ns`, the
    /// rest every `gap_ns`; sent in batches of 64 every `tx_gap_ns` per datagram.
    fn train(id: u32, n: u32, head: u32, peak_ns: u64, gap_ns: u64, tx_ns: u64) -> Train {
        let mut t = 1_000_000;
        let arrivals = (0..n)
            .map(|i| {
                if i > 0 {
                    t += if i < head { peak_ns } else { gap_ns };
                }
                Arrival {
                    seq: i,
                    ip_bytes: 1500,
                    rx_ns: t,
                    tx_ns: u64::from(i / 64 * 64) * tx_ns,
                }
            })
            .collect();
        Train {
            id,
            sent: n,
            arrivals,
        }
    }

    #[test]
    fn layers_convert_as_tbf_counts() {
        let l = Layers::udp(1472, false);
        assert_eq!(l.ip, 1500);
        // A 100 Mbit/s tbf charges 1514-byte frames: 99.08 Mbit/s of IP, 97.23 of payload.
        let ip = 100e6 * 1500.0 / 1514.0;
        assert!((l.frame_bps(ip) - 100e6).abs() < 1.0);
        assert!((l.payload_bps(ip) / 1e6 - 97.226).abs() < 0.001);
        assert_eq!(Layers::udp(1452, true).ip, 1500);
    }

    #[test]
    fn a_shaped_path_reports_peak_sustained_and_bucket() {
        // Link 1 Gbit/s (12 µs per packet), tbf 100 Mbit/s (120 µs) after 60 packets;
        // the sender hands packets over at 5 Gbit/s (2.4 µs each).
        let short: Vec<Train> = (0..20)
            .map(|i| train(i, 10, 10, 12_000, 0, 2_400))
            .collect();
        let long: Vec<Train> = (0..5)
            .map(|i| train(i, 500, 60, 12_000, 120_000, 2_400))
            .collect();
        let e = estimate(&short, &long);
        assert_eq!(e.verdict, Verdict::Shaped, "{e:?}");
        let peak = e.peak.unwrap();
        assert!(peak.low_bps <= 1e9 && 1e9 <= peak.high_bps, "{peak:?}");
        assert!((e.sustained_bps.unwrap() / 100e6 - 1.0).abs() < 1e-3);
        // 59 packets × 1500 × 0.9 beyond the shaped rate.
        let b = e.bucket_bytes.unwrap();
        assert!((b / (59.0 * 1500.0 * 0.9) - 1.0).abs() < 0.03, "{b}");
        assert_eq!((e.short.used, e.long.used, e.knees), (20, 5, 5));
        assert_eq!(e.cov, Some(0.0));
    }

    #[test]
    fn trains_as_fast_as_the_sender_mean_the_host_is_the_limit() {
        // Arrivals every 2.4 µs, as they left: nothing on the path slowed them.
        let short: Vec<Train> = (0..10).map(|i| train(i, 10, 0, 0, 2_400, 2_400)).collect();
        let long: Vec<Train> = (0..5).map(|i| train(i, 500, 0, 0, 2_400, 2_400)).collect();
        assert_eq!(estimate(&short, &long).verdict, Verdict::HostLimited);
    }

    #[test]
    fn a_plain_link_is_one_rate_and_nothing_is_unmeasured() {
        let short: Vec<Train> = (0..10)
            .map(|i| train(i, 10, 0, 0, 120_000, 2_400))
            .collect();
        let long: Vec<Train> = (0..5)
            .map(|i| train(i, 500, 0, 0, 120_000, 2_400))
            .collect();
        let e = estimate(&short, &long);
        assert_eq!(e.verdict, Verdict::Link);
        assert_eq!(e.bucket_bytes, None);
        assert!((e.sustained_bps.unwrap() / 100e6 - 1.0).abs() < 1e-6);
        assert_eq!(estimate(&short, &[]).verdict, Verdict::Unmeasured);
        // A knee of three datagrams (a tbf's minimum burst) is no token bucket.
        let long: Vec<Train> = (0..5)
            .map(|i| train(i, 500, 3, 12_000, 120_000, 2_400))
            .collect();
        let e = estimate(&short, &long);
        assert_eq!(
            (e.verdict, e.knees, e.bucket_bytes),
            (Verdict::Link, 0, None)
        );
        assert!((e.sustained_bps.unwrap() / 100e6 - 1.0).abs() < 1e-3);
    }
}
