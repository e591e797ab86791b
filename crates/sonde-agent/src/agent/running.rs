//! The schedule loop's state: the configuration as it runs, the schedule, what is known of
//! the peers, and how a reload reshapes them in place; the loop itself is in
//! `schedule_loop`.

use super::books::Books;
use crate::config::Peer;
use crate::config::{AgentConfig, ConfigError};
use crate::inflight::MAX_AT_ONCE;
use crate::metrics::Metrics;
use crate::record::Recorder;
use crate::reload::Reload;
use crate::schedule::{Job, Kind, Schedule};
use crate::targets::{Due, Targets};
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Longest sleep between looks at the interrupt flag.
pub(super) const SLICE: Duration = Duration::from_millis(100);
const KINDS: [Kind; 4] = [
    Kind::Latency,
    Kind::Throughput,
    Kind::Profile,
    Kind::Capacity,
];

/// How often runs of `kind` are due, when the configuration schedules them.
fn period(cfg: &AgentConfig, kind: Kind) -> Option<Duration> {
    let secs = match kind {
        Kind::Latency => cfg.latency.as_ref()?.every_secs,
        Kind::Throughput => cfg.throughput.as_ref()?.every_mins * 60.0,
        Kind::Profile => cfg.profile.as_ref()?.every_mins * 60.0,
        Kind::Capacity => cfg.capacity.as_ref()?.every_mins * 60.0,
    };
    Some(Duration::from_secs_f64(secs))
}

/// About how long one run of `kind` lasts; None for capacity, whose length the path decides.
fn run_length(cfg: &AgentConfig, kind: Kind) -> Option<Duration> {
    match kind {
        Kind::Latency => Some(cfg.latency.as_ref()?.probing()),
        Kind::Throughput => Some(Duration::from_secs_f64(
            cfg.throughput.as_ref()?.duration_secs,
        )),
        Kind::Profile => Some(Duration::from_secs_f64(cfg.profile.as_ref()?.duration_secs)),
        Kind::Capacity => None,
    }
}

/// The loop's state: the configuration as it runs (reloads change it), the schedule, what
/// is known of the peers.
pub(super) struct Running {
    pub(super) cfg: AgentConfig,
    pub(super) schedule: Schedule,
    pub(super) targets: Targets,
    /// The latest capacity figure of each peer (by label: members of an every_address entry
    /// are peers of their own): the throughput budget's reference.
    pub(super) measured: HashMap<String, u64>,
    /// Per (every_address entry, kind): the member count last warned of (warn_long_round).
    pub(super) warned: HashMap<(String, Kind), usize>,
}

impl Running {
    /// Reads the configuration again and applies what a reload can (crate::reload); a file
    /// that cannot be used changes nothing.
    pub(super) fn reload(
        &mut self,
        r: &Reload,
        metrics: &Metrics,
        recorder: &mut Recorder,
        now: Duration,
        log: &dyn Fn(&str),
    ) {
        let new = match (r.read)() {
            Ok((new, _text)) => new,
            Err(e) => {
                log(&format!(
                    "configuration not reloaded: {}; going on with the one running",
                    crate::reload::one_line(&e)
                ));
                metrics.reloaded(false);
                return;
            }
        };
        if let Err(e) = check_peer_keys(&new) {
            log(&format!(
                "configuration not reloaded: {e}; going on with the one running"
            ));
            metrics.reloaded(false);
            return;
        }
        let changes = crate::reload::changes(&self.cfg, &new);
        let applied = crate::reload::apply(&self.cfg, &new);
        let old = std::mem::replace(&mut self.cfg, applied);
        let cfg = &self.cfg;
        let was_of: Vec<Option<usize>> = (0..cfg.peers.len())
            .map(|i| crate::reload::was_index(&old, cfg, i))
            .collect();
        let was = |i: usize| was_of.get(i).copied().flatten();
        let mut left = Vec::new();
        self.targets.retarget(&cfg.peers, was, &mut left);
        for gone in left {
            metrics.forget_peer(&gone.label, gone.family);
            self.measured.remove(&gone.label);
        }
        for (i, p) in old.peers.iter().enumerate() {
            if was_of.contains(&Some(i)) {
                continue;
            }
            // A plain entry's series are labelled with the family it was measured over.
            for family in ["any", "ipv4", "ipv6"] {
                metrics.forget_peer(p.label(), family);
            }
            self.measured.remove(p.label());
        }
        self.schedule.reshape(&pairs(cfg), cfg.jitter, was, now);
        self.warned.clear();
        log(&crate::reload::summary(&changes, cfg));
        metrics.reloaded(true);
        metrics.status().configure(&cfg.peers);
        if let Err(e) = recorder.add_peers(&cfg.peers) {
            log(&format!("cannot list the new peers in the run: {e}"));
        }
    }

    /// The peers `job`'s entry stands for now; none when the entry is gone or its name gave no
    /// address (then accounted as a failed run). Members that left lose their series.
    pub(super) fn resolve(
        &mut self,
        job: Job,
        port: u16,
        books: &mut Books,
        interrupt: &Arc<AtomicBool>,
    ) -> Option<Vec<Peer>> {
        let entry = self.cfg.peers.get(job.peer)?;
        let mut left = Vec::new();
        let due = self
            .targets
            .due(entry, job, port, &mut left, books.log, interrupt);
        for gone in left {
            books.metrics.forget_peer(&gone.label, gone.family);
            self.measured.remove(&gone.label);
        }
        match due {
            Due::Peers(p) => {
                if entry.every_address {
                    let (label, n) = (entry.label(), p.len());
                    warn_long_round(&self.cfg, label, job.kind, n, &mut self.warned, books.log);
                }
                Some(p)
            }
            Due::Unresolved(error) => {
                books.account(&crate::runner::not_started(entry, job, error));
                None
            }
        }
    }
}

pub(super) fn pairs(cfg: &AgentConfig) -> Vec<(usize, Kind, Duration)> {
    (0..cfg.peers.len())
        .flat_map(|i| {
            KINDS
                .iter()
                .filter_map(move |&k| Some((i, k, period(cfg, k)?)))
        })
        .collect()
}

/// Reads every peer's key file once, so that a bad one stops the agent at start rather than
/// failing each run to that peer (runs read it again, so a rotated key is picked up).
pub(super) fn check_peer_keys(cfg: &AgentConfig) -> Result<(), ConfigError> {
    for p in &cfg.peers {
        if let Some(path) = &p.psk_file {
            sonde_runtime::auth::load_psk(path)
                .map_err(|e| ConfigError::Invalid(format!("peer {}: psk_file: {e}", p.label())))?;
        }
    }
    Ok(())
}

/// Says once per member count when a round of `kind` over an `every_address` entry's
/// `members` cannot fit in the kind's period (crate::group::round_warning).
pub(super) fn warn_long_round(
    cfg: &AgentConfig,
    label: &str,
    kind: Kind,
    members: usize,
    warned: &mut HashMap<(String, Kind), usize>,
    log: &dyn Fn(&str),
) {
    let key = (label.to_string(), kind);
    if warned.get(&key) == Some(&members) {
        return;
    }
    warned.insert(key, members);
    let (Some(per_run), Some(period)) = (run_length(cfg, kind), period(cfg, kind)) else {
        return;
    };
    let at_once = if kind == Kind::Latency {
        MAX_AT_ONCE
    } else {
        1
    };
    if let Some(line) =
        crate::group::round_warning(label, kind.as_str(), members, at_once, per_run, period)
    {
        log(&line);
    }
}
