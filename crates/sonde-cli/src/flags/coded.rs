//! The coded transport's own client flags (beside `--coded` itself), kept out of the shared
//! client argument list so that list only gains one flattened field.

use clap::{Args, ValueEnum};
use sonde_proto::coded::{CodedFeedback, CodedScheme};

/// How a `--coded` test repairs losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemeArg {
    /// Reed-Solomon blocks with proactive repair and repair on feedback (plain `--coded`).
    Rs,
    /// Selective-repeat ARQ: every datagram its own block, no repair symbols, each loss the
    /// receiver reports sent again once.
    Arq,
}

impl From<SchemeArg> for CodedScheme {
    fn from(s: SchemeArg) -> Self {
        match s {
            SchemeArg::Rs => CodedScheme::Coded,
            SchemeArg::Arq => CodedScheme::Arq,
        }
    }
}

/// How often the receiving end of a coded test may send feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FeedbackArg {
    /// Feedback after every receive event (a symbol arrived), at most one per 2 ms: about 500
    /// feedback datagrams a second while data flows, so repair follows losses within a 2 ms
    /// pause plus the round trip.
    Unrestricted,
    /// At most one feedback per 20 ms (50 a second), as on a constrained return path: repair
    /// waits up to 20 ms longer, so more blocks stay open and decode later.
    Restricted,
}

impl From<FeedbackArg> for CodedFeedback {
    fn from(f: FeedbackArg) -> Self {
        match f {
            FeedbackArg::Unrestricted => CodedFeedback::Unrestricted,
            FeedbackArg::Restricted => CodedFeedback::Restricted,
        }
    }
}

#[derive(Debug, Args)]
pub struct CodedArgs {
    /// --coded feedback policy: unrestricted (after every receive event, at most one per
    /// 2 ms; the default) or restricted (at most one per 20 ms)
    #[arg(long, value_enum, value_name = "MODE", requires = "coded")]
    pub feedback: Option<FeedbackArg>,
}
