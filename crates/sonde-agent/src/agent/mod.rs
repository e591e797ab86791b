//! The agent's process: its sonde server, its metrics endpoint, and the schedule loop that
//! starts each test when due and records each outcome, until the interrupt flag is raised.
//! Latency runs fly side by side (crate::inflight: a silent peer holds back no other); any
//! other kind runs alone, once they have landed.
//!
//! The loop owns the clock: it reads `Instant::now()`, asks the pure [`Schedule`] what is due,
//! and sleeps in short slices until then, so Ctrl-C or SIGTERM ends the agent within a
//! fraction of a second; a test in progress is cut short and recorded with what it measured.
//! Between runs it applies a reload when one was asked for (crate::reload): the running
//! configuration, the schedule and what is known of the peers are reshaped in place.

use crate::config::Peer;
use crate::config::{AgentConfig, ConfigError};
use crate::http::{HttpError, MetricsServer};
use crate::inflight::{InFlight, MAX_AT_ONCE};
use crate::metrics::Metrics;
use crate::outcome::RunOutcome;
use crate::record::Recorder;
use crate::reload::Reload;
use crate::retain::Retention;
use crate::schedule::{Job, Kind, Schedule};
use crate::sync::{SyncPlan, Syncer};
use crate::targets::{Due, Targets};
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use sonde_runtime::RunError;
use sonde_store::StoreError;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod schedule_loop;
use schedule_loop::Loop;
use sonde_stats::sink::Discard;

/// Longest sleep between looks at the interrupt flag.
const SLICE: Duration = Duration::from_millis(100);

