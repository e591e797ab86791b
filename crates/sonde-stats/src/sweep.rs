//! The rate sweep's search: the highest offered rate whose loss stays at or below a limit
//! (RFC 2544's throughput search, section 26.1), and the point where achieved stops following
//! asked in a list of rates. Pure: the caller runs each step (a short paced test) and hands its
//! outcome back, so the search is checked here with modelled links and fixed numbers.
//!
//! The search is a bisection between a floor and a ceiling, with one shortcut: a step that
//! fails with a receiver rate inside the interval is followed by a step just under that rate
//! (what got through an overloaded bottleneck is close to its capacity), and a step passed that
//! way by one a resolution above it. On a clean bottleneck this finds the ceiling in four or
//! five steps instead of a dozen; where loss has other causes the plain bisection goes on.
//! The rate found is confirmed by repeat runs that must all pass; a failed confirmation lowers
//! the upper bound to that rate and the search resumes below it.
//!
//! A step whose loss was within the limit but whose **sender** fell short of the offered rate
//! says nothing about the path: the host could not offer the rate (another process held the
//! CPU). It is run again, up to [`SENDER_SHORT_RERUNS`] times, before it counts as a failure.
//! Without the rerun a busy host walks the search down to what its sender managed, and the
//! sweep reports the host's stalls as the path's ceiling (seen in the lab: 64 B datagrams found
//! at 12 % of a device's frame rate while the sender was starved).

use serde::{Deserialize, Serialize};

/// What the bisection looks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchConfig {
    /// Lowest rate tried (bit/s); failing there ends the search without a rate.
    pub floor_bps: u64,
    /// Highest rate tried (bit/s), the first step.
    pub ceiling_bps: u64,
    /// A step passes when its loss (percent of datagrams) is at or below this.
    pub max_loss_percent: f64,
    /// The search stops when the interval is at most this fraction of its upper end.
    pub resolution: f64,
    /// A step also fails when the receiver got less than this fraction below the offered rate
    /// (with too little loss to explain it, the sender could not offer that rate).
    pub shortfall: f64,
    /// Repeat runs at the found rate that must all pass.
    pub confirm: u32,
    /// Hard bound on steps, whatever the link does.
    pub max_steps: u32,
}

/// Why a step was run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// Part of the search.
    Search,
    /// A repeat run at the rate found.
    Confirm,
}

/// A step the caller should run next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub rate_bps: u64,
    pub kind: StepKind,
}

/// Reruns of one step whose loss was within the limit but whose sender fell short of the
/// offered rate (see the module docs).
pub const SENDER_SHORT_RERUNS: u32 = 2;

/// What a step measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepOutcome {
    /// Bits per second the receiver counted (UDP payload).
    pub achieved_bps: f64,
    /// Datagrams lost, percent of those sent.
    pub loss_percent: f64,
    /// Bits per second the sender put out (UDP payload), when known.
    pub sent_bps: Option<f64>,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The highest rate that passed, and its confirmation runs when any were asked for.
    Found { rate_bps: u64 },
    /// The ceiling itself (`--max-rate`) passed and was confirmed: the path carries at least
    /// `rate_bps`, a lower bound of its ceiling, which the search never reached.
    AtMaxRate { rate_bps: u64 },
    /// Even the floor lost too much.
    BelowFloor,
    /// The step bound was reached; the best rate that passed a step, if any (unconfirmed).
    StepLimit { best_bps: Option<u64> },
    /// The search converged under `limited_at_bps`, a rate whose steps lost nothing beyond the limit
    /// but whose sender, on every run, put out less than offered: the host, not the path,
    /// bounded the search. `best_bps` (the highest rate that passed) is a lower bound of the
    /// path's ceiling, not the ceiling.
    SenderLimited {
        limited_at_bps: u64,
        best_bps: Option<u64>,
    },
}

