//! `sonde compare-ip -J`: IPv4 against IPv6 to one server. Each family's overview, the
//! comparisons of latency and throughput, and with their flags the latency per probe size,
//! the BTC sessions ([`crate::btc`]) and the path capacity ([`crate::capacity`]) per family;
//! then the verdict with every measure it weighed.

use serde::{Deserialize, Serialize};

use crate::btc::{BtcSession, BtcStats};
use crate::latency::DelayStats;
use crate::Envelope;

/// The runtime's own names, spelled the same in the document.
pub use sonde_stats::verdict::FamilyChoice;
pub use sonde_stats::verdict::Measure;

/// Each family's figures, the comparisons, the latency over time and each family's capacity
/// are the runtime's own results.
pub use sonde_stats::latency::compare::{Better, Comparison};
pub use sonde_stats::latency::model::{CapacityFamily, FamilyResult};
pub use sonde_stats::latency::timeline::LatencyBin;

/// The whole document. Both families are required (they are what makes it a compare-ip
/// document); the verdict is absent only in documents from before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareIpDocument {
    /// `"sonde 0.1.0"`.
    #[serde(default)]
    pub version: Option<String>,
    /// The host as the user typed it.
    #[serde(default)]
    pub target: Option<String>,
    pub ipv4: FamilyResult,
    pub ipv6: FamilyResult,
    /// Median RTT; A = IPv4, B = IPv6.
    #[serde(default)]
    pub latency: Option<Comparison>,
    /// Mean interval throughput; A = IPv4, B = IPv6.
    #[serde(default)]
    pub throughput: Option<Comparison>,
    /// With `--sizes`: seconds between probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub every_secs: Option<f64>,
    /// With `--sizes`: a row per family and size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<SizeRow>,
    /// Each family's probes along the run, in spans of whole seconds (see [`LatencyBin`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_over_time: Vec<LatencyBin>,
    /// With `--btc`: each family's sessions, IPv4 first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub btc: Option<[BtcFamily; 2]>,
    /// With `--capacity`: each family's path capacity, IPv4 first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<[CapacityFamily; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// Latency of one probe size over one family. Its counts and loss are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeRow {
    /// "IPv4" or "IPv6".
    pub family: String,
    /// UDP payload bytes of each probe.
    pub payload_bytes: u32,
    /// IP packet bytes of each probe.
    #[serde(default)]
    pub ip_bytes: Option<u32>,
    pub sent: u64,
    pub received: u64,
    #[serde(default)]
    pub lost: u64,
    pub loss_percent: f64,
    /// Probes the peer's host refused ("port unreachable"); lost too.
    #[serde(default)]
    pub refused: u64,
    /// None when nothing was answered.
    #[serde(default)]
    pub rtt: Option<DelayStats>,
    #[serde(default)]
    pub error: Option<String>,
}

/// One family's BTC sessions and their statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BtcFamily {
    pub family: String,
    #[serde(default)]
    pub address: Option<String>,
    #[serde(default)]
    pub sessions: Vec<BtcSession>,
    /// Goodput over the sessions, TCP payload bit/s.
    #[serde(default)]
    pub summary: Option<BtcStats>,
    #[serde(default)]
    pub error: Option<String>,
}

