//! When a paced sender fell behind its own schedule, and by how much: the figure that tells a
//! user whether a loss on a short-buffered path was the path's or the sender's. Another
//! process holding the CPU delays a departure; the sender then catches up (at most twice the
//! rate, see [`crate::pacing`]), and a device that drains at the asked rate can drop that
//! catch-up. Counted as episodes: from the first departure more than [`SLIP_NS`] (or two
//! gaps, whichever is longer) late until one leaves within a gap of its time. Pure: lateness
//! in, counts out.

/// Lateness that counts as falling behind (1 ms): far beyond timer jitter (tens of µs).
pub const SLIP_NS: u64 = 1_000_000;

/// The slips of one sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleSlips {
    /// Episodes of falling behind.
    pub episodes: u64,
    /// Largest lateness seen (ns).
    pub max_late_ns: u64,
    /// The sender paces steadily ([`crate::pacing::Pacing::Steady`]): it did not catch up.
    pub steady: bool,
    behind: bool,
}

impl ScheduleSlips {
    /// A departure left `late_ns` after its due time, departures being `gap_ns` apart.
    pub fn record(&mut self, late_ns: u64, gap_ns: u64) {
        let threshold = SLIP_NS.max(gap_ns.saturating_mul(2));
        if late_ns > threshold {
            if !self.behind {
                self.episodes += 1;
                self.behind = true;
            }
            self.max_late_ns = self.max_late_ns.max(late_ns);
        } else if late_ns <= gap_ns {
            self.behind = false;
        }
    }

    /// A note for the user when the sender fell behind at all (stream `id`, `who` sends).
    pub fn note(&self, id: u32, who: &str) -> Option<String> {
        (self.episodes > 0).then(|| {
            format!(
                "stream {id}: the {who} sender fell behind its schedule {} time{}, by up to {:.1} ms (the CPU was busy elsewhere); {}",
                self.episodes,
                if self.episodes == 1 { "" } else { "s" },
                self.max_late_ns as f64 / 1e6,
                if self.steady {
                    "paced steadily, it made up two departures of it at most and sent that much less than asked"
                } else {
                    "its catch-up ran above the asked rate, which a short-buffered path may drop"
                }
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_late_stretch_is_one_episode_and_its_worst_lateness() {
        let gap = 125_000; // 8000/s
        let mut s = ScheduleSlips::default();
        for late in [10_000, 40_000, 90_000] {
            s.record(late, gap); // timer jitter: nothing
        }
        assert_eq!(s, ScheduleSlips::default());
        for late in [3_000_000, 2_900_000, 1_500_000, 400_000] {
            s.record(late, gap); // behind, catching up
        }
        s.record(20_000, gap); // back on time
        assert_eq!((s.episodes, s.max_late_ns), (1, 3_000_000));
        s.record(5_000_000, gap);
        assert_eq!((s.episodes, s.max_late_ns), (2, 5_000_000));
        assert!(s
            .note(3, "client")
            .is_some_and(|n| n.contains("2 times") && n.contains("5.0 ms")));
        s.steady = true;
        assert!(s
            .note(3, "client")
            .is_some_and(|n| n.contains("sent that much less") && !n.contains("catch-up")));
    }

    #[test]
    fn at_low_rates_two_gaps_of_lateness_are_needed() {
        let gap = 10_000_000; // 100/s: a 5 ms late departure is within the gap
        let mut s = ScheduleSlips::default();
        s.record(5_000_000, gap);
        s.record(15_000_000, gap);
        assert_eq!(s.episodes, 0);
        s.record(25_000_000, gap);
        assert_eq!(s.episodes, 1);
        assert!(ScheduleSlips::default().note(1, "client").is_none());
    }
}