/// The bisection, one step at a time: [`Bisection::next`] says what to run,
/// [`Bisection::record`] takes its outcome; repeat until `next` is None, then read
/// [`Bisection::verdict`].
#[derive(Debug, Clone)]
pub struct Bisection {
    cfg: SearchConfig,
    /// Highest rate known to pass (the floor, untested, at first).
    lo: u64,
    lo_tested: bool,
    /// Earlier values of `lo`, for stepping down when a confirmation fails.
    lo_history: Vec<u64>,
    /// Lowest rate known to fail (the ceiling, untested, at first).
    hi: u64,
    hi_tested: bool,
    /// `hi` failed only because its sender fell short on every run (see [`Verdict`]).
    hi_sender_limited: bool,
    /// A rate suggested by the last failing step's receiver rate.
    hint: Option<u64>,
    /// The last step ran at a hinted rate.
    last_hinted: bool,
    /// The last search step passed at a hinted rate: try one resolution above next.
    nudge_up: bool,
    confirms_left: u32,
    /// Reruns of the pending probe so far (its sender fell short).
    reruns: u32,
    steps: u32,
    pending: Option<Probe>,
    verdict: Option<Verdict>,
}

impl Bisection {
    /// A search over `cfg` (a ceiling below the floor is raised to it).
    pub fn new(cfg: SearchConfig) -> Self {
        let cfg = SearchConfig {
            ceiling_bps: cfg.ceiling_bps.max(cfg.floor_bps).max(1),
            floor_bps: cfg.floor_bps.max(1),
            resolution: cfg.resolution.clamp(1e-6, 0.5),
            ..cfg
        };
        let mut b = Bisection {
            cfg,
            lo: cfg.floor_bps,
            lo_tested: false,
            lo_history: Vec::new(),
            hi: cfg.ceiling_bps,
            hi_tested: false,
            hi_sender_limited: false,
            hint: None,
            last_hinted: false,
            nudge_up: false,
            confirms_left: 0,
            reruns: 0,
            steps: 0,
            pending: None,
            verdict: None,
        };
        b.plan();
        b
    }

    /// The step to run next; None when the search is over.
    pub fn next(&self) -> Option<Probe> {
        self.pending
    }

    /// The result, once [`Bisection::next`] is None.
    pub fn verdict(&self) -> Option<Verdict> {
        self.verdict
    }

    /// Steps recorded so far.
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// Whether a step at `offered_bps` that measured `o` passes: loss within the limit, and
    /// the receiver got the offered rate (less the loss and the shortfall allowed).
    pub fn passes(&self, offered_bps: u64, o: &StepOutcome) -> bool {
        let expected = offered_bps as f64 * (1.0 - o.loss_percent / 100.0);
        self.loss_within_limit(o) && o.achieved_bps >= expected * (1.0 - self.cfg.shortfall)
    }

    /// Whether a step at `offered_bps` that measured `o` says nothing about the path and is
    /// run again: its loss was within the limit, its sender put out less than the offered
    /// rate less the shortfall allowed, and it has not been rerun [`SENDER_SHORT_RERUNS`]
    /// times yet, and the step bound leaves room for the rerun. Asked before [`Self::record`]
    /// takes the same outcome, it says what `record` will do.
    pub fn runs_again(&self, offered_bps: u64, o: &StepOutcome) -> bool {
        self.host_short(offered_bps, o) && self.may_rerun()
    }

    /// The step's shortfall is the host's: its loss was within the limit, and its sender put
    /// out less than the offered rate less the shortfall allowed. (The one test of a sender
    /// short step: [`Self::runs_again`] and [`Self::record`] both ask it.)
    fn host_short(&self, offered_bps: u64, o: &StepOutcome) -> bool {
        self.loss_within_limit(o)
            && o.sent_bps
                .is_some_and(|s| s < offered_bps as f64 * (1.0 - self.cfg.shortfall))
    }

