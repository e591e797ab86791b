//! `sonde switch-test -J`: one long transfer that moves between IPv4 and IPv6, both ends'
//! switch records, the policy's decisions, and the totals with the two ends' SHA-256.
//!
//! The server's part ([`ServerSide`]) is also what the switch-test server sends its client
//! at the end of a transfer (the reply's JSON body), so the client copies it in unchanged.
//!
//! A client that failed before it measured writes only `test`, `start` and the envelope:
//! `client` and `end` are then absent, and so are `server` and `policy`, which are null in a
//! measured run that has none (a transfer cut short: no server figures; no `--policy`).

use serde::{Deserialize, Deserializer, Serialize};

use crate::Envelope;

/// The document kind (the envelope's `kind`, and the top-level `test`).
pub const KIND: &str = "switch-test";

/// The whole document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchTestDocument {
    /// `"switch-test"`.
    pub test: String,
    #[serde(default)]
    pub start: Start,
    /// The client's switch records (absent: the run failed before it measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientSide>,
    /// `None`: absent (failed before it measured); `Some(None)`: null (no server figures).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub server: Option<Option<ServerSide>>,
    /// `None`: absent (failed before it measured); `Some(None)`: null (no `--policy`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub policy: Option<Option<PolicyLog>>,
    /// The totals (absent: the run failed before it measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<End>,
    #[serde(flatten)]
    pub envelope: Envelope,
}

/// A key that is present, null or not: `Some(None)` for null (an absent key is the field's
/// default, `None`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// The run's parameters, as given on the command line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Start {
    #[serde(default)]
    pub host: Option<String>,
    #[serde(default)]
    pub port: u16,
    /// `"framed"` or `"mptcp"`.
    #[serde(default)]
    pub backend: String,
    /// Seconds to stream (`-t`).
    #[serde(default)]
    pub time: f64,
    /// Seconds between switches (`--every`).
    #[serde(default)]
    pub every: f64,
    /// `"4"` or `"6"` (`--start`).
    #[serde(default)]
    pub start_family: String,
    /// The switches that end the transfer (`--switches`).
    #[serde(default)]
    pub switches: Option<u64>,
    /// The times to switch at (`--at`), seconds from the start.
    #[serde(default)]
    pub at: Vec<f64>,
}

/// The client's view of the switches.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSide {
    #[serde(default)]
    pub switches: Vec<SwitchRecord>,
}

/// One move of the stream, as one end saw it. The report marks `at`, `kind` and `to`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchRecord {
    /// Seconds from the session's start.
    pub at: f64,
    /// `"planned"` or `"recovery"`.
    pub kind: String,
    /// `"IPv4"` or `"IPv6"`; null when the old path was already gone.
    #[serde(default)]
    pub from: Option<String>,
    pub to: String,
    #[serde(default)]
    pub setup_ms: Option<f64>,
    #[serde(default)]
    pub first_sent_ms: Option<f64>,
    #[serde(default)]
    pub first_received_ms: Option<f64>,
    #[serde(default)]
    pub stall_ms: Option<f64>,
    #[serde(default)]
    pub replayed: u64,
    #[serde(default)]
    pub duplicates: u64,
}

/// Bytes per family.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ByFamily {
    #[serde(default)]
    pub ipv4: u64,
    #[serde(default)]
    pub ipv6: u64,
}

/// The receiving server's view: its switch records, counters and what its application got
/// over time. Also the JSON body of the server's reply to its client.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerSide {
    #[serde(default)]
    pub switches: Vec<SwitchRecord>,
    #[serde(default)]
    pub received: u64,
    #[serde(default)]
    pub received_by_family: ByFamily,
    #[serde(default)]
    pub duplicates: u64,
    #[serde(default)]
    pub held_ahead: u64,
    #[serde(default)]
    pub heartbeat_failures: u64,
    /// Absent in documents from before the series was recorded.
    #[serde(default)]
    pub received_over_time: Option<ReceivedOverTime>,
}

/// The receiving application's bytes per interval and its longest gaps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceivedOverTime {
    /// Seconds per interval.
    pub interval: f64,
    /// Bytes delivered in each interval.
    pub bytes: Vec<u64>,
    /// The longest gaps between two deliveries, longest first.
    #[serde(default)]
    pub gaps: Vec<Gap>,
}

/// One gap between two deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gap {
    /// When it ended, seconds from the start.
    pub end: f64,
    /// Its length, ms.
    pub ms: f64,
}

/// What `--policy` decided and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyLog {
    /// The verdict file.
    #[serde(default)]
    pub file: String,
    #[serde(default)]
    pub margin_pct: f64,
    #[serde(default)]
    pub decisions: Vec<PolicyDecision>,
}

