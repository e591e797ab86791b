//! What a coded test (`--coded`) asks of the far end beyond the defaults: the data it moves,
//! the receiver's feedback policy and the repair scheme. Sent inside [`crate::message::TestParams`]
//! only when something differs from the defaults, and then only to a server that lists the
//! `coded-options` capability, so an older server never sees a request it would misread.

use serde::{Deserialize, Serialize};

/// What the sender's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodedData {
    /// sonde's checkable pseudo-random stream: the receiver checks every byte.
    #[default]
    Pattern,
    /// A file's bytes (`--file`): the receiver checks their SHA-256 against the sender's.
    File,
}

/// How often the receiver may send feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodedFeedback {
    /// Feedback after every receive event, at most one per 2 ms.
    #[default]
    Unrestricted,
    /// At most one feedback per 20 ms, as on a constrained return path.
    Restricted,
}

/// How losses are repaired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodedScheme {
    /// Reed-Solomon blocks with proactive repair and repair on feedback.
    #[default]
    Coded,
    /// Plain selective-repeat ARQ: no coding, every lost datagram sent again on feedback.
    Arq,
}

/// The coded test's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CodedOptions {
    #[serde(default)]
    pub data: CodedData,
    #[serde(default)]
    pub feedback: CodedFeedback,
    #[serde(default)]
    pub scheme: CodedScheme,
}

impl CodedOptions {
    /// Whether a server must understand these options (anything besides the defaults).
    pub fn needs_capability(&self) -> bool {
        *self != Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_written_and_default_when_missing() {
        let o = CodedOptions {
            data: CodedData::File,
            feedback: CodedFeedback::Restricted,
            scheme: CodedScheme::Arq,
        };
        let s = serde_json::to_string(&o).unwrap();
        assert_eq!(
            s,
            r#"{"data":"file","feedback":"restricted","scheme":"arq"}"#
        );
        assert_eq!(serde_json::from_str::<CodedOptions>(&s).unwrap(), o);
        let d: CodedOptions = serde_json::from_str("{}").unwrap();
        assert!(!d.needs_capability());
    }
}
