//! `sonde sweep -J`: how the sweep ran (`sweep`), every step it ran, the rate each search
//! found per length and direction (`results`) and, with a rate list, each direction's knee.
//! Rates are payload bits per second (`layer` says which payload).

use serde::{Deserialize, Deserializer, Serialize};

use crate::Envelope;

pub use sonde_stats::sweep_record::StepRole;
/// The runtime's own names, spelled the same in the document.
pub use sonde_stats::sweep_record::SweepDirection;

/// The whole document. The settings are required (they are what makes it a sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepDocument {
    pub sweep: SweepSettings,
    #[serde(default)]
    pub results: Vec<SearchResult>,
    /// Rate lists only (empty for searches).
    #[serde(default)]
    pub knees: Vec<Knee>,
    #[serde(default)]
    pub steps: Vec<SweepStep>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// How the sweep was run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepSettings {
    #[serde(default)]
    pub host: Option<String>,
    /// "udp" or "tcp".
    #[serde(default)]
    pub protocol: Option<String>,
    /// "search" or "rates".
    #[serde(default)]
    pub mode: Option<String>,
    /// "UDP payload" or "TCP payload": what the rates count.
    #[serde(default)]
    pub layer: Option<String>,
    /// Seconds of each step.
    #[serde(default)]
    pub step_secs: Option<f64>,
    /// The loss a search step may have and pass.
    #[serde(default)]
    pub max_loss_percent: Option<f64>,
    /// A search stops when its bounds are this close.
    #[serde(default)]
    pub resolution_percent: Option<f64>,
    /// Repeat runs a found rate has to pass (`--confirm`).
    #[serde(default)]
    pub confirm: Option<u32>,
    #[serde(default)]
    pub floor_bps: Option<u64>,
    #[serde(default)]
    pub ceiling_bps: Option<u64>,
    /// How far below its asked rate an achieved one may be and still follow it.
    #[serde(default)]
    pub tolerance_percent: Option<f64>,
}

/// One short run. Every field reads as absent when missing: a step without its offered rate
/// is one a report leaves out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepStep {
    /// 1-based over the whole sweep.
    #[serde(default)]
    pub index: u32,
    /// Datagram (UDP) or write (TCP) length, bytes.
    #[serde(default)]
    pub length: u32,
    #[serde(default)]
    pub direction: Option<SweepDirection>,
    #[serde(default)]
    pub kind: Option<StepRole>,
    /// Offered rate per direction.
    #[serde(default)]
    pub offered_bps: Option<u64>,
    /// What the receiver counted (the lower direction's with bidir).
    #[serde(default)]
    pub achieved_bps: Option<f64>,
    /// UDP: datagrams lost, percent of those sent.
    #[serde(default)]
    pub loss_percent: Option<f64>,
    /// UDP: datagrams expected and lost at the receiver.
    #[serde(default)]
    pub packets: Option<u64>,
    #[serde(default)]
    pub lost: Option<u64>,
    /// What the sender put out, when the summary has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_bps: Option<f64>,
    /// Searches: whether the loss stayed within the limit.
    #[serde(default)]
    pub passed: Option<bool>,
    /// The step's sender fell short with too little loss to fail it: the rate ran again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rerun: bool,
    /// A listed rate whose sender still fell short after its reruns.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sender_short: bool,
    /// Wall-clock seconds of the step, set-up included.
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchVerdict {
    /// The highest rate that passed (confirmed when asked).
    Found,
    /// The ceiling itself passed: a lower bound of the path's.
    AtMaxRate,
    /// Even the floor lost too much.
    BelowFloor,
    /// The step bound was reached (`best_bps`, unconfirmed).
    StepLimit,
    /// The sender, not the path, bounded the search (at `limited_at_bps`).
    SenderLimited,
}

impl SearchVerdict {
    /// The name as the document spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            SearchVerdict::Found => "found",
            SearchVerdict::AtMaxRate => "at_max_rate",
            SearchVerdict::BelowFloor => "below_floor",
            SearchVerdict::StepLimit => "step_limit",
            SearchVerdict::SenderLimited => "sender_limited",
        }
    }
}

