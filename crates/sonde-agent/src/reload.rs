//! Reading the configuration again while the agent runs (SIGHUP, `systemctl reload`).
//!
//! An operator changes the peer list or a schedule and wants it to take effect without a
//! restart, which would reset every counter of `/metrics` and start every schedule over.
//! What a reload can change in place: the peers, the four schedules and the jitter. What the
//! running process is built on (the port it serves on, the stores, the server's settings,
//! its name and seed, the retention) stays as it started until the next start, and the log
//! says which of them the new file changes. A file that cannot be read or is not a valid
//! configuration, or names a key file that cannot be used, changes nothing: the agent goes
//! on as it was and says why.
//!
//! Pure: the old and the new configuration in, what changes out; the agent applies it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::config::AgentConfig;

/// How the agent is asked to reload, and how it reads its configuration again.
pub struct Reload {
    /// Raised when a reload is asked for (the CLI's SIGHUP handler); lowered by the agent.
    pub requested: Arc<AtomicBool>,
    /// Reads and checks the configuration as at the start (its file, the command line's
    /// overrides): the configuration and its text, or why it cannot be used.
    pub read: Box<dyn Fn() -> Result<(AgentConfig, String), String> + Send>,
}

/// What a reload changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Changes {
    /// The settings that differ but keep their value until the next start.
    pub at_next_start: Vec<&'static str>,
    /// The peer entries' labels that are no longer in the configuration.
    pub peers_gone: Vec<String>,
    /// The peer entries' labels that are new.
    pub peers_new: Vec<String>,
    /// Whether anything the reload applies differs (peers, schedules, jitter).
    pub applied: bool,
}

/// What changes from `old` to `new`.
pub fn changes(old: &AgentConfig, new: &AgentConfig) -> Changes {
    let mut at_next_start = Vec::new();
    let mut differs = |what: &'static str, same: bool| {
        if !same {
            at_next_start.push(what);
        }
    };
    differs("listen_port", old.listen_port == new.listen_port);
    differs("name", old.name == new.name);
    differs("store", old.store == new.store);
    differs("store_url", old.store_url == new.store_url);
    differs(
        "sync_every_secs",
        old.sync_every_secs == new.sync_every_secs,
    );
    differs("retain_days", old.retain_days == new.retain_days);
    differs("seed", old.seed == new.seed);
    differs("[server]", old.server == new.server);
    let labels = |c: &AgentConfig| -> Vec<String> {
        c.peers.iter().map(|p| p.label().to_string()).collect()
    };
    let (was, now) = (labels(old), labels(new));
    let peers_gone = was.iter().filter(|l| !now.contains(l)).cloned().collect();
    let peers_new = now.iter().filter(|l| !was.contains(l)).cloned().collect();
    let applied = old.peers != new.peers
        || old.latency != new.latency
        || old.throughput != new.throughput
        || old.capacity != new.capacity
        || old.profile != new.profile
        || old.jitter != new.jitter;
    Changes {
        at_next_start,
        peers_gone,
        peers_new,
        applied,
    }
}

/// `running` with what a reload applies taken from `new`: the peers, the schedules, the
/// jitter.
pub fn apply(running: &AgentConfig, new: &AgentConfig) -> AgentConfig {
    AgentConfig {
        peers: new.peers.clone(),
        latency: new.latency.clone(),
        throughput: new.throughput.clone(),
        capacity: new.capacity.clone(),
        profile: new.profile.clone(),
        jitter: new.jitter,
        ..running.clone()
    }
}

/// The index each entry of `new` had in `old`, when it is the same entry (same label, same
/// host, port and family): its schedule and what the agent knows of it carry over.
pub fn was_index(old: &AgentConfig, new: &AgentConfig, i: usize) -> Option<usize> {
    let p = new.peers.get(i)?;
    old.peers.iter().position(|o| {
        o.label() == p.label()
            && o.host == p.host
            && o.port == p.port
            && o.family == p.family
            && o.every_address == p.every_address
    })
}

