//! `sonde agent`: reads and checks the configuration, then runs the agent until Ctrl-C or
//! SIGTERM.

use super::exit;
use crate::flags::agent::AgentArgs;
use sonde_agent::config::{AgentConfig, Peer};
use sonde_agent::own::Identity;
use sonde_agent::reload::Reload;
use sonde_agent::{AgentError, AgentOptions};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Reads and checks the configuration file, with the command line's `--store` over it: the
/// configuration and its text, or the one line that says why it cannot be used.
fn read_config(file: &Path, store: Option<&str>) -> Result<(AgentConfig, String), String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let mut config = AgentConfig::parse(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    match store {
        Some(url) if sonde_store::is_postgres_url(url) => {
            sonde_store::check_postgres_url(url).map_err(|e| format!("--store: {e}"))?;
            config.store_url = Some(url.to_string());
        }
        Some(path) => config.store = path.into(),
        None => {}
    }
    Ok((config, text))
}

/// Runs the agent command; `reload` is raised by SIGHUP (crate::signals).
pub fn run(a: AgentArgs, interrupt: Arc<AtomicBool>, reload: Option<Arc<AtomicBool>>) -> i32 {
    let (config, text) = match read_config(&a.config, a.store.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    if a.check {
        return check(&a.config, &config, &interrupt);
    }
    // The agent's server holds a descriptor per unidentified connection, as `sonde server`.
    sonde_stress::os::raise_nofile_limit();
    let opts = AgentOptions {
        config,
        config_text: text,
        metrics: a.metrics,
        sonde_version: format!("sonde {}", env!("CARGO_PKG_VERSION")),
        log: Arc::new(|m: &str| eprintln!("sonde agent: {m}")),
        reload: reload.map(|requested| {
            let (file, store) = (a.config.clone(), a.store.clone());
            Reload {
                requested,
                read: Box::new(move || read_config(&file, store.as_deref())),
            }
        }),
    };
    match sonde_agent::run(opts, interrupt) {
        Ok(t) => {
            eprintln!(
                "sonde agent: stopped after {} runs ({} failed, {} skipped)",
                t.ok + t.failed,
                t.failed,
                t.skipped
            );
            exit::OK
        }
        // A key file the configuration names that cannot be used: a bad value of the
        // configuration like any other, found before anything was written.
        Err(AgentError::Config(e)) => config_error(&a.config, &e),
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// `--check`: the files the configuration names, then what the agent would run.
fn check(file: &std::path::Path, config: &AgentConfig, interrupt: &AtomicBool) -> i32 {
    if let Err(e) = sonde_agent::check_files(config) {
        return config_error(file, &e);
    }
    let peers: Vec<String> = config.peers.iter().map(peer_text).collect();
    println!(
        "{}: agent {:?} would serve tests on port {}, run {} to {} peer(s): {}; results to {}{}",
        file.display(),
        config.agent_name(),
        config.listen_port,
        scheduled_runs(config).join(", "),
        peers.len(),
        peers.join(", "),
        config.store.display(),
        config
            .store_url
            .as_deref()
            .map(|u| format!(", copied to {}", sonde_store::Remote::new(u).target()))
            .unwrap_or_default()
    );
    // What the names say now (a warning only: DNS may not be ready where this runs).
    let mut lookups = Lookups {
        interrupt,
        silent: false,
    };
    for p in config.peers.iter().filter(|p| p.every_address) {
        check_group(p, config.listen_port, &mut lookups);
    }
    for p in config.peers.iter().filter(|p| !p.every_address) {
        check_peer(p, config.listen_port, &mut lookups);
    }
    exit::OK
}

/// The configuration's schedules, as the check says them ("latency every 10 s").
fn scheduled_runs(config: &AgentConfig) -> Vec<String> {
    let mut runs = Vec::new();
    if let Some(l) = &config.latency {
        runs.push(format!("latency every {} s", l.every_secs));
    }
    if let Some(t) = &config.throughput {
        runs.push(format!("throughput every {} min", t.every_mins));
    }
    if let Some(c) = &config.capacity {
        runs.push(format!("capacity every {} min", c.every_mins));
    }
    if let Some(p) = &config.profile {
        runs.push(format!("profile every {} min", p.every_mins));
    }
    runs
}

/// A peer as the check lists it: its label and where it is measured.
fn peer_text(p: &Peer) -> String {
    if p.every_address {
        format!(
            "{} (every address of {}, port {})",
            p.label(),
            p.host,
            p.port
        )
    } else if p.host.contains(':') {
        format!("{} ([{}]:{})", p.label(), p.host, p.port)
    } else {
        format!("{} ({}:{})", p.label(), p.host, p.port)
    }
}

/// A peer of one address: a line when its name does not resolve now, or when it is this
/// agent itself (which would not be measured).
fn check_peer(p: &Peer, listen_port: u16, lookups: &mut Lookups<'_>) {
    let addr = match lookups.first(p) {
        Ok(a) => a,
        Err(e) => {
            println!(
                "  peer {}: {} does not resolve here now ({e}; tried again before each run)",
                p.label(),
                p.host
            );
            return;
        }
    };
    let own = sonde_agent::own::identify(
        &p.host,
        addr,
        listen_port,
        sonde_agent::own::is_local_address,
    );
    if let Identity::Own(addr) = own {
        println!(
            "  peer {} ({addr}) is this agent itself here: it would not be measured",
            p.label()
        );
    }
}

/// The check's lookups: each waits as long as the agent's runs would (names::LOOKUP_WAIT),
/// and once the name servers have not answered one, the rest are not asked, so a check
/// where DNS is down ends in seconds whatever the number of names.
struct Lookups<'a> {
    interrupt: &'a AtomicBool,
    silent: bool,
}

impl Lookups<'_> {
    /// Every address of `p`'s host, of its family.
    fn all(&mut self, p: &sonde_agent::config::Peer) -> Result<Vec<SocketAddr>, String> {
        use sonde_platform::resolve::{is_no_answer, resolve_within};
        if self.silent {
            return Err("not asked: the name servers did not answer an earlier name".into());
        }
        let family = sonde_agent::runner::family(p.family);
        let wait = sonde_agent::names::LOOKUP_WAIT;
        resolve_within(&p.host, p.port, family, wait, self.interrupt).map_err(|e| {
            self.silent |= is_no_answer(&e);
            e.to_string()
        })
    }

    /// The address `p`'s runs would go to.
    fn first(&mut self, p: &sonde_agent::config::Peer) -> Result<SocketAddr, String> {
        self.all(p)?
            .first()
            .copied()
            .ok_or_else(|| "no address".into())
    }
}

/// What an `every_address` entry stands for here now, and which member is this agent.
fn check_group(p: &sonde_agent::config::Peer, listen_port: u16, lookups: &mut Lookups) {
    let resolved = match lookups.all(p) {
        Ok(a) => a,
        Err(e) => {
            println!(
                "  peer {}: {} does not resolve here now ({e}; every address it gives is a peer, found again before each run)",
                p.label(),
                p.host
            );
            return;
        }
    };
    let members = sonde_agent::group::members(p, &resolved);
    if let Some(line) = sonde_agent::group::change_line(p.label(), None, &members) {
        println!("  {line}, each a peer (found again before each run)");
    }
    for m in &members.list {
        let own = sonde_agent::own::identify(
            &p.host,
            m.addr,
            listen_port,
            sonde_agent::own::is_local_address,
        );
        if let Identity::Own(addr) = own {
            println!(
                "  peer {} ({addr}) is this agent itself here: it would not be measured",
                m.peer.label()
            );
        }
    }
}

/// A configuration that cannot be used: a usage error naming the file.
fn config_error(file: &std::path::Path, e: &dyn std::fmt::Display) -> i32 {
    eprintln!("sonde: usage error - {}: {e}", file.display());
    exit::USAGE
}