/// One measure compared between the families. Its outcome is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasureVerdict {
    pub measure: Measure,
    /// Unit of `ipv4` and `ipv6`.
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub ipv4: Option<f64>,
    #[serde(default)]
    pub ipv6: Option<f64>,
    pub better: FamilyChoice,
    /// |IPv4 - IPv6| / the larger of the two, percent.
    pub margin_pct: f64,
    /// Two-sided p-value of `test`, when it gives one.
    #[serde(default)]
    pub p_value: Option<f64>,
    /// Samples behind each side.
    #[serde(default)]
    pub samples_ipv4: u64,
    #[serde(default)]
    pub samples_ipv6: u64,
    pub significant: bool,
    /// The test that judged the difference ("mann-whitney-u", ...).
    #[serde(default)]
    pub test: Option<String>,
    /// Why the measure could not judge, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which family is better, on which measure, by how much and how sure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// The verdict's own schema version.
    #[serde(default)]
    pub schema: u32,
    pub better: FamilyChoice,
    /// The deciding measure; None with `neither`.
    #[serde(default)]
    pub measure: Option<Measure>,
    /// The deciding measure's margin, percent.
    pub margin_pct: f64,
    /// 1 - p of the deciding measure's test.
    #[serde(default)]
    pub confidence: Option<f64>,
    #[serde(default)]
    pub per_measure: Vec<MeasureVerdict>,
    /// One sentence for people.
    #[serde(default)]
    pub summary: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::latency::tests::delay;
    use sonde_stats::capacity::Verdict as CapacityVerdict;

    fn family(name: &str) -> FamilyResult {
        FamilyResult {
            family: name.into(),
            address: Some("::1".into()),
            rtt: Some(delay(0.02)),
            loss_percent: Some(0.0),
            throughput_bps: Some(2e10),
            error: None,
        }
    }

    fn document() -> CompareIpDocument {
        let btc = |f: &str| BtcFamily {
            family: f.into(),
            address: None,
            sessions: vec![],
            summary: Some(BtcStats {
                sessions: 2,
                min_bps: 1e8,
                max_bps: 3e8,
                mean_bps: 2e8,
                median_bps: 2e8,
                stddev_bps: None,
                variance: None,
            }),
            error: None,
        };
        let capacity = |f: &str| CapacityFamily {
            family: f.into(),
            address: None,
            verdict: Some(CapacityVerdict::HostLimited),
            sustained_bps: Some(9e9),
            sustained_min_bps: Some(8e9),
            sustained_max_bps: Some(1e10),
            peak_low_bps: None,
            peak_high_bps: None,
            long_trains_used: 5,
            payload_bytes: 1472,
            seconds: 0.5,
            error: None,
        };
        CompareIpDocument {
            version: Some("sonde test".into()),
            target: Some("localhost".into()),
            ipv4: family("IPv4"),
            ipv6: family("IPv6"),
            latency: Some(Comparison {
                better: Better::Neither,
                difference_percent: 12.8,
                p_value: Some(0.3),
                significant: false,
            }),
            throughput: None,
            every_secs: Some(0.1),
            sizes: vec![SizeRow {
                family: "IPv4".into(),
                payload_bytes: 56,
                ip_bytes: Some(84),
                sent: 3,
                received: 3,
                lost: 0,
                loss_percent: 0.0,
                refused: 0,
                rtt: Some(delay(0.02)),
                error: None,
            }],
            latency_over_time: vec![LatencyBin {
                family: "IPv6".into(),
                start_unix: 1.7e9,
                secs: 1.0,
                sent: 2,
                answered: 1,
                median_ms: Some(0.5),
            }],
            btc: Some([btc("IPv4"), btc("IPv6")]),
            capacity: Some([capacity("IPv4"), capacity("IPv6")]),
            verdict: Some(Verdict {
                schema: 1,
                better: FamilyChoice::Ipv6,
                measure: Some(Measure::BtcMean),
                margin_pct: 50.0,
                confidence: Some(0.99),
                per_measure: vec![MeasureVerdict {
                    measure: Measure::BtcMean,
                    unit: "bit/s (TCP payload)".into(),
                    ipv4: Some(1e6),
                    ipv6: Some(2e6),
                    better: FamilyChoice::Ipv6,
                    margin_pct: 50.0,
                    p_value: Some(0.01),
                    samples_ipv4: 2,
                    samples_ipv6: 2,
                    significant: true,
                    test: Some("welch-t".into()),
                    note: None,
                }],
                summary: Some("IPv6 is better".into()),
            }),
            envelope: Envelope::new("compare-ip", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = document();
        let v = crate::to_value(&doc);
        assert_eq!(v["verdict"]["per_measure"][0]["measure"], "btc_mean");
        assert_eq!(v["capacity"][1]["verdict"], "host-limited");
        assert!(v["verdict"]["per_measure"][0].get("note").is_none());
        let back: CompareIpDocument = crate::from_value("compare-ip", v).unwrap();
        assert_eq!(back, doc);
        let bare = CompareIpDocument {
            sizes: vec![],
            latency_over_time: vec![],
            btc: None,
            every_secs: None,
            ..document()
        };
        let v = crate::to_value(&bare);
        assert!(v.get("sizes").is_none() && v.get("btc").is_none(), "{v}");
        assert!(v.get("latency_over_time").is_none(), "{v}");
    }

    #[test]
    fn a_size_row_without_its_loss_is_refused_naming_the_field() {
        let mut v = crate::to_value(&document());
        if let Some(row) = v["sizes"][0].as_object_mut() {
            row.remove("loss_percent");
        }
        let e = crate::from_value::<CompareIpDocument>("compare-ip", v).unwrap_err();
        assert!(
            e.to_string().starts_with("not a valid compare-ip document")
                && e.to_string().contains("loss_percent"),
            "{e}"
        );
    }
}