    /// Whether the pending probe may run again: reruns left, and room in the step bound.
    fn may_rerun(&self) -> bool {
        self.reruns < SENDER_SHORT_RERUNS && self.steps + 1 < self.cfg.max_steps
    }

    fn loss_within_limit(&self, o: &StepOutcome) -> bool {
        o.loss_percent.is_finite() && o.loss_percent <= self.cfg.max_loss_percent
    }

    /// Takes the outcome of the step [`Bisection::next`] gave; ignored when none was pending.
    pub fn record(&mut self, o: StepOutcome) {
        let Some(p) = self.pending.take() else {
            return;
        };
        let starved = self.host_short(p.rate_bps, &o);
        let again = starved && self.may_rerun();
        self.steps += 1;
        if again {
            self.reruns += 1;
            self.pending = Some(p);
            return;
        }
        self.reruns = 0;
        let pass = self.passes(p.rate_bps, &o);
        match (p.kind, pass) {
            (StepKind::Search, true) => {
                if self.lo_tested {
                    self.lo_history.push(self.lo);
                }
                self.lo = p.rate_bps;
                self.lo_tested = true;
                if p.rate_bps >= self.hi {
                    self.hi = p.rate_bps;
                    self.hi_tested = true;
                    self.hi_sender_limited = false;
                }
                self.nudge_up = self.last_hinted;
                self.hint = None;
            }
            (StepKind::Search, false) => {
                if p.rate_bps <= self.cfg.floor_bps {
                    self.finish(Verdict::BelowFloor);
                    return;
                }
                self.fail_at(p.rate_bps, &o);
                self.hi_sender_limited = starved;
            }
            (StepKind::Confirm, true) => {
                self.confirms_left = self.confirms_left.saturating_sub(1);
                if self.confirms_left == 0 {
                    self.found();
                    return;
                }
            }
            (StepKind::Confirm, false) => {
                self.confirms_left = 0;
                // Step down: the rate just confirmed is now known to fail.
                let failed = self.lo;
                match self.lo_history.pop() {
                    Some(prev) => self.lo = prev,
                    None => {
                        self.lo = self.cfg.floor_bps;
                        self.lo_tested = false;
                    }
                }
                self.fail_at(failed, &o);
                self.hi_sender_limited = starved;
            }
        }
        if self.steps >= self.cfg.max_steps {
            // Out of steps with the sender, not the path, failing the rate above: say so.
            let v = self.sender_limited().unwrap_or(Verdict::StepLimit {
                best_bps: self.lo_tested.then_some(self.lo),
            });
            self.finish(v);
            return;
        }
        self.plan();
    }

    fn fail_at(&mut self, rate: u64, o: &StepOutcome) {
        self.hi = rate;
        self.hi_tested = true;
        // A receiver rate inside the interval suggests where the bottleneck is; used once per
        // run of failures so noisy figures cannot walk the search down step by step.
        let guess = (o.achieved_bps * (1.0 - self.cfg.resolution / 2.0)) as u64;
        self.hint = (!self.last_hinted && guess > self.lo && guess < self.hi).then_some(guess);
        // A receiver rate no higher than a rate that passed says the bottleneck is right there:
        // try one resolution above that rate next, not the middle of the interval (which,
        // from a far ceiling, would halve its way down in a dozen failing steps).
        let at_lo = o.achieved_bps <= self.lo as f64 * (1.0 + self.cfg.resolution);
        self.nudge_up = self.hint.is_none() && self.lo_tested && at_lo;
    }

    /// The search converged on `lo`: found, unless only the sender bounded it from above or
    /// `lo` is the ceiling (nothing above it was tried).
    fn found(&mut self) {
        let v = self
            .sender_limited()
            .unwrap_or(if self.lo >= self.cfg.ceiling_bps {
                Verdict::AtMaxRate { rate_bps: self.lo }
            } else {
                Verdict::Found { rate_bps: self.lo }
            });
        self.finish(v);
    }

