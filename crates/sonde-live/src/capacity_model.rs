//! The longest-train search of `sonde_stats::capacity::longest` as the `-J` document spells
//! it ([`sonde_schema::capacity::LongestTrain`]): the one part of `sonde capacity`'s document
//! ([`crate::capacity::document`]) that is not a runtime result as it is (the document names
//! the search's figures its own way). The estimate and the other parts are the stats types.
//!
//! The function takes its source apart field by field, so a field added or renamed on either
//! side is a compile error here rather than a key silently missing from the document.

use sonde_schema::capacity as schema;
use sonde_stats::capacity::longest::{LongestOutcome, Tried};

/// The longest-train search (`--longest-train`).
pub fn longest(o: &LongestOutcome) -> schema::LongestTrain {
    let LongestOutcome {
        search,
        seconds,
        time_limited,
        limit_secs,
    } = o;
    let tried = |t: &Tried| {
        let Tried {
            len,
            received,
            lost,
        } = *t;
        schema::TriedTrain {
            len,
            received,
            lost,
        }
    };
    schema::LongestTrain {
        length: search.loss_free,
        at_least: search.at_least(),
        shortest_lossy: search.lossy,
        max_len: search.max,
        limit_secs: *limit_secs,
        time_limited: *time_limited,
        seconds: *seconds,
        tried: search.tried.iter().map(tried).collect(),
    }
}
