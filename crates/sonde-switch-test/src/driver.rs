//! The switching side of a switch test's client: a thread of its own that switches on the
//! schedule while the sending thread keeps sending.
//!
//! Why a thread: [`AnyConn::switch`] returns once the new path is joined, a dial and a JOIN
//! round trip later. Called from the sending loop, it left the old path with nothing new to
//! carry for those round trips, and the receiver's stall was the application's own pause
//! plus the new path's first round trip, not what the library costs. An application that
//! switches from its sending thread can do so; this command measures the switch.

use crate::policy::Chooser;
use crate::schedule::Schedule;
use sonde_switch::{AnyConn, Family};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the thread looks at the schedule (a switch is due at most this late).
const TICK: Duration = Duration::from_millis(1);

/// What the switching thread shares with the sender.
pub struct SwitchDriver<'a> {
    pub conn: &'a AnyConn,
    /// When the transfer started (the schedule's times count from it).
    pub start: Instant,
    /// The family the stream starts on.
    pub family: Family,
    /// Stop after this many switches, ending the transfer.
    pub limit: Option<u64>,
    /// Set by either side to end the transfer: the sender at its end, this thread after the
    /// last switch or a failed one.
    pub stop: &'a AtomicBool,
    /// Switches made so far.
    pub switched: &'a AtomicU64,
}

impl SwitchDriver<'_> {
    /// Switches whenever `schedule` falls due, to where `chooser` says, until stopped.
    ///
    /// # Errors
    /// A switch failed; `stop` is set so the sender ends too.
    pub fn run(
        &self,
        chooser: &mut Chooser,
        mut schedule: Schedule,
    ) -> Result<(), sonde_switch::Error> {
        let result = self.switch_until_stopped(chooser, &mut schedule);
        self.stop.store(true, Ordering::SeqCst);
        result
    }

    fn switch_until_stopped(
        &self,
        chooser: &mut Chooser,
        schedule: &mut Schedule,
    ) -> Result<(), sonde_switch::Error> {
        // A policy reads its verdict at once, then at each scheduled time.
        let mut read_policy_now = matches!(chooser, Chooser::Policy { .. });
        let mut fam = self.family;
        while !self.stop.load(Ordering::SeqCst) {
            if !(std::mem::take(&mut read_policy_now) || schedule.due(self.start.elapsed())) {
                std::thread::sleep(TICK);
                continue;
            }
            // After a recovery the stream may already be on the other family.
            let current = self.conn.family().unwrap_or(fam);
            let Some(to) = chooser
                .next(self.start.elapsed(), current)
                .filter(|&f| f != current)
            else {
                continue;
            };
            fam = to;
            self.conn.switch(fam)?;
            let n = self.switched.fetch_add(1, Ordering::SeqCst) + 1;
            if self.limit.is_some_and(|l| n >= l) {
                break;
            }
        }
        Ok(())
    }
}
