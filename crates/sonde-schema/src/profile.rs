//! `sonde profile run -J`: a traffic profile's run, per stream: what was sent and arrived,
//! its bursts that were incomplete or late, and the one-way delays.
//!
//! The figures are the run's report as the profile crate defines it, spelled here field for
//! field (`direction` and the delay `basis` as the strings written: `"to-server"`,
//! `"above-minimum"`, ...). A stream's counts the report shows (`sent`, `received`, `lost`)
//! and its name and direction are required; the plan and the delay figures may be missing.
//! A run that failed before it measured writes the envelope alone (no `profile`); that is
//! not a profile document.

use serde::{Deserialize, Serialize};

use crate::Envelope;

/// The whole document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileDocument {
    /// The profile's name: what tells the kind apart.
    pub profile: String,
    /// Seconds the profile was planned to run.
    #[serde(default)]
    pub planned_s: Option<f64>,
    /// Seconds it ran.
    #[serde(default)]
    pub ran_s: Option<f64>,
    #[serde(default)]
    pub clock_synced: bool,
    /// The clock offset the delays were corrected by, when it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset: Option<ClockOffset>,
    /// Why the run ended early (also the envelope's `error`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_early: Option<String>,
    #[serde(default)]
    pub streams: Vec<ProfileStream>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// The two ends' clock offset, from round-trip probes before the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// Server clock minus client clock.
    pub offset_ns: i64,
    pub uncertainty_ns: i64,
    pub probes: u32,
}

/// One stream's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileStream {
    #[serde(default)]
    pub id: u32,
    pub name: String,
    /// `"to-server"` or `"from-server"`.
    pub direction: String,
    /// The plan: datagram bytes, datagrams per burst, ms between bursts.
    #[serde(default)]
    pub size: Option<u32>,
    #[serde(default)]
    pub burst: Option<u32>,
    /// The plan's time between the datagrams of a burst, ms (0: back to back; absent from
    /// older runs).
    #[serde(default)]
    pub gap_ms: Option<f64>,
    #[serde(default)]
    pub period_ms: Option<f64>,
    /// When the first burst was due, ms after the start (0 from older peers).
    #[serde(default)]
    pub offset_ms: f64,
    #[serde(default)]
    pub late_ms: Option<f64>,
    pub sent: u64,
    pub received: u64,
    pub lost: u64,
    #[serde(default)]
    pub late: Option<u64>,
    #[serde(default)]
    pub out_of_order: Option<u64>,
    #[serde(default)]
    pub duplicates: Option<u64>,
    #[serde(default)]
    pub foreign: Option<u64>,
    /// null when no delay was kept.
    #[serde(default)]
    pub delay: Option<Delay>,
    /// Measured: the mean time between consecutive arrivals of one burst, per sequence step,
    /// ms; null when no two datagrams of one burst arrived in order (absent from older runs).
    #[serde(default)]
    pub burst_spacing_ms: Option<f64>,
    #[serde(default)]
    pub bursts_sent: Option<u64>,
    #[serde(default)]
    pub bursts_complete: Option<u64>,
    #[serde(default)]
    pub bursts_late: Option<u64>,
    /// Incomplete or late bursts, in order.
    #[serde(default)]
    pub exceptions: Vec<Burst>,
    /// Those left out of `exceptions` (the run's cap).
    #[serde(default)]
    pub exceptions_dropped: u64,
}

/// One-way delays of a stream's datagrams, ms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delay {
    /// `"synced"`, `"above-minimum"` or `"offset-estimated"`.
    pub basis: String,
    #[serde(default)]
    pub samples: u64,
    #[serde(default)]
    pub min_ms: Option<f64>,
    #[serde(default)]
    pub mean_ms: Option<f64>,
    #[serde(default)]
    pub p50_ms: Option<f64>,
    #[serde(default)]
    pub p99_ms: Option<f64>,
    #[serde(default)]
    pub max_ms: Option<f64>,
    /// Percentiles 0, 1, ..., 100: the delay CDF.
    #[serde(default)]
    pub percentiles_ms: Vec<f64>,
}

/// A burst that was not complete or not in time.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Burst {
    /// From 0.
    pub index: u64,
    /// When it was due, seconds after the start.
    #[serde(default)]
    pub at_s: f64,
    pub received: u32,
    pub expected: u32,
    /// The delay of its last datagram to arrive; null when none did.
    #[serde(default)]
    pub last_delay_ms: Option<f64>,
    #[serde(default)]
    pub late: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> ProfileDocument {
        ProfileDocument {
            profile: "monitoring".into(),
            planned_s: Some(1.0),
            ran_s: Some(0.5),
            clock_synced: false,
            clock_offset: Some(ClockOffset {
                offset_ns: -5,
                uncertainty_ns: 10,
                probes: 3,
            }),
            ended_early: Some("interrupted".into()),
            streams: vec![ProfileStream {
                id: 1,
                name: "bulk".into(),
                direction: "to-server".into(),
                size: Some(800),
                burst: Some(25),
                gap_ms: Some(1.0),
                period_ms: Some(5000.0),
                offset_ms: 0.0,
                late_ms: Some(50.0),
                sent: 25,
                received: 20,
                lost: 5,
                late: Some(0),
                out_of_order: Some(0),
                duplicates: Some(0),
                foreign: Some(0),
                delay: None,
                burst_spacing_ms: Some(1.02),
                bursts_sent: Some(1),
                bursts_complete: Some(0),
                bursts_late: Some(0),
                exceptions: vec![Burst {
                    index: 0,
                    at_s: 0.0,
                    received: 20,
                    expected: 25,
                    last_delay_ms: None,
                    late: false,
                }],
                exceptions_dropped: 0,
            }],
            envelope: Envelope::new("profile", true, Some("interrupted")),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let v = crate::to_value(&doc());
        assert_eq!(v["streams"][0]["delay"], serde_json::Value::Null);
        assert_eq!(
            v["streams"][0]["exceptions"][0]["last_delay_ms"],
            serde_json::Value::Null
        );
        assert_eq!(v["error"], "interrupted");
        let back: ProfileDocument = crate::from_value("profile", v).unwrap();
        assert_eq!(back, doc());
        let plain = ProfileDocument {
            clock_offset: None,
            ended_early: None,
            ..doc()
        };
        let v = crate::to_value(&plain);
        assert!(
            v.get("clock_offset").is_none() && v.get("ended_early").is_none(),
            "{v}"
        );
    }

    #[test]
    fn a_stream_without_its_lost_count_is_refused_naming_the_field() {
        let mut v = crate::to_value(&doc());
        v["streams"][0].as_object_mut().map(|o| o.remove("lost"));
        let e = crate::from_value::<ProfileDocument>("profile", v).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("profile") && e.contains("`lost`"), "{e}");
    }
}