/// One logged decision (logged when it differs from the one before).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyDecision {
    /// Seconds from the start.
    pub at: f64,
    /// The family the stream was on.
    pub on: String,
    /// Where it switched to (null: it stayed).
    #[serde(default)]
    pub switched_to: Option<String>,
    pub reason: String,
}

/// The totals. The figures a report shows are required: an `end` without one is refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// Bytes the client sent.
    pub bytes: u64,
    pub seconds: f64,
    /// The client's sending rate.
    pub bits_per_second: f64,
    /// Switches the client made.
    #[serde(default)]
    pub switches: u64,
    /// The client's SHA-256 of the stream, hex (null when the transfer was cut short).
    #[serde(default)]
    pub sha256: Option<String>,
    /// The server's SHA-256, hex (null when the transfer was cut short).
    #[serde(default)]
    pub server_sha256: Option<String>,
    /// Bytes the server received.
    pub server_bytes: u64,
    /// Both ends' SHA-256 and length agree.
    pub hash_equal: bool,
    /// Bytes the client sent twice.
    #[serde(default)]
    pub replayed: u64,
    #[serde(default)]
    pub sent_by_family: ByFamily,
    #[serde(default)]
    pub interrupted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(at: f64, to: &str) -> SwitchRecord {
        SwitchRecord {
            at,
            kind: "planned".into(),
            from: None,
            to: to.into(),
            setup_ms: Some(0.5),
            first_sent_ms: None,
            first_received_ms: None,
            stall_ms: Some(1.25),
            replayed: 10,
            duplicates: 0,
        }
    }

    fn measured() -> SwitchTestDocument {
        SwitchTestDocument {
            test: KIND.into(),
            start: Start {
                host: Some("h".into()),
                port: 5211,
                backend: "framed".into(),
                time: 1.0,
                every: 0.5,
                start_family: "4".into(),
                switches: None,
                at: vec![],
            },
            client: Some(ClientSide {
                switches: vec![record(0.5, "IPv6")],
            }),
            server: Some(Some(ServerSide {
                switches: vec![record(0.5, "IPv6")],
                received: 1000,
                received_by_family: ByFamily {
                    ipv4: 600,
                    ipv6: 400,
                },
                received_over_time: Some(ReceivedOverTime {
                    interval: 0.5,
                    bytes: vec![600, 400],
                    gaps: vec![Gap { end: 0.5, ms: 2.0 }],
                }),
                ..ServerSide::default()
            })),
            policy: Some(None),
            end: Some(End {
                bytes: 1000,
                seconds: 1.0,
                bits_per_second: 8000.0,
                switches: 1,
                sha256: Some("ab".into()),
                server_sha256: Some("ab".into()),
                server_bytes: 1000,
                hash_equal: true,
                replayed: 10,
                sent_by_family: ByFamily::default(),
                interrupted: false,
            }),
            envelope: Envelope::new(KIND, false, None),
        }
    }

    #[test]
    fn a_measured_document_reads_back_as_written_with_its_nulls() {
        let doc = measured();
        let v = crate::to_value(&doc);
        assert_eq!(v["policy"], serde_json::Value::Null);
        assert!(v.as_object().unwrap().contains_key("policy"));
        assert_eq!(v["server"]["received_by_family"]["ipv6"], 400);
        assert_eq!(v["client"]["switches"][0]["from"], serde_json::Value::Null);
        assert_eq!(v["error"], serde_json::Value::Null);
        let back: SwitchTestDocument = crate::from_value(KIND, v).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn a_run_that_failed_before_it_measured_has_no_client_server_policy_or_end_keys() {
        let doc = SwitchTestDocument {
            test: KIND.into(),
            start: Start::default(),
            client: None,
            server: None,
            policy: None,
            end: None,
            envelope: Envelope::new(KIND, true, Some("refused")),
        };
        let v = crate::to_value(&doc);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["error", "kind", "partial", "start", "test"]);
        let back: SwitchTestDocument = crate::from_value(KIND, v).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn an_end_without_a_figure_the_report_shows_is_refused_naming_it() {
        let v = json!({"test": "switch-test", "end": {"bytes": 10, "seconds": 1.0,
            "bits_per_second": 80.0, "hash_equal": true}});
        let e = crate::from_value::<SwitchTestDocument>(KIND, v).unwrap_err();
        assert!(e.to_string().contains("server_bytes"), "{e}");
        assert!(
            e.to_string()
                .starts_with("not a valid switch-test document"),
            "{e}"
        );
    }

    #[test]
    fn a_switch_without_its_family_is_refused_naming_it() {
        let v = json!({"test": "switch-test", "server": {"switches": [{"at": 0.5,
            "kind": "planned"}]}});
        let e = crate::from_value::<SwitchTestDocument>(KIND, v).unwrap_err();
        assert!(e.to_string().contains("`to`"), "{e}");
    }
}