/// `why` a file was refused, as one log line: a TOML error's lines joined, its drawing of
/// the spot (the gutter, the carets) left out.
pub fn one_line(why: &str) -> String {
    why.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| matches!(c, '|' | '^' | ' ')))
        .collect::<Vec<_>>()
        .join(": ")
}

/// The log line of a reload.
pub fn summary(c: &Changes, new: &AgentConfig) -> String {
    let mut parts = Vec::new();
    if c.applied {
        parts.push(format!("{} peers", new.peers.len()));
        if !c.peers_new.is_empty() {
            parts.push(format!("new {}", c.peers_new.join(", ")));
        }
        if !c.peers_gone.is_empty() {
            parts.push(format!("gone {}", c.peers_gone.join(", ")));
        }
    } else {
        parts.push("peers and schedules unchanged".into());
    }
    let mut line = format!("configuration reloaded: {}", parts.join("; "));
    if !c.at_next_start.is_empty() {
        line.push_str(&format!(
            "; {} changed, which takes effect at the next start",
            c.at_next_start.join(", ")
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "listen_port = 5300\nstore = \"a.db\"\n[latency]\nevery_secs = 10\n[[peer]]\nhost = \"n1\"\n[[peer]]\nhost = \"n2\"\n";

    fn parse(text: &str) -> AgentConfig {
        AgentConfig::parse(text).unwrap()
    }

    #[test]
    fn peers_and_schedules_apply_and_the_rest_waits_for_a_start() {
        let old = parse(BASE);
        let new = parse(
            &BASE
                .replace("5300", "5301")
                .replace("every_secs = 10", "every_secs = 5")
                .replace("host = \"n1\"", "host = \"n3\""),
        );
        let c = changes(&old, &new);
        assert_eq!(c.at_next_start, ["listen_port"]);
        assert_eq!(c.peers_gone, ["n1"]);
        assert_eq!(c.peers_new, ["n3"]);
        assert!(c.applied);
        let running = apply(&old, &new);
        assert_eq!(running.listen_port, 5300);
        assert_eq!(running.latency, new.latency);
        assert_eq!(running.peers, new.peers);
        assert_eq!(
            summary(&c, &new),
            "configuration reloaded: 2 peers; new n3; gone n1; listen_port changed, which takes effect at the next start"
        );
        // n2 stays, at index 1 as before; n3 is new.
        assert_eq!(was_index(&old, &new, 1), Some(1));
        assert_eq!(was_index(&old, &new, 0), None);
        assert_eq!(was_index(&old, &new, 2), None);
    }

    #[test]
    fn a_refusal_is_one_line() {
        let e = AgentConfig::parse("listen_port = \"no\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains('\n'), "{e}");
        let line = one_line(&e);
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("line 1, column 15") && line.contains("expected u16"),
            "{line}"
        );
    }

    #[test]
    fn the_same_file_changes_nothing_and_a_moved_entry_is_found() {
        let old = parse(BASE);
        let c = changes(&old, &old.clone());
        assert!(!c.applied && c.at_next_start.is_empty());
        assert_eq!(
            summary(&c, &old),
            "configuration reloaded: peers and schedules unchanged"
        );
        // Entries swapped: each is found at its old index.
        let swapped = parse("listen_port = 5300\nstore = \"a.db\"\n[latency]\nevery_secs = 10\n[[peer]]\nhost = \"n2\"\n[[peer]]\nhost = \"n1\"\n");
        assert_eq!(was_index(&old, &swapped, 0), Some(1));
        assert_eq!(was_index(&old, &swapped, 1), Some(0));
        // The same label at another port is another entry.
        let moved = parse(&BASE.replace("host = \"n2\"", "host = \"n2\"\nport = 5999"));
        assert_eq!(was_index(&old, &moved, 1), None);
    }
}
