//! Notes for a run whose impairment engine fell behind its own schedule.
//!
//! The engine records how late each frame left against the instant its chain planned
//! (`IoStats::lateness_log2_us`). Late by microseconds is the engine's normal precision;
//! late by a millisecond or more means the host held the engine back (a busy core, or no
//! real-time priority), and every delay measured through the link then includes time the
//! link was not set to add. The lab says so in its notes instead of leaving it to be found
//! in the counters.

use super::DirectionReport;

/// The first lateness bucket that counts as behind: 1.024 ms and later.
const BEHIND_BUCKET: usize = 11;

/// The upper bound in µs of lateness bucket `i`, None for the last (open) bucket.
fn bucket_upper_us(i: usize, buckets: usize) -> Option<u64> {
    (i + 1 < buckets).then(|| 1u64 << i)
}

/// The note for one direction whose frames left 1 ms or more late, if any did.
pub fn lateness_note(d: &DirectionReport) -> Option<String> {
    let h = &d.io.lateness_log2_us;
    let behind: u64 = h.iter().skip(BEHIND_BUCKET).sum();
    if behind == 0 {
        return None;
    }
    let last = h.iter().rposition(|n| *n > 0)?;
    let latest = match bucket_upper_us(last, h.len()) {
        Some(us) => format!("the latest under {:.1} ms", us as f64 / 1e3),
        None => format!(
            "the latest {:.1} ms or more",
            (1u64 << (last - 1)) as f64 / 1e3
        ),
    };
    Some(format!(
        "link {} {}: {behind} of {} frames left the impairment engine 1 ms or more after \
         their planned time ({latest}): delays measured through this link include time the \
         link was not set to add",
        d.link, d.direction, d.io.frames_tx,
    ))
}

/// The note for a link whose engine could not get real-time priority.
pub fn priority_note(link: &str) -> String {
    format!(
        "link {link}: the impairment engine ran at normal priority (real-time priority was \
         refused), so other work on a busy host can hold its frames back"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forward::IoStats;
    use sonde_emu::impair::StageStats;
    use sonde_emu::Direction;

    fn report(lateness: &[(usize, u64)], realtime: bool) -> DirectionReport {
        let mut io = IoStats {
            frames_tx: 400,
            ..IoStats::default()
        };
        for &(i, n) in lateness {
            io.lateness_log2_us[i] = n;
        }
        DirectionReport {
            link: "dev".into(),
            direction: Direction::AToB,
            stages: Vec::new(),
            total: StageStats::default(),
            io,
            realtime,
        }
    }

    #[test]
    fn microseconds_late_is_no_news() {
        assert_eq!(lateness_note(&report(&[(3, 300), (10, 5)], true)), None);
        assert_eq!(lateness_note(&report(&[], false)), None);
    }

    #[test]
    fn a_millisecond_or_more_is_counted_with_the_latest_bound() {
        let n = lateness_note(&report(&[(4, 390), (11, 6), (14, 2)], true)).unwrap();
        assert!(n.starts_with("link dev a-to-b: 8 of 400 frames"), "{n}");
        assert!(n.contains("(the latest under 16.4 ms)"), "{n}");
        let n = lateness_note(&report(&[(15, 1)], false)).unwrap();
        // Without real-time priority the link's own note says so (priority_note), once.
        assert!(n.contains("(the latest 16.4 ms or more)"), "{n}");
    }
}