    /// [`Verdict::SenderLimited`] when only a starved sender failed the rate above `lo`.
    fn sender_limited(&self) -> Option<Verdict> {
        (self.hi_sender_limited && self.hi > self.lo).then(|| Verdict::SenderLimited {
            limited_at_bps: self.hi,
            best_bps: self.lo_tested.then_some(self.lo),
        })
    }

    fn finish(&mut self, v: Verdict) {
        self.verdict = Some(v);
        self.pending = None;
    }

    fn converged(&self) -> bool {
        (self.hi - self.lo.min(self.hi)) as f64 <= self.cfg.resolution * self.hi as f64
    }

    /// Chooses the next step.
    fn plan(&mut self) {
        self.last_hinted = false;
        let probe = if self.confirms_left > 0 {
            Probe {
                rate_bps: self.lo,
                kind: StepKind::Confirm,
            }
        } else if !self.hi_tested {
            self.search(self.hi)
        } else if self.converged() {
            if !self.lo_tested {
                self.search(self.lo)
            } else if self.cfg.confirm == 0 {
                self.found();
                return;
            } else {
                self.confirms_left = self.cfg.confirm;
                Probe {
                    rate_bps: self.lo,
                    kind: StepKind::Confirm,
                }
            }
        } else if let Some(h) = self.hint.take() {
            self.last_hinted = true;
            self.search(h)
        } else if self.nudge_up && self.lo_tested {
            self.nudge_up = false;
            let up = (self.lo as f64 * (1.0 + self.cfg.resolution)) as u64;
            self.search(up.min(self.hi.saturating_sub(1)).max(self.lo + 1))
        } else {
            self.search(self.lo + (self.hi - self.lo) / 2)
        };
        self.pending = Some(probe);
    }

    fn search(&self, rate_bps: u64) -> Probe {
        Probe {
            rate_bps,
            kind: StepKind::Search,
        }
    }
}

/// What a step of a rate list (`attempt` reruns so far) comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedStep {
    /// It runs again: the host fell short ([`listed_step_sender_short`]) and fewer than
    /// [`SENDER_SHORT_RERUNS`] reruns were made. (A TCP sender writes what the path takes: its
    /// shortfall is the path's.)
    pub rerun: bool,
    /// It is the last run and the host still fell short: reported as not judged.
    pub sender_short: bool,
}

/// Judges a step of a rate list once: whether it runs again, or stands as sender short.
pub fn judge_listed_step(
    udp: bool,
    asked: u64,
    sent_bps: Option<f64>,
    achieved_bps: f64,
    tolerance: f64,
    attempt: u32,
) -> ListedStep {
    let short = listed_step_sender_short(udp, asked, sent_bps, achieved_bps, tolerance);
    let rerun = short && attempt < SENDER_SHORT_RERUNS;
    ListedStep {
        rerun,
        sender_short: short && !rerun,
    }
}

/// Whether a UDP step of a rate list fell short of `asked` because of the host: its sender put
/// out less than `asked` by more than `tolerance` (a fraction) and the receiver got what was
/// sent. Such a step says what this host's sender managed, not whether the path follows
/// `asked`: after its reruns it is left out of the [`knee`] and reported as not judged.
pub fn listed_step_sender_short(
    udp: bool,
    asked: u64,
    sent_bps: Option<f64>,
    achieved_bps: f64,
    tolerance: f64,
) -> bool {
    udp && sent_bps.is_some_and(|s| {
        s < asked as f64 * (1.0 - tolerance) && achieved_bps >= s * (1.0 - tolerance)
    })
}

/// In a list of (asked, achieved) rates, the lowest asked rate whose achieved rate falls short
/// of it by more than `tolerance` (a fraction): where achieved stops following asked. Rates are
/// judged in ascending order whatever order they ran in.
pub fn knee(points: &[(u64, f64)], tolerance: f64) -> Option<u64> {
    let mut sorted: Vec<(u64, f64)> = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    sorted
        .into_iter()
        .find(|&(asked, achieved)| !follows(asked, achieved, tolerance))
        .map(|p| p.0)
}

