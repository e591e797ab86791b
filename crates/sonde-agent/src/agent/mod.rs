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

use crate::config::{AgentConfig, ConfigError};
use crate::http::{HttpError, MetricsServer};
use crate::inflight::InFlight;
use crate::metrics::Metrics;
use crate::record::Recorder;
use crate::reload::Reload;
use crate::retain::Retention;
use crate::schedule::Schedule;
use crate::sync::{SyncPlan, Syncer};
use crate::targets::Targets;
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use sonde_runtime::RunError;
use sonde_store::StoreError;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod books;
mod running;
mod schedule_loop;
pub use books::AgentTotals;
use books::Books;
use running::{check_peer_keys, pairs, Running};
use schedule_loop::Loop;
use sonde_stats::sink::Discard;

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

fn default_seed() -> u64 {
    let ns = sonde_platform::timestamp::realtime_ns();
    ns ^ (u64::from(std::process::id()) << 32)
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
        let started_unix = sonde_platform::host::unix_now();
        let recorder = Recorder::open(
            cfg,
            &opts.config_text,
            &opts.sonde_version,
            seed,
            started_unix,
        )?;
        let metrics = Arc::new(Metrics::with_process(started_unix));
        metrics.status().started(crate::status::AgentInfo {
            name: cfg.agent_name(),
            version: opts.sonde_version.clone(),
            started_unix,
        });
        metrics.status().configure(&cfg.peers);
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
                .map(|h| format!(
                    "; metrics on http://{0}/metrics, status on http://{0}/",
                    h.addr()
                ))
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
        if let Err(e) = self.recorder.finish(sonde_platform::host::unix_now()) {
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