/// Why the agent could not start (once running, failures are recorded, not returned).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the agent's server: {0}")]
    Server(#[from] RunError),
    #[error(transparent)]
    Metrics(#[from] HttpError),
    #[error("the agent's thread: {0}")]
    Thread(std::io::Error),
    /// A key file named by the configuration cannot be used.
    #[error(transparent)]
    Config(#[from] ConfigError),
}

/// What to start.
pub struct AgentOptions {
    pub config: AgentConfig,
    /// The configuration file's text, kept with the results.
    pub config_text: String,
    /// Where to serve `/metrics`, if anywhere.
    pub metrics: Option<SocketAddr>,
    /// `sonde --version`, kept with the results.
    pub sonde_version: String,
    /// Progress and failures, one line each.
    pub log: Arc<dyn Fn(&str) + Send + Sync>,
    /// How a reload is asked for and the configuration read again (none: never reloaded).
    pub reload: Option<Reload>,
}

/// What the agent did, when it stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AgentTotals {
    pub ok: u64,
    pub failed: u64,
    pub skipped: u64,
}

fn default_seed() -> u64 {
    let ns = sonde_platform::timestamp::realtime_ns();
    ns ^ (u64::from(std::process::id()) << 32)
}

fn now_unix() -> f64 {
    sonde_platform::timestamp::realtime_ns() as f64 / 1e9
}

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
struct Running {
    cfg: AgentConfig,
    schedule: Schedule,
    targets: Targets,
    /// The latest capacity figure of each peer (by label: members of an every_address entry
    /// are peers of their own): the throughput budget's reference.
    measured: HashMap<String, u64>,
    /// Per (every_address entry, kind): the member count last warned of (warn_long_round).
    warned: HashMap<(String, Kind), usize>,
}

impl Running {
    /// Reads the configuration again and applies what a reload can (crate::reload); a file
    /// that cannot be used changes nothing.
    fn reload(
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
        if let Err(e) = recorder.add_peers(&cfg.peers) {
            log(&format!("cannot list the new peers in the run: {e}"));
        }
    }

    /// The peers `job`'s entry stands for now; none when the entry is gone or its name gave no
    /// address (then accounted as a failed run). Members that left lose their series.
    fn resolve(
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

fn pairs(cfg: &AgentConfig) -> Vec<(usize, Kind, Duration)> {
    (0..cfg.peers.len())
        .flat_map(|i| {
            KINDS
                .iter()
                .filter_map(move |&k| Some((i, k, period(cfg, k)?)))
        })
        .collect()
}

fn start_server(
    server_cfg: ServerConfig,
    interrupt: Arc<AtomicBool>,
    log: Arc<dyn Fn(&str) + Send + Sync>,
) -> Result<(u16, std::thread::JoinHandle<()>), AgentError> {
    let listen_port = server_cfg.port;
    // The peers' tests are theirs to record; this end keeps no events.
    let sinks: SinkFactory = Arc::new(|_peer: &str| Box::new(Discard));
    let server_log = log.clone();
    let server = Server::bind(
        server_cfg,
        interrupt,
        sinks,
        Arc::new(move |m: &str| server_log(&format!("server: {m}"))),
    )?;
    let port = server.local_addr().map_or(listen_port, |a| a.port());
    let thread = std::thread::Builder::new()
        .name("sonde-agent-server".into())
        .spawn(move || {
            if let Err(e) = server.run() {
                log(&format!("server stopped: {e}"));
            }
        })
        .map_err(AgentError::Thread)?;
    Ok((port, thread))
}

/// Reads every peer's key file once, so that a bad one stops the agent at start rather than
/// failing each run to that peer (runs read it again, so a rotated key is picked up).
fn check_peer_keys(cfg: &AgentConfig) -> Result<(), ConfigError> {
    for p in &cfg.peers {
        if let Some(path) = &p.psk_file {
            sonde_runtime::auth::load_psk(path)
                .map_err(|e| ConfigError::Invalid(format!("peer {}: psk_file: {e}", p.label())))?;
        }
    }
    Ok(())
}

/// Everything the agent would refuse at its start beyond what parsing the configuration
/// checked (the PostgreSQL URL and its TLS files among it), without starting it: every key
/// file it names, its server's and its peers'.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the file or setting that cannot be used.
pub fn check_files(cfg: &AgentConfig) -> Result<(), ConfigError> {
    check_peer_keys(cfg)?;
    cfg.server.server_config(cfg.listen_port)?;
    Ok(())
}

/// Runs the agent until `interrupt` is raised.
///
/// # Errors
/// [`AgentError::Config`] when a key file the configuration names cannot be used (checked
/// before anything is written); [`AgentError`] when the store, the server or the metrics
/// endpoint cannot start.
pub fn run(opts: AgentOptions, interrupt: Arc<AtomicBool>) -> Result<AgentTotals, AgentError> {
    // Before the agent's threads start: each further malloc arena would stay resident for
    // the life of the process (sonde_platform::memory).
    sonde_platform::memory::limit_allocator_arenas(sonde_platform::memory::LONG_RUNNING_ARENAS);
    let mut up = Started::start(&opts, &interrupt)?;
    let cfg = &opts.config;
    let mut totals = AgentTotals::default();
    let mut agent = Loop {
        state: Running {
            cfg: cfg.clone(),
            schedule: Schedule::new(&pairs(cfg), cfg.jitter, up.seed),
            targets: Targets::new(cfg.peers.len(), up.seed),
            measured: HashMap::new(),
            warned: HashMap::new(),
        },
        inflight: InFlight::default(),
        retention: cfg.retain_days.map(Retention::new),
        books: Books {
            totals: &mut totals,
            metrics: &up.metrics,
            recorder: &mut up.recorder,
            syncer: up.syncer.as_ref(),
            log: &*opts.log,
        },
        reload: opts.reload.as_ref(),
        port: up.port,
        interrupt: &interrupt,
        start: Instant::now(),
    };
    agent.run();
    up.stop(&opts);
    Ok(totals)
}

/// What the agent starts before its loop: the store, the metrics and their endpoint, the
/// server, the copy to PostgreSQL.
struct Started {
    recorder: Recorder,
    metrics: Arc<Metrics>,
    http: Option<MetricsServer>,
    /// The port the server took.
    port: u16,
    server: std::thread::JoinHandle<()>,
    syncer: Option<Syncer>,
    seed: u64,
}

impl Started {
    /// Checks the key files, then starts everything, and says so in one line.
    fn start(opts: &AgentOptions, interrupt: &Arc<AtomicBool>) -> Result<Started, AgentError> {
        let cfg = &opts.config;
        let log = opts.log.clone();
        check_peer_keys(cfg)?;
        let server_cfg = cfg.server.server_config(cfg.listen_port)?;
        let seed = cfg.seed.unwrap_or_else(default_seed);
        let started_unix = now_unix();
        let recorder = Recorder::open(
            cfg,
            &opts.config_text,
            &opts.sonde_version,
            seed,
            started_unix,
        )?;
        let metrics = Arc::new(Metrics::with_process(started_unix));
        let http = opts
            .metrics
            .map(|a| MetricsServer::start(a, metrics.clone(), interrupt.clone()))
            .transpose()?;
        let (port, server) = start_server(server_cfg, interrupt.clone(), log.clone())?;
        log(&format!(
            "serving tests on port {port}; {} peers; results of agent {:?} to {} (run {}){}",
            cfg.peers.len(),
            cfg.agent_name(),
            cfg.store.display(),
            recorder.run_id(),
            http.as_ref()
                .map(|h| format!("; metrics on http://{}/metrics", h.addr()))
                .unwrap_or_default()
        ));
        let syncer = cfg
            .store_url
            .as_ref()
            .map(|url| {
                let plan = SyncPlan {
                    local: cfg.store.clone(),
                    url: url.clone(),
                    every: Duration::from_secs_f64(cfg.sync_every_secs),
                };
                Syncer::start(plan, metrics.clone(), log.clone())
            })
            .transpose()
            .map_err(AgentError::Thread)?;
        Ok(Started {
            recorder,
            metrics,
            http,
            port,
            server,
            syncer,
            seed,
        })
    }

    /// Once the loop has ended: marks the run finished, makes the last copy to PostgreSQL
    /// and waits for the server and the metrics endpoint to stop.
    fn stop(self, opts: &AgentOptions) {
        let log = &opts.log;
        if let Err(e) = self.recorder.finish(now_unix()) {
            log(&format!("cannot mark the run finished: {e}"));
        }
        if let Some(s) = self.syncer {
            if !s.stop() {
                log(&format!(
                    "stopping without the last copy to PostgreSQL: it did not end within {} s (a server that accepted and did not answer?); the results stay in {} and are copied by the agent's next start",
                    crate::sync::STOP_GRACE.as_secs(),
                    opts.config.store.display()
                ));
            }
        }
        let _ = self.server.join();
        if let Some(h) = self.http {
            h.join();
        }
    }
}

/// Says once per member count when a round of `kind` over an `every_address` entry's
/// `members` cannot fit in the kind's period (crate::group::round_warning).
fn warn_long_round(
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

/// Where an outcome is written: the totals, the metrics, the store, the copy to PostgreSQL,
/// the log.
struct Books<'a> {
    totals: &'a mut AgentTotals,
    metrics: &'a Metrics,
    recorder: &'a mut Recorder,
    syncer: Option<&'a Syncer>,
    log: &'a dyn Fn(&str),
}

impl Books<'_> {
    fn account(&mut self, o: &RunOutcome) {
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
