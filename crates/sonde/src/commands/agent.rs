//! `sonde agent`: reads and checks the configuration, then runs the agent until Ctrl-C or
//! SIGTERM.

use super::exit;
use crate::cli_agent::AgentArgs;
use sonde_agent::config::AgentConfig;
use sonde_agent::AgentOptions;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs the agent command.
pub fn run(a: AgentArgs, interrupt: Arc<AtomicBool>) -> i32 {
    let text = match std::fs::read_to_string(&a.config) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("sonde: error - cannot read {}: {e}", a.config.display());
            return exit::USAGE;
        }
    };
    let mut config = match AgentConfig::parse(&text) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("sonde: error - {}: {e}", a.config.display());
            return exit::USAGE;
        }
    };
    match a.store {
        Some(url) if sonde_store::is_postgres_url(&url) => {
            if let Err(e) = sonde_store::check_postgres_url(&url) {
                eprintln!("sonde: error - --store: {e}");
                return exit::USAGE;
            }
            config.store_url = Some(url);
        }
        Some(path) => config.store = path.into(),
        None => {}
    }
    // The agent's server holds a descriptor per unidentified connection, as `sonde server`.
    sonde_stress::os::raise_nofile_limit();
    let opts = AgentOptions {
        config,
        config_text: text,
        metrics: a.metrics,
        sonde_version: format!("sonde {}", env!("CARGO_PKG_VERSION")),
        log: Arc::new(|m: &str| eprintln!("sonde agent: {m}")),
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
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}