/// Whether `achieved` is within `tolerance` (a fraction) below `asked`.
pub fn follows(asked: u64, achieved: f64, tolerance: f64) -> bool {
    achieved >= asked as f64 * (1.0 - tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(ceiling: u64) -> SearchConfig {
        SearchConfig {
            floor_bps: 100_000,
            ceiling_bps: ceiling,
            max_loss_percent: 0.1,
            resolution: 0.01,
            shortfall: 0.02,
            confirm: 2,
            max_steps: 40,
        }
    }

    /// Runs a search against `link` (offered rate -> outcome); returns the verdict and the
    /// probes in order.
    fn drive(c: SearchConfig, mut link: impl FnMut(u64) -> StepOutcome) -> (Verdict, Vec<Probe>) {
        let mut b = Bisection::new(c);
        let mut probes = Vec::new();
        while let Some(p) = b.next() {
            probes.push(p);
            b.record(link(p.rate_bps));
            assert!(probes.len() <= 100, "search does not terminate");
        }
        (b.verdict().unwrap(), probes)
    }

    /// A bottleneck of `cap` bit/s that drops what exceeds it.
    fn bottleneck(cap: f64) -> impl FnMut(u64) -> StepOutcome {
        move |r| {
            let r = r as f64;
            let achieved = r.min(cap);
            StepOutcome {
                achieved_bps: achieved,
                loss_percent: 100.0 * (r - achieved) / r,
                sent_bps: None,
            }
        }
    }

    #[test]
    fn clean_bottleneck_is_found_within_resolution_in_few_steps() {
        for cap in [4_096_000.0, 6_400_000.0, 32_000_000.0, 92_672_000.0] {
            let (v, probes) = drive(cfg(100_000_000), bottleneck(cap));
            let Verdict::Found { rate_bps } = v else {
                panic!("{cap}: {v:?}");
            };
            assert!(
                rate_bps as f64 <= cap,
                "{cap}: {rate_bps} passes above the cap"
            );
            assert!(rate_bps as f64 >= cap * 0.99, "{cap}: {rate_bps} too low");
            assert!(
                probes.len() <= 7,
                "{cap}: {} steps: {probes:?}",
                probes.len()
            );
            let confirms = probes.iter().filter(|p| p.kind == StepKind::Confirm);
            assert_eq!(confirms.count(), 2);
        }
    }

    #[test]
    fn a_device_that_passes_a_little_above_its_ceiling_takes_no_halving_steps() {
        // A short ring lets a little more than the frame rate through within the loss limit,
        // and overloaded it delivers a little less: after the hinted rate passes and the
        // middle of the interval fails, the next step is just above the rate that passed.
        for cap in [4_096_000.0, 6_400_000.0, 32_000_000.0, 92_672_000.0] {
            let (v, probes) = drive(cfg(100_000_000), |r| {
                let r = r as f64;
                StepOutcome {
                    achieved_bps: r.min(cap * 0.998),
                    loss_percent: (100.0 * (r - cap * 1.005) / r).max(0.0),
                    sent_bps: None,
                }
            });
            let Verdict::Found { rate_bps } = v else {
                panic!("{cap}: {v:?}");
            };
            let found = rate_bps as f64;
            assert!(
                found >= cap * 0.99 && found <= cap * 1.006,
                "{cap}: {rate_bps}"
            );
            assert!(
                probes.len() <= 8,
                "{cap}: {} steps: {probes:?}",
                probes.len()
            );
        }
    }

    #[test]
    fn a_listed_step_runs_again_only_when_the_host_fell_short() {
        let again = |udp, sent, achieved, attempt| {
            judge_listed_step(udp, 50_000_000, sent, achieved, 0.02, attempt).rerun
        };
        // Sent 48.8 of 50 (2.4 % short) and all of it arrived: the host's shortfall.
        assert!(again(true, Some(48.8e6), 48.7e6, 0));
        assert!(again(true, Some(48.8e6), 48.7e6, SENDER_SHORT_RERUNS - 1));
        assert!(!again(true, Some(48.8e6), 48.7e6, SENDER_SHORT_RERUNS));
        // The last run of a short step stands as sender short; a rerun one does not.
        let last = judge_listed_step(
            true,
            50_000_000,
            Some(48.8e6),
            48.7e6,
            0.02,
            SENDER_SHORT_RERUNS,
        );
        assert_eq!(
            last,
            ListedStep {
                rerun: false,
                sender_short: true
            }
        );
        let first = judge_listed_step(true, 50_000_000, Some(48.8e6), 48.7e6, 0.02, 0);
        assert_eq!(
            first,
            ListedStep {
                rerun: true,
                sender_short: false
            }
        );
        let fine = judge_listed_step(true, 50_000_000, Some(49.5e6), 49.4e6, 0.02, 0);
        assert_eq!(
            fine,
            ListedStep {
                rerun: false,
                sender_short: false
            }
        );
        // Within the tolerance, lost on the path, unknown, or TCP: it counts as it is.
        assert!(!again(true, Some(49.5e6), 49.4e6, 0));
        assert!(!again(true, Some(48.8e6), 40e6, 0));
        assert!(!again(true, None, 40e6, 0));
        assert!(!again(false, Some(48.8e6), 48.7e6, 0));
    }

    #[test]
    fn a_ceiling_that_passes_is_confirmed_and_only_a_lower_bound() {
        let (v, probes) = drive(cfg(10_000_000), bottleneck(50_000_000.0));
        assert_eq!(
            v,
            Verdict::AtMaxRate {
                rate_bps: 10_000_000
            }
        );
        assert_eq!(probes.len(), 3);
        // Without confirmations too; and a bottleneck just under the ceiling is found.
        let once = SearchConfig {
            confirm: 0,
            ..cfg(10_000_000)
        };
        let (v, _) = drive(once, bottleneck(50_000_000.0));
        assert!(matches!(v, Verdict::AtMaxRate { .. }), "{v:?}");
        let (v, _) = drive(cfg(10_000_000), bottleneck(9_500_000.0));
        assert!(matches!(v, Verdict::Found { .. }), "{v:?}");
        let json = serde_json::to_value(Verdict::AtMaxRate { rate_bps: 7 }).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"verdict": "at_max_rate", "rate_bps": 7})
        );
    }

    #[test]
    fn plain_bisection_when_the_receiver_rate_says_nothing() {
        // Loss above 1 Mbit/s, but the receiver rate is useless as a hint (reported as 0).
        let (v, probes) = drive(cfg(64_000_000), |r| StepOutcome {
            achieved_bps: if r > 1_000_000 { 0.0 } else { r as f64 },
            loss_percent: if r > 1_000_000 { 5.0 } else { 0.0 },
            sent_bps: None,
        });
        let Verdict::Found { rate_bps } = v else {
            panic!("{v:?}");
        };
        assert!((990_000..=1_000_000).contains(&rate_bps), "{rate_bps}");
        assert!(probes.len() < 20, "{}", probes.len());
    }

    #[test]
    fn loss_everywhere_ends_below_the_floor() {
        let (v, probes) = drive(cfg(100_000_000), |r| StepOutcome {
            achieved_bps: r as f64 * 0.99,
            loss_percent: 1.0,
            sent_bps: None,
        });
        assert_eq!(v, Verdict::BelowFloor);
        assert_eq!(probes.last().map(|p| p.rate_bps), Some(100_000));
    }

    #[test]
    fn failed_confirmation_steps_down_and_retries() {
        // Passes once at any rate up to 8 Mbit/s, but between 7 and 8 only the first time.
        // The worst case: every new rate there passes its search step.
        let mut seen = std::collections::HashMap::new();
        let c = SearchConfig {
            max_steps: 80,
            ..cfg(16_000_000)
        };
        let (v, probes) = drive(c, |r| {
            let n = seen.entry(r).or_insert(0);
            *n += 1;
            let ok = r <= 7_000_000 || (r <= 8_000_000 && *n == 1);
            StepOutcome {
                achieved_bps: r as f64 * if ok { 1.0 } else { 0.99 },
                loss_percent: if ok { 0.0 } else { 1.0 },
                sent_bps: None,
            }
        });
        let Verdict::Found { rate_bps } = v else {
            panic!("{v:?}");
        };
        assert!(rate_bps <= 7_000_000, "{rate_bps}");
        assert!(rate_bps >= 6_900_000, "{rate_bps}");
        let confirms: Vec<_> = probes
            .iter()
            .filter(|p| p.kind == StepKind::Confirm)
            .collect();
        assert!(confirms.len() >= 3, "{probes:?}");
    }

    #[test]
    fn the_step_bound_holds_and_keeps_the_best_rate() {
        let c = SearchConfig {
            max_steps: 3,
            ..cfg(64_000_000)
        };
        let (v, probes) = drive(c, |r| StepOutcome {
            achieved_bps: 0.0,
            loss_percent: if r > 1_000_000 { 5.0 } else { 0.0 },
            sent_bps: None,
        });
        assert_eq!(probes.len(), 3);
        assert_eq!(v, Verdict::StepLimit { best_bps: None });
    }

    #[test]
    fn a_sender_that_cannot_offer_the_rate_fails_the_step() {
        // No loss, but the receiver never sees more than 30 Mbit/s: the sender's limit.
        let (v, _) = drive(cfg(100_000_000), |r| StepOutcome {
            achieved_bps: (r as f64).min(30e6),
            loss_percent: 0.0,
            sent_bps: None,
        });
        let Verdict::Found { rate_bps } = v else {
            panic!("{v:?}");
        };
        assert!(rate_bps as f64 <= 30e6 / 0.98, "{rate_bps}");
        assert!(rate_bps as f64 >= 29.5e6, "{rate_bps}");
    }

    #[test]
    fn a_sender_short_step_is_run_again_and_its_rerun_decides() {
        // A bottleneck at 30 Mbit/s, and a sender that is starved once at every rate: its
        // first run at any rate puts out only half, losing nothing. Without reruns each of
        // those steps fails, and the search ends at the floor.
        let mut seen = std::collections::HashMap::new();
        let mut link = bottleneck(30e6);
        let (v, probes) = drive(cfg(100_000_000), |r| {
            let n = seen.entry(r).or_insert(0);
            *n += 1;
            if *n == 1 {
                return StepOutcome {
                    achieved_bps: r as f64 / 2.0,
                    loss_percent: 0.0,
                    sent_bps: Some(r as f64 / 2.0),
                };
            }
            StepOutcome {
                sent_bps: Some(r as f64),
                ..link(r)
            }
        });
        let Verdict::Found { rate_bps } = v else {
            panic!("{v:?}");
        };
        assert!((29.7e6..=30e6).contains(&(rate_bps as f64)), "{rate_bps}");
        // Every rate tried ran at least twice: the starved run, then the one that counted.
        for p in &probes {
            assert!(seen[&p.rate_bps] >= 2, "{probes:?}");
        }
    }

    #[test]
    fn a_sender_always_short_ends_sender_limited_not_found() {
        // The sender never puts out more than 30 Mbit/s and nothing is lost: the host is the
        // limit. Each step above it is run 1 + SENDER_SHORT_RERUNS times, then fails, and the
        // search ends near what the sender managed, saying that the sender, not the path,
        // bounded it: that rate is a lower bound, not a ceiling.
        let mut runs = std::collections::HashMap::new();
        let (v, _) = drive(cfg(100_000_000), |r| {
            *runs.entry(r).or_insert(0u32) += 1;
            let sent = (r as f64).min(30e6);
            StepOutcome {
                achieved_bps: sent,
                loss_percent: 0.0,
                sent_bps: Some(sent),
            }
        });
        let Verdict::SenderLimited {
            limited_at_bps: at,
            best_bps: Some(best),
        } = v
        else {
            panic!("{v:?}");
        };
        assert!((29.5e6..=30e6 / 0.98).contains(&(best as f64)), "{best}");
        assert!(at > best && at as f64 <= best as f64 * 1.011, "{v:?}");
        assert_eq!(runs[&100_000_000], 1 + SENDER_SHORT_RERUNS);
        // The same host limit shown by loss instead (the path drops what is above it): found.
        let (v, _) = drive(cfg(100_000_000), |r| StepOutcome {
            achieved_bps: (r as f64).min(30e6),
            loss_percent: if r > 30_000_000 { 5.0 } else { 0.0 },
            sent_bps: Some(r as f64),
        });
        assert!(matches!(v, Verdict::Found { .. }), "{v:?}");
    }

    #[test]
    fn a_listed_step_is_the_hosts_only_when_the_receiver_got_what_was_sent() {
        let m = 100_000_000;
        // Sent 60 of 100, received all 60: the host's shortfall, on UDP only.
        assert!(listed_step_sender_short(true, m, Some(60e6), 60e6, 0.02));
        assert!(!listed_step_sender_short(false, m, Some(60e6), 60e6, 0.02));
        // Sent 60, received 50: the path lost some, so the step judges the path.
        assert!(!listed_step_sender_short(true, m, Some(60e6), 50e6, 0.02));
        // Sent what was asked, or no sender figure: not short.
        assert!(!listed_step_sender_short(true, m, Some(99e6), 99e6, 0.02));
        assert!(!listed_step_sender_short(true, m, None, 10e6, 0.02));
    }

    #[test]
    fn a_lossy_step_is_not_rerun_even_when_its_sender_was_short() {
        let b = Bisection::new(cfg(100_000_000));
        let lossy = StepOutcome {
            achieved_bps: 40e6,
            loss_percent: 5.0,
            sent_bps: Some(42e6),
        };
        assert!(!b.runs_again(100_000_000, &lossy));
        let starved = StepOutcome {
            loss_percent: 0.0,
            ..lossy
        };
        assert!(b.runs_again(100_000_000, &starved));
        // The last step the bound allows is not rerun: it counts.
        let mut last = Bisection::new(SearchConfig {
            max_steps: 1,
            ..cfg(100_000_000)
        });
        assert!(!last.runs_again(100_000_000, &starved));
        last.record(starved);
        assert_eq!(last.next(), None);
        // Out of steps with only the sender failing: sender-limited, not a plain step limit.
        assert_eq!(
            last.verdict(),
            Some(Verdict::SenderLimited {
                limited_at_bps: 100_000_000,
                best_bps: None
            })
        );
    }

    #[test]
    fn zero_confirmations_take_the_search_result() {
        let c = SearchConfig {
            confirm: 0,
            ..cfg(100_000_000)
        };
        let (v, probes) = drive(c, bottleneck(20_000_000.0));
        assert!(matches!(v, Verdict::Found { .. }));
        assert!(probes.iter().all(|p| p.kind == StepKind::Search));
    }

    #[test]
    fn knee_is_the_lowest_rate_that_falls_short() {
        let pts = [
            (1_000_000_000, 95e6),
            (140_000_000, 95e6),
            (130_000_000, 95e6),
            (100_000_000, 95e6),
            (50_000_000, 49.9e6),
            (10_000_000, 10e6),
        ];
        assert_eq!(knee(&pts, 0.02), Some(100_000_000));
        assert_eq!(knee(&pts, 0.06), Some(130_000_000));
        assert_eq!(knee(&pts[4..], 0.02), None);
        assert!(follows(100, 98.0, 0.02));
        assert!(!follows(100, 97.9, 0.02));
    }
}
