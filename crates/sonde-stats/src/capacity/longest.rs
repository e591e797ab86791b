//! The longest train that arrives whole (`sonde capacity --longest-train`), pure: the
//! lengths tried and what arrived of each in, the next length to try out.
//!
//! A queue on the path (a shaper's, a device ring) holds so many datagrams; a train longer
//! than it loses its tail. The search doubles the train length from a start until a train
//! loses datagrams or the bound is reached, then bisects between the longest loss-free
//! length and the shortest lossy one, down to one datagram. A train that arrived whole at
//! the bound says only that the answer is at least the bound, and is reported so.

use serde::{Deserialize, Serialize};

/// One train of the search: its length and how many of its datagrams arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    pub len: u32,
    pub received: u32,
    pub lost: u32,
}

/// Where the search stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LengthSearch {
    /// Shortest and longest length it may try.
    pub min: u32,
    pub max: u32,
    pub start: u32,
    /// Longest length that arrived whole, shortest that lost datagrams.
    pub loss_free: Option<u32>,
    pub lossy: Option<u32>,
    pub tried: Vec<Tried>,
}

impl LengthSearch {
    /// A search from `start` datagrams, within `min..=max`.
    pub fn new(start: u32, min: u32, max: u32) -> Self {
        let max = max.max(min);
        Self {
            min,
            max,
            start: start.clamp(min, max),
            loss_free: None,
            lossy: None,
            tried: Vec::new(),
        }
    }

    /// The next length to try; None once the search is over.
    pub fn next(&self) -> Option<u32> {
        match (self.loss_free, self.lossy) {
            (None, None) => Some(self.start),
            (Some(ok), None) => (ok < self.max).then(|| ok.saturating_mul(2).min(self.max)),
            (ok, Some(bad)) => {
                // Below `min` nothing is tried: `min - 1` stands for "none arrived whole".
                let lo = ok.unwrap_or(self.min.saturating_sub(1));
                (bad > lo + 1)
                    .then(|| lo + (bad - lo) / 2)
                    .filter(|&m| m >= self.min)
            }
        }
    }

    /// A train of `len` datagrams of which `received` arrived.
    pub fn record(&mut self, len: u32, received: u32) {
        let lost = len.saturating_sub(received);
        self.tried.push(Tried {
            len,
            received,
            lost,
        });
        if lost == 0 {
            self.loss_free = self.loss_free.max(Some(len));
        } else {
            self.lossy = Some(self.lossy.map_or(len, |b| b.min(len)));
        }
    }

    /// Whether the longest loss-free length is only a lower bound: the bound arrived whole.
    pub fn at_least(&self) -> bool {
        self.lossy.is_none() && self.loss_free == Some(self.max)
    }
}

/// A finished search with its time (for the reporters).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LongestOutcome {
    pub search: LengthSearch,
    pub seconds: f64,
    /// The time limit ended the search before it was done.
    pub time_limited: bool,
    pub limit_secs: f64,
}

impl LongestOutcome {
    /// The answer in words: "300 datagrams (301 lost some)", "at least 1000 datagrams (the
    /// bound arrived whole)", "none: even 16 datagrams lost some".
    pub fn describe(&self) -> String {
        let s = &self.search;
        let tail = if self.time_limited {
            format!("; the {:.0} s limit stopped the search", self.limit_secs)
        } else {
            String::new()
        };
        let what = match (s.loss_free, s.lossy) {
            (Some(n), None) if s.at_least() => {
                format!("at least {n} datagrams (the bound arrived whole)")
            }
            (Some(n), None) => format!("at least {n} datagrams (nothing longer tried)"),
            (Some(n), Some(b)) => format!("{n} datagrams ({b} lost some)"),
            (None, Some(b)) => format!("none: even {b} datagrams lost some"),
            (None, None) => "no train arrived".into(),
        };
        format!(
            "{what}, {} trains tried in {:.1} s{tail}",
            s.tried.len(),
            self.seconds
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a path that holds `queue` datagrams.
    fn search(queue: u32, start: u32, max: u32) -> LengthSearch {
        let mut s = LengthSearch::new(start, 16, max);
        while let Some(len) = s.next() {
            assert!(s.tried.len() < 64, "{s:?}");
            s.record(len, len.min(queue));
        }
        s
    }

    #[test]
    fn doubling_then_bisection_finds_the_queue() {
        let s = search(300, 16, 1000);
        assert_eq!((s.loss_free, s.lossy), (Some(300), Some(301)));
        let lens: Vec<u32> = s.tried.iter().map(|t| t.len).collect();
        assert_eq!(&lens[..6], &[16, 32, 64, 128, 256, 512]);
        assert!(!s.at_least());
        assert_eq!(s.tried[5].lost, 212);
        // Exact for every queue, in a bounded number of trains.
        for q in [16, 17, 100, 511, 512, 999] {
            let s = search(q, 16, 1000);
            assert_eq!(s.loss_free, Some(q), "{q}");
            assert!(s.tried.len() <= 16, "{q}: {}", s.tried.len());
        }
    }

    #[test]
    fn a_path_that_holds_everything_gives_the_bound_as_at_least() {
        let s = search(u32::MAX, 16, 1000);
        assert_eq!((s.loss_free, s.lossy), (Some(1000), None));
        assert!(s.at_least());
        assert_eq!(s.tried.last().map(|t| t.len), Some(1000));
        let o = LongestOutcome {
            search: s,
            seconds: 0.5,
            time_limited: false,
            limit_secs: 30.0,
        };
        assert!(
            o.describe()
                .starts_with("at least 1000 datagrams (the bound"),
            "{}",
            o.describe()
        );
        let o = LongestOutcome {
            search: search(300, 16, 1000),
            time_limited: true,
            ..o
        };
        assert!(
            o.describe().starts_with("300 datagrams (301 lost some)")
                && o.describe().ends_with("the 30 s limit stopped the search")
        );
    }

    #[test]
    fn a_path_that_loses_even_the_shortest_train_has_no_answer() {
        let s = search(10, 16, 1000);
        assert_eq!((s.loss_free, s.lossy), (None, Some(16)));
        assert!(!s.at_least());
        // A start above the queue bisects down.
        let s = search(40, 500, 1000);
        assert_eq!(s.loss_free, Some(40));
    }
}