/// The result of one search (one length, one direction). Its length, direction and verdict
/// are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub length: u32,
    pub direction: SweepDirection,
    pub verdict: SearchVerdict,
    /// The rate to show: the one found, or the best that passed (absent when none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bps: Option<u64>,
    /// `rate_bps` in datagrams (or writes) per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagrams_per_sec: Option<f64>,
    /// `step_limit` and `sender_limited` only: the best rate that passed, null when none.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub best_bps: Option<Option<u64>>,
    /// `sender_limited` only: the rate the sender could not put out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_at_bps: Option<u64>,
    /// Loss at the rate found: the worst of the runs there.
    #[serde(default)]
    pub loss_percent: Option<f64>,
    /// Steps this search ran (confirmations included).
    #[serde(default)]
    pub steps: Option<u32>,
    /// Wall-clock seconds of the search.
    #[serde(default)]
    pub seconds: Option<f64>,
}

/// A key that is there, even as null, is `Some` (a missing one is `None` by `default`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<u64>>, D::Error> {
    Option::<u64>::deserialize(d).map(Some)
}

/// One direction's knee of a rate list: the lowest asked rate the achieved one stopped
/// following (null: it followed every rate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    pub direction: SweepDirection,
    #[serde(default)]
    pub knee_bps: Option<u64>,
    /// Listed rates whose sender stayed short (the host set their achieved rate).
    #[serde(default)]
    pub sender_short_bps: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> SweepDocument {
        let found = SearchResult {
            length: 1448,
            direction: SweepDirection::Up,
            verdict: SearchVerdict::Found,
            rate_bps: Some(92_672_000),
            datagrams_per_sec: Some(8000.0),
            best_bps: None,
            limited_at_bps: None,
            loss_percent: Some(0.0),
            steps: Some(5),
            seconds: Some(11.0),
        };
        let step_limit = SearchResult {
            verdict: SearchVerdict::StepLimit,
            rate_bps: None,
            datagrams_per_sec: None,
            best_bps: Some(None),
            ..found.clone()
        };
        SweepDocument {
            sweep: SweepSettings {
                host: Some("h".into()),
                protocol: Some("udp".into()),
                mode: Some("search".into()),
                layer: Some("UDP payload".into()),
                step_secs: Some(2.0),
                confirm: Some(2),
                tolerance_percent: Some(2.0),
                ..SweepSettings::default()
            },
            results: vec![found, step_limit],
            knees: vec![Knee {
                direction: SweepDirection::Down,
                knee_bps: None,
                sender_short_bps: vec![10_000_000],
            }],
            steps: vec![SweepStep {
                index: 1,
                length: 1448,
                direction: Some(SweepDirection::Bidir),
                kind: Some(StepRole::Confirm),
                offered_bps: Some(1_000_000),
                achieved_bps: Some(1e6),
                loss_percent: Some(0.0),
                packets: Some(100),
                lost: Some(0),
                sent_bps: None,
                passed: Some(true),
                rerun: false,
                sender_short: true,
                seconds: Some(2.1),
            }],
            envelope: Envelope::new("sweep", false, None),
        }
    }

    #[test]
    fn a_document_reads_back_as_written() {
        let doc = document();
        let v = crate::to_value(&doc);
        assert!(v["results"][0].get("best_bps").is_none(), "{v}");
        assert_eq!(v["results"][1]["best_bps"], serde_json::Value::Null);
        assert!(v["results"][1].get("rate_bps").is_none(), "{v}");
        assert!(v["steps"][0].get("rerun").is_none() && v["steps"][0].get("sent_bps").is_none());
        assert_eq!(v["steps"][0]["sender_short"], true);
        let back: SweepDocument = crate::from_value("sweep", v).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn a_result_without_its_verdict_is_refused_naming_the_field() {
        let v = json!({"sweep": {}, "results": [{"length": 1448, "direction": "up"}]});
        let e = crate::from_value::<SweepDocument>("sweep", v).unwrap_err();
        assert!(
            e.to_string().starts_with("not a valid sweep document")
                && e.to_string().contains("verdict"),
            "{e}"
        );
    }
}
