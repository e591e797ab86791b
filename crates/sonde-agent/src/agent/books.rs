//! Where each run's outcome is written: the agent's totals, the metrics, the store, the copy
//! to PostgreSQL and the log.

use crate::metrics::Metrics;
use crate::outcome::RunOutcome;
use crate::record::Recorder;
use crate::sync::Syncer;

/// What the agent did, when it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentTotals {
    pub ok: u64,
    pub failed: u64,
    pub skipped: u64,
}

/// Where an outcome is written: the totals, the metrics, the store, the copy to PostgreSQL,
/// the log.
pub(super) struct Books<'a> {
    pub(super) totals: &'a mut AgentTotals,
    pub(super) metrics: &'a Metrics,
    pub(super) recorder: &'a mut Recorder,
    pub(super) syncer: Option<&'a Syncer>,
    pub(super) log: &'a dyn Fn(&str),
}

impl Books<'_> {
    pub(super) fn account(&mut self, o: &RunOutcome) {
        self.metrics.observe(o);
        if o.ok() {
            self.totals.ok += 1;
        } else {
            self.totals.failed += 1;
            (self.log)(&format!(
                "{} to {} failed: {}",
                o.kind.as_str(),
                o.peer,
                o.error.as_deref().unwrap_or("")
            ));
        }
        // The schedule goes on without the store: the figures are still in the metrics.
        if let Err(e) = self.recorder.record(o) {
            (self.log)(&format!("cannot record a {} run: {e}", o.kind.as_str()));
        }
        if let Some(s) = self.syncer {
            s.recorded();
        }
        // A test's buffers are freed by now; without this the allocator keeps them and the
        // agent's resident memory steps up with each new high-water mark (bench/RESULTS.md).
        sonde_platform::memory::release_free_memory();
    }
}
